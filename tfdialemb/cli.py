"""Pieces every command-line tool shares: progress bars, flag parsing, input lines, error lines,
and how a command ends when it fails or is interrupted."""
import _thread
import functools
import io
import os
import sys
import threading
import time
from typing import Callable, List, Optional, Tuple

from tfdialemb import quiet
from tfdialemb.dialogue import DialogueFormatError, check_input_file
from tfdialemb.files import output_error_of, prepare_output
from tfdialemb.options import RENAMED_FLAGS, Option, current_flag_names, non_finite_floats, renamed

OVERWRITE = Option("overwrite", False, "Replace an existing output (never one of the inputs).")
INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT, what a shell reports for a process SIGINT ended)."""


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


def claim_output(path: str) -> None:
    """`files.prepare_output` for a command: the leftovers of killed runs removed (and said so on
    stderr), then the place checked writable, before any work."""
    report_removed(prepare_output(path), os.path.dirname(os.path.abspath(path)))


def report_removed(names, directory: str) -> None:
    """Says on stderr which leftovers of interrupted runs were removed from `directory`."""
    for name in names:
        print(f"removed {name}, left in {directory} by an interrupted run", file=sys.stderr)


STDIN = "-"


def read_lines(path: str) -> list:
    """Non-empty lines of a UTF-8 text file (STDIN: standard input); a clear error for a missing,
    empty or binary file (`read_lines_counted`)."""
    return read_lines_counted(path)[0]


def read_lines_counted(path: str) -> Tuple[List[str], int]:
    """(non-empty lines, number of blank lines skipped) of a UTF-8 text file or STDIN. A leading
    byte-order mark, as some editors write, is no part of the first line's text."""
    if path != STDIN:
        check_input_file(path, "input file")
    try:
        if path == STDIN:
            text = sys.stdin.buffer.read().decode("utf-8-sig")
        else:
            with open(path, "rb") as f:
                text = f.read().decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"{'standard input' if path == STDIN else path}: not UTF-8 text ({e})") from None
    # Universal newlines for both, as open() reads a text file: \n, \r\n and \r end a line.
    every = [line.rstrip("\n") for line in io.StringIO(text, newline=None)]
    lines = [line for line in every if line.strip()]
    if not lines:
        raise ValueError(f"{'standard input' if path == STDIN else path}: has no non-empty lines to encode")
    return lines, len(every) - len(lines)


ARGUMENTS: List[str] = []
"""The arguments `parse_flags` last parsed, without the program name: the command line a report
records (`tfdialemb.evaluate`)."""


def parse_flags(argv, flag_values=None):
    """absl's flag parsing for `app.run(main, flags_parser=parse_flags)`, with a bad flag value or
    a missing required flag reported as one line and exit status 2, like every other wrong
    command (absl's own parser exits 1, the status of a bad data line here). NaN and the
    infinities are refused for every float flag (`options.non_finite_floats`). A flag's former name
    (`options.RENAMED_FLAGS`), given directly or in a flagfile, is read as its new one with a
    warning. TensorFlow's Python INFO log is hidden unless --verbose is set; -v on the command line
    is --verbose (`quiet.long_verbose`, which also decided TensorFlow's C++ logging before it
    loaded)."""
    import logging  # pylint: disable=import-outside-toplevel

    from absl import flags  # pylint: disable=import-outside-toplevel

    flag_values = flag_values or flags.FLAGS
    ARGUMENTS[:] = argv[1:]
    if "verbose" not in flag_values:
        flags.DEFINE_bool("verbose", False, "Show TensorFlow's start-up and saving messages (CUDA probing, "
                          f"oneDNN notices, its INFO log), hidden by default; {quiet.SHORT_VERBOSE} for short "
                          "on the command line (absl's log verbosity is --verbosity=N).",
                          module_name=argv[0], flag_values=flag_values)
    try:
        expanded = flag_values.read_flags_from_files(list(argv))
        args, former = current_flag_names(quiet.long_verbose(expanded[1:]), flag_values)
        remaining = flag_values([argv[0], *args])
    except (flags.Error, ValueError) as e:
        _usage_error(str(e))
    for name in dict.fromkeys(former):
        print(f"warning: {renamed(f'--{name}', f'--{RENAMED_FLAGS[name]}')}", file=sys.stderr)
    refused = non_finite_floats(flag_values)
    if refused:
        _usage_error(f"{', '.join(refused)}: a float flag takes a finite number")
    if not flag_values.verbose:
        # TensorFlow's Python INFO lines (signature input names, sharding, assets, fingerprints),
        # logged through its own logger and absl's; the library logs through neither.
        # A filter, not a level: absl resets levels when it installs its handler after parsing.
        for name in ("tensorflow", "absl"):
            logging.getLogger(name).addFilter(lambda record: record.levelno >= logging.WARNING)
    return remaining


def _usage_error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    print("Pass --helpshort or --helpfull to see the flags.", file=sys.stderr)
    sys.exit(2)


def report_error(error: Exception) -> int:
    """Prints `error` as one line on stderr; returns the exit status every command uses:
    1 for a bad line of the input data, 2 for anything else (missing file, bad flag value, an
    output that cannot be written)."""
    _end_progress_line()
    print(f"error: {output_error_of(error) or error}", file=sys.stderr)
    return 1 if isinstance(error, DialogueFormatError) else 2


def guarded(main: Callable[[list], int]) -> Callable[[list], int]:
    """`main` for `app.run`, ending as every command ends: Ctrl-C with one line and exit status
    INTERRUPTED; a full disk or a read-only or forbidden output met at any point (an OSError, or
    TensorFlow's error for one) with one line naming the path and exit status 2. No traceback."""

    @functools.wraps(main)
    def run(argv):
        try:
            return main(argv)
        except KeyboardInterrupt as e:
            _end_progress_line()
            print(f"interrupted{': ' + str(e) if str(e) else ''}", file=sys.stderr)
            return INTERRUPTED
        except Exception as e:  # pylint: disable=broad-except
            if output_error_of(e) is None:
                raise
            return report_error(e)

    return run


def end_quietly_on_interrupt() -> None:
    """For a command's process before its slow imports: Ctrl-C while TensorFlow loads, before
    `guarded` can catch it, ends the process with the same one line instead of a traceback (it
    still ends by SIGINT, status 130 to a shell); one that lands where Python cannot raise it (a
    finaliser, "Exception ignored in ...") is delivered again rather than lost."""
    previous_excepthook, previous_unraisablehook = sys.excepthook, sys.unraisablehook

    def excepthook(kind, value, traceback):
        if issubclass(kind, KeyboardInterrupt):
            print("interrupted", file=sys.stderr)
        else:
            previous_excepthook(kind, value, traceback)

    def unraisablehook(unraisable):
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            # Raised here, in the hook, it would be lost again: the main thread gets it anew once
            # the finaliser has returned.
            threading.Timer(0.01, _thread.interrupt_main).start()
        else:
            previous_unraisablehook(unraisable)

    sys.excepthook, sys.unraisablehook = excepthook, unraisablehook


def _end_progress_line() -> None:
    if Progress.line_open:
        sys.stderr.write("\n")
        Progress.line_open = False
