"""The server store: PostgreSQL through psycopg 3 (the optional extra ``ptree[postgres]``).

psycopg is imported only when such a store is opened.  A save is one transaction that
locks the session's row (``SELECT ... FOR UPDATE``), so writers of one session take
turns while writers of other sessions run in parallel; reads run at ``REPEATABLE
READ``, so a load sees one committed state.  Entry lines are kept as ``text`` (not
``jsonb``, which would reorder keys and refuse ``\\u0000``): they come back byte for byte.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from ._search import PostgresIndex
from ._sql import Cursor, SqlStore
from .errors import StoreError

__all__ = ["PostgresStore"]

# The schema is created under this advisory lock: many processes opening a new
# database at once would otherwise race on CREATE TABLE.
_SCHEMA_LOCK = zlib.crc32(b"ptree schema")


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

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        self._cur.execute(self._translate(sql), params)
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
    """

    FOR_UPDATE = " FOR UPDATE"
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
        self._conn = psycopg.connect(url, autocommit=True)
        try:
            with self._transaction(write=True) as cur:
                cur.execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))
                self._init_schema(cur)
        except BaseException:
            self._conn.close()
            raise

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Cursor]:
        with self._conn.transaction(), self._conn.cursor() as cur:
            if not write:
                cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield _PgCursor(cur)

    def _read(self, sql: str, params: Sequence[Any]) -> list[Any]:
        # One statement on the autocommit connection: one round trip, not four.
        with self._conn.cursor() as cur:
            return _PgCursor(cur).execute(sql, params).fetchall()  # type: ignore[no-any-return]

    def _now(self) -> datetime:
        return datetime.now(UTC)

    def _datetime(self, value: Any) -> datetime:
        assert isinstance(value, datetime)
        return value.astimezone(UTC)

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
        self._conn.close()
