"""Quiet start-up for the command-line tools: TensorFlow's C++ notices stay off the screen.

TensorFlow prints notices that say nothing about the run, among them some at error level, which
`TF_CPP_MIN_LOG_LEVEL=2` (errors only) cannot reach without hiding real errors: `failed call to
cuInit` (a machine without a GPU) when it first places an op, and `oneDNN supports DT_INT64 (or
DT_INT32, ...) only on platforms with AVX-512` (printed on CPUs that have AVX-512 too) when an
integer op first goes through oneDNN, wherever in the run that is. Neither a log level nor a
redirection around TensorFlow's import reaches them, and a thread would lose what it has not
passed on when the command is killed. A command (`python -m tfdialemb.X`, `python -m
data_prep.X`, a `tfdialemb-*` script) therefore sets the log level to 2 unless the user set it,
and passes its standard error through a small forked filter process that drops exactly those
lines, each recognised by TensorFlow's log prefix and its message.

What the filter keeps:
- Everything else, unchanged and at once (a progress bar's partial line too), except that a line
  starting with a digit (it may be a TensorFlow log line) waits for its end: at most HOLD_SECONDS
  from its first byte, and no longer than HOLD_BYTES.
- The order of standard output and standard error when both go to one place (`cmd > log 2>&1`,
  `cmd 2>&1 | tee log`, a terminal): the filter then carries both through one pipe, so they
  arrive as written. Each stream's own buffering is Python's, as without the filter.
- Every line the command wrote: the filter is a process, not a thread, so `kill -9` of the command
  loses nothing; it ignores Ctrl-C and the other terminal signals and ends when the last writer
  of its pipe closes it. When its output fails (a closed pipe, a full disk) it goes on reading and
  dropping, so the command never blocks or fails because of it; a fault in the filter itself
  costs the filtering, not the output; if the filter cannot be started the command runs without.
- The shell's prompt after the last line: at exit the command asks the filter to write out all it
  has read and waits for the answer (milliseconds; at most DRAIN_WAIT_SECONDS when the filter
  cannot write, e.g. to a paused terminal), never for child processes that still hold the pipe.

`--verbose` (on the command line or in a `--flagfile`, read as absl reads it; `-v` for short on the
command line) keeps TensorFlow's own log level and every line. A flagfile that is not a regular
file (bash's `--flagfile=<(...)`) is read by the command alone, after TensorFlow has started, so
`--verbose` there shows TensorFlow's Python log only. `-v` takes no value: absl's log verbosity
keeps its long name, `--verbosity=N`. Importing tfdialemb from Python (a notebook, a
test) changes nothing but the log level default.
"""
import atexit
import fcntl
import os
import re
import select
import signal
import stat
import struct
import sys
import termios
import time
from typing import List, Optional, Sequence

from absl import flags

LOG_PREFIX = rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [EWIF] \S+\] "
"""TensorFlow's C++ log line: `2026-01-01 12:00:00.123456: E path/file.cc:51] message`."""
KNOWN_NOISE = (
    re.compile(LOG_PREFIX + rb"failed call to cuInit"),
    re.compile(LOG_PREFIX + rb"oneDNN supports DT_[A-Z0-9]+ only on platforms with AVX-512"),
)
SHORT_VERBOSE = "-v"
"""The command line's short spelling of --verbose (absl gives -v to --verbosity, which keeps its
long name)."""
COMMAND_PACKAGES = ("tfdialemb", "data_prep")
HOLD_SECONDS = 0.1
"""How long a partial line that may be the start of a TensorFlow log line waits for its end,
counted from its first byte."""
HOLD_BYTES = 4096
"""A held partial line longer than this is no TensorFlow notice and goes on at once."""
DRAIN_WAIT_SECONDS = 1.0
"""How long a command's exit waits for the filter to write out what it has read."""
READ_BYTES = 65536


