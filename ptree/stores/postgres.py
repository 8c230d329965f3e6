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

import errno
import os
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from ._search import PostgresIndex
from ._sql import Cursor, SqlStore
from .errors import (
    StoreError,
    StoreLockedError,
    StoreUnavailableError,
    StoreWriteError,
    errno_name,
)

__all__ = ["PostgresStore"]

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


class _PgCursor:
    """A psycopg cursor taking ``?`` placeholders, like sqlite3's."""

    _sql: dict[str, str] = {}  # noqa: RUF012 - a shared cache of translated statements

    def __init__(self, cur: Any) -> None:
        self._cur = cur

    def _translate(self, sql: str) -> str:
        out = self._sql.get(sql)
        if out is None:
            out = self._sql[sql] = sql.replace("%", "%%").replace("?", "%s")
        return out

    def execute(self, sql: str, params: Sequence[Any] = (), prepare: bool | None = None) -> Any:
        self._cur.execute(self._translate(sql), params, prepare=prepare)
        return self._cur

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any:
        self._cur.executemany(self._translate(sql), rows)
        return self._cur

    def fetchone(self) -> Any:
        return self._cur.fetchone()

    def fetchall(self) -> list[Any]:
        return list(self._cur.fetchall())


class PostgresStore(SqlStore):
    """Sessions in a PostgreSQL database.  Open with
    ``stores.open("postgresql://user@host:5432/db")`` (``postgres://`` works too).

    Args:
        url: the connection URL, as psycopg takes it.

    Raises:
        StoreError: psycopg is not installed, or the database's schema is newer than
            this ptree.
        StoreUnavailableError: the server cannot be reached.
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
        self._connect()
        try:
            with self._transaction(write=True) as cur:
                cur.execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))
                self._init_schema(cur)
        except BaseException:
            self._close()
            raise

    def _connect(self) -> None:
        try:
            self._conn = self._psycopg.connect(self._url, autocommit=True)
        except self._psycopg.Error as exc:
            raise self._error(exc) from exc

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

    def _live(self) -> Any:
        """The connection, made again if an earlier call lost it (killed, the server
        restarted)."""
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            if conn is not None:
                conn.close()
            self._connect()
            conn = self._conn
        return conn

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Cursor]:
        conn = self._live()
        try:
            with conn.transaction(), conn.cursor() as cur:
                if not write:
                    cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                yield _PgCursor(cur)
        except self._psycopg.Error as exc:
            error = self._error(exc)
            if isinstance(error, StoreUnavailableError):
                conn.close()  # the next call connects again
            raise error from exc
        except Exception as exc:
            if not (conn.closed or conn.broken):
                raise  # ptree's own (a conflict), or a bug: as it is
            # The connection died under the driver's own wait (seen as a KeyError
            # from its selector when the server killed it): a lost connection.
            conn.close()
            raise StoreUnavailableError(
                self._url, f"the connection is lost: {type(exc).__name__}: {exc}"
            ) from exc

    def _read(self, sql: str, params: Sequence[Any]) -> list[Any]:
        return self._statement(sql, params, prepare=None)

    def _read_planned(self, sql: str, params: Sequence[Any]) -> list[Any]:
        # Never a prepared statement's generic plan: whether a search walks the rows
        # or reads the GIN index depends on the words.
        return self._statement(sql, params, prepare=False)

    def _statement(self, sql: str, params: Sequence[Any], *, prepare: bool | None) -> list[Any]:
        # One statement on the autocommit connection: one round trip, not four.  Its
        # faults are the stores' errors too, as in a transaction, and a lost connection
        # is opened again by the next call.
        conn = self._live()
        try:
            with conn.cursor() as cur:
                return _PgCursor(cur).execute(sql, params, prepare=prepare).fetchall()  # type: ignore[no-any-return]
        except self._psycopg.Error as exc:
            error = self._error(exc)
            if isinstance(error, StoreUnavailableError):
                conn.close()  # the next call connects again
            raise error from exc

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

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
