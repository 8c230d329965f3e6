"""The server store: PostgreSQL through psycopg 3 (the optional extra ``ptree[postgres]``).

psycopg is imported only when such a store is opened.  A save is one transaction that
locks the session's row (``SELECT ... FOR UPDATE``), so writers of one session take
turns while writers of other sessions run in parallel; reads run at ``REPEATABLE
READ``, so a load sees one committed state.  Entry lines are kept as ``text`` (not
``jsonb``, which would reorder keys and refuse ``\\u0000``): they come back byte for byte.

Faults become the stores' errors, never psycopg's: a connection lost (killed, the
server restarted or down) raises :class:`~ptree.stores.StoreUnavailableError`; the
transaction it interrupted committed whole or not at all (a save may be repeated as it
is), and the same store object connects again on its next call.  A write the server's
disk refuses (full, past the server's file size limit, an I/O error), or a database
that takes no writes (a standby, ``default_transaction_read_only``), raises
:class:`~ptree.stores.StoreWriteError`, its transaction rolled back; a lock or statement
timeout set on the server, :class:`~ptree.stores.StoreLockedError`.
"""

from __future__ import annotations

import asyncio
import errno
import os
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from ._async import AsyncStore
from ._plan import Disconnect, Pause, Plan, Read, Sleep, Sql, Stepper, Transaction
from ._search import PostgresIndex
from ._sql import BlockingSqlStore, Cursor, SqlStore, execute
from .errors import (
    StoreError,
    StoreLockedError,
    StoreUnavailableError,
    StoreWriteError,
    errno_name,
)

__all__ = ["AsyncPostgresStore", "PostgresSql", "PostgresStore"]

T = TypeVar("T")

# The schema is created under this advisory lock: many processes opening a new
# database at once would otherwise race on CREATE TABLE.
_SCHEMA_LOCK = zlib.crc32(b"ptree schema")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# PostgreSQL gives ENOSPC its own SQLSTATE (53100, disk_full) and EIO too (58030,
# io_error); a write refused otherwise (EFBIG: past the server's file size limit; a
# quota; a read-only file system) is SQLSTATE XX000 with the C library's words for the
# errno ending the message: 'could not extend file "base/5/16390": File too large'.
_REFUSED = {
    os.strerror(number): number
    for number in (errno.EFBIG, errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS)
}


def _refused_write(exc: Exception, errors: Any) -> int | None:
    """The errno of a write the server's disk refused, as ``exc`` reports it; ``None``
    when ``exc`` is another error (or the server words it in another language)."""
    if isinstance(exc, errors.DiskFull):
        return errno.ENOSPC
    if isinstance(exc, errors.IoError):
        return errno.EIO
    if isinstance(exc, errors.ReadOnlySqlTransaction):  # a standby, a read-only default
        return errno.EROFS
    if isinstance(exc, errors.InternalError_):
        primary = getattr(getattr(exc, "diag", None), "message_primary", None) or ""
        return _REFUSED.get(primary.rpartition(": ")[2])
    return None


_READ_ONLY = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
_TRANSLATED: dict[str, str] = {}  # a shared cache of translated statements


def _translate(sql: str) -> str:
    """A statement with ``?`` placeholders as psycopg takes it (``%s``)."""
    out = _TRANSLATED.get(sql)
    if out is None:
        out = _TRANSLATED[sql] = sql.replace("%", "%%").replace("?", "%s")
    return out


class _PgCursor:
    """A psycopg cursor taking ``?`` placeholders, like sqlite3's."""

    def __init__(self, cur: Any) -> None:
        self._cur = cur

    @property
    def description(self) -> Any:
        return self._cur.description

    def execute(self, sql: str, params: Sequence[Any] = (), prepare: bool | None = None) -> Any:
        self._cur.execute(_translate(sql), params, prepare=prepare)
        return self._cur

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any:
        self._cur.executemany(_translate(sql), rows)
        return self._cur

    def fetchone(self) -> Any:
        return self._cur.fetchone()

    def fetchall(self) -> list[Any]:
        return list(self._cur.fetchall())


