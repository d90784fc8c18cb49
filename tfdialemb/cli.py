"""Pieces every command-line tool shares: progress bars, atomic output files, and how a command
ends when it fails or is interrupted."""
import _thread
import functools
import os
import sys
import threading
import time
from typing import Callable, Optional

import numpy as np

from tfdialemb.files import atomic_open, output_error_of, prepare_output
from tfdialemb.options import Option

OVERWRITE = Option("overwrite", False, "Replace an existing output (never one of the inputs).")
INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT, what a shell reports for a process SIGINT ended)."""


class Progress:
    """A one-line progress bar on stderr: done (of total when known), rate and time left.

    Redraws at most every `interval` seconds, so per-item calls stay cheap.
    """

    line_open = False
    """Whether a bar is drawn on stderr without its closing newline (a message must start below)."""

    def __init__(self, total: Optional[int], unit: str = "items", stream=None, interval: float = 0.2):
        self.total = total
        self.unit = unit
        self.done = 0
        self.start = time.perf_counter()
        self.stream = stream or sys.stderr
        self.interval = interval
        self._drawn = 0.0
        self._finished = False

    def advance(self, count: int) -> None:
        self.done += count
        now = time.perf_counter()
        if self.total is not None and self.done >= self.total:
            self.finish()
        elif now - self._drawn >= self.interval:
            self._draw(now)

    def finish(self) -> None:
        if not self._finished:
            self._draw(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()
            self._finished = True
            Progress.line_open = False

    def _draw(self, now: float) -> None:
        self._drawn = now
        rate = self.done / max(now - self.start, 1e-9)
        if self.total is None:
            line = f"{self.done} {self.unit} {rate:.1f}/s"
        else:
            width = 30
            filled = int(width * self.done / max(self.total, 1))
            left = (self.total - self.done) / rate if rate else 0.0
            line = (f"[{'=' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {self.unit} "
                    f"{rate:.1f}/s, {left:.0f}s left")
        self.stream.write("\r" + line)
        self.stream.flush()
        Progress.line_open = self.stream is sys.stderr


def claim_output(path: str) -> None:
    """`files.prepare_output` for a command: the leftovers of killed runs removed (and said so on
    stderr), then the place checked writable, before any work."""
    report_removed(prepare_output(path), os.path.dirname(os.path.abspath(path)))


def report_removed(names, directory: str) -> None:
    """Says on stderr which leftovers of interrupted runs were removed from `directory`."""
    for name in names:
        print(f"removed {name}, left in {directory} by an interrupted run", file=sys.stderr)


def save_npy_atomic(path: str, array: np.ndarray) -> None:
    """Writes `path` only once complete, so an interrupted run leaves no partial file."""
    with atomic_open(path, "wb") as f:
        np.save(f, array)


def read_lines(path: str) -> list:
    """Non-empty lines of a UTF-8 text file; a clear error for a missing, empty or binary file."""
    from tfdialemb.dialogue import check_input_file  # pylint: disable=import-outside-toplevel

    check_input_file(path, "input file")
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line.rstrip("\n").rstrip("\r") for line in f]
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text ({e})") from None
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise ValueError(f"{path}: has no non-empty lines to encode")
    return lines


def parse_flags(argv):
    """absl's flag parsing for `app.run(main, flags_parser=parse_flags)`, with a bad flag value or
    a missing required flag reported as one line and exit status 2, like every other wrong
    command (absl's own parser exits 1, the status of a bad data line here)."""
    from absl import flags  # pylint: disable=import-outside-toplevel

    try:
        return flags.FLAGS(argv)
    except flags.Error as e:
        print(f"error: {e}", file=sys.stderr)
        print("Pass --helpshort or --helpfull to see the flags.", file=sys.stderr)
        sys.exit(2)


def report_error(error: Exception) -> int:
    """Prints `error` as one line on stderr; returns the exit status every command uses:
    1 for a bad line of the input data, 2 for anything else (missing file, bad flag value, an
    output that cannot be written)."""
    from tfdialemb.dialogue import DialogueFormatError  # pylint: disable=import-outside-toplevel

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
