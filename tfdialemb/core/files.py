"""Atomic writing: an output file or directory appears complete or not at all.

Interrupted runs (Ctrl-C, SIGKILL, a full disk) leave at most a hidden `.tmp-*` staging entry
beside the target, never a truncated file or half-filled directory under the target's name. A
staging entry is flock-ed by the process writing it, so `remove_stale_staging` tells a dead run's
leftover from a live run's work (the kernel releases the lock when its process dies, even by
SIGKILL): commands run it on their outputs before working (`prepare_output`), and
`atomic_directory` on its target before staging it anew.
"""
import contextlib
import errno
import fcntl
import hashlib
import logging
import os
import re
import shutil
import socket
import tempfile
import uuid
from typing import List, Optional, Sequence

import numpy as np

LOCK_FILE = ".lock"
_log = logging.getLogger(__name__)
WRITE_ERRORS = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded",
                errno.EROFS: "read-only file system", errno.EACCES: "permission denied",
                errno.EPERM: "operation not permitted"}
"""The errors of a place that cannot take an output, and how the commands name them."""
_TENSORFLOW_WRITE_ERROR = re.compile(
    r"(?P<path>[^\s;{}]+); (?P<reason>" + "|".join(re.escape(os.strerror(n)) for n in WRITE_ERRORS) + ")")
_SHORT_WRITE = re.compile(r"\d+ requested and \d+ written")
"""numpy's error for a write the file system took only part of (`ndarray.tofile`, as `np.save`
writes to a file), an OSError without errno."""
_STAGING_FILE = r"\.tmp-[a-z0-9_]{{8}}-{name}"
_STAGING_DIRECTORY = r"\.tmp-{name}-[0-9a-f]{{32}}"
"""The names `atomic_open` (mkstemp's 8 random characters) and `atomic_directory` (a uuid4) give
the staging entry of a target called `name`."""


class OutputError(OSError):
    """An output that cannot be written: a full disk, a read-only or forbidden place. Its message
    names the path and the reason in one line."""

    def __str__(self):
        return self.strerror


def write_error(path: str, error: OSError) -> OutputError:
    """`error` (one of WRITE_ERRORS) met writing `path`, as one line naming the place."""
    if _SHORT_WRITE.fullmatch(str(error)):  # the file system took part of it, most often as it filled
        reason = f"the write stopped short ({error}; is the disk full?)"
    else:
        reason = WRITE_ERRORS.get(error.errno) or (error.strerror or str(error)).lower()
    return OutputError(error.errno, f"{path}: cannot write there: {reason}")


def output_error_of(error: BaseException) -> Optional[OutputError]:
    """`error` as an OutputError when it is one of WRITE_ERRORS: an OSError, or TensorFlow's
    error for one (whose message reads "PATH; No space left on device"); None otherwise."""
    if isinstance(error, OutputError):
        return error
    if isinstance(error, OSError) and error.errno in WRITE_ERRORS:
        return write_error(error.filename or "the output", error)
    if type(error).__module__.startswith("tensorflow"):
        match = _TENSORFLOW_WRITE_ERROR.search(str(error))
        if match:
            number = next(n for n in WRITE_ERRORS if os.strerror(n) == match.group("reason"))
            return write_error(match.group("path"), OSError(number, match.group("reason")))
    return None


def check_writable(path: str, directory_output: bool = False) -> None:
    """Refuses, before any work, an output `path` (file or directory, existing or not) whose
    directory cannot take a file: read-only, forbidden or full. A page is written and synced
    there and removed, so a disk too full for even that fails now rather than after the work.
    With `directory_output` (a model or export directory), a `path` that is a file is refused too,
    rather than met later as os.makedirs' bare "[Errno 17] File exists"."""
    if directory_output and os.path.lexists(path) and not os.path.isdir(path):
        raise OutputError(errno.ENOTDIR, f"{path}: is a file, not a directory; give a directory (or a path that "
                                         "does not exist yet)")
    directory = os.path.abspath(path)
    if not os.path.isdir(directory):  # a file's place is its directory
        directory = os.path.dirname(directory)
    while not os.path.exists(directory):
        directory = os.path.dirname(directory)
    if not os.path.isdir(directory):
        raise OutputError(errno.ENOTDIR, f"{path}: cannot write there: {directory} is not a directory")
    probe = os.path.join(directory, f".tmp-{uuid.uuid4().hex}-write-check")
    try:
        handle = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as e:
        raise write_error(path, e) from None
    try:
        os.write(handle, bytes(4096))
        os.fsync(handle)
    except OSError as e:
        raise write_error(path, e) from None
    finally:
        os.close(handle)
        with contextlib.suppress(FileNotFoundError):
            os.remove(probe)