class PostgresSql(SqlStore):
    """The PostgreSQL dialect of the SQL plans, and its faults, for both drivers
    (:class:`PostgresStore`, :class:`AsyncPostgresStore`).

    Args:
        url: the connection URL, as psycopg takes it.

    Raises:
        StoreError: psycopg is not installed.
    """

    FOR_UPDATE = " FOR UPDATE"
    # Microseconds since 1970 (exact: extract gives a numeric): a page's 50 times are
    # made in a fraction of the client's time a timestamptz takes to decode and move
    # to UTC (psycopg converts each into the connection's time zone first).
    UPDATED = "(extract(epoch FROM updated) * 1000000)::bigint"
    SEARCH_INDEX = PostgresIndex()
    # Sorted by code point, as Python and SQLite sort, whatever the database's collation.
    ID_KEY = 'id COLLATE "C"'

    def __init__(self, url: str) -> None:
        super().__init__(url)
        try:
            import psycopg
        except ImportError:  # pragma: no cover - the extra is installed in CI
            raise StoreError(
                url, "PostgreSQL stores need psycopg 3: pip install 'ptree[postgres]'"
            ) from None
        self._psycopg = psycopg
        self._conn: Any = None
        self._lost = False  # the connection failed: close it, connect again on next use

    def _error(self, exc: Exception) -> StoreError:
        """The store error a psycopg error means."""
        errors = self._psycopg.errors
        text = str(exc).strip() or type(exc).__name__
        refused = _refused_write(exc, errors)
        if refused is not None:
            return StoreWriteError(
                self._url,
                "the database server",
                refused,
                f"its disk refused a write ({errno_name(refused)}): {text}",
            )
        if isinstance(exc, (errors.LockNotAvailable, errors.QueryCanceled)):
            return StoreLockedError(self._url, 0.0)
        if isinstance(exc, (self._psycopg.OperationalError, self._psycopg.InterfaceError)):
            return StoreUnavailableError(self._url, f"the connection is lost: {text}")
        return StoreError(self._url, text)

    def _failure(self, conn: Any, exc: Exception) -> StoreError | None:
        """The store error an exception on ``conn`` means (``None``: ptree's own, a
        conflict, or a bug: raise it as it is); a lost connection is marked for
        :meth:`_stale`."""
        if isinstance(exc, self._psycopg.Error):
            error = self._error(exc)
        elif conn.closed or conn.broken:
            # The connection died under the driver's own wait (seen as a KeyError
            # from its selector when the server killed it): a lost connection.
            error = StoreUnavailableError(
                self._url, f"the connection is lost: {type(exc).__name__}: {exc}"
            )
        else:
            return None
        self._lost = isinstance(error, StoreUnavailableError)
        return error

    def _stale(self) -> bool:
        """Whether the connection must be (closed and) made again before use: lost on
        an earlier call (killed, the server restarted), or never made."""
        conn = self._conn
        return conn is None or self._lost or conn.closed or conn.broken

    def _schema_body(self) -> Plan[None]:
        # Under an advisory lock: many processes opening a new database at once would
        # otherwise race on CREATE TABLE.
        yield Sql("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))
        yield from self._init_schema()

    def _now(self) -> datetime:
        return datetime.now(UTC)

    def _datetime(self, value: Any) -> datetime:
        assert isinstance(value, int)
        return _EPOCH + timedelta(microseconds=value)

    def _create_schema(self, cur: Cursor) -> None:
        cur.execute(
            "CREATE TABLE ptree_sessions ("
            " id text PRIMARY KEY, header text NOT NULL, leaf text, name text,"
            " updated timestamptz NOT NULL, entry_count bigint NOT NULL,"
            " incarnation text NOT NULL)"
        )
        cur.execute("CREATE INDEX ptree_sessions_updated ON ptree_sessions (updated)")
        cur.execute(
            "CREATE TABLE ptree_entries ("
            " session text NOT NULL, seq bigint NOT NULL, id text NOT NULL, parent text,"
            " type text NOT NULL, payload text NOT NULL, PRIMARY KEY (session, seq))"
        )
        cur.execute("CREATE UNIQUE INDEX ptree_entries_id ON ptree_entries (session, id)")


class PostgresStore(PostgresSql, BlockingSqlStore):
    """Sessions in a PostgreSQL database.  Open with
    ``stores.open("postgresql://user@host:5432/db")`` (``postgres://`` works too).

    Args:
        url: the connection URL, as psycopg takes it.

    Raises:
        StoreError: psycopg is not installed, or the database's schema is newer than
            this ptree.
        StoreUnavailableError: the server cannot be reached.
    """

    def __init__(self, url: str) -> None:
        super().__init__(url)
        try:
            self._execute(Transaction(True, self._schema_body()))
        except BaseException:
            self._close()
            raise

    def _connection(self) -> Any:
        if self._stale():
            self._close()
            try:
                self._conn = self._psycopg.connect(self._url, autocommit=True)
            except self._psycopg.Error as exc:
                raise self._error(exc) from exc
            self._lost = False
        return self._conn

    @contextmanager
    def _cursor(self, transaction: bool, write: bool = False) -> Iterator[Cursor]:
        conn = self._connection()
        try:
            with conn.transaction() if transaction else nullcontext(), conn.cursor() as cur:
                if transaction and not write:
                    cur.execute(_READ_ONLY)
                yield _PgCursor(cur)
        except Exception as exc:
            error = self._failure(conn, exc)
            if error is None:
                raise
            raise error from exc

    def _transaction(self, write: bool) -> AbstractContextManager[Cursor]:
        return self._cursor(True, write)

    def _read(self, sql: str, params: Sequence[Any], planned: bool = False) -> list[Any]:
        # One statement on the autocommit connection: one round trip, not four.  A
        # planned one is never a prepared statement's generic plan: whether a search
        # walks the rows or reads the GIN index depends on the words.
        with self._cursor(False) as cur:
            if planned:
                return cur.execute(sql, params, prepare=False).fetchall()  # type: ignore[call-arg, no-any-return]
            return execute(cur, Sql(sql, params))

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()


class AsyncPostgresStore(PostgresSql, AsyncStore):
    """Sessions in a PostgreSQL database, through psycopg's ``AsyncConnection``: no
    thread, the event loop waits on nothing.  Open with
    ``await stores.open_async("postgresql://...")``.

    The same plans as :class:`PostgresStore` (:mod:`ptree.stores._plan`), so the same
    results and errors; calls on one store object take turns on its connection.

    Args:
        url: the connection URL, as psycopg takes it.

    Raises:
        StoreError: psycopg is not installed.
    """

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self._turn = asyncio.Lock()

    @classmethod
    async def connect(cls, url: str) -> AsyncPostgresStore:
        """Connect, and create, check or upgrade the tables (as :class:`PostgresStore`
        does).  Cost: one connection, and a transaction.

        Args:
            url: the connection URL.

        Raises:
            StoreError: psycopg is missing, or the schema is newer than this ptree.
            StoreUnavailableError: the server cannot be reached.
        """
        store = cls(url)
        try:
            await store._run(store._schema_transaction())
        except BaseException:
            await store.close()
            raise
        return store

    def _schema_transaction(self) -> Plan[None]:
        yield Transaction(True, self._schema_body())

    async def _drive(self, op: Callable[..., Plan[T]], *args: Any) -> T:
        return await self._run(op(self, *args))

    async def _run(self, plan: Plan[T]) -> T:
        stepper = Stepper(plan)
        for step in stepper:
            with stepper.answering():
                stepper.reply = await self._step(step)
        return stepper.value

    async def _step(self, step: Any) -> Any:
        if isinstance(step, (Sleep, Pause)):
            await asyncio.sleep(step.seconds if isinstance(step, Sleep) else 0)
            return None
        async with self._turn:
            if isinstance(step, Disconnect):
                await self._disconnect()
                return None
            conn = await self._connection()
            try:
                return await self._on(conn, step)
            except Exception as exc:
                error = self._failure(conn, exc)
                if error is None:
                    raise
                raise error from exc

    async def _connection(self) -> Any:
        if self._stale():
            await self._disconnect()
            try:
                self._conn = await self._psycopg.AsyncConnection.connect(self._url, autocommit=True)
            except self._psycopg.Error as exc:
                raise self._error(exc) from exc
            self._lost = False
        return self._conn

    async def _disconnect(self) -> None:
        if self._conn is not None:
            await self._conn.close()

    @staticmethod
    async def _on(conn: Any, step: Any) -> Any:
        """Execute a Transaction or Read step on ``conn``."""
        if isinstance(step, Read):
            async with conn.cursor() as cur:
                return await _execute(cur, Sql(step.sql, step.params), step.planned)
        async with conn.transaction(), conn.cursor() as cur:
            if not step.write:
                await cur.execute(_READ_ONLY)
            stepper = Stepper(step.body)
            for sql in stepper:
                with stepper.answering():
                    stepper.reply = await _execute(cur, sql)
            return stepper.value


async def _execute(cur: Any, step: Sql, planned: bool = False) -> list[Any]:
    """One statement on an async psycopg cursor; its rows (``planned``: never a
    prepared statement's generic plan)."""
    if not step.many:
        await cur.execute(_translate(step.sql), step.params, prepare=False if planned else None)
        return await cur.fetchall() if cur.description is not None else []
    if step.params:
        await cur.executemany(_translate(step.sql), step.params)
    return []
