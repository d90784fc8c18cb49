"""Atomic file writing: an output file appears complete or not at all.

Interrupted runs (Ctrl-C, SIGKILL, a full disk) leave at most a hidden `.tmp-*` file beside the
target, never a truncated file under the target's name.
"""
import contextlib
import os
import tempfile


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
