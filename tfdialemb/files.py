"""Atomic writing: an output file or directory appears complete or not at all.

Interrupted runs (Ctrl-C, SIGKILL, a full disk) leave at most a hidden `.tmp-*` entry beside the
target, never a truncated file or half-filled directory under the target's name.
"""
import contextlib
import fcntl
import hashlib
import os
import shutil
import socket
import tempfile
import uuid
from typing import Optional, Sequence

import numpy as np

LOCK_FILE = ".lock"


class DirectoryLockedError(OSError):
    """Another process holds the directory's lock."""


def check_output(path: str, inputs: Sequence[Optional[str]] = (), overwrite: bool = False) -> None:
    """Refuses, before any work, an output file that is one of the `inputs`, an existing directory,
    or (without `overwrite`) an existing file."""
    target = os.path.realpath(path)
    for source in inputs:
        if source and os.path.exists(source) and os.path.realpath(source) == target:
            raise ValueError(f"{path}: the output would replace the input {source}; write it elsewhere")
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path}: is a directory; give the output file's path")
    if os.path.lexists(path) and not overwrite:
        raise FileExistsError(f"{path}: already exists (pass --overwrite to replace it)")


def _process_mode() -> int:
    """0666 less the process umask: the mode `open` gives a new file (mkstemp's is 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_open(path: str, mode: str = "w", encoding: str = "utf-8"):
    """Opens a temporary sibling of `path` for writing and renames it onto `path` on success; the
    file gets the mode a plain `open` would give it under the process umask."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=".tmp-", suffix="-" + os.path.basename(path), dir=directory)
    os.chmod(tmp, _process_mode())
    try:
        with os.fdopen(handle, mode, encoding=None if "b" in mode else encoding) as f:
            yield f
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def save_npy_atomic(path: str, array: np.ndarray) -> None:
    """`array` as a .npy file at `path`, written atomically (`atomic_open`)."""
    with atomic_open(path, "wb") as f:
        np.save(f, array)


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


@contextlib.contextmanager
def directory_lock(directory: str, what: str = "run"):
    """Holds an exclusive lock on `directory` (an flock on `directory/.lock`) for the block.

    A second holder is refused with a message naming the first; the kernel releases the lock when
    its process dies, so a killed run never leaves the directory locked.
    """
    os.makedirs(directory, exist_ok=True)
    handle = open(os.path.join(directory, LOCK_FILE), "a+", encoding="utf-8")  # pylint: disable=consider-using-with
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise DirectoryLockedError(f"{directory}: in use by another {what} ({holder}); wait for it to "
                                       "finish or use another directory") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
        handle.flush()
        yield
    finally:
        handle.close()


def remove_leftovers(directory: str) -> list:
    """Deletes the staging entries (`.tmp-*`, `.old-*`) that atomic writes killed midway left
    directly in `directory`; the caller must hold the directory's lock. Returns their names."""
    if not os.path.isdir(directory):
        return []
    removed = sorted(name for name in os.listdir(directory) if name.startswith((".tmp-", ".old-")))
    for name in removed:
        path = os.path.join(directory, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.remove(path)
    return removed


def file_sha256(path: str) -> str:
    """The SHA-256 of a file's content, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_fingerprint(path: str) -> dict:
    """Size, modification time and SHA-256 of a file's content: what tells a file from another
    written under the same name."""
    status = os.stat(path)
    return {"size": status.st_size, "mtime": status.st_mtime, "sha256": file_sha256(path)}
