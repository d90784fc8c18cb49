"""Atomic writing: an output file or directory appears complete or not at all.

Interrupted runs (Ctrl-C, SIGKILL, a full disk) leave at most a hidden `.tmp-*` entry beside the
target, never a truncated file or half-filled directory under the target's name.
"""
import contextlib
import os
import shutil
import tempfile
import uuid


@contextlib.contextmanager
def atomic_open(path: str, mode: str = "w", encoding: str = "utf-8"):
    """Opens a temporary sibling of `path` for writing and renames it onto `path` on success."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=".tmp-", suffix="-" + os.path.basename(path), dir=directory)
    try:
        with os.fdopen(handle, mode, encoding=None if "b" in mode else encoding) as f:
            yield f
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


@contextlib.contextmanager
def atomic_directory(path: str, replace: bool = False):
    """Yields a hidden staging directory beside `path`, renamed onto `path` when the block ends.

    An empty `path` is taken over; an existing one is swapped out only once the new directory is
    complete and only with `replace`. Made with os.mkdir, not tempfile.mkdtemp, whose mode 0700
    would hide the result from a server running as another user.
    """
    path = os.path.abspath(path)
    parent, name = os.path.split(path)
    os.makedirs(parent, exist_ok=True)
    staging = os.path.join(parent, f".tmp-{name}-{uuid.uuid4().hex}")
    os.mkdir(staging)
    try:
        yield staging
        if os.path.isdir(path) and not os.listdir(path):
            os.rmdir(path)
        if not os.path.exists(path):
            os.rename(staging, path)
        elif not replace:
            raise FileExistsError(f"{path}: already exists")
        else:
            previous = os.path.join(parent, f".old-{name}-{uuid.uuid4().hex}")
            os.rename(path, previous)
            os.rename(staging, path)
            shutil.rmtree(previous)
    finally:
        if os.path.exists(staging):
            shutil.rmtree(staging)
