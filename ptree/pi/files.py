"""Durable-file primitives: fsync'ed temporary files, whole writes, directory syncs,
and the lock a :class:`~ptree.pi.SessionWriter` holds (a replace must not race it).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path

from .errors import SessionLockedError

__all__ = ["lock_existing", "replace_file", "sync_directory", "write_all", "write_temp"]


def lock_existing(path: Path) -> int | None:
    """Lock the file now at ``path`` (if any) for the replace, or raise if a writer has it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise SessionLockedError(
            os.fspath(path),
            "a SessionWriter holds this file: replacing it would lose "
            "that writer's commits; close the writer first",
        ) from None
    except OSError:  # pragma: no cover - a file system without locks
        pass
    return fd


def replace_file(path: Path, data: bytes) -> None:
    try:
        mode: int | None = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    tmp = write_temp(path, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    sync_directory(path.parent)


def write_temp(path: Path, data: bytes, mode: int | None = None) -> str:
    """A temporary file beside ``path`` holding ``data``, on the disk; return its name.

    It gets ``mode``, or what a new file gets under the umask.  If writing fails it
    is removed again and the error raised: the caller renames or links it into place.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            write_all(fd, data)
            if mode is None:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def sync_directory(directory: Path) -> None:
    """Flush a directory's entries (a new or renamed file) to disk, where possible."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:  # pragma: no cover - platforms that cannot open a directory
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - file systems that refuse
        pass
    finally:
        os.close(fd)
