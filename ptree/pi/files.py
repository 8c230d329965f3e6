"""Durable-file primitives: fsync'ed temporary files, whole writes, directory syncs,
the lock a :class:`~ptree.pi.SessionWriter` holds (a replace must not race it),
reading regular files only, and where a tree was read from (so that a replace does
not drop what another writer added since).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
import threading
import weakref
from pathlib import Path

from ..header import SessionHeader
from .errors import SessionFileError, SessionLockedError

__all__ = [
    "Stamp",
    "lock_existing",
    "read_regular",
    "recorded_stamp",
    "remember_stamp",
    "replace_file",
    "stamp_of",
    "sync_directory",
    "write_all",
    "write_new",
    "write_temp",
]

Stamp = tuple[int, int, int, int]
"""What identifies one state of a file: device, inode, size, modification time (ns)."""


def stamp_of(st: os.stat_result) -> Stamp:
    """The stamp of a file's ``stat``."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def read_regular(path: str | os.PathLike[str]) -> tuple[bytes, Stamp]:
    """The bytes of the regular file at ``path`` and its stamp (after the read; with
    a size of -1, which matches no file, if the file changed while it was read).

    Anything else is refused before a byte is read: a FIFO would wait for a writer
    forever, ``/dev/zero`` would fill the memory.  The file is opened without
    blocking (which changes nothing for a regular file) so that the check itself
    cannot wait.  O(size of the file).

    Raises:
        SessionFileError: not a regular file (nor a directory).
        IsADirectoryError: a directory.
        OSError: it cannot be opened or read.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(21, "is a directory", os.fspath(path))
        if not stat.S_ISREG(st.st_mode):
            kind = _KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file")
            kind = f"{kind}, not a regular file" if kind[0] == "a" else kind
            raise SessionFileError(os.fspath(path), None, f"{kind}: only regular files are read")
        chunks: list[bytes] = []
        while True:
            chunk = os.read(fd, max(st.st_size + 1, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
        data = b"".join(chunks)
        after = stamp_of(os.fstat(fd))
        if after != (st.st_dev, st.st_ino, len(data), st.st_mtime_ns):
            after = (after[0], after[1], -1, after[3])
        return data, after
    finally:
        os.close(fd)


# Where each header's tree was read from, and the file's stamp then: a header (kept
# by every tree grown from the one loaded) -> {real path: stamp}.  Keyed by identity,
# not by value (two loads of one file give equal headers), and dropped with the header.
_STAMPS: dict[int, tuple[weakref.ref[SessionHeader], dict[str, Stamp]]] = {}
_STAMPS_LOCK = threading.Lock()


def _forget(key: int) -> None:
    _STAMPS.pop(key, None)


def remember_stamp(
    header: SessionHeader | None,
    path: str | os.PathLike[str],
    st: Stamp,
    *,
    resolved: bool = False,
) -> None:
    """Note that trees with ``header`` hold the file at ``path`` as it was at ``st``
    (``resolved``: ``path`` is ``os.path.realpath``'s already)."""
    if header is None:
        return
    key = id(header)
    real = os.fspath(path) if resolved else os.path.realpath(path)
    with _STAMPS_LOCK:
        held = _STAMPS.get(key)
        if held is None or held[0]() is not header:

            def gone(_: weakref.ref[SessionHeader], key: int = key) -> None:
                _forget(key)

            held = (weakref.ref(header, gone), {})
            _STAMPS[key] = held
        held[1][real] = st


def recorded_stamp(header: SessionHeader | None, path: str | os.PathLike[str]) -> Stamp | None:
    """The stamp of ``path`` when trees with ``header`` were read from (or written to)
    it, or ``None`` if they never were."""
    if header is None:
        return None
    held = _STAMPS.get(id(header))
    if held is None or held[0]() is not header:
        return None
    return held[1].get(os.path.realpath(path))


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


def write_new(path: Path, data: bytes) -> None:
    """Write a new file at ``path`` holding ``data``, atomically, never replacing one.

    The data goes to a temporary file beside it, on the disk, then is linked in
    place: the link fails if anything is at ``path`` (a file, a link, even a dangling
    one), so nothing is ever overwritten or written through a link.

    Raises:
        FileExistsError: something is at ``path``.
        OSError: the file cannot be written.
    """
    tmp = write_temp(path, data)
    try:
        os.link(tmp, path)
    finally:
        os.unlink(tmp)
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
