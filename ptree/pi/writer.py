"""The append-only writer of a live session: :class:`SessionWriter`.

A writer owns one session file.  Each :meth:`~SessionWriter.commit` takes a newer
value of the tree and appends only what changed since the last committed value: the
new entries, then a ``leaf`` record when the leaf ended up somewhere else than the last
entry written (a move without an append).  Whole lines only, in one ``write`` call,
so a reader never sees half a commit that the writer thinks is done.

A commit is all or nothing, even when the process is killed in the middle of its
write (a big write reaches the file in parts) or the disk fills up.  The protocol is
:mod:`ptree.pi.commits`'s, which the ``jsonl:`` store follows too: a commit of one line
is whole or a torn line, which readers skip; a commit of several lines marks each of
them with ``"ptreeBatch": [k, n]`` (line ``k`` of ``n``): ptree's reader takes the mark
off and skips a commit whose ``n`` lines are not all there, with a warning, in both
modes.  Pi's readers ignore the field (an unknown field), so Pi reads the file as
before; it does see the lines of an unfinished commit (ptree does not) until the next
writer opens the file: holding the lock, it removes them (with a warning), and from
then on Pi and ptree read the same entries.  Meanwhile a tree loaded from the file
gives later entries ids past theirs (:attr:`~ptree.SessionTree.counter`): no id is
ever in the file twice.  What a power cut can
still do: with ``fsync=True`` nothing that ``commit`` returned is lost; the commit
being written may be lost whole (its lines, whole or torn, are skipped).  Without
``fsync``, the commits since the last :meth:`~SessionWriter.sync` may be lost, the
newest first, each whole; a file system that does not keep the order of its writes
may keep a later block and not an earlier one, which the marks also detect (a
commit with a hole is skipped) but which can leave a torn line inside the file, read as
such.

Durability policy (``fsync``):

- ``fsync=True`` (the default): each commit is flushed to the disk (``os.fsync``)
  before ``commit`` returns.  A commit that returned survives a crash of the process
  and of the machine.
- ``fsync=False``: each commit is handed to the operating system before ``commit``
  returns (it survives the process being killed), and flushed to the disk by
  :meth:`~SessionWriter.sync` and :meth:`~SessionWriter.close`; a power cut may lose
  the commits since the last sync.  Much faster for many small commits.

A file opened for writing is locked (``flock``); a second writer on it gets
:class:`~ptree.SessionLockedError`.  Readers (:func:`~ptree.load`) take no lock.

A torn last line (a crash in the middle of a write) is removed by the next writer that
opens the file, as an unfinished commit is; a commit never glues onto torn bytes.
Nothing else is ever truncated or rewritten: lines another program appended stay.

A write the disk refuses (full, read-only, over ``RLIMIT_FSIZE``) raises
:class:`~ptree.SessionWriteError`, naming the file; the lines written before the
failure are an unfinished commit, which every ptree reader skips.
"""

from __future__ import annotations

import fcntl
import os
import stat
import threading
import warnings
from pathlib import Path

from ..closing import Closing
from ..errors import SessionError
from ..header import CURRENT_VERSION, SessionHeader
from ..tree import SessionTree
from .commits import commit_bytes, unfinished_tail
from .errors import SessionFileError, SessionFileWarning, SessionLockedError
from .files import stamp_of, sync_directory, with_stamp, write_all, write_new, writing
from .lines import StrPath, encode_line
from .reader import read_state
from .whole_file import file_bytes, header_of

__all__ = ["CommitError", "SessionWriter"]