def command_arguments(argv: Sequence[str]) -> Optional[List[str]]:
    """The arguments after the command's name when `argv` (sys.orig_argv) runs a tfdialemb or
    data_prep command, else None."""
    argv = list(argv)
    for index, value in enumerate(argv[:-1]):
        if value == "-m":
            return argv[index + 2:] if argv[index + 1].split(".")[0] in COMMAND_PACKAGES else None
    if len(argv) > 1 and os.path.basename(argv[1]).startswith("tfdialemb-"):
        return argv[2:]
    if argv and os.path.basename(argv[0]).startswith("tfdialemb-"):
        return argv[1:]
    return None


def long_verbose(arguments: Sequence[str]) -> List[str]:
    """`arguments` with each SHORT_VERBOSE spelled --verbose, as absl knows it (up to `--`, where
    absl stops). ValueError for `-v N` or `-v=N`, absl's spelling of --verbosity=N."""
    arguments = list(arguments)
    spelled = []
    for index, argument in enumerate(arguments):
        if argument == "--":
            return spelled + arguments[index:]
        following = arguments[index + 1] if index + 1 < len(arguments) else ""
        if argument.startswith(SHORT_VERBOSE + "=") or (
                argument == SHORT_VERBOSE and re.fullmatch(r"-?\d+", following)):
            raise ValueError(f"{SHORT_VERBOSE} is short for --verbose and takes no value; "
                             "for absl's log verbosity use --verbosity=N")
        spelled.append("--verbose" if argument == SHORT_VERBOSE else argument)
    return spelled


def verbose_requested(arguments: Sequence[str]) -> bool:
    """Whether absl, reading `arguments` (their flagfiles included, -v as --verbose), sets
    --verbose; False when they cannot be read (the command's own parsing then says why)."""
    values = flags.FlagValues()
    flags.DEFINE_boolean("verbose", False, "", flag_values=values)
    try:
        values(["command", *_without_one_time_flagfiles(long_verbose(arguments))], known_only=True)
    except (flags.Error, ValueError):
        return False
    return values.verbose


def _without_one_time_flagfiles(arguments: List[str]) -> List[str]:
    """`arguments` without the flagfiles that are not regular files: reading a pipe (bash's
    `--flagfile=<(...)`, /dev/stdin) here would use up what the command's own parsing reads, and
    a missing file is the command's to report."""
    kept = []
    remaining = iter(arguments)
    for argument in remaining:
        if argument in ("--flagfile", "-flagfile"):
            path = next(remaining, "")
        elif argument.startswith(("--flagfile=", "-flagfile=")):
            path = argument.split("=", 1)[1]
        else:
            kept.append(argument)
            continue
        if os.path.isfile(os.path.expanduser(path)):
            kept.append(f"--flagfile={path}")
    return kept


def is_noise(line: bytes) -> bool:
    """Whether a line (without its newline) is one of KNOWN_NOISE."""
    return any(pattern.match(line) for pattern in KNOWN_NOISE)


def configure(argv: Sequence[str] = None) -> None:
    """Sets the log level and starts the filter for a command run without --verbose; called by
    `import tfdialemb` before TensorFlow is imported."""
    arguments = command_arguments(sys.orig_argv if argv is None else argv)
    if arguments is not None and verbose_requested(arguments):
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if arguments is not None:
        start_filter()


def same_destination(first: int, second: int) -> bool:
    """Whether two file descriptors write to one place: one open file, one file, or one terminal."""
    first_status, second_status = os.fstat(first), os.fstat(second)
    if (first_status.st_dev, first_status.st_ino) == (second_status.st_dev, second_status.st_ino):
        return True
    return os.isatty(first) and os.isatty(second) and first_status.st_rdev == second_status.st_rdev


