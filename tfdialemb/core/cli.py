"""Pieces every command-line tool shares: flag parsing, input lines, error lines, and how a command
ends when it fails or is interrupted (its progress line closed first)."""
import _thread
import functools
import io
import os
import sys
import threading
from typing import Callable, List, Tuple

from tfdialemb.core import namespace_check  # noqa: F401  (a shadowed package stops every command here)
from tfdialemb.core import quiet
from tfdialemb.core.inputs import InputLineError, check_input_file
from tfdialemb.core.files import output_error_of, prepare_output
from tfdialemb.core.options import RENAMED_FLAGS, Option, current_flag_names, non_finite_floats, renamed
from tfdialemb.core.progress import Progress

OVERWRITE = Option("overwrite", False, "Replace an existing output (never one of the inputs).")
INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT, what a shell reports for a process SIGINT ended)."""


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
        remaining, former = parse_arguments(argv, flag_values)
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


def parse_arguments(argv, flag_values) -> Tuple[List[str], List[str]]:
    """(arguments left, former flag names read) of `argv` parsed into `flag_values` as a command
    parses its own: flagfiles expanded, a flag's former name read as its new one, -v as --verbose.
    Raises absl's flags.Error or a ValueError for a bad flag or value."""
    expanded = flag_values.read_flags_from_files(list(argv))
    args, former = current_flag_names(quiet.long_verbose(expanded[1:]), flag_values)
    return flag_values([argv[0], *args]), former


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
    return 1 if isinstance(error, InputLineError) else 2


def run_command(main: Callable[[list], int], command_module: str) -> None:
    """`app.run(main)` as every command runs: `guarded`, its flags parsed by `parse_flags`. From a
    console script (`tfdialemb-encode`), whose `__main__` is not the command's module, --help
    shows the command's usage and flags as `python -m tfdialemb.encode --help` does (absl shows
    the docstring and key flags of `__main__`)."""
    from absl import app, flags  # pylint: disable=import-outside-toplevel

    launcher, command = sys.modules["__main__"], sys.modules[command_module]
    if launcher is not command:
        launcher.__doc__ = command.__doc__
        for flag in flags.FLAGS.get_key_flags_for_module(command):
            flags.FLAGS.register_key_flag_for_module(sys.argv[0], flag)
    app.run(guarded(main), flags_parser=parse_flags)


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
