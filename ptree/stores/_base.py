"""What every store shares: the contract written once as plans (:class:`StoreCore`:
the compare-and-swap loop of :meth:`Store.update`, prune's retries, the checks of
every argument, and the memory of recent versions that lets a save check its tree
against the stored session in O(entries added)), the blocking protocol that runs them
(:class:`Store`), and session summaries.  The async protocol awaits the same plans
(:mod:`ptree.stores._async`)."""

from __future__ import annotations

import random
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Generator, Sequence
from datetime import datetime
from typing import Any, TypeVar, cast

import attrs

from ..closing import Closing
from ..entries import Entry
from ..header import SessionHeader
from ..pi.lines import encode_line
from ..pi.whole_file import header_of
from ..tree import SessionTree
from ._paging import (
    Order,
    Position,
    SessionPage,
    check_page_args,
    decode_cursor,
    page_of,
)
from ._plan import Disconnect, Pause, Plan, Sleep, Stepper, done
from ._prune import KeepSpec, PruneReport, as_keep, plan
from ._search import MAX_WORD, Query, SearchHit, check_limit, parse_query
from .errors import ConflictError, SessionNotFoundError, StoreError, StoreUnavailableError

__all__ = [
    "Anchor",
    "SessionSummary",
    "Since",
    "Store",
    "StoreCore",
    "entry_payload",
    "header_payload",
]

T = TypeVar("T")


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


@attrs.frozen
class Since:
    """What a session gained since an :class:`Anchor`: the entries saved after its
    ``count`` (in order), the leaf now, and the session's ``incarnation``, ``count`` and
    ``position`` now (the new anchor's)."""

    entries: Sequence[Entry]
    leaf: str | None
    incarnation: str
    count: int
    position: int


def _pauses(change: Plan[T]) -> Plan[T]:
    """``change`` (what an ``update`` function gave: a plan of :class:`Pause` steps),
    its pauses passed on to the driver.  O(steps)."""
    while True:
        try:
            step = change.send(None)
        except StopIteration as stop:
            return cast("T", stop.value)
        if not isinstance(step, Pause):
            change.close()
            raise TypeError(f"an update function yields Pause() steps only, not {step!r}")
        yield step


