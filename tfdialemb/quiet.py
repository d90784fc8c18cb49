"""Quiet start-up for the command-line tools: TensorFlow's C++ notices stay off the screen.

TensorFlow prints notices at start-up that say nothing about the run, among them two at error
level, which `TF_CPP_MIN_LOG_LEVEL=2` (errors only) cannot reach without hiding real errors:
`failed call to cuInit` (a machine without a GPU) and `oneDNN supports DT_INT64 only on platforms
with AVX-512` (printed on CPUs that have AVX-512 too). A command (`python -m tfdialemb.X`,
`python -m data_prep.X`, a `tfdialemb-*` script) therefore sets the log level to 2 unless the
user set it, and passes its standard error through a small filter process that drops exactly
those lines, each recognised by TensorFlow's log prefix and its message. Everything else passes
unchanged and at once (a partial line such as a progress bar is not held). The filter is a forked
process, not a thread, so a crash of the command cannot lose what it wrote last; it ignores
Ctrl-C and ends when the command's standard error closes.

`-v` or `--verbose` on the command line keeps TensorFlow's own log level and every line.
Importing tfdialemb from Python (a notebook, a test) changes nothing but the log level default.
"""
import atexit
import os
import re
import select
import signal
import sys
import time
from typing import Sequence

LOG_PREFIX = rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [EWIF] \S+\] "
"""TensorFlow's C++ log line: `2026-01-01 12:00:00.123456: E path/file.cc:51] message`."""
KNOWN_NOISE = (
    re.compile(LOG_PREFIX + rb"failed call to cuInit"),
    re.compile(LOG_PREFIX + rb"oneDNN supports DT_INT64 only on platforms with AVX-512"),
)
VERBOSE_ARGUMENTS = ("-v", "--verbose", "--verbose=true", "--verbose=True", "--verbose=1")
COMMAND_PACKAGES = ("tfdialemb", "data_prep")
HOLD_SECONDS = 0.1
"""How long a partial line that may be the start of a TensorFlow log line waits for its end."""
EXIT_WAIT_SECONDS = 2.0


def command_arguments(argv: Sequence[str]) -> Sequence[str]:
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


def is_noise(line: bytes) -> bool:
    """Whether a complete line (without its newline) is one of KNOWN_NOISE."""
    return any(pattern.match(line) for pattern in KNOWN_NOISE)


def configure(argv: Sequence[str] = None) -> None:
    """Sets the log level and starts the filter for a command run without -v; called by
    `import tfdialemb` before TensorFlow is imported."""
    arguments = command_arguments(sys.orig_argv if argv is None else argv)
    verbose = arguments is not None and any(a in VERBOSE_ARGUMENTS for a in arguments)
    if not verbose:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if arguments is not None and not verbose:
        _filter_stderr()


def _filter_stderr() -> None:
    """Routes file descriptor 2 through a forked filter process (see the module docstring)."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # the filter: reads the pipe until every writer has closed it
        try:
            os.close(write_end)
            for unused in (0, 1):  # holding the command's stdin or stdout open could keep a reader waiting
                try:
                    os.close(unused)
                except OSError:
                    pass
            for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"):
                signal.signal(getattr(signal, name), signal.SIG_IGN)
            forward(read_end, 2)
        finally:
            os._exit(0)  # pylint: disable=protected-access
    os.close(read_end)
    original = os.dup(2)
    os.dup2(write_end, 2)
    os.close(write_end)

    def restore():
        """Closes the command's end of the pipe and lets the filter write what is left, so the
        last lines come before the shell's prompt."""
        sys.stderr.flush()
        os.dup2(original, 2)
        deadline = time.monotonic() + EXIT_WAIT_SECONDS
        while time.monotonic() < deadline:
            if os.waitpid(child, os.WNOHANG) != (0, 0):
                return
            time.sleep(0.01)

    atexit.register(restore)


def forward(source: int, target: int) -> None:
    """Copies `source` to `target` until end of file, without the lines of KNOWN_NOISE. A partial
    line goes on at once unless it may begin a TensorFlow log line (it starts with a digit); such
    a line waits for its end at most HOLD_SECONDS."""
    pending = b""
    while True:
        ready, _, _ = select.select([source], [], [], HOLD_SECONDS if pending else None)
        if not ready:
            _write_all(target, pending)
            pending = b""
            continue
        chunk = os.read(source, 65536)
        if not chunk:
            break
        *lines, pending = (pending + chunk).split(b"\n")
        kept = b"".join(line + b"\n" for line in lines if not is_noise(line))
        if pending and not pending[:1].isdigit():
            kept, pending = kept + pending, b""
        _write_all(target, kept)
    if pending and not is_noise(pending):
        _write_all(target, pending)


def _write_all(target: int, data: bytes) -> None:
    while data:
        data = data[os.write(target, data):]