class CommitError(SessionError, ValueError):
    """A value that cannot be appended to the file: it did not grow from the last commit.

    Attributes:
        path: the writer's file.
        reason: what is wrong, and what to do instead.
    """

    def __init__(self, path: object, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (CommitError, (self.path, self.reason))


class SessionWriter(Closing):
    """Appends each new value of a session tree to its file: a durable live session.

    Opening a path that does not exist (or an empty file) writes a header: ``header``
    if given, else a new one.  Opening an existing file loads it (with ``strict``);
    that tree is the committed value, :attr:`value`.  Then grow the tree as usual and
    commit the new values; each commit appends only what changed::

        with SessionWriter(path) as w:
            t = w.value.append({"role": "user", "content": "hi"})
            w.commit(t)

    Reopening the file gives back exactly the last committed value: entries, leaf,
    labels, header.

    Args:
        path: the session file (version 3; an older file must be converted first:
            ``SessionWriter.create(new_path, load(old_path))``).
        fsync: the durability policy (see the module doc): ``True`` flushes each
            commit to the disk, ``False`` only on :meth:`sync` and :meth:`close`.
        strict: how to load an existing file (see :func:`~ptree.load`).
        header: the header of a new file (default: a new session here).

    Raises:
        SessionLockedError: another writer holds the file.
        SessionFileError: the file cannot be loaded, or is not version 3.

    >>> import tempfile, os
    >>> from ptree import load
    >>> d = tempfile.mkdtemp()
    >>> path = os.path.join(d, "live.jsonl")
    >>> with SessionWriter(path) as w:
    ...     t = w.commit(w.value.append({"role": "user", "content": "hi"}))
    ...     t = w.commit(t.append({"role": "assistant", "content": "hello"}).move_to("e1"))
    >>> again = load(path)
    >>> again == t, again.leaf_id
    (True, 'e1')
    """

    def __init__(
        self,
        path: StrPath,
        *,
        fsync: bool = True,
        strict: bool = True,
        header: SessionHeader | None = None,
    ) -> None:
        self._path = os.fspath(path)
        self._real = os.path.realpath(self._path)
        self._fsync = fsync
        self._lock = threading.Lock()
        self._fd = -1
        self._broken: str | None = None
        self._dirty = False
        fd = _open_locked(self._path)
        try:
            self._open(fd, strict, header)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def _open(self, fd: int, strict: bool, header: SessionHeader | None) -> None:
        data = _read_all(fd)
        if not data:
            header = header if header is not None else SessionHeader.new()
            if header.version != CURRENT_VERSION:
                raise SessionFileError(
                    self._path,
                    None,
                    f"a new file is written as version {CURRENT_VERSION}, not {header.version}",
                )
            with writing(self._path):
                write_all(fd, encode_line(header.to_json()))
                os.fsync(fd)
            sync_directory(Path(self._path).resolve().parent)
            self._committed = with_stamp(
                SessionTree(header=header), self._path, stamp_of(os.fstat(fd))
            )
            self._ends_clean = True
            self._leaf_ids: set[str] = set()
            self._file_leaf: str | None = None
            return
        cut = unfinished_tail(data)
        if cut < len(data):
            data = self._remove_unfinished(fd, data, cut)
        state = read_state(self._path, data, strict=strict)
        if state.version != CURRENT_VERSION:
            # Older files need migrating; a newer version may mean lines this writer
            # does not know how to write: either way, never append to it.
            raise SessionFileError(
                self._path,
                1,
                f"a version {state.version} file: appending version "
                f"{CURRENT_VERSION} entries to it would mix formats; convert it first, "
                "with SessionWriter.create(new_path, load(path)) or dump(load(path), new_path)",
            )
        self._committed = with_stamp(state.tree, self._path, stamp_of(os.fstat(fd)))
        self._ends_clean = state.ends_clean
        self._leaf_ids = state.leaf_ids
        self._file_leaf = state.tree.leaf_id

    def _remove_unfinished(self, fd: int, data: bytes, cut: int) -> bytes:
        """Truncate what a commit cut short left at the end (we hold the lock, so its
        writer is gone): Pi would read its whole lines, ptree skips them; after this
        both read the same.  Warns, as loading the file would."""
        with writing(self._path):
            os.ftruncate(fd, cut)
            os.fsync(fd)
        warnings.warn(
            SessionFileWarning(
                f"{self._path}: removed the last {len(data) - cut} bytes, what a commit "
                "cut short left (a process stopped while writing it); Pi would have read "
                "its whole lines",
                path=self._path,
                reason="an unfinished commit (a process stopped while writing it)",
                strict_too=True,
            ),
            stacklevel=4,
        )
        return data[:cut]

    @classmethod
    def create(cls, path: StrPath, tree: SessionTree, *, fsync: bool = True) -> SessionWriter:
        """A new file holding ``tree`` (atomically: all of it or nothing), open for commits.

        ``tree``'s header is kept (written as version 3); a tree without one gets a
        new header.  Cost: O(size of the tree): the file is written (and flushed to
        the disk) once, then opened and read back once.

        Args:
            path: the new file; nothing may be there yet.
            tree: what the file holds at first (:attr:`value` equals it).
            fsync: the durability policy of the writer's commits (see the class).

        Raises:
            SessionExistsError: (a ``FileExistsError``) something is at ``path``;
                never overwritten.
            SessionWriteError: (an ``OSError``) the file cannot be written (a full
                disk, a read-only directory), naming ``path``; no file is left.
        """
        target = Path(path)
        header = header_of(tree)
        tree = tree if header is tree.header else tree.with_header(header)
        data = file_bytes(tree, header)
        write_new(target, data)  # never replaces a file, nor writes through a link
        made = os.stat(target)
        try:
            writer = cls(target, fsync=fsync)
        except BaseException:
            _remove_if_same(target, made)  # all or nothing: no file it cannot open
            raise
        if writer._committed != tree:  # pragma: no cover - dump and load disagree
            writer.close()
            _remove_if_same(target, made)
            raise SessionFileError(os.fspath(target), None, "the new file reads back wrong")
        writer._committed = with_stamp(tree, target, stamp_of(os.fstat(writer._fd)))
        return writer

    # ------------------------------------------------------------------ reading

    @property
    def path(self) -> str:
        """The file."""
        return self._path

    @property
    def value(self) -> SessionTree:
        """The last committed value (the loaded tree right after opening)."""
        return self._committed

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._fd < 0

    @property
    def fsync(self) -> bool:
        """The durability policy: ``True`` if every commit is flushed to the disk."""
        return self._fsync

    # ------------------------------------------------------------------ writing

    def commit(self, tree: SessionTree) -> SessionTree:
        """Append what ``tree`` adds to the last committed value; it becomes committed.

        Writes the new entries, then a ``leaf`` record if the leaf is not the last
        entry written; nothing at all if nothing changed.  Returns when the lines are
        written (and, with ``fsync=True``, on the disk).

        Cost: O(size of what changed), never O(size of the tree).

        Returns:
            the committed value: equal to ``tree`` (with the file's header if it had
            none), its header noting the file as it is now
            (:attr:`~ptree.SessionHeader.origin`): grow the next value from it.
            Reopening the file gives a value equal to it.

        Raises:
            CommitError: ``tree`` did not grow from the committed value (entries
                were dropped or are different), or has another header; to save such
                a tree, ``dump`` it to a new file.
            ValueError: the writer is closed, or an earlier write failed.
            SessionWriteError: (an ``OSError``) the write failed (a full disk, say);
                what was written of it is truncated away, the committed value is
                unchanged, and the next commit goes on once the fault is gone.  If
                even the truncation failed, the writer refuses further commits
                (``ValueError``): reopen the file, which removes the unfinished commit.
        """
        with self._lock:
            if self._fd < 0:
                raise ValueError(f"{self._path}: the writer is closed")
            if self._broken is not None:
                raise ValueError(
                    f"{self._path}: an earlier write failed ({self._broken}); reopen the file"
                )
            committed = self._committed
            header = tree.header
            if header is None:
                tree = tree.with_header(committed.header)
            elif header is not committed.header and header != committed.header:
                raise CommitError(
                    self._path,
                    "the tree has another header than the file; an appended "
                    "file keeps its header: dump(tree, new_path) to write a new file",
                )
            added = tree.added_since(committed)
            if added is None:
                raise CommitError(
                    self._path,
                    "the tree did not grow from the last committed value "
                    "(it lacks entries that the file has); a file only grows: "
                    "dump(tree, new_path) to save this tree as a new file",
                )
            for entry in added:
                if entry.id in self._leaf_ids:
                    raise CommitError(
                        self._path,
                        f"entry id {entry.id!r} is taken by a leaf record of "
                        "the file; give the entry another id",
                    )
            data, leaf_id = commit_bytes(
                tree,
                added,
                file_leaf=self._file_leaf,
                leaf_ids=self._leaf_ids,
                ends_clean=self._ends_clean,
            )
            if data:
                self._write(data)
                # The committed value notes the file as it is now: a later
                # dump(overwrite=True) of it (or of a tree grown from it) loses nothing.
                tree = with_stamp(tree, self._real, stamp_of(os.fstat(self._fd)), resolved=True)
                if leaf_id is not None:
                    self._leaf_ids.add(leaf_id)
                self._ends_clean = True
                self._file_leaf = tree.leaf_id
            self._committed = tree
            return tree

    def _write(self, data: bytes) -> None:
        before = os.fstat(self._fd).st_size
        try:
            with writing(self._path, "the commit was not made"):
                try:
                    write_all(self._fd, data)
                    if self._fsync:
                        os.fsync(self._fd)
                    else:
                        self._dirty = True
                except OSError:
                    # Nothing half-written stays (Pi would read its whole lines): we
                    # hold the lock, so the bytes past ``before`` are this commit's.
                    # The file is then as it was: the writer goes on once the fault is
                    # gone.  If this fails too, the writer is broken (below).
                    os.ftruncate(self._fd, before)
                    raise
        except SessionFileError as exc:
            if os.fstat(self._fd).st_size != before:
                self._broken = f"{type(exc).__name__}: {exc}"
            raise
        except BaseException as exc:
            self._broken = f"{type(exc).__name__}: {exc}"
            raise

    def sync(self) -> None:
        """Flush every commit so far to the disk (``os.fsync``).  For ``fsync=False``.

        Cost: one ``fsync`` if a commit is not on the disk yet, else O(1).  Does nothing
        on a closed writer.

        Raises:
            OSError: the system refuses the flush (an I/O error).
        """
        with self._lock:
            if self._fd >= 0 and self._dirty:
                os.fsync(self._fd)
                self._dirty = False

    def close(self) -> None:
        """Flush to the disk, release the lock, close the file.  Closing twice is fine.

        Cost: one ``fsync`` if a commit is not on the disk yet (``fsync=False``), else
        O(1).

        Raises:
            OSError: the final flush fails; the file is closed and its lock released
                all the same.
        """
        with self._lock:
            fd = self._fd
            if fd < 0:
                return
            self._fd = -1
            try:
                if self._dirty:
                    os.fsync(fd)
                    self._dirty = False
            finally:
                os.close(fd)  # closing the descriptor releases the flock

    def __repr__(self) -> str:
        state = "closed" if self._fd < 0 else f"{len(self._committed)} entries"
        return f"SessionWriter({self._path!r}, {state}, fsync={self._fsync})"


def _remove_if_same(path: Path, made: os.stat_result) -> None:
    """Remove the file ``create`` made at ``path``, if it is still that file."""
    try:
        now = os.lstat(path)
        if (now.st_dev, now.st_ino) == (made.st_dev, made.st_ino):
            os.unlink(path)
    except OSError:  # pragma: no cover - gone already, or not ours to remove
        pass


def _open_locked(path: str) -> int:
    """Open (or create) ``path`` for appending and lock it, or raise if it is locked."""
    for _ in range(10):
        with writing(path):  # a read-only file or directory: said at once, naming it
            fd = os.open(
                path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o666
            )
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise SessionFileError(
                    path, None, "not a regular file: a session is written to a regular file"
                )
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # dump() may have renamed another file over the path between our open and
            # our lock: then we hold a file nobody will read, so open again.
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                return fd
        except BlockingIOError:
            os.close(fd)
            raise SessionLockedError(path) from None
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raise SessionLockedError(path, "the file keeps being replaced while opening it")


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)
