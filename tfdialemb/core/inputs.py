"""What every command checks of an input path before reading it, and the error of a bad line in
an input file (which the commands end with exit status 1, anything else 2: `cli.report_error`)."""
import os
import stat


class InputLineError(ValueError):
    """A bad line or record of an input file, named with its file and place."""


NOT_A_FILE = {stat.S_IFIFO: "a named pipe (FIFO)", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
              stat.S_IFBLK: "a block device"}
"""What an input path that exists but is no regular file is, as the refusal names it."""


def check_input_file(path: str, what: str) -> None:
    """FileNotFoundError / IsADirectoryError / OSError naming `what` unless `path` is a regular
    file. A pipe or device is refused too: a command may read its input twice (a training file is
    built, then fingerprinted), which a pipe cannot replay; `encode` reads a pipe as `--input=-`."""
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path}: is a directory; the {what} must be a file")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            raise FileNotFoundError(f"{path}: is a symbolic link to {os.readlink(path)}, which does not exist; "
                                    f"the {what} must be a file") from None
        raise FileNotFoundError(f"{path}: {what} does not exist") from None
    except OSError as e:  # a symbolic link loop (ELOOP), a path through a file (ENOTDIR), no permission
        raise OSError(f"{path}: cannot read the {what}: {e.strerror.lower()}") from None  # no errno: not an output's
    if not stat.S_ISREG(mode):
        raise OSError(f"{path}: is {NOT_A_FILE.get(stat.S_IFMT(mode), 'not a regular file')}; "
                      f"the {what} must be a regular file")
