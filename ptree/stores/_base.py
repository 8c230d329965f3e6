"""What every store shares: the protocol (:class:`Store`), session summaries, the
compare-and-swap loop of :meth:`Store.update`, and the memory of recent versions that
lets a save check its tree against the stored session in O(entries added)."""

from __future__ import annotations

import random
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from types import TracebackType

import attrs

from ..entries import Entry
from ..header import SessionHeader
from ..pi.lines import encode_line
from ..pi.whole_file import header_of
from ..tree import SessionTree
from .errors import ConflictError, StoreError

__all__ = ["Anchor", "SessionSummary", "Store", "entry_payload", "header_payload"]


@attrs.frozen
class SessionSummary:
    """One line of :meth:`Store.sessions`: what a session list shows, without its entries.

    Attributes:
        id: the session id (the header's).
        name: the session's name (its latest ``session_info`` entry), or ``None``.
        entry_count: how many entries it has.
        updated: when it was last saved, a UTC :class:`~datetime.datetime`.
    """

    id: str
    name: str | None
    entry_count: int
    updated: datetime


def entry_payload(entry: Entry) -> str:
    """The entry's JSON exactly as ptree writes its line in a file, without the newline.

    Compact, keys in ptree's order, non-ASCII as it is; a line holding a lone
    surrogate is escaped to ASCII, as :func:`~ptree.pi.lines.encode_line` does, so
    the text is always valid UTF-8 and never holds a NUL.  O(size of the entry).
    """
    return encode_line(entry.to_json())[:-1].decode("utf-8")


def header_payload(header: SessionHeader) -> str:
    """The header line as ptree writes it, without the newline."""
    return encode_line(header.to_json())[:-1].decode("utf-8")


@attrs.frozen
class Anchor:
    """A version of a session that this store object loaded or saved.

    ``tree``'s entries were, when it was recorded, exactly the first ``count`` stored
    entries of the session's ``incarnation`` (a token that changes when a session is
    deleted and saved again).  Stored entries are never changed or removed within an
    incarnation, so that stays true: a later tree that grew from ``tree``
    (:meth:`~ptree.SessionTree.added_since`, an identity check) needs only its entries
    past ``count`` compared with the store's.  ``position`` is where the stored data
    ends after those entries (a byte offset for files, ``count`` for tables).
    """

    tree: SessionTree
    incarnation: str
    count: int
    position: int