class StoreCore(ABC):
    """The store contract, written once: every operation as a plan
    (:mod:`ptree.stores._plan`) over the primitives a kind of store brings, with the
    memory of recent versions (anchors) that makes a save O(entries added).

    :class:`Store` runs these plans blocking, :class:`~ptree.stores.AsyncStore`
    awaits them: both give the same results and raise the same errors.

    Args:
        url: the URL the store was opened with (:attr:`url`).
    """

    #: How many sessions keep their recent versions in memory (for O(added) saves).
    ANCHOR_SESSIONS = 256
    #: How many recent versions are remembered per session.
    ANCHORS_PER_SESSION = 4

    def __init__(self, url: str) -> None:
        self._url = url
        self._anchors: OrderedDict[str, list[Anchor]] = OrderedDict()
        self._closed = False

    @property
    def url(self) -> str:
        """The URL the store was opened with."""
        return self._url

    @property
    def schema_version(self) -> tuple[int, int] | None:
        """The schema version of the database when this store opened it, and now
        (``(1, 2)``: opening upgraded it); ``None`` for a store without a schema (the
        ``jsonl:`` store's files are Pi's)."""
        return None

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def __repr__(self) -> str:
        state = " (closed)" if self._closed else ""
        return f"{type(self).__name__}({self._url!r}){state}"

    # ------------------------------------------------------------------ the operations

    def _op_save(self, tree: SessionTree) -> Plan[SessionTree]:
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
        self._check_open()
        anchor = yield from self._save(tree)
        self._remember(stored_header.id, anchor)
        return tree

    def _op_load(self, session_id: str) -> Plan[SessionTree]:
        self._check_open()
        anchor = yield from self._load(session_id)
        self._remember(session_id, anchor)
        return anchor.tree

    def _op_refresh(self, session_id: str) -> Plan[SessionTree]:
        # update()'s load: from the last version this object saw, only what was added.
        self._check_open()
        anchor = self._latest_anchor(session_id)
        since = None if anchor is None else (yield from self._since(session_id, anchor))
        if anchor is None or since is None:  # unseen, or made anew since: read it whole
            return (yield from self._op_load(session_id))
        tree = anchor.tree
        for entry in since.entries:
            tree = tree.insert(entry)
        tree = tree.move_to(since.leaf)
        self._remember(session_id, Anchor(tree, since.incarnation, since.count, since.position))
        return tree

    def _op_load_path(self, session_id: str) -> Plan[SessionTree]:
        self._check_open()
        return (yield from self._load_path(session_id))

    def _op_update(
        self,
        session_id: str,
        fn: Callable[[SessionTree], SessionTree | Plan[SessionTree]],
        attempts: int,
    ) -> Plan[SessionTree]:
        pause = 0.001
        landed: SessionTree | None = None  # a save whose outcome a lost connection hid
        for attempt in range(max(1, attempts)):
            try:
                if landed is not None:
                    if (yield from self._op_holds(session_id, landed)):
                        return landed
                    landed = None
                current = yield from self._op_refresh(session_id)
                new = fn(current)
                if isinstance(new, Generator):  # a long change, pausing for the loop
                    new = yield from _pauses(new)
                if not isinstance(new, SessionTree):
                    raise TypeError(f"fn must return a SessionTree, not {type(new).__name__}")
                try:
                    return (yield from self._op_save(new))
                except StoreUnavailableError:
                    landed = new
                    raise
            except ConflictError:
                pass
            except StoreUnavailableError:
                if attempt + 1 >= max(1, attempts):
                    raise
            yield Sleep(random.uniform(0, pause))
            pause = min(pause * 2, 0.1)
        raise ConflictError(
            session_id,
            self._url,
            f"update gave up after {attempts} attempts: other writers kept saving first",
        )

    def _op_holds(self, session_id: str, tree: SessionTree) -> Plan[bool]:
        """Whether the stored session begins with ``tree``'s entries (a save of it that
        a lost connection interrupted did commit).  O(size of the session)."""
        try:
            stored = yield from self._op_load(session_id)
        except SessionNotFoundError:
            return False
        n = len(tree)
        return len(stored) >= n and stored.entries()[:n] == tree.entries()

    def _op_sessions(self, limit: int | None, after: str | None, order: Order) -> Plan[SessionPage]:
        check_page_args(self._url, limit, order)
        position = None if after is None else decode_cursor(self._url, order, after)
        self._check_open()
        return (yield from self._page(order, limit, position))

    def _op_search(self, query: str, limit: int, session: str | None) -> Plan[list[SearchHit]]:
        parsed = parse_query(self._url, query)
        limit = check_limit(self._url, query, limit)
        if session is not None and not isinstance(session, str):
            raise TypeError(f"session is a str, not {type(session).__name__}")
        self._check_open()
        if session is not None and not (yield from self._exists(session)):
            raise SessionNotFoundError(session, self._url)
        if any(len(w) > MAX_WORD for w in parsed.words):
            return []  # never indexed: nothing to ask the database
        return (yield from self._search(parsed, limit, session))

    def _op_prune(self, session_id: str, keep: KeepSpec, dry_run: bool) -> Plan[PruneReport]:
        spec = as_keep(keep)
        for _ in range(16):
            self._check_open()
            anchor = yield from self._load(session_id)
            new, report = plan(self._url, anchor.tree, spec)
            if dry_run or not report.removed:
                self._remember(session_id, anchor)
                return attrs.evolve(report, dry_run=dry_run)
            self._anchors.pop(session_id, None)
            removed = tuple(anchor.tree[i] for i in report.removed)
            if (yield from self._prune(session_id, anchor, new, removed)):
                return report
        raise ConflictError(session_id, self._url, "prune gave up: other writers kept saving first")

    def _op_delete(self, session_id: str) -> Plan[None]:
        self._check_open()
        self._anchors.pop(session_id, None)
        yield from self._delete(session_id)

    def _op_exists(self, session_id: object) -> Plan[bool]:
        if not isinstance(session_id, str):
            return False
        self._check_open()
        return (yield from self._exists(session_id))

    def _op_close(self) -> Plan[None]:
        if not self._closed:
            self._closed = True
            self._anchors.clear()
            yield Disconnect()

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

    def _grown_from(
        self, tree: SessionTree, stored_header: str, count: int, incarnation: str
    ) -> tuple[Anchor | None, tuple[Entry, ...]]:
        """The checks every save makes against the stored session (its header line,
        its entry count), then the remembered version ``tree`` grew from with the
        entries ``tree`` has past it (``None`` and every entry: none).

        Raises:
            ConflictError: another header, or fewer entries than stored.
        """
        header = tree.header
        assert header is not None
        if stored_header != header_payload(header):
            raise ConflictError(header.id, self._url, "the stored session has another header")
        if len(tree) < count:
            raise ConflictError(
                header.id,
                self._url,
                f"the stored session has {count} entries, the tree only {len(tree)}: "
                "another writer saved since this tree was loaded",
            )
        found = self._best_anchor(header.id, tree, incarnation, count)
        return (None, tree.entries()) if found is None else found

    def _latest_anchor(self, session_id: str) -> Anchor | None:
        anchors = self._anchors.get(session_id)
        return anchors[-1] if anchors else None

    @abstractmethod
    def _save(self, tree: SessionTree) -> Plan[Anchor]: ...

    @abstractmethod
    def _load(self, session_id: str) -> Plan[Anchor]: ...

    def _since(self, session_id: str, anchor: Anchor) -> Plan[Since | None]:
        """What was saved since ``anchor`` (``None``: read the session whole).
        Raises SessionNotFoundError."""
        return done(None)

    @abstractmethod
    def _load_path(self, session_id: str) -> Plan[SessionTree]: ...

    def _sessions(self) -> Plan[list[SessionSummary]]:
        raise NotImplementedError  # a store without its own _page lists them all

    def _page(self, order: Order, limit: int | None, after: Position | None) -> Plan[SessionPage]:
        """A page of :meth:`sessions`; by default cut from the whole list, in Python."""
        every = yield from self._sessions()
        return page_of(self._url, every, order, limit, after)

    @abstractmethod
    def _search(self, query: Query, limit: int, session: str | None) -> Plan[list[SearchHit]]: ...

    @abstractmethod
    def _prune(
        self, session_id: str, anchor: Anchor, new: SessionTree, removed: tuple[Entry, ...]
    ) -> Plan[bool]:
        """Store ``new`` in place of ``anchor.tree`` and remember ``removed``, if the
        stored session is still ``anchor``'s version; ``False`` (nothing changed) if
        another writer saved since."""

    @abstractmethod
    def _delete(self, session_id: str) -> Plan[None]: ...

    @abstractmethod
    def _exists(self, session_id: str) -> Plan[bool]: ...