class LineFilter:
    """What of a byte stream passes on: every byte at once except the lines of KNOWN_NOISE.

    A line that starts with a digit may be a TensorFlow log line, so it is held until its end, at
    most HOLD_SECONDS from its first byte and HOLD_BYTES; once a line's start has passed on, the
    rest of it passes at once. `feed` changes the state only when it returns, so a fault inside it
    leaves `held` exactly the bytes not yet passed on.
    """

    def __init__(self):
        self.held = b""
        self.held_since: Optional[float] = None  # when the held line's first byte came; None: none held
        self.mid_line = False  # the current line's start has passed on

    def feed(self, data: bytes, now: float) -> bytes:
        """The part of `data` (read at time `now`) that passes on now."""
        held, held_since, mid_line = self.held, self.held_since, self.mid_line
        passed = []
        start = 0
        while start < len(data):
            newline = data.find(b"\n", start)
            end = len(data) if newline < 0 else newline + 1
            piece = data[start:end]
            complete = newline >= 0
            if held_since is not None or (not mid_line and piece[:1].isdigit()):
                line = held + piece
                if complete:
                    if not is_noise(line[:-1]):
                        passed.append(line)
                    held, held_since = b"", None
                else:
                    held, held_since = line, now if held_since is None else held_since
            else:
                passed.append(piece)
            mid_line = not complete
            start = end
        if held_since is not None and (now - held_since >= HOLD_SECONDS or len(held) > HOLD_BYTES):
            passed.append(held)
            held, held_since, mid_line = b"", None, True
        self.held, self.held_since, self.mid_line = held, held_since, mid_line
        return b"".join(passed)

    def seconds_left(self, now: float) -> Optional[float]:
        """How long the held line may still wait for its end; None when none is held."""
        return None if self.held_since is None else max(0.0, self.held_since + HOLD_SECONDS - now)

    def release(self) -> bytes:
        """The held partial line, unless it is a notice (at the end of the stream, or when the
        command exits and nothing it wrote may stay behind)."""
        held, self.held, self.held_since = self.held, b"", None
        if not held:
            return b""
        self.mid_line = True
        return b"" if is_noise(held) else held


class PassThrough:
    """LineFilter's stand-in after a fault in it: passes everything on unchanged."""

    held = b""

    @staticmethod
    def feed(data: bytes, now: float) -> bytes:  # pylint: disable=unused-argument
        return data

    @staticmethod
    def seconds_left(now: float) -> None:  # pylint: disable=unused-argument
        return None

    @staticmethod
    def release() -> bytes:
        return b""


class Output:
    """The filter's writer to the command's original standard error.

    A non-blocking descriptor (a terminal another program set so) that is full is waited for;
    after any other error (a closed pipe, a full disk) everything is dropped, so the filter keeps
    reading and the command never blocks or fails because of its filter.
    """

    def __init__(self, fd: int):
        self.fd = fd
        self.failed = False

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view and not self.failed:
            try:
                view = view[os.write(self.fd, view):]
            except BlockingIOError:
                select.select([], [self.fd], [])
            except OSError:
                self.failed = True


def forward(source: int, target: int, drain_requests: int = None, drain_replies: int = None) -> None:
    """Copies `source` to `target` through a LineFilter until end of file. A byte on
    `drain_requests` asks for everything in `source` at that moment to be written out (the held
    line too), answered with a byte on `drain_replies`."""
    lines = LineFilter()
    output = Output(target)
    watched = [source] + ([drain_requests] if drain_requests is not None else [])

    def passed(chunk: bytes) -> bytes:
        nonlocal lines
        try:
            return lines.feed(chunk, time.monotonic())
        except Exception:  # pylint: disable=broad-except  # a fault costs the filtering, not the output
            unsent, lines = lines.held, PassThrough()
            return unsent + chunk

    while True:
        ready, _, _ = select.select(watched, [], [], lines.seconds_left(time.monotonic()))
        if drain_requests in ready:
            if not os.read(drain_requests, 1):  # the command has gone without asking
                watched.remove(drain_requests)
                continue
            left = _unread_bytes(source)
            while left > 0:
                chunk = os.read(source, min(left, READ_BYTES))
                if not chunk:
                    break
                left -= len(chunk)
                output.write(passed(chunk))
            output.write(lines.release())
            _answer(drain_replies)
            continue
        if source in ready:
            chunk = os.read(source, READ_BYTES)
            if not chunk:
                break
            output.write(passed(chunk))
        else:
            output.write(passed(b""))  # the held line's time is up
    output.write(lines.release())