def remove_stale_staging(directory: str, name_pattern: str) -> List[str]:
    """Deletes the staging entries in `directory` of targets whose name matches the regular
    expression `name_pattern` (`atomic_open`'s `.tmp-<8 random characters>-NAME`, `atomic_directory`'s
    `.tmp-NAME-UUID`) that no live process writes; returns their names. Entries of other targets,
    and those a running process holds, are left alone."""
    if not os.path.isdir(directory):
        return []
    staging = re.compile("|".join(form.format(name=f"(?:{name_pattern})")
                                  for form in (_STAGING_FILE, _STAGING_DIRECTORY)))
    removed = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if staging.fullmatch(name) and not _held(path):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.remove(path)
            removed.append(name)
    return removed


def prepare_output(path: str) -> List[str]:
    """What every command does with an output before working: removes the staging entries that
    killed runs left for it (`remove_stale_staging`; freeing their space first), then checks the
    place takes a file (`check_writable`). Returns the names removed."""
    target = os.path.abspath(path)
    removed = remove_stale_staging(os.path.dirname(target), re.escape(os.path.basename(target)))
    check_writable(path)
    return removed


def _held(path: str) -> bool:
    """Whether a live process holds the flock of `path` (a staging entry being written); an entry
    that cannot be opened or locked counts as held, so it is left alone."""
    try:
        handle = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if os.path.isdir(path) else 0))
    except OSError:
        return True
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:  # held by a live run, or a file system without flock: left alone
        return True
    finally:
        os.close(handle)


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
    fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes or the process dies
    os.chmod(tmp, _process_mode())
    try:
        with os.fdopen(handle, mode, encoding=None if "b" in mode else encoding) as f:
            yield f
        os.replace(tmp, path)
    except OSError as error:
        if not isinstance(error, OutputError) and error.filename is None and (
                error.errno in WRITE_ERRORS or _SHORT_WRITE.fullmatch(str(error))):
            raise write_error(path, error) from None  # a failed write or flush names no file
        raise
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
    would hide the result from a server running as another user. The run holds an flock on it,
    and first removes the staging directories that killed runs left for `path`
    (`remove_stale_staging`). An OutputError names `path` when its parent cannot be written.
    """
    path = os.path.abspath(path)
    parent, name = os.path.split(path)
    staging = os.path.join(parent, f".tmp-{name}-{uuid.uuid4().hex}")
    try:
        os.makedirs(parent, exist_ok=True)
        for removed in remove_stale_staging(parent, re.escape(name)):
            _log.warning("removed %s, left in %s by an interrupted run", removed, parent)
        os.mkdir(staging)
    except OSError as error:
        raise write_error(path, error) from None
    held = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with contextlib.suppress(OSError):  # a file system without flock on directories: its leftovers stay
            fcntl.flock(held, fcntl.LOCK_EX)  # released when closed or when the process dies
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
        os.close(held)
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


def lock_holder(directory: str) -> Optional[str]:
    """Who holds `directory_lock(directory)` now (its "pid N on HOST" line), or None when nobody
    does; the lock is only tested, never kept."""
    try:
        handle = open(os.path.join(directory, LOCK_FILE), encoding="utf-8")  # pylint: disable=consider-using-with
    except FileNotFoundError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return handle.read().strip() or "another process"
        fcntl.flock(handle, fcntl.LOCK_UN)
    return None


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
        for block in iter(lambda: f.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def file_fingerprint(path: str) -> dict:
    """Size, modification time and SHA-256 of a file's content: what tells a file from another
    written under the same name."""
    status = os.stat(path)
    return {"size": status.st_size, "mtime": status.st_mtime, "sha256": file_sha256(path)}
