"""The embedded store: one SQLite file (or ``:memory:``), with the standard library's
:mod:`sqlite3`.

The file is in WAL mode (readers never wait for a writer), with a busy timeout so that
writers from many processes take turns instead of failing.  A save is one ``BEGIN
IMMEDIATE`` transaction: it takes the write lock first, so its check of the stored
session and its append see the same state.

Faults become the stores' errors, never :mod:`sqlite3`'s: a database another process
keeps locked longer than the timeout (``sqlite:///path.db?timeout=SECONDS``, default
10) raises :class:`~ptree.stores.StoreLockedError`; a full disk, a read-only file or
directory, an I/O error raise :class:`~ptree.stores.StoreWriteError` naming the
database, at once.  A transaction that fails is rolled back whole: nothing of it is
visible, and the next one goes on once the fault is gone.
"""

from __future__ import annotations

import contextlib
import errno
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from ._plan import Transaction
from ._search import SqliteIndex
from ._sql import BlockingSqlStore, Cursor
from .errors import StoreError, StoreLockedError, StoreWriteError

# SQLite's primary result codes (the low byte of an extended code).
_BUSY = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}
_WRITE = {
    sqlite3.SQLITE_FULL: (errno.ENOSPC, "the disk is full"),
    sqlite3.SQLITE_IOERR: (errno.EIO, "an I/O error (a full disk, or a file size limit?)"),
    sqlite3.SQLITE_READONLY: (errno.EROFS, "the database is read-only (file or directory)"),
    sqlite3.SQLITE_CANTOPEN: (errno.EACCES, "the database file cannot be opened or made"),
    sqlite3.SQLITE_PERM: (errno.EACCES, "permission denied"),
}

__all__ = ["SqliteStore"]


class SqliteStore(BlockingSqlStore):
    """Sessions in a SQLite database.  Open with ``stores.open("sqlite:///abs/path.db")``.

    Args:
        url: the URL it was opened with (for messages).
        path: the database file, or ``":memory:"`` (a store of its own, gone on close).
        timeout: seconds a writer waits for another to finish before
            :class:`~ptree.stores.StoreLockedError`.

    Raises:
        StoreWriteError: the database cannot be opened or made (a read-only
            directory, say), at once.
        StoreLockedError: another process kept it locked past ``timeout``.

    >>> from ptree import SessionTree, SessionHeader, stores
    >>> with stores.open("sqlite:///:memory:") as store:
    ...     header = SessionHeader(id="s1", timestamp="2026-01-01T00:00:00Z", cwd="/")
    ...     t = store.save(SessionTree(header=header).append({"role": "user", "content": "hi"}))
    ...     store.load("s1") == t
    True
    """

    SEARCH_INDEX = SqliteIndex()

    def __init__(self, url: str, path: str, *, timeout: float = 10.0) -> None:
        super().__init__(url)
        self._path = path
        self._timeout = timeout
        try:
            self._conn = sqlite3.connect(
                path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        try:
            # Pages a prune frees go back to the file system (PRAGMA incremental_vacuum);
            # this takes effect only in a database without tables yet.
            try:
                self._conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
            except sqlite3.Error as exc:  # a read-only file: a store error, at once
                raise self._error(exc) from exc
            if path != ":memory:":
                self._wal()
            self._execute(Transaction(True, self._init_schema()))
        except BaseException:
            self._conn.close()
            raise

    def _error(self, exc: sqlite3.Error) -> StoreError:
        """The store error a :mod:`sqlite3` error means."""
        code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
        if code in _BUSY:
            return StoreLockedError(self._url, self._timeout, self._path)
        if code in _WRITE:
            number, reason = _WRITE[code]
            return StoreWriteError(self._url, self._path, number, f"{reason}: nothing was saved")
        return StoreError(self._url, f"{self._path}: {exc}")

    def _wal(self) -> None:
        # Switching to WAL needs a moment without other connections mid-transaction;
        # the mode is kept in the file, so this waits only on a database's first opens.
        # Only a busy database is waited for: any other error (read-only) is final.
        deadline = time.monotonic() + self._timeout
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode=WAL").fetchone()
                return
            except sqlite3.Error as exc:
                error = self._error(exc)
                if not isinstance(error, StoreLockedError) or time.monotonic() > deadline:
                    raise error from exc
                time.sleep(0.01)

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Cursor]:
        cur = self._conn.cursor()
        try:
            cur.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield cur
            except BaseException:
                # After an I/O error SQLite may have rolled back already.
                with contextlib.suppress(sqlite3.Error):
                    cur.execute("ROLLBACK")
                raise
            try:
                cur.execute("COMMIT")
            except sqlite3.Error:
                with contextlib.suppress(sqlite3.Error):
                    cur.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        finally:
            cur.close()

    def _now(self) -> str:
        return datetime.now(UTC).isoformat(timespec="microseconds")

    def _datetime(self, value: Any) -> datetime:
        return datetime.fromisoformat(value).astimezone(UTC)

    def _db_time(self, value: datetime | None) -> Any:
        # As _now() writes it: text that sorts as the time does.
        return None if value is None else value.astimezone(UTC).isoformat(timespec="microseconds")

    def vacuum(self) -> None:
        """Rewrite the file compactly (SQLite's ``VACUUM``), and from then on give the
        pages a prune frees back to the file system (a database made before schema
        version 2 keeps them for reuse until then).  ``ptree migrate`` calls it.

        Cost: O(size of the database); it waits for other writers, and needs free disk
        space as large as the database.

        Raises:
            StoreWriteError: (an ``OSError``) the file is read-only, or the disk
                refused the rewrite (full, a file size limit, an I/O error); the
                database is as it was.
            StoreLockedError: (a ``TimeoutError``) another connection kept the
                database busy past the timeout; nothing changed.
            StoreError: the store is closed, or SQLite refused the rewrite for
                another reason (its message said); the database is as it was.
        """
        with self._lock:
            self._check_open()
            try:
                self._conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
                self._conn.execute("VACUUM")
            except sqlite3.Error as exc:  # SQLite undoes a failed VACUUM: a store error
                raise self._error(exc) from exc

    def _after_prune(self) -> None:
        # executescript steps the pragma to its end (execute() frees one page only).
        self._conn.executescript("PRAGMA incremental_vacuum;")

    def _create_schema(self, cur: Cursor) -> None:
        cur.execute(
            "CREATE TABLE ptree_sessions ("
            " id TEXT PRIMARY KEY, header TEXT NOT NULL, leaf TEXT, name TEXT,"
            " updated TEXT NOT NULL, entry_count INTEGER NOT NULL, incarnation TEXT NOT NULL)"
        )
        cur.execute("CREATE INDEX ptree_sessions_updated ON ptree_sessions (updated)")
        cur.execute(
            "CREATE TABLE ptree_entries ("
            " session TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, parent TEXT,"
            " type TEXT NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (session, seq))"
        )
        cur.execute("CREATE UNIQUE INDEX ptree_entries_id ON ptree_entries (session, id)")

    def _close(self) -> None:
        self._conn.close()
