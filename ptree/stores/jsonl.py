"""A directory of Pi session files as a store: ``jsonl:///abs/dir``.

Each session is one Pi session file (version 3, written as :func:`~ptree.dump` and
:class:`~ptree.SessionWriter` write them), so Pi opens the directory's files as they
are.  Sessions are found by the header id of every ``*.jsonl`` file, whatever its name;
a new session's file is named after its id (an id that is no safe file name is
percent-encoded, or hashed when long: never a path outside the directory).

A save appends to the file exactly as a :class:`~ptree.SessionWriter` commits
(:mod:`ptree.pi.commits`, the one owner of that protocol), holding the file's lock
(``flock``; taken per save, never held between saves, so any number of processes share
the directory, and a writer holding the file excludes them; loads take no lock, as
:func:`ptree.load` takes none, so they never wait): the lines of a save go
in one write, each marked ``[k, n]`` when there are several, so a save cut short (a
kill, a full disk) is skipped by every ptree reader, the store and :func:`ptree.load`
alike, and removed by the next save (or at once, when the write itself failed), after
which Pi reads the same entries too.  A load reads the file with ptree's reader: the
store and :func:`ptree.load` always read the same session from a file.

Beside each file the store keeps a small cache, ``.NAME.ptree`` (JSON lines, the last
record counts): the file's length, inode and modification time after the last save,
and what a save or a listing needs (entry count, leaf, the ids of leaf records, name,
time of the last save).  It is only a cache: when the file is not exactly as it
records (Pi appended, a save was cut short, the cache is missing or torn), the file is
read whole instead.  It is rewritten as its last record when it grows past 64 KiB.

Faults: a save the disk refuses raises :class:`~ptree.stores.StoreWriteError` naming
the session file, and leaves the file as it was; a file another process keeps locked
longer than the timeout (``jsonl:///dir?timeout=SECONDS``, default 10) raises
:class:`~ptree.stores.StoreLockedError`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import stat
import time
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import attrs

from ..entries import Entry
from ..header import CURRENT_VERSION, SessionHeader
from ..pi.commits import appended_entries, commit_bytes, finished_end, unfinished_tail
from ..pi.errors import SessionFileWarning
from ..pi.files import (
    os_error_reason,
    replace_file,
    replacing,
    sync_directory,
    write_all,
    write_temp,
)
from ..pi.lines import parse_line
from ..pi.readable import entry_text
from ..pi.reader import read_state
from ..pi.whole_file import file_parts
from ..tree import SessionTree
from ._base import Anchor, SessionSummary, Since, Store, header_payload
from ._plan import Disconnect, Plan, done
from ._prune import digest, refuse_pruned
from ._search import Query, SearchHit, entry_words, score, snippet
from .errors import (
    ConflictError,
    SessionNotFoundError,
    StoreError,
    StoreLockedError,
    StoreWriteError,
)

__all__ = ["JsonlStore", "file_name"]

_LOG_TAIL = 1 << 16  # the end of a state log read to find its last record
_LOG_LIMIT = 1 << 16  # a longer log is rewritten as its last record
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_STATE_FORMAT = 2  # 1 was the log of the old protocol (with pending records)
_PRUNED = "pruned-"  # starts the incarnation of a session a prune rewrote


def file_name(session_id: str) -> str:
    """The file name a new session gets: its id, if that is a safe file name, else
    ``%`` and the id percent-encoded (or hashed, if long).  Never a path.

    Cost: O(len(session_id)).

    Args:
        session_id: the session's id (its header's ``id``), any ``str``.

    >>> file_name("0b7e-11"), file_name("../etc/passwd"), file_name("a b")
    ('0b7e-11.jsonl', '%..%2Fetc%2Fpasswd.jsonl', '%a%20b.jsonl')
    """
    if _SAFE.fullmatch(session_id):
        return f"{session_id}.jsonl"
    encoded = quote(session_id, safe="", errors="surrogatepass")
    if len(encoded) > 150:
        encoded = (
            "sha256-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()
        )
    return f"%{encoded}.jsonl"


@attrs.define
class _State:
    """A file's state after the last save (what the cache records), or as just read."""

    ino: int
    length: int
    mtime_ns: int
    header: str
    count: int
    leaf: str | None
    leaf_ids: list[str]
    name: str | None
    updated: str
    incarnation: str
    clean: bool = True
    version: int = CURRENT_VERSION
    tree: SessionTree | None = None  # when the file was just read whole
    cut: int | None = None  # where a save cut short begins, when the file ends in one

    def to_json(self) -> dict[str, Any]:
        return {
            "format": _STATE_FORMAT,
            "ino": self.ino,
            "length": self.length,
            "mtime": self.mtime_ns,
            "header": self.header,
            "count": self.count,
            "leaf": self.leaf,
            "leafIds": self.leaf_ids,
            "name": self.name,
            "updated": self.updated,
            "incarnation": self.incarnation,
            "clean": self.clean,
        }

    @classmethod
    def written(
        cls, st: os.stat_result, length: int, tree: SessionTree, leaf_id: str | None, inc: str
    ) -> _State:
        """The state of a file just written whole from ``tree`` (its last line the leaf
        record ``leaf_id``, if any), as a new incarnation ``inc``."""
        header = tree.header
        assert header is not None
        return cls(
            ino=st.st_ino,
            length=length,
            mtime_ns=st.st_mtime_ns,
            header=header_payload(header),
            count=len(tree),
            leaf=tree.leaf_id,
            leaf_ids=[] if leaf_id is None else [leaf_id],
            name=tree.session_name,
            updated=_now(),
            incarnation=inc,
        )

    @classmethod
    def from_json(cls, obj: Any) -> _State | None:
        try:
            if obj.get("format") != _STATE_FORMAT:
                return None
            return cls(
                ino=int(obj["ino"]),
                length=int(obj["length"]),
                mtime_ns=int(obj["mtime"]),
                header=str(obj["header"]),
                count=int(obj["count"]),
                leaf=obj["leaf"],
                leaf_ids=list(obj["leafIds"]),
                name=obj["name"],
                updated=str(obj["updated"]),
                incarnation=str(obj["incarnation"]),
                clean=bool(obj["clean"]),
            )
        except (AttributeError, KeyError, TypeError, ValueError):
            return None


