"""The async protocol of the stores: :class:`AsyncStore`, what
:func:`ptree.stores.open_async` gives.

The same contract as the blocking :class:`~ptree.stores.Store` — the same operations,
arguments, results and errors — because both run the same plans
(:mod:`ptree.stores._plan`, the rules in :class:`~ptree.stores._base.StoreCore`):

- PostgreSQL awaits them on psycopg's ``AsyncConnection``
  (:class:`~ptree.stores.postgres.AsyncPostgresStore`): no thread;
- SQLite and a directory of Pi files have no async driver (:mod:`sqlite3` and file
  I/O block), so each store object gets one worker thread of its own, which runs the
  blocking store's operations one after the other (:class:`ThreadedStore`): the
  event loop only waits for the result.

Needs a running asyncio loop.  Cancelling a call that a worker thread is running
does not stop it: the operation finishes (a save is stored whole or not at all, as
ever), the caller just stops waiting.
"""

from __future__ import annotations

import asyncio
import functools
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ..tree import SessionTree
from ._base import SessionSummary, Store, StoreCore
from ._paging import Order, SessionPage
from ._plan import Plan
from ._prune import KeepSpec, PruneReport
from ._search import SearchHit

__all__ = ["AsyncStore", "ThreadedStore"]

T = TypeVar("T")

_ = SessionSummary  # named in the docs of sessions()


