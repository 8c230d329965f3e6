"""Durable-file primitives: fsync'ed temporary files, whole writes, directory syncs,
the lock a :class:`~ptree.pi.SessionWriter` holds (a replace must not race it),
reading regular files only, where a tree was read from (a value its header carries,
so that a replace does not drop what another writer added since), and the typed
error of a write the disk refuses, naming the file the caller asked for.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import attrs

from ..header import SessionHeader
from ..tree import SessionTree
from .errors import SessionExistsError, SessionFileError, SessionLockedError, SessionWriteError

__all__ = [
    "Stamp",
    "lock_existing",
    "os_error_reason",
    "read_regular",
    "recorded_stamp",
    "replace_file",
    "replacing",
    "stamp_of",
    "sync_directory",
    "with_stamp",
    "write_all",
    "write_new",
    "write_temp",
    "writing",
]

Stamp = tuple[int, int, int, int]
"""What identifies one state of a file: device, inode, size, modification time (ns)."""


def stamp_of(st: os.stat_result) -> Stamp:
    """The stamp of a file's ``stat``.  O(1).

    Args:
        st: what ``os.stat`` or ``os.fstat`` gave for the file.
    """
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


def with_stamp(
    tree: SessionTree, path: str | os.PathLike[str], st: Stamp, *, resolved: bool = False
) -> SessionTree:
    """``tree``, its header noting that it holds the file at ``path`` as it was at ``st``
    (``resolved``: ``path`` is ``os.path.realpath``'s already).  A value, not a cache:
    a pickled or copied tree carries it too (see :attr:`~ptree.SessionHeader.origin`).
    A tree without a header is returned as it is.  O(number of files noted).
    """
    header = tree.header
    if header is None:
        return tree
    real = os.fspath(path) if resolved else os.path.realpath(path)
    origin = (*(o for o in header.origin if o[0] != real), (real, st))
    return tree.with_header(attrs.evolve(header, origin=origin))


def recorded_stamp(header: SessionHeader | None, path: str | os.PathLike[str]) -> Stamp | None:
    """The stamp of ``path`` when trees with ``header`` were read from (or written to)
    it, or ``None`` if they never were.

    Cost: one ``os.path.realpath`` of ``path`` (a few system calls), then O(number of
    files noted in the header).

    Args:
        header: the header of the tree about to be written, or ``None``.
        path: the file, as the caller names it (links are resolved).
    """
    if header is None or not header.origin:
        return None
    real = os.path.realpath(path)
    for noted, st in header.origin:
        if noted == real:
            return st
    return None


def os_error_reason(exc: OSError) -> str:
    """What an ``OSError`` of a write means, in words (without the file it named).  O(1).

    Args:
        exc: the error a write, rename, link or fsync raised.

    >>> import errno
    >>> os_error_reason(OSError(errno.ENOSPC, "No space left on device"))
    'the disk is full'
    """
    number = exc.errno
    if number == errno.ENOSPC:
        return "the disk is full"
    if number == errno.EDQUOT:
        return "the disk quota is exceeded"
    if number == errno.EFBIG:
        return "the file size limit is reached (RLIMIT_FSIZE, or the file system's)"
    if number in (errno.EACCES, errno.EPERM):
        return "permission denied (a read-only directory or file?)"
    if number == errno.EROFS:
        return "a read-only file system"
    return exc.strerror or type(exc).__name__


@contextlib.contextmanager
def writing(path: str | os.PathLike[str], outcome: str = "nothing was written") -> Iterator[None]:
    """Turn an ``OSError`` raised while writing ``path`` (or a temporary file beside it)
    into a :class:`~ptree.SessionWriteError` that names ``path`` and says ``outcome``:
    a caller is never told about a temporary file it did not ask for.  ptree's own
    errors pass as they are.  Cost: O(1) beside the block's own work.

    Args:
        path: the file the caller asked to write, named by the error.
        outcome: what became of the file, the end of the error's message.

    Raises:
        SessionWriteError: (an ``OSError``) the block raised an ``OSError``.
    """
    try:
        yield
    except SessionFileError:
        raise
    except OSError as exc:
        raise SessionWriteError(
            os.fspath(path), exc.errno, f"{os_error_reason(exc)}: {outcome}"
        ) from exc


def lock_existing(path: Path) -> int | None:
    """Lock the file now at ``path`` (if any) for the replace, or raise if a writer has it.

    Cost: O(1): one ``open`` and one non-blocking ``flock``.

    Args:
        path: the file a replace is about to write.

    Returns:
        The descriptor holding the lock (the caller closes it once the replace is
        done), or ``None`` if nothing is at ``path``.

    Raises:
        SessionLockedError: a :class:`~ptree.SessionWriter` holds the file's lock.
        OSError: the file exists but cannot be opened.
    """
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
    """Replace the file at ``path`` (or make it) with one holding ``data``, atomically:
    a temporary file beside it, on the disk, renamed over it.  Its mode is kept.

    Cost: O(len(data)) to write, plus an ``fsync`` of the file and of its directory.

    Args:
        path: the file to replace or make.
        data: the file's new bytes, all of them.

    Raises:
        SessionWriteError: (an ``OSError``) the file cannot be written (a full disk, a
            read-only directory, a file the caller may not write), naming ``path``;
            the old file is as it was.
    """
    with writing(path):
        try:
            mode: int | None = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = None
        # A writable directory would let the rename replace a read-only file, but the
        # file's mode is its owner's "do not change" (rm and mv ask first): refused.
        if mode is not None and _read_only_file(path):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        with replacing(path, data, mode):
            pass  # nothing else to write before the rename
    sync_directory(path.parent)


@contextlib.contextmanager
def replacing(path: Path, data: bytes, mode: int | None = None) -> Iterator[str]:
    """A temporary file beside ``path`` holding ``data`` (as :func:`write_temp` makes
    it), renamed over ``path`` when the block ends; if the block or the rename raises,
    the temporary file is removed and ``path`` is as it was.

    The block gets the temporary file's name, to do what must happen before the
    rename (a store records the new file's state).  The caller syncs the directory
    (:func:`sync_directory`) when the rename must be durable.

    Args:
        path: the file to replace (or make).
        data: what the new file holds.
        mode: the new file's mode (default: what a new file gets under the umask).

    Raises:
        OSError: writing the temporary file or renaming it failed (the caller names
            ``path``: see :func:`writing`).

    Cost: O(len(data)), and one ``fsync``.
    """
    tmp = write_temp(path, data, mode)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _read_only_file(path: Path) -> bool:
    """A regular file at ``path`` that the caller may not write.  A symbolic link is
    replaced itself, so its target's mode does not count."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode) and not os.access(path, os.W_OK)
    except FileNotFoundError:
        return False


def write_new(path: Path, data: bytes) -> None:
    """Write a new file at ``path`` holding ``data``, atomically, never replacing one.

    The data goes to a temporary file beside it, on the disk, then is linked in
    place: the link fails if anything is at ``path`` (a file, a link, even a dangling
    one), so nothing is ever overwritten or written through a link.

    Cost: O(len(data)) to write, plus an ``fsync`` of the file and of its directory.

    Args:
        path: where the new file goes.
        data: the file's bytes, all of them.

    Raises:
        SessionExistsError: (a ``FileExistsError``) something is at ``path``.
        SessionWriteError: (an ``OSError``) the file cannot be written (a full disk,
            a read-only directory), naming ``path``.
    """
    if os.path.lexists(path):  # before writing anything: the usual case, said at once
        raise SessionExistsError(os.fspath(path))
    with writing(path):
        tmp = write_temp(path, data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise SessionExistsError(os.fspath(path)) from None
        finally:
            os.unlink(tmp)
    sync_directory(path.parent)


def write_temp(path: Path, data: bytes, mode: int | None = None) -> str:
    """A temporary file beside ``path`` holding ``data``, on the disk; return its name.

    It gets ``mode``, or what a new file gets under the umask.  If writing fails it
    is removed again and the error raised: the caller renames or links it into place.
    Cost: O(len(data)) to write, plus one ``fsync``.

    Args:
        path: the file the temporary one will become; it is made in its directory.
        data: the bytes to write.
        mode: the permission bits to give it (default: ``0o666`` less the umask).

    Raises:
        OSError: the file cannot be made or written (a full disk, a read-only
            directory); nothing is left behind.
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
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than asked).

    Cost: O(len(data)), in as many ``os.write`` calls as the system needs.

    Args:
        fd: a descriptor open for writing.
        data: the bytes to write.

    Raises:
        OSError: a write fails (a full disk, ...); part of ``data`` may be written.
    """
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def sync_directory(directory: Path) -> None:
    """Flush a directory's entries (a new or renamed file) to disk, where possible.

    Cost: one ``fsync`` of the directory.  A platform or file system that refuses is
    not an error: nothing is raised.

    Args:
        directory: the directory where a file was made or renamed.
    """
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