def _last_state(log: bytes) -> _State | None:
    """The state the last complete record of a cache gives (torn records skipped)."""
    for raw in reversed(log.split(b"\n")):
        try:
            record = json.loads(raw)
        except ValueError:
            continue  # a record cut short, or the start of the tail
        state = _State.from_json(record) if isinstance(record, dict) else None
        if state is not None:
            return state
    return None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class JsonlStore(Store):
    """Sessions as Pi session files in one directory (see the module doc).

    Args:
        url: the URL it was opened with (for messages).
        directory: the directory, created if missing.
        timeout: seconds to wait for a file another process is saving to, then
            :class:`~ptree.stores.StoreLockedError`.
        fsync: flush each save to the disk before it returns (default ``True``).

    Raises:
        StoreWriteError: the directory cannot be made.
    """

    def __init__(
        self, url: str, directory: str, *, timeout: float = 10.0, fsync: bool = True
    ) -> None:
        super().__init__(url)
        self._dir = Path(directory)
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreWriteError(url, directory, exc.errno, os_error_reason(exc)) from None
        self._timeout = timeout
        self._fsync = fsync
        self._index: dict[str, str] = {}
        self._inodes: dict[tuple[str, int], str] = {}  # (file name, inode) -> session id

    @property
    def directory(self) -> Path:
        """The directory of session files."""
        return self._dir

    # ------------------------------------------------------------------ the primitives

    # Files block: each primitive does its I/O where the plan asks for it (the async
    # protocol runs the whole plan in a worker thread).
    def _save(self, tree: SessionTree) -> Plan[Anchor]:
        return done(self._save_now(tree))

    def _load(self, session_id: str) -> Plan[Anchor]:
        return done(self._load_now(session_id))

    def _since(self, session_id: str, anchor: Anchor) -> Plan[Since | None]:
        return done(self._since_now(session_id, anchor))

    def _load_path(self, session_id: str) -> Plan[SessionTree]:
        return done(self._load_path_now(session_id))

    def _sessions(self) -> Plan[list[SessionSummary]]:
        return done(self._sessions_now())

    def _search(self, query: Query, limit: int, session: str | None) -> Plan[list[SearchHit]]:
        return done(self._search_now(query, limit, session))

    def _prune(
        self, session_id: str, anchor: Anchor, new: SessionTree, removed: tuple[Entry, ...]
    ) -> Plan[bool]:
        return done(self._prune_now(session_id, anchor, new, removed))

    def _delete(self, session_id: str) -> Plan[None]:
        self._delete_now(session_id)
        return done(None)

    def _exists(self, session_id: str) -> Plan[bool]:
        return done(self._exists_now(session_id))

    def _execute(self, step: Any) -> Any:
        if not isinstance(step, Disconnect):
            raise TypeError(f"not a step of a jsonl store: {step!r}")
        self._index.clear()

    # ------------------------------------------------------------------ finding files

    def _header_id(self, path: Path) -> str | None:
        try:
            # Without blocking, regular files only: a FIFO named *.jsonl in the
            # directory must not make a listing wait for a writer.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            with open(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return None
                first = f.readline(1 << 20)
            value = parse_line(first.decode("utf-8").lstrip("\ufeff").rstrip("\r\n"))
            return SessionHeader.from_json(value).id
        except (OSError, ValueError, UnicodeDecodeError, AttributeError):
            return None

    def _scan(self, *, full: bool = False) -> dict[str, str]:
        """Index every ``*.jsonl`` file by its header id.  A file indexed before, under
        the same name and inode, is not opened again (unless ``full``): a new session
        costs a directory listing, not a read of every file."""
        known = {} if full else self._inodes
        index: dict[str, str] = {}
        inodes: dict[tuple[str, int], str] = {}
        with os.scandir(self._dir) as listing:
            found = sorted((e.name, e.inode()) for e in listing if e.name.endswith(".jsonl"))
        for name, inode in found:
            sid = known.get((name, inode))
            if sid is None:
                sid = self._header_id(self._dir / name)
            if sid is not None:
                inodes[(name, inode)] = sid
                index.setdefault(sid, name)
        self._index = index
        self._inodes = inodes
        return index

    def _find(self, session_id: str) -> Path | None:
        for name in (self._index.get(session_id), file_name(session_id)):
            if name is not None:
                path = self._dir / name
                if self._header_id(path) == session_id:
                    self._index[session_id] = name
                    return path
        self._index.pop(session_id, None)  # not where the index said: look again
        name = self._scan().get(session_id)
        return None if name is None else self._dir / name

    def _state_path(self, path: Path) -> Path:
        return path.with_name(f".{path.name}.ptree")

    @contextmanager
    def _locked(self, session_id: str, exclusive: bool) -> Iterator[tuple[int, Path] | None]:
        """The session's file, open (and locked, if ``exclusive``: for a save or a
        delete); ``None`` if there is no such session.

        Readers take no lock, as :func:`ptree.load` takes none: what a save has not
        finished is marked as such in the file (an unfinished commit, a torn line),
        and every reader skips it (a reader finding one asks for a shared lock without
        waiting, to tell a save in progress from a crash's remains: see
        :meth:`_committed`).  So loads never wait, and never starve a save (a
        shared ``flock`` held by loaders in a loop kept savers out for over 10 s).
        """
        while True:
            path = self._find(session_id)
            if path is None:
                yield None
                return
            try:
                # A load needs no write access: a read-only file still loads.
                fd = os.open(path, (os.O_RDWR if exclusive else os.O_RDONLY) | os.O_CLOEXEC)
            except FileNotFoundError:
                self._index.pop(session_id, None)
                continue
            except OSError as exc:
                raise self._write_error(path, exc) from None
            try:
                if exclusive:
                    self._lock_fd(fd, path)
                st = os.fstat(fd)
                try:
                    same = st.st_nlink > 0 and os.stat(path).st_ino == st.st_ino
                except FileNotFoundError:
                    same = False
                if same:
                    yield fd, path
                    return
            finally:
                os.close(fd)  # releases the lock
            self._index.pop(session_id, None)  # deleted or replaced meanwhile: again

    def _lock_fd(self, fd: int, path: Path) -> None:
        mode = fcntl.LOCK_EX | fcntl.LOCK_NB
        deadline = time.monotonic() + self._timeout
        pause = 0.0005
        while True:
            try:
                fcntl.flock(fd, mode)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StoreLockedError(self._url, self._timeout, os.fspath(path)) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.002)

    # ------------------------------------------------------------------ file state

    def _write_error(self, path: Path, exc: OSError) -> StoreWriteError:
        return StoreWriteError(self._url, os.fspath(path), exc.errno, os_error_reason(exc))

    def _read_state_file(self, path: Path) -> _State | None:
        """The state the cache records, if it can be read."""
        try:
            with open(self._state_path(path), "rb") as f:
                size = os.fstat(f.fileno()).st_size
                f.seek(max(0, size - _LOG_TAIL))
                tail = f.read()
                state = _last_state(tail)
                if state is None and size > _LOG_TAIL:  # pragma: no cover - a huge record
                    f.seek(0)
                    state = _last_state(f.read())
                return state
        except OSError:
            return None

    def _write_state_file(self, path: Path, state: _State) -> None:
        """Append the state to the cache (a new cache, atomically, when it is long).

        Only a cache: it is not flushed to the disk, and a failure to write it (a full
        disk) is no failure of the save, which is in the file already; the next
        operation then finds the cache stale and reads the file whole.
        """
        target = self._state_path(path)
        line = json.dumps(state.to_json(), ensure_ascii=True).encode("ascii") + b"\n"
        try:
            if os.stat(target).st_size > _LOG_LIMIT:
                replace_file(target, line)
                return
        except OSError:
            pass
        try:
            fd = os.open(target, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError:
            return
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line  # after a record cut short: start afresh
            write_all(fd, line)
        except OSError:
            # Half a record is skipped by readers; a full one would be right anyway.
            pass
        finally:
            os.close(fd)

    def _committed(self, fd: int, path: Path, *, locked: bool = True) -> _State:
        """The file's state: the cache's, when the file is exactly as the cache says;
        else read whole (with ``tree`` set, and ``cut`` if it ends in a save cut short).

        ``locked=False`` (a reader, which holds no lock): a file that ends unfinished
        is either a save in progress or what a crash left.  If a saver holds the lock,
        it is the save's: the file is read up to its finished writes, and nothing is
        reported.  Else it is a crash's: the file is read again holding a shared lock
        for that moment only (no saver can write meanwhile), and the reader reports
        what it skips, as :func:`ptree.load` does.
        """
        st = os.fstat(fd)
        state = self._read_state_file(path)
        if state is not None and (state.ino, state.length, state.mtime_ns) == (
            st.st_ino,
            st.st_size,
            st.st_mtime_ns,
        ):
            return state
        # No cache, or the file changed under it (Pi appended, a save was cut short,
        # it was replaced): read it whole, as ptree.load reads it.
        data = _pread_all(fd, st.st_size)
        if not locked and finished_end(data) < len(data):
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:  # a save is writing: what it had finished
                data = data[: finished_end(data)]
            else:
                try:
                    st = os.fstat(fd)
                    data = _pread_all(fd, st.st_size)
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
        read = read_state(os.fspath(path), data)
        cut = unfinished_tail(data)
        tree = read.tree
        header = tree.header
        assert header is not None
        return _State(
            ino=st.st_ino,
            length=len(data),
            mtime_ns=st.st_mtime_ns,
            header=header_payload(header),
            count=len(tree),
            leaf=tree.leaf_id,
            leaf_ids=sorted(read.leaf_ids),
            name=tree.session_name,
            updated=datetime.fromtimestamp(st.st_mtime, UTC).isoformat(timespec="microseconds"),
            incarnation=uuid.uuid4().hex,
            clean=read.ends_clean,
            tree=tree,
            version=read.version,
            cut=cut if cut < len(data) else None,
        )

    # ------------------------------------------------------------------ protocol

    def _load_now(self, session_id: str) -> Anchor:
        with self._locked(session_id, exclusive=False) as found:
            if found is None:
                raise SessionNotFoundError(session_id, self._url)
            fd, path = found
            state = self._committed(fd, path, locked=False)
            tree = state.tree
            if tree is None:
                tree = read_state(os.fspath(path), _pread_all(fd, state.length)).tree
        return Anchor(tree, state.incarnation, state.count, state.length)

    def _since_now(self, session_id: str, anchor: Anchor) -> Since | None:
        with self._locked(session_id, exclusive=False) as found:
            if found is None:
                raise SessionNotFoundError(session_id, self._url)
            fd, path = found
            state = self._committed(fd, path, locked=False)
            if (
                state.tree is not None
                or state.incarnation != anchor.incarnation
                or state.length < anchor.position
            ):
                return None  # changed by someone else, or made anew: read it whole
            added = _entries_in(fd, anchor.position, state.length, os.fspath(path))
        return Since(added, state.leaf, state.incarnation, state.count, state.length)

    def _load_path_now(self, session_id: str) -> SessionTree:
        tree = self._load_now(session_id).tree
        return SessionTree.from_entries(tree.path(), leaf_id=tree.leaf_id, header=tree.header)

    def _save_now(self, tree: SessionTree) -> Anchor:
        header = tree.header
        assert header is not None
        sid = header.id
        while True:
            with self._locked(sid, exclusive=True) as found:
                if found is not None:
                    return self._append(tree, *found)
            anchor = self._create(tree)
            if anchor is not None:
                return anchor

    def _create(self, tree: SessionTree) -> Anchor | None:
        """Write a new session's file whole, atomically; ``None`` if one appeared meanwhile."""
        header = tree.header
        assert header is not None
        data, leaf_id = file_parts(tree, header)
        name = file_name(header.id)
        target = self._dir / name
        n = 1
        while target.exists():
            if self._header_id(target) == header.id:
                return None  # another process created it: save into it instead
            n += 1
            target = self._dir / name.replace(".jsonl", f"-{n}.jsonl")
        try:
            tmp = write_temp(target, data)
        except OSError as exc:
            raise self._write_error(target, exc) from None
        try:
            os.link(tmp, target)  # never replaces a file
        except FileExistsError:
            return None
        except OSError as exc:
            raise self._write_error(target, exc) from None
        finally:
            os.unlink(tmp)
        sync_directory(self._dir)
        self._index[header.id] = target.name
        state = _State.written(os.stat(target), len(data), tree, leaf_id, uuid.uuid4().hex)
        self._write_state_file(target, state)
        return Anchor(tree, state.incarnation, state.count, state.length)

    def _append(self, tree: SessionTree, fd: int, path: Path) -> Anchor:
        header = tree.header
        assert header is not None
        sid = header.id
        state = self._committed(fd, path)
        if state.version != CURRENT_VERSION:
            # As SessionWriter: appending version 3 lines would mix formats.
            raise StoreError(
                self._url,
                f"{path.name} is a version {state.version} file: ptree appends only to "
                f"version {CURRENT_VERSION} files; convert it first "
                "(ptree.dump(ptree.load(path), path, overwrite=True) rewrites it as version 3)",
            )
        count = state.count
        base, tail = self._grown_from(tree, state.header, count, state.incarnation)
        if base is not None:
            stored = _entries_in(fd, base.position, state.length, os.fspath(path))
        else:
            stored_tree = state.tree
            if stored_tree is None:
                data = _pread_all(fd, state.length)
                stored_tree = read_state(os.fspath(path), data).tree
            stored = list(stored_tree.entries())
        for i, entry in enumerate(stored):
            if i >= len(tail) or tail[i] != entry:
                raise ConflictError(
                    sid,
                    self._url,
                    f"the stored entry {entry.id!r} differs from the tree's: another "
                    "writer saved since this tree was loaded, or it is not a later "
                    "version of the session",
                )
        new = tail[len(stored) :]
        if new and state.incarnation.startswith(_PRUNED):
            self._refuse_pruned(path, sid, new)
        taken = set(state.leaf_ids)
        for entry in new:
            if entry.id in taken:
                raise StoreError(
                    self._url,
                    f"session {sid!r}: entry id {entry.id!r} is taken by a leaf record "
                    "of the file; give the entry another id",
                )
        if state.cut is not None:
            # A save cut short: every ptree reader skips its lines, Pi reads them;
            # holding the lock, remove them, so that all read the same again.
            self._truncate(fd, path, state.cut)
            state = attrs.evolve(state, length=state.cut, clean=True, cut=None)
        if not new and tree.leaf_id == state.leaf:
            return Anchor(tree, state.incarnation, count, state.length)
        data, leaf_id = commit_bytes(
            tree, new, file_leaf=state.leaf, leaf_ids=taken, ends_clean=state.clean
        )
        try:
            os.lseek(fd, state.length, os.SEEK_SET)
            write_all(fd, data)
            if self._fsync:
                _sync(fd)
        except OSError as exc:
            # Nothing half-written stays: the lines written so far go again.
            with contextlib.suppress(OSError):
                os.ftruncate(fd, state.length)
            raise self._write_error(path, exc) from None
        st = os.fstat(fd)
        committed = attrs.evolve(
            state,
            length=st.st_size,
            mtime_ns=st.st_mtime_ns,
            count=len(tree),
            leaf=tree.leaf_id,
            leaf_ids=state.leaf_ids if leaf_id is None else [*state.leaf_ids, leaf_id],
            name=tree.session_name,
            updated=_now(),
            clean=True,
            tree=None,
        )
        self._write_state_file(path, committed)
        return Anchor(tree, state.incarnation, len(tree), committed.length)

    def _truncate(self, fd: int, path: Path, length: int) -> None:
        try:
            os.ftruncate(fd, length)
            if self._fsync:
                _sync(fd)
        except OSError as exc:
            raise self._write_error(path, exc) from None

    def _sessions_now(self) -> list[SessionSummary]:
        out: list[SessionSummary] = []
        for sid in list(self._scan(full=True)):
            with self._locked(sid, exclusive=False) as found:
                if found is None:
                    continue
                fd, path = found
                try:
                    state = self._committed(fd, path, locked=False)
                except (ValueError, OSError) as exc:
                    # One bad file must not hide the others; say which, and why.
                    warnings.warn(
                        SessionFileWarning(
                            f"{path}: not listed: {exc}", path=os.fspath(path), reason=str(exc)
                        ),
                        stacklevel=4,
                    )
                    continue
            out.append(
                SessionSummary(sid, state.name, state.count, datetime.fromisoformat(state.updated))
            )
        out.sort(key=lambda s: s.id)
        out.sort(key=lambda s: s.updated, reverse=True)
        return out

    def _delete_now(self, session_id: str) -> None:
        with self._locked(session_id, exclusive=True) as found:
            if found is None:
                raise SessionNotFoundError(session_id, self._url)
            _fd, path = found
            try:
                os.unlink(path)
            except OSError as exc:
                raise self._write_error(path, exc) from None
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._state_path(path))
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._pruned_path(path))
            sync_directory(self._dir)
        self._index.pop(session_id, None)

    def _exists_now(self, session_id: str) -> bool:
        return self._find(session_id) is not None

    # ------------------------------------------------------------------ scale (issue 25)

    def _search_now(self, query: Query, limit: int, session: str | None) -> list[SearchHit]:
        # No index: every session is read (documented in Store.search).
        scored: list[tuple[float, int, int, SearchHit]] = []
        ids = [session] if session is not None else sorted(self._scan(full=True))
        for n, sid in enumerate(ids):
            try:
                tree = self._load_now(sid).tree
            except SessionNotFoundError:
                continue  # deleted meanwhile
            for i, entry in enumerate(tree.entries()):
                said = entry_words(entry)
                if said is None:
                    continue
                found = score(query, said[1])
                if found:
                    text = entry_text(entry)
                    hit = SearchHit(
                        sid, entry.id, said[0], snippet("" if text is None else text[1], query)
                    )
                    scored.append((-found, n, i, hit))
        scored.sort(key=lambda s: s[:3])
        return [s[3] for s in scored[:limit]]

    def _pruned_path(self, path: Path) -> Path:
        return path.with_name(f".{path.name}.pruned")

    def _refuse_pruned(self, path: Path, sid: str, new: tuple[Entry, ...]) -> None:
        try:
            lines = self._pruned_path(path).read_bytes().split(b"\n")
        except FileNotFoundError:
            return
        gone: set[tuple[str, str]] = set()
        for line in lines:
            with contextlib.suppress(ValueError, TypeError):
                eid, dig = json.loads(line)
                gone.add((eid, dig))
        refuse_pruned(self._url, sid, new, gone)

    def _prune_now(
        self, session_id: str, anchor: Anchor, new: SessionTree, removed: tuple[Entry, ...]
    ) -> bool:
        header = new.header
        assert header is not None
        with self._locked(session_id, exclusive=True) as found:
            if found is None:
                raise SessionNotFoundError(session_id, self._url)
            fd, path = found
            state = self._committed(fd, path)
            unchanged = (
                state.tree == anchor.tree
                if state.tree is not None
                else state.incarnation == anchor.incarnation and state.length == anchor.position
            )
            if not unchanged:
                return False
            data, leaf_id = file_parts(new, header)
            with replacing(path, data, os.fstat(fd).st_mode & 0o7777) as tmp:
                # The removed ids first: a save of an older tree finds them once the
                # new file is in place.
                records = b"".join(
                    json.dumps([e.id, digest(e)], ensure_ascii=True).encode("ascii") + b"\n"
                    for e in removed
                )
                with open(self._pruned_path(path), "ab") as f:
                    f.write(records)
                    f.flush()
                    if self._fsync:
                        _sync(f.fileno())
                incarnation = _PRUNED + uuid.uuid4().hex
                committed = _State.written(os.stat(tmp), len(data), new, leaf_id, incarnation)
                # Until the rename, this state names a file that is not there yet, so
                # readers read the old file whole: a crash leaves the old session.
                self._write_state_file(path, committed)
            sync_directory(self._dir)
        self._index.pop(session_id, None)
        return True


def _sync(fd: int) -> None:
    # fdatasync flushes the data and the size (what a read needs), not the times.
    if hasattr(os, "fdatasync"):
        os.fdatasync(fd)
    else:  # pragma: no cover - macOS
        os.fsync(fd)


def _pread_all(fd: int, length: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while offset < length:
        chunk = os.pread(fd, min(1 << 24, length - offset), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _entries_in(fd: int, start: int, end: int, path: str) -> list[Entry]:
    """The entries of whole commits in bytes ``start:end`` of the file."""
    if end <= start:
        return []
    return appended_entries(os.pread(fd, end - start, start), path)