class AsyncStore(ABC):
    """Many sessions behind one protocol, awaited: :class:`~ptree.stores.Store`'s
    contract (see each method there) for an event loop.

    Open one with ``await ptree.stores.open_async(url)``; use it as an async context
    manager or await :meth:`close`.  Any number of tasks may share one store object
    (its calls take turns); any number of processes and blocking stores may share its
    database or directory.

    >>> import asyncio
    >>> from ptree import SessionHeader, SessionTree, stores
    >>> async def main():
    ...     async with await stores.open_async("sqlite:///:memory:") as store:
    ...         header = SessionHeader(id="s1", timestamp="2026-01-01T00:00:00Z", cwd="/")
    ...         hi = {"role": "user", "content": "hi"}
    ...         t = await store.save(SessionTree(header=header).append(hi))
    ...         t = await store.update("s1", lambda t: t.append(hi))
    ...         return [s.entry_count for s in await store.sessions()], len(t)
    >>> asyncio.run(main())
    ([2], 2)
    """

    @property
    @abstractmethod
    def url(self) -> str:
        """The URL the store was opened with."""

    @property
    @abstractmethod
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""

    @abstractmethod
    async def _drive(self, op: Callable[..., Plan[T]], *args: Any) -> T:
        """Run ``op(store, *args)``, a plan of :class:`StoreCore`, to its end."""

    async def save(self, tree: SessionTree) -> SessionTree:
        """Append the entries the store lacks and record the leaf, atomically, as
        :meth:`Store.save <ptree.stores.Store.save>`.  Cost: O(entries added).

        Args:
            tree: the session's new version (its header names the session).

        Raises:
            ConflictError: the stored session has entries ``tree`` lacks.
            StoreError: ``tree`` has no header, or the store is closed.
        """
        return await self._drive(StoreCore._op_save, tree)

    async def load(self, session_id: str) -> SessionTree:
        """The session as last saved, as :meth:`Store.load <ptree.stores.Store.load>`.
        Cost: O(size of the session).

        Args:
            session_id: the session's id.

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
        """
        return await self._drive(StoreCore._op_load, session_id)

    async def refresh(self, session_id: str) -> SessionTree:
        """What :meth:`Store.refresh <ptree.stores.Store.refresh>` gives: the stored
        session, read from where this object last saw it (O(entries added since) in a
        database), so ``added_since`` tells what is new.

        Args:
            session_id: the session, by its id.

        Raises:
            SessionNotFoundError: (a ``KeyError``) it is not stored.
        """
        return await self._drive(StoreCore._op_refresh, session_id)

    async def load_path(self, session_id: str) -> SessionTree:
        """Only the path from the root to the leaf, as :meth:`Store.load_path
        <ptree.stores.Store.load_path>`.  Cost: O(depth of the leaf) in a database.

        Args:
            session_id: the session's id.

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
        """
        return await self._drive(StoreCore._op_load_path, session_id)

    async def update(
        self,
        session_id: str,
        fn: Callable[[SessionTree], SessionTree | Plan[SessionTree]],
        *,
        attempts: int = 64,
    ) -> SessionTree:
        """Load, apply ``fn``, save; again on a conflict (a compare-and-swap), as
        :meth:`Store.update <ptree.stores.Store.update>`: ``fn`` (a plain function,
        pure) may run more than once.  The pauses between attempts are awaited.  Cost:
        per attempt, an incremental load and a save.

        Args:
            session_id: the session to change.
            fn: makes the new value from the current one; or, for a long change, a
                generator function yielding :class:`~ptree.stores.Pause` between its
                pieces (other tasks run there, where the store runs ``fn`` on the
                loop) and returning the new value.
            attempts: how many times to try before giving up.

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
            ConflictError: every attempt conflicted.
            StoreUnavailableError: the database could not be reached on any attempt.
            TypeError: ``fn`` gave no tree, or yielded something other than ``Pause()``.
        """
        return await self._drive(StoreCore._op_update, session_id, fn, attempts)

    async def sessions(
        self, *, limit: int | None = None, after: str | None = None, order: Order = "updated"
    ) -> SessionPage:
        """Sessions' summaries (:class:`SessionSummary`), a page at a time, as
        :meth:`Store.sessions <ptree.stores.Store.sessions>`.  Cost: O(limit + log n)
        in a database.

        Args:
            limit: the most summaries on the page (``None``: all).
            after: the previous page's ``next_cursor``.
            order: ``"updated"`` (newest first) or ``"id"``.

        Raises:
            CursorError: a bad ``after``, ``limit`` or ``order``.
        """
        return await self._drive(StoreCore._op_sessions, limit, after, order)

    async def search(
        self, query: str, *, limit: int = 20, session: str | None = None
    ) -> list[SearchHit]:
        """The entries holding every word of ``query``, best first, as
        :meth:`Store.search <ptree.stores.Store.search>`.  Cost: about O(matches of
        the rarest word) in a database.

        Args:
            query: words, or a phrase in double quotes.
            limit: the most hits returned (1 to 1000).
            session: only this session's entries.

        Raises:
            SearchQueryError: no word in ``query``, or a bad ``limit``.
            SessionNotFoundError: ``session`` names no session.
        """
        return await self._drive(StoreCore._op_search, query, limit, session)

    async def prune(self, session_id: str, *, keep: KeepSpec, dry_run: bool = False) -> PruneReport:
        """Remove the branches nothing kept hangs from, as :meth:`Store.prune
        <ptree.stores.Store.prune>`.  Cost: O(size of the session).

        Args:
            session_id: the session to prune.
            keep: what must survive (a :class:`~ptree.stores.Keep`, ids, a predicate).
            dry_run: only report what would be removed.

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
            UnknownKeepError: ``keep`` names entries the session does not have.
            ConflictError: other writers kept saving first, 16 times.
        """
        return await self._drive(StoreCore._op_prune, session_id, keep, dry_run)

    async def delete(self, session_id: str) -> None:
        """Remove the session and all its entries, atomically, as :meth:`Store.delete
        <ptree.stores.Store.delete>`.  Cost: O(entries of the session).

        Args:
            session_id: the session's id.

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such session.
        """
        await self._drive(StoreCore._op_delete, session_id)

    async def contains(self, session_id: object) -> bool:
        """Whether a session with this id is stored (``session_id in store`` of the
        blocking store).  Cost: one indexed read.

        Args:
            session_id: the session's id (anything else is not stored).
        """
        return await self._drive(StoreCore._op_exists, session_id)

    async def close(self) -> None:
        """Release the connection (or the worker thread).  Closing twice is fine.
        Cost: O(1)."""
        await self._drive(StoreCore._op_close)

    async def __aenter__(self) -> AsyncStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class ThreadedStore(AsyncStore):
    """A blocking store (SQLite, a directory of Pi files) behind the async protocol:
    its operations run in a worker thread of its own, one after the other."""

    def __init__(self, store: Store, worker: ThreadPoolExecutor) -> None:
        self._store = store
        self._worker = worker

    @classmethod
    async def open(cls, opener: Callable[[], Store]) -> ThreadedStore:
        """The store ``opener`` opens, opened in the new store's worker thread."""
        worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ptree-store")
        try:
            store = await asyncio.get_running_loop().run_in_executor(worker, opener)
        except BaseException:
            worker.shutdown(wait=False)
            raise
        return cls(store, worker)

    @property
    def url(self) -> str:
        return self._store.url

    @property
    def closed(self) -> bool:
        return self._store.closed

    @property
    def schema_version(self) -> tuple[int, int] | None:
        """As the blocking store's :attr:`~ptree.stores.Store.schema_version`."""
        return self._store.schema_version

    async def _drive(self, op: Callable[..., Plan[T]], *args: Any) -> T:
        call = functools.partial(self._store._run, op(self._store, *args))
        if self._store.closed:
            return call()  # the worker has ended; a closed store only says it is closed
        return await asyncio.get_running_loop().run_in_executor(self._worker, call)

    async def close(self) -> None:
        """Close the store, then let its worker thread end.  Cost: O(1)."""
        if not self._store.closed:
            await super().close()
        self._worker.shutdown(wait=False)

    def __repr__(self) -> str:
        return f"<async {self._store!r}>"