class Store(ABC):
    """Many sessions behind one protocol: save, load, update, list, delete.

    Open one with :func:`ptree.stores.open`; use it as a context manager or call
    :meth:`close`.  A store object may be shared by the threads of a process (calls
    are serialised); each process opens its own (do not carry one across ``fork``).
    Any number of processes may use one database or directory at once: every save is
    atomic and checked against what is stored (see :meth:`save`).
    """

    #: How many sessions keep their recent versions in memory (for O(added) saves).
    ANCHOR_SESSIONS = 256
    #: How many recent versions are remembered per session.
    ANCHORS_PER_SESSION = 4

    def __init__(self, url: str) -> None:
        self._url = url
        self._lock = threading.RLock()
        self._anchors: OrderedDict[str, list[Anchor]] = OrderedDict()
        self._closed = False

    @property
    def url(self) -> str:
        """The URL the store was opened with."""
        return self._url

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    # ------------------------------------------------------------------ protocol

    def save(self, tree: SessionTree) -> SessionTree:
        """Append the entries the store lacks and record the leaf, atomically.

        The session is ``tree.header.id``.  The save succeeds only if the stored
        entries are a prefix of ``tree``'s (same ids, same JSON, same order): then the
        entries past that prefix are appended and the leaf is set (last writer wins),
        all in one transaction.  Otherwise nothing changes and
        :class:`~ptree.stores.ConflictError` is raised — another writer saved entries
        this tree lacks, and saving it would lose them.  A tree equal to the stored
        session writes nothing.  A header read from an older file version is stored
        as version 3 (as :func:`~ptree.dump` writes it).

        Cost: O(entries added) when ``tree`` grew from a version this store object
        loaded or saved (the usual case: load, append, save); otherwise the stored
        entries are compared once, O(n).  Never a rewrite of the stored session.

        Returns:
            the tree as saved (with the stored header); loading the session gives a
            tree equal to it.

        Raises:
            ConflictError: the stored session has entries ``tree`` lacks or that
                differ, or another header.
            StoreError: ``tree`` has no header (so no session id), or the store is
                closed.
        """
        header = tree.header
        if header is None:
            raise StoreError(
                self._url,
                "a tree without a header has no session id: give it one "
                "(tree.with_header(SessionHeader.new())) or load it from a store or file",
            )
        stored_header = header_of(tree)
        if stored_header is not header:
            tree = tree.with_header(stored_header)
        with self._lock:
            self._check_open()
            anchor = self._save(tree)
            self._remember(stored_header.id, anchor)
        return tree

    def load(self, session_id: str) -> SessionTree:
        """The session as last saved: entries (of every kind, unknown fields kept),
        leaf, header, labels.

        Cost: O(size of the session), one read.

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
        """
        with self._lock:
            self._check_open()
            anchor = self._load(session_id)
            self._remember(session_id, anchor)
            return anchor.tree

    def refresh(self, session_id: str) -> SessionTree:
        """The session as stored now, like :meth:`load`, reading only what was saved
        since this store object last loaded or saved it.

        The read :meth:`update` makes: SQL stores read the entries added since
        (O(entries added)), the ``jsonl:`` store loads the file.  The tree returned
        grew from the one this store object last gave, so
        :meth:`~ptree.SessionTree.added_since` tells what is new.

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
        """
        return self._refresh(session_id)

    def load_path(self, session_id: str) -> SessionTree:
        """Only the path from the root to the leaf: what a model is sent next.

        A tree holding the leaf's ancestors (and the leaf), with the session's header
        and leaf: its :meth:`~ptree.SessionTree.current_path` and
        :func:`~ptree.build_context` are those of the whole session.  Labels and
        other branches are not read.  SQL stores follow the parent links in the
        database: cost O(depth of the leaf), whatever the size of the session; the
        ``jsonl:`` store reads the file.

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
        """
        with self._lock:
            self._check_open()
            return self._load_path(session_id)

    def update(
        self,
        session_id: str,
        fn: Callable[[SessionTree], SessionTree],
        *,
        attempts: int = 64,
    ) -> SessionTree:
        """Load the session, apply ``fn``, save; again on a conflict: a compare-and-swap.

        Atomic across threads, processes and machines sharing the store: if another
        writer saves in between, the save conflicts, and the session is loaded again
        and ``fn`` applied again to the new value.  So ``fn`` may run more than once
        and must be pure (no side effects; compute the new tree from the one given).
        Retries wait a jittered, growing pause (1 ms doubling to 100 ms) to let
        writers take turns.  An exception from ``fn`` propagates and changes nothing.

        Cost: per attempt, a load (incremental when this store object has seen the
        session: O(entries added since)) and a save (O(entries added)).

        Args:
            session_id: the session to change.
            fn: makes the new value from the current one.
            attempts: how many times to try before giving up.

        Returns:
            the saved tree.

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
            ConflictError: every attempt conflicted.
        """
        pause = 0.001
        for _ in range(max(1, attempts)):
            current = self._refresh(session_id)
            new = fn(current)
            if not isinstance(new, SessionTree):
                raise TypeError(f"fn must return a SessionTree, not {type(new).__name__}")
            try:
                return self.save(new)
            except ConflictError:
                time.sleep(random.uniform(0, pause))
                pause = min(pause * 2, 0.1)
        raise ConflictError(
            session_id,
            self._url,
            f"update gave up after {attempts} attempts: other writers kept saving first",
        )

    def sessions(self) -> list[SessionSummary]:
        """Every session's summary, newest first (by :attr:`SessionSummary.updated`).

        Reads no entries: O(number of sessions) for SQL stores; the ``jsonl:`` store
        reads each file's first line and its small state file.
        """
        with self._lock:
            self._check_open()
            return self._sessions()

    def delete(self, session_id: str) -> None:
        """Remove the session and all its entries, atomically.  Its id may be saved again.

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
        """
        with self._lock:
            self._check_open()
            self._anchors.pop(session_id, None)
            self._delete(session_id)

    def __contains__(self, session_id: object) -> bool:
        """Whether a session with this id is stored."""
        if not isinstance(session_id, str):
            return False
        with self._lock:
            self._check_open()
            return self._exists(session_id)

    def close(self) -> None:
        """Release the connection (or nothing, for directories).  Closing twice is fine."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._anchors.clear()
                self._close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = " (closed)" if self._closed else ""
        return f"{type(self).__name__}({self._url!r}){state}"

    # ------------------------------------------------------------------ for subclasses

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(self._url, "the store is closed")

    def _remember(self, session_id: str, anchor: Anchor) -> None:
        anchors = self._anchors.get(session_id)
        if anchors is None:
            anchors = self._anchors[session_id] = []
            while len(self._anchors) > self.ANCHOR_SESSIONS:
                self._anchors.popitem(last=False)
        else:
            self._anchors.move_to_end(session_id)
            anchors[:] = [a for a in anchors if a.incarnation == anchor.incarnation]
        anchors.append(anchor)
        del anchors[: -self.ANCHORS_PER_SESSION]

    def _best_anchor(
        self, session_id: str, tree: SessionTree, incarnation: str, count: int
    ) -> tuple[Anchor, tuple[Entry, ...]] | None:
        """The remembered version ``tree`` grew from that covers most of the stored
        entries, with the entries ``tree`` has past it.  O(entries added per anchor)."""
        best: tuple[Anchor, tuple[Entry, ...]] | None = None
        for anchor in self._anchors.get(session_id, ()):
            if anchor.incarnation != incarnation or anchor.count > count:
                continue
            if best is not None and anchor.count <= best[0].count:
                continue
            added = tree.added_since(anchor.tree)
            if added is not None:
                best = (anchor, added)
        return best

    def _latest_anchor(self, session_id: str) -> Anchor | None:
        anchors = self._anchors.get(session_id)
        return anchors[-1] if anchors else None

    def _refresh(self, session_id: str) -> SessionTree:
        """The stored value, for :meth:`update`: incremental where the store allows."""
        return self.load(session_id)

    @abstractmethod
    def _save(self, tree: SessionTree) -> Anchor: ...

    @abstractmethod
    def _load(self, session_id: str) -> Anchor: ...

    @abstractmethod
    def _load_path(self, session_id: str) -> SessionTree: ...

    @abstractmethod
    def _sessions(self) -> list[SessionSummary]: ...

    @abstractmethod
    def _delete(self, session_id: str) -> None: ...

    @abstractmethod
    def _exists(self, session_id: str) -> bool: ...

    @abstractmethod
    def _close(self) -> None: ...