class Store(Closing, StoreCore):
    """Many sessions behind one protocol: save, load, update, list (a page at a time),
    search, prune, delete.

    Open one with :func:`ptree.stores.open`; use it as a context manager or call
    :meth:`close`.  A store object may be shared by the threads of a process (calls
    are serialised); each process opens its own (do not carry one across ``fork``).
    Any number of processes may use one database or directory at once: every save is
    atomic and checked against what is stored (see :meth:`save`).

    Args:
        url: the URL the store was opened with (:attr:`url`).
    """

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self._lock = threading.RLock()

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

        Args:
            tree: the session's new value; its header's id names the session.

        Returns:
            the tree as saved (with the stored header); loading the session gives a
            tree equal to it.

        Raises:
            ConflictError: the stored session has entries ``tree`` lacks or that
                differ, or another header.
            StoreError: ``tree`` has no header (so no session id), or the store is
                closed.
        """
        return self._run(self._op_save(tree))

    def load(self, session_id: str) -> SessionTree:
        """The session as last saved: entries (of every kind, unknown fields kept),
        leaf, header, labels.

        Cost: O(size of the session), one read.

        Args:
            session_id: the session's id (its header's ``id``).

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
        """
        return self._run(self._op_load(session_id))

    def refresh(self, session_id: str) -> SessionTree:
        """The session as stored now, like :meth:`load`, reading only what was saved
        since this store object last loaded or saved it.

        The read :meth:`update` makes: SQL stores read the entries added since
        (O(entries added)), the ``jsonl:`` store loads the file.  The tree returned
        grew from the one this store object last gave, so
        :meth:`~ptree.SessionTree.added_since` tells what is new.

        Args:
            session_id: the session's id (its header's ``id``).

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
            StoreError: the store is closed.
        """
        return self._run(self._op_refresh(session_id))

    def load_path(self, session_id: str) -> SessionTree:
        """Only the path from the root to the leaf: what a model is sent next.

        A tree holding the leaf's ancestors (and the leaf), with the session's header
        and leaf: its :meth:`~ptree.SessionTree.current_path` and
        :func:`~ptree.build_context` are those of the whole session.  Labels and
        other branches are not read.  SQL stores follow the parent links in the
        database: cost O(depth of the leaf), whatever the size of the session; the
        ``jsonl:`` store reads the file.

        Args:
            session_id: the session's id (its header's ``id``).

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
        """
        return self._run(self._op_load_path(session_id))

    def update(
        self,
        session_id: str,
        fn: Callable[[SessionTree], SessionTree | Plan[SessionTree]],
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
            fn: makes the new value from the current one.  A long change may be a
                generator function instead: it yields :class:`~ptree.stores.Pause`
                between its pieces and returns the new value; the async store
                (:meth:`AsyncStore.update <ptree.stores.AsyncStore.update>`) lets
                other tasks run at each pause, the blocking one goes straight on.
            attempts: how many times to try before giving up.

        A lost connection (:class:`~ptree.stores.StoreUnavailableError`: killed, the
        server restarted) is retried too, the store connecting again: if the save it
        interrupted had committed, that is found (the stored session begins with the
        new tree's entries) and the new tree returned, so ``fn``'s change is made
        exactly once.  Once every attempt has failed to reach the database, that
        error is raised.

        Returns:
            the saved tree.

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
            ConflictError: every attempt conflicted.
            StoreUnavailableError: the database could not be reached on any attempt.
            TypeError: ``fn`` gave no tree, or yielded something other than ``Pause()``.
        """
        return self._run(self._op_update(session_id, fn, attempts))

    def sessions(
        self, *, limit: int | None = None, after: str | None = None, order: Order = "updated"
    ) -> SessionPage:
        """Sessions' summaries, a page at a time: newest first (``order="updated"``, by
        :attr:`SessionSummary.updated`, then id) or by id (``order="id"``).

        Without ``limit``, every session.  With it, at most ``limit``, and the page's
        :attr:`~ptree.stores.SessionPage.next_cursor` (``None`` on the last page) is
        passed as ``after`` for the next one.  The walk stays correct while others
        save, delete and add sessions: no session is listed twice, and every session
        nobody changed meanwhile is listed (see :mod:`ptree.stores._paging`).

        Cost: SQL stores read only the page, through an index: O(limit + log n).  The
        ``jsonl:`` store reads each file's first line and its small state file, O(n),
        for every page.

        Args:
            limit: the most sessions on the page; ``None``: all.
            after: the cursor of the page before (its ``next_cursor``); ``None``: the first
                page.
            order: ``"updated"`` (newest first) or ``"id"``.

        Raises:
            CursorError: (a :class:`StoreError`) ``after`` is not a cursor of this
                ``order``, or ``limit`` or ``order`` is invalid.

        >>> from ptree import SessionHeader, SessionTree, stores
        >>> def new(sid):
        ...     return SessionTree(header=SessionHeader(id=sid, timestamp="2026-01-01", cwd="/"))
        >>> with stores.open("sqlite:///:memory:") as store:
        ...     for n in range(3):
        ...         _ = store.save(new(f"s{n}"))
        ...     first = store.sessions(limit=2, order="id")
        ...     rest = store.sessions(limit=2, order="id", after=first.next_cursor)
        >>> [s.id for s in first], [s.id for s in rest], rest.next_cursor
        (['s0', 's1'], ['s2'], None)
        """
        return self._run(self._op_sessions(limit, after, order))

    def search(self, query: str, *, limit: int = 20, session: str | None = None) -> list[SearchHit]:
        """The entries whose readable text holds every word of ``query`` (or its
        quoted phrase), best first, across sessions (or in ``session`` only).

        What is indexed, and what a query means, is described in
        :mod:`ptree.stores._search`: the text a person reads, cut into words; a
        query's punctuation and operators are separators, never syntax.

        Best first is the highest score (the query's occurrences for the entry's
        length), the newer entry first among equals.  The SQL stores rank the
        **newest 200 matches** (or ``limit``, if more), in the order entries were
        saved: the hits are the best of those, and every match when 200 or fewer
        entries match.  The ``jsonl:`` store ranks every match.

        Cost: SQL stores answer from their full-text index, kept current by every save
        in its transaction (SQLite FTS5, PostgreSQL ``tsvector`` + GIN): SQLite about
        O(200 log n) for any words; PostgreSQL the cheaper of walking the newest rows
        (200 / the share of rows matching) and reading every match.  The ``jsonl:``
        store has no index and reads every session: O(size of the store).

        Args:
            query: words, or a phrase in double quotes.
            limit: the most hits returned (1 to 1000).
            session: only this session's entries.

        Returns:
            the hits (:class:`~ptree.stores.SearchHit`), best first.

        Raises:
            SearchQueryError: (a :class:`StoreError`) no word in ``query``, or a bad
                ``limit``.
            SessionNotFoundError: ``session`` names no session.

        >>> from ptree import SessionHeader, SessionTree, stores
        >>> with stores.open("sqlite:///:memory:") as store:
        ...     t = SessionTree(header=SessionHeader(id="s1", timestamp="2026-01-01", cwd="/"))
        ...     t = store.save(t.append({"role": "user", "content": "Boil the kettle!"}))
        ...     [(h.session_id, h.role, h.snippet) for h in store.search("KETTLE boil")]
        [('s1', 'user', '«Boil» the «kettle»!')]
        """
        return self._run(self._op_search(query, limit, session))

    def prune(self, session_id: str, *, keep: KeepSpec, dry_run: bool = False) -> PruneReport:
        """Remove the branches of a session that nothing kept hangs from.

        ``keep`` names what must survive: a :class:`~ptree.stores.Keep`
        (``Keep.leaves() | Keep.labelled() | Keep.newer(timedelta(days=30))``), an
        iterable of entry ids, or a predicate on entries.  The current leaf always
        stays, and with every kept entry what it needs (its path, its tool calls'
        results, a compaction's kept range, a branch summary's source, its labels:
        see :mod:`ptree.stores._prune`).  So loading the session and building the
        context at any kept entry give what they gave before.

        The removal is one transaction, checked against the version the plan was made
        from (made again if another writer saved meanwhile).  The removed ids are
        remembered (their id and the SHA-256 of their JSON): a save of an older tree
        that still holds them raises
        :class:`ConflictError`, never brings them back.  SQLite gives the freed pages
        back to the file system (the file shrinks; a database made before schema 2
        after a ``VACUUM``); PostgreSQL leaves them to ``VACUUM``.

        Cost: O(size of the session): a load, the plan, and a rewrite of the session's
        rows (or file).

        Args:
            session_id: the session's id (its header's ``id``).
            keep: what must survive (a :class:`~ptree.stores.Keep`, entry ids, or a
                predicate on entries), as above.
            dry_run: only plan: report what would be removed and remove nothing (the
                report's ``dry_run`` is then true).

        Returns:
            the report (:class:`~ptree.stores.PruneReport`): kept and removed ids.

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
            UnknownKeepError: (a ``KeyError``) ``keep`` names entries the session does
                not have; nothing is removed.
            ConflictError: other writers kept saving first, 16 times.
            StoreError: the store is closed.
        """
        return self._run(self._op_prune(session_id, keep, dry_run))

    def delete(self, session_id: str) -> None:
        """Remove the session and all its entries, atomically.  Its id may be saved again.

        Cost: O(entries of the session) in a database; one file removed for ``jsonl:``.

        Args:
            session_id: the session's id (its header's ``id``).

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
        """
        self._run(self._op_delete(session_id))

    def __contains__(self, session_id: object) -> bool:
        """Whether a session with this id is stored."""
        return self._run(self._op_exists(session_id))

    def close(self) -> None:
        """Release the connection (or nothing, for directories).  Closing twice is fine.

        Cost: O(1).
        """
        self._run(self._op_close())

    # ------------------------------------------------------------------ the blocking driver

    def _run(self, plan: Plan[T]) -> T:
        """Run an operation's plan to its end, holding the store's lock (but not while
        it sleeps between attempts)."""
        with self._lock:
            return Stepper(plan).run(self._step)

    def _step(self, step: Any) -> Any:
        if isinstance(step, Sleep):
            self._lock.release()  # other threads go on meanwhile
            try:
                time.sleep(step.seconds)
            finally:
                self._lock.acquire()
            return None
        if isinstance(step, Pause):
            return None
        return self._execute(step)

    @abstractmethod
    def _execute(self, step: Any) -> Any:
        """Execute a :class:`~ptree.stores._plan.Transaction`, :class:`Read` or
        :class:`Disconnect` step; return its result."""
