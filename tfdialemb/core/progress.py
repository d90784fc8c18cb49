"""A one-line progress bar on stderr, for the commands and for the library's own long calls
(`SentenceEmbedder.encode(show_progress_bar=True)`)."""
import sys
import time
from typing import Optional

from tfdialemb.core import quiet


class Progress:
    """A one-line progress bar on stderr: done (of total when known), rate, time left and an
    optional note (e.g. the running loss). `unit` names what is counted ("sentences", "dialogues
    read into mge examples"); the rate is always of its first word per second ("0.23 steps/s",
    "850 sentences/s"), never a time per item in some bars and a rate in others, with at least two
    significant digits, so a slow rate is not rounded to 0.

    The rate and the time left are measured from the first item on, so the first item's one-off
    costs (a graph trace, a warm cache) do not stretch the estimate; until a second item is done
    the time left is unknown. On a terminal it redraws its line at most every `interval` seconds,
    so per-item calls stay cheap; `message` prints a line of its own without gluing it to the bar.
    Written to a file or a pipe (`cmd > log 2>&1`), where a redrawn line would pile up as one
    endless line, it writes the bar as a whole line at most every `log_interval` seconds, and the
    last one when it finishes.
    """

    line_open = False
    """Whether a bar is drawn on stderr without its closing newline (a message must start below)."""

    def __init__(self, total: Optional[int], unit: str = "items", stream=None, interval: float = 0.2,
                 terminal: Optional[bool] = None, log_interval: float = 30.0):
        self.total = total
        self.unit = unit
        self.items = unit.split()[0]
        self.done = 0
        self.start = time.perf_counter()
        self.stream = stream or sys.stderr
        self.terminal = _reaches_terminal(self.stream) if terminal is None else terminal
        self.interval = interval if self.terminal else log_interval
        self.note = ""
        self._first: Optional[tuple] = None  # (items done, time) when the first advance came
        self._drawn: Optional[float] = None  # when the bar was last written
        self._drawn_done: Optional[int] = None  # and how many items it showed
        self._width = 0
        self._finished = False

    def advance(self, count: int, note: Optional[str] = None) -> None:
        self.done += count
        if note is not None:
            self.note = note
        now = time.perf_counter()
        if self._first is None and count:
            self._first = (self.done, now)
        if self.total is not None and self.done >= self.total:
            self.finish()
        elif self._drawn is None or now - self._drawn >= self.interval:
            self._draw(now)

    def message(self, text: str) -> None:
        """Prints `text` on a line of its own above the bar, then redraws the bar (on a terminal)."""
        if not self.terminal:
            self.stream.write(text + "\n")
            self.stream.flush()
            return
        self.stream.write("\r" + " " * self._width + "\r" + text + "\n")
        self._width = 0
        if not self._finished and self._drawn is not None:
            self._draw(time.perf_counter())
        self.stream.flush()

    def finish(self) -> None:
        if not self._finished:
            if self.terminal or self._drawn_done != self.done:
                self._draw(time.perf_counter())
            if self.terminal:
                self.stream.write("\n")
            self.stream.flush()
            self._finished = True
            Progress.line_open = False

    def _rate(self, now: float) -> Optional[float]:
        """Items per second after the first item, or None before a second one."""
        if self._first is None or self.done <= self._first[0] or now <= self._first[1]:
            return None
        return (self.done - self._first[0]) / (now - self._first[1])

    def _draw(self, now: float) -> None:
        self._drawn, self._drawn_done = now, self.done
        rate = self._rate(now)
        speed = "" if rate is None else f" {rate:.0f} {self.items}/s" if rate >= 10 else f" {rate:.2g} {self.items}/s"
        if self.total is None:
            line = f"{self.done} {self.unit}{speed}"
        else:
            width = 30
            filled = int(width * self.done / max(self.total, 1))
            if self.done >= self.total:
                left = f"done in {now - self.start:.1f}s"
            else:
                left = f"{(self.total - self.done) / rate:.0f}s left" if rate else "time left unknown"
            line = f"[{'=' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {self.unit}{speed}, {left}"
        if self.note:
            line += f", {self.note}"
        if not self.terminal:
            self.stream.write(line + "\n")
            self.stream.flush()
            return
        self.stream.write("\r" + line + " " * max(0, self._width - len(line)))
        self._width = len(line)
        self.stream.flush()
        Progress.line_open = self.stream is sys.stderr


def _reaches_terminal(stream) -> bool:
    """Whether `stream` writes to a terminal (standard error: through the quiet filter too)."""
    if stream is sys.stderr:
        return quiet.stderr_is_terminal()
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False