def _unread_bytes(fd: int) -> int:
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def _answer(fd: int) -> None:
    try:
        os.write(fd, b"\n")
    except OSError:
        pass


TERMINAL_ENV = "TFDIALEMB_STDERR_TERMINAL"
"""Set by the filter for the processes the command starts ("1" or "0"): the steps the demo and the
grid run write to the filter's pipe, and this says whether a terminal is behind it."""
_stderr_terminal: Optional[bool] = None
"""Whether standard error was a terminal before the filter took it over (None: not taken over)."""


def stderr_is_terminal() -> bool:
    """Whether what the command writes to standard error reaches a terminal, a filter between
    them or not (a progress bar redraws its line there, and writes whole lines to a log)."""
    return _terminal_behind(2) if _stderr_terminal is None else _stderr_terminal


def _terminal_behind(fd: int) -> bool:
    """`fd` is a terminal, or a pipe to the filter of a command that writes to one."""
    try:
        if os.isatty(fd):
            return True
        return stat.S_ISFIFO(os.fstat(fd).st_mode) and os.environ.get(TERMINAL_ENV) == "1"
    except OSError:
        return False


def start_filter() -> bool:
    """Routes file descriptor 2, and 1 when it writes to the same place, through a forked filter
    process (see the module docstring); False, with nothing changed, when that is not possible."""
    global _stderr_terminal  # pylint: disable=global-statement
    opened = []

    def new(fd: int) -> int:
        opened.append(fd)
        return fd

    try:
        routed = (1, 2) if same_destination(1, 2) else (2,)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        target = new(os.dup(2))
        originals = {fd: new(os.dup(fd)) for fd in routed}
        data_read, data_write = (new(fd) for fd in os.pipe())
        requests_read, requests_write = (new(fd) for fd in os.pipe())
        replies_read, replies_write = (new(fd) for fd in os.pipe())
        child = os.fork()
    except (OSError, ValueError, AttributeError):  # a closed descriptor or stream, no descriptors or processes left
        for fd in opened:
            os.close(fd)
        return False
    if child == 0:
        try:
            keep = (data_read, target, requests_read, replies_write)
            for fd in (0, 1, 2, *opened):  # holding the command's other ends open could keep a reader waiting
                if fd not in keep:
                    _close_quietly(fd)
            for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"):
                signal.signal(getattr(signal, name), signal.SIG_IGN)
            forward(data_read, target, requests_read, replies_write)
        finally:
            os._exit(0)  # pylint: disable=protected-access
    for fd in (data_read, target, requests_read, replies_write):
        os.close(fd)
    _stderr_terminal = _terminal_behind(2)
    os.environ[TERMINAL_ENV] = "1" if _stderr_terminal else "0"
    for fd in routed:
        os.dup2(data_write, fd)
    os.close(data_write)
    command = os.getpid()

    def restore() -> None:
        """Lets the filter write out what the command wrote, then gives the command its own
        descriptors back (closing its end of the pipe), so the last lines come before the
        shell's prompt."""
        if os.getpid() != command:  # a forked child of the command exiting
            return
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        try:
            os.write(requests_write, b"\n")
            select.select([replies_read], [], [], DRAIN_WAIT_SECONDS)
        except OSError:  # the filter is gone
            pass
        for fd, original in originals.items():
            os.dup2(original, fd)
            os.close(original)
        os.close(requests_write)
        os.close(replies_read)

    atexit.register(restore)
    return True


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
