"""What the SQL stores share: the schema, and the save, load, path, page, search and
prune queries, written once for SQLite and PostgreSQL.

Tables (prefixed ``ptree_`` so they can live in an application's own database):

- ``ptree_schema (version)``: one row, the schema version (:data:`SCHEMA_VERSION`);
- ``ptree_sessions (id, header, leaf, name, updated, entry_count, incarnation)``: one
  row per session; ``header`` is the header line as ptree writes it; ``incarnation``
  changes when a session is deleted and saved again;
- ``ptree_entries (session, seq, id, parent, type, payload)``: one row per entry, ``seq``
  its position (0, 1, …) in the session, ``payload`` its JSON line exactly as ptree
  writes it (so a dump of a stored session is byte-identical to :func:`ptree.dump`).
  Keyed by ``(session, seq)`` (loads and appends are range scans) and unique on
  ``(session, id)`` (the path query follows ``parent`` through it).
- the search index and ``ptree_pruned`` (schema version 2): see
  :mod:`ptree.stores._search` and :mod:`ptree.stores._schema`.

Ids go into the id columns as they are, except an id holding a NUL or a lone surrogate
(which a database's text cannot hold) or starting with ``"``: that one is stored as its
JSON string (ASCII), which starts with ``"``, so no two ids share a stored form.
"""

from __future__ import annotations

import json
import uuid
from abc import abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol

from ..entries import Entry, entry_from_json
from ..pi.lines import parse_line
from ..pi.readable import entry_text
from ..pi.reader import read_state
from ..tree import SessionTree
from ._base import Anchor, SessionSummary, Since, Store, StoreCore, entry_payload, header_payload
from ._paging import Order, Position, SessionPage, cut
from ._plan import Disconnect, Plan, Read, Sql, Stepper, Transaction, recorded
from ._prune import digest, refuse_pruned
from ._schema import SCHEMA_VERSION, init_schema
from ._search import NEWEST, Query, SearchHit, SqlIndex, best, entry_words, snippet
from .errors import ConflictError, SessionNotFoundError

__all__ = [
    "SCHEMA_VERSION",
    "BlockingSqlStore",
    "Cursor",
    "SqlStore",
    "db_key",
    "execute",
    "from_db_key",
]


class Cursor(Protocol):
    """The part of a DB-API cursor the SQL stores use (``?`` placeholders)."""

    @property
    def description(self) -> Any: ...
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any: ...
    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...


def db_key(value: str) -> str:
    """The form of an id in the id columns (see the module doc).  O(len(value))."""
    if value.startswith('"') or "\x00" in value or _unencodable(value):
        return json.dumps(value, ensure_ascii=True)
    return value


def _unencodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def from_db_key(value: str) -> str:
    """The id stored as ``value`` (the inverse of :func:`db_key`)."""
    if value.startswith('"'):
        decoded = json.loads(value)
        assert isinstance(decoded, str)
        return decoded
    return value


def _opt_key(value: str | None) -> str | None:
    return None if value is None else db_key(value)


def _opt_id(value: str | None) -> str | None:
    return None if value is None else from_db_key(value)


class SqlStore(StoreCore):
    """The store contract in two SQL tables (see the module doc), as plans of SQL
    statements; a subclass brings the dialect, a driver the connection
    (:class:`BlockingSqlStore`, or psycopg's async one)."""

    #: Appended to the query that reads a session's row before changing it.
    FOR_UPDATE = ""
    #: The search index of the dialect (:mod:`ptree.stores._search`).
    SEARCH_INDEX: SqlIndex
    #: The session id as sorted by paging (a PostgreSQL database may collate otherwise).
    ID_KEY = "id"
    #: The incarnation of a session a prune rewrote starts with this.
    PRUNED = "pruned-"
    #: Rows per statement when many are written: between two, an async driver lets
    #: other tasks run (a save of 10^4 entries never holds the event loop long).
    CHUNK = 256
    #: ``updated`` as listings read it (and :meth:`_datetime` takes it).
    UPDATED = "updated"

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self._schema_found = SCHEMA_VERSION

    # ------------------------------------------------------------------ dialect

    @abstractmethod
    def _now(self) -> Any:
        """The value ``updated`` gets now."""

    @abstractmethod
    def _datetime(self, value: Any) -> datetime:
        """``updated`` as read back, as a UTC datetime."""

    @abstractmethod
    def _create_schema(self, cur: Cursor) -> None:
        """Create the tables and indexes of :data:`SCHEMA_VERSION` (fresh database)."""

    def _db_time(self, value: datetime | None) -> Any:
        """A time of a page cursor as the ``updated`` column holds it."""
        return value

    def _init_schema(self) -> Plan[None]:
        """Create, check or upgrade the schema (:mod:`ptree.stores._schema`): the body
        of a write transaction."""
        found = yield from init_schema(self)
        self._schema_found = SCHEMA_VERSION if found is None else found

    @property
    def schema_version(self) -> tuple[int, int]:
        return self._schema_found, SCHEMA_VERSION

    def _after_prune(self) -> None:
        """Give freed space back, where the database can (outside the transaction)."""

    # ------------------------------------------------------------------ rows

    def _row(self, key: str, lock: bool) -> Plan[Any]:
        sql = "SELECT header, leaf, entry_count, incarnation FROM ptree_sessions WHERE id = ?" + (
            self.FOR_UPDATE if lock else ""
        )
        rows = yield Sql(sql, (key,))
        return rows[0] if rows else None

    def _stored_row(self, session_id: str, key: str, lock: bool = False) -> Plan[Any]:
        """The session's row; SessionNotFoundError if there is none."""
        row = yield from self._row(key, lock)
        if row is None:
            raise SessionNotFoundError(session_id, self._url)
        return row

    def _payloads(self, key: str, start: int, end: int) -> Plan[list[str]]:
        """The JSON lines of entries ``start`` to ``end - 1`` of the session."""
        rows = yield Sql(
            "SELECT payload FROM ptree_entries WHERE session = ? AND seq >= ?"
            " AND seq < ? ORDER BY seq",
            (key, start, end),
        )
        return [p for (p,) in rows]

    # ------------------------------------------------------------------ saving

    def _save(self, tree: SessionTree) -> Plan[Anchor]:
        anchor: Anchor = yield Transaction(True, self._save_body(tree))
        return anchor

    def _save_body(self, tree: SessionTree) -> Plan[Anchor]:
        header = tree.header
        assert header is not None
        sid = header.id
        key = db_key(sid)
        head = header_payload(header)
        row = yield from self._row(key, lock=True)
        if row is None:
            yield Sql(
                "INSERT INTO ptree_sessions (id, header, leaf, name, updated, entry_count,"
                " incarnation) VALUES (?, ?, NULL, NULL, ?, 0, ?)"
                " ON CONFLICT (id) DO NOTHING",
                (key, head, self._now(), uuid.uuid4().hex),
            )
            row = yield from self._row(key, lock=True)
        stored_head, stored_leaf, count, incarnation = row
        base, tail = self._grown_from(tree, stored_head, count, incarnation)
        start = 0 if base is None else base.count
        if count > start:
            stored = yield from self._payloads(key, start, count)
            for i, payload in enumerate(stored):
                if entry_payload(tail[i]) != payload:
                    raise ConflictError(
                        sid,
                        self._url,
                        f"entry {start + i} differs from the stored one "
                        f"({tail[i].id!r} in the tree): another writer saved since "
                        "this tree was loaded, or it is not a later version of the session",
                    )
        new = tail[count - start :]
        leaf = _opt_key(tree.leaf_id)
        if new and incarnation.startswith(self.PRUNED):
            yield from self._refuse_pruned(sid, key, new)
        if new:
            yield from self._insert_entries(key, count, new)
            yield from self._index(key, new)
        if new or leaf != stored_leaf:
            yield Sql(
                "UPDATE ptree_sessions SET leaf = ?, name = ?, updated = ?, entry_count = ?"
                " WHERE id = ?",
                (leaf, tree.session_name, self._now(), len(tree), key),
            )
        return Anchor(tree, incarnation, len(tree), len(tree))

    def _insert_entries(self, key: str, start: int, entries: Sequence[Entry]) -> Plan[None]:
        """Write entries as rows ``start``, ``start + 1``, ... of the session."""
        for at in range(0, len(entries), self.CHUNK):
            yield Sql(
                "INSERT INTO ptree_entries (session, seq, id, parent, type, payload)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        key,
                        start + i,
                        db_key(e.id),
                        _opt_key(e.parent_id),
                        db_key(e.type),
                        entry_payload(e),
                    )
                    for i, e in enumerate(entries[at : at + self.CHUNK], at)
                ],
                many=True,
            )

    def _index(self, key: str, entries: Sequence[Entry]) -> Plan[None]:
        """Index new entries for search, in the save's transaction."""
        for at in range(0, len(entries), self.CHUNK):
            rows = []
            for e in entries[at : at + self.CHUNK]:
                said = entry_words(e)
                if said is not None:
                    rows.append((db_key(e.id), said[0], said[1]))
            yield from recorded(self.SEARCH_INDEX.add, key, rows)

    def _refuse_pruned(self, sid: str, key: str, new: Sequence[Entry]) -> Plan[None]:
        by_id = {db_key(e.id): e for e in new}
        ids = list(by_id)
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ", ".join("?" * len(chunk))
            rows = yield Sql(
                f"SELECT id, digest FROM ptree_pruned WHERE session = ? AND id IN ({marks})",
                [key, *chunk],
            )
            refuse_pruned(self._url, sid, by_id.values(), {(from_db_key(k), d) for k, d in rows})

    # ------------------------------------------------------------------ loading

    def _build(self, sid: str, head: str, payloads: list[str], leaf: str | None) -> SessionTree:
        """The tree of a header line and entry lines, read as the file they make."""
        parts = [head, *payloads, ""]
        data = "\n".join(parts).encode("utf-8")
        tree = read_state(f"{self._url}#{sid}", data).tree
        return tree.move_to(_opt_id(leaf))

    def _load(self, session_id: str) -> Plan[Anchor]:
        head, leaf, count, incarnation, payloads = yield Transaction(
            False, self._load_body(session_id)
        )
        tree = self._build(session_id, head, payloads, leaf)
        return Anchor(tree, incarnation, count, count)

    def _load_body(self, session_id: str) -> Plan[tuple[Any, ...]]:
        key = db_key(session_id)
        head, leaf, count, incarnation = yield from self._stored_row(session_id, key)
        payloads = yield from self._payloads(key, 0, count)
        return head, leaf, count, incarnation, payloads

    def _since(self, session_id: str, anchor: Anchor) -> Plan[Since | None]:
        since: Since | None = yield Transaction(False, self._since_body(session_id, anchor))
        return since

    def _since_body(self, session_id: str, anchor: Anchor) -> Plan[Since | None]:
        key = db_key(session_id)
        _head, leaf, count, incarnation = yield from self._stored_row(session_id, key)
        if incarnation != anchor.incarnation or count < anchor.count:
            return None  # deleted and saved again since
        payloads = yield from self._payloads(key, anchor.count, count)
        entries = [entry_from_json(parse_line(p)) for p in payloads]
        return Since(entries, _opt_id(leaf), incarnation, count, count)

    def _load_path(self, session_id: str) -> Plan[SessionTree]:
        head, leaf, payloads = yield Transaction(False, self._path_body(session_id))
        return self._build(session_id, head, payloads, leaf)

    def _path_body(self, session_id: str) -> Plan[tuple[Any, ...]]:
        key = db_key(session_id)
        head, leaf, _count, _incarnation = yield from self._stored_row(session_id, key)
        if leaf is None:
            return head, leaf, []
        # The database follows the parent links: O(depth) index lookups.
        rows = yield Sql(
            "WITH RECURSIVE path(seq, parent, payload) AS ("
            " SELECT seq, parent, payload FROM ptree_entries"
            " WHERE session = ? AND id = ?"
            " UNION ALL"
            " SELECT e.seq, e.parent, e.payload FROM ptree_entries e, path"
            " WHERE e.session = ? AND e.id = path.parent"
            ") SELECT payload FROM path ORDER BY seq",
            (key, leaf, key),
        )
        return head, leaf, [p for (p,) in rows]

    # ------------------------------------------------------------------ the rest

    def _delete(self, session_id: str) -> Plan[None]:
        yield Transaction(True, self._delete_body(session_id))

    def _delete_body(self, session_id: str) -> Plan[None]:
        key = db_key(session_id)
        yield from self._stored_row(session_id, key, lock=True)
        # The index first: SQLite's reads the entries' words to remove their rows.
        yield from self.SEARCH_INDEX.remove(key)
        yield Sql("DELETE FROM ptree_entries WHERE session = ?", (key,))
        yield Sql("DELETE FROM ptree_sessions WHERE id = ?", (key,))
        yield Sql("DELETE FROM ptree_pruned WHERE session = ?", (key,))

    def _exists(self, session_id: str) -> Plan[bool]:
        row = yield Transaction(False, self._row(db_key(session_id), lock=False))
        return row is not None

    # ------------------------------------------------------------------ scale (issue 25)

    def _page(self, order: Order, limit: int | None, after: Position | None) -> Plan[SessionPage]:
        where, params = "", []
        if order == "updated":
            if after is not None:
                where = f" WHERE (updated, {self.ID_KEY}) < (?, ?)"
                params = [self._db_time(after[0]), db_key(after[1])]
            by = f"updated DESC, {self.ID_KEY} DESC"
        else:
            if after is not None:
                where = f" WHERE {self.ID_KEY} > ?"
                params = [db_key(after[1])]
            by = self.ID_KEY
        sql = (
            f"SELECT id, name, entry_count, {self.UPDATED} FROM ptree_sessions{where} ORDER BY {by}"
        )
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit + 1)
        rows = yield Read(sql, params)
        summaries = [
            SessionSummary(from_db_key(k), name, count, self._datetime(updated))
            for k, name, count, updated in rows
        ]
        return cut(order, summaries, limit)

    def _search(self, query: Query, limit: int, session: str | None) -> Plan[list[SearchHit]]:
        # The newest NEWEST matches (or limit, if more) are ranked, here, by one rule
        # for every store; then the payloads (for snippets) of the best only.
        found = yield from self.SEARCH_INDEX.newest(
            query,
            max(NEWEST, limit),
            None if session is None else db_key(session),
        )
        chosen = best(query, found, limit)
        if not chosen:
            return []
        pairs = ", ".join("(?, ?)" for _ in chosen)
        rows = yield Read(
            # A join (SQLite scans the table for "(session, id) IN (VALUES ...)").
            f"SELECT e.session, e.id, e.payload FROM (VALUES {pairs}) v"
            " JOIN ptree_entries e ON e.session = v.column1 AND e.id = v.column2",
            [v for c in chosen for v in (c.session, c.entry)],
        )
        payloads = {(k, e): p for k, e, p in rows}
        hits = []
        for c in chosen:
            payload = payloads.get((c.session, c.entry))
            if payload is None:
                continue  # deleted between the two reads
            said = entry_text(entry_from_json(parse_line(payload)))
            text = "" if said is None else said[1]
            sid, eid = from_db_key(c.session), from_db_key(c.entry)
            hits.append(SearchHit(sid, eid, c.role, snippet(text, query)))
        return hits

    def _prune(
        self, session_id: str, anchor: Anchor, new: SessionTree, removed: tuple[Entry, ...]
    ) -> Plan[bool]:
        done = yield Transaction(True, self._prune_body(session_id, anchor, new, removed))
        if done:
            self._after_prune()
        return bool(done)

    def _prune_body(
        self, session_id: str, anchor: Anchor, new: SessionTree, removed: tuple[Entry, ...]
    ) -> Plan[bool]:
        key = db_key(session_id)
        _head, leaf, count, incarnation = yield from self._stored_row(session_id, key, lock=True)
        if (
            incarnation != anchor.incarnation
            or count != anchor.count
            or leaf != _opt_key(anchor.tree.leaf_id)
        ):
            return False
        # The index first: SQLite's reads the entries' words to remove their rows.
        yield from self.SEARCH_INDEX.remove(key, [db_key(e.id) for e in removed])
        # Rewritten whole: seq stays 0, 1, ... (what saves and loads rely on).
        yield Sql("DELETE FROM ptree_entries WHERE session = ?", (key,))
        yield from self._insert_entries(key, 0, new.entries())
        yield Sql(
            "INSERT INTO ptree_pruned (session, id, digest) VALUES (?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            [(key, db_key(e.id), digest(e)) for e in removed],
            many=True,
        )
        yield Sql(
            "UPDATE ptree_sessions SET name = ?, updated = ?, entry_count = ?,"
            " incarnation = ? WHERE id = ?",
            (new.session_name, self._now(), len(new), self.PRUNED + uuid.uuid4().hex, key),
        )
        return True


def execute(cur: Cursor, step: Sql) -> list[Any]:
    """Execute one statement on a blocking DB-API cursor; its rows (``[]`` for a
    statement without a result).  O(rows)."""
    if step.many:
        if step.params:
            cur.executemany(step.sql, step.params)
        return []
    cur.execute(step.sql, step.params)
    return cur.fetchall() if cur.description is not None else []


class BlockingSqlStore(SqlStore, Store):
    """An SQL store behind the blocking protocol: its plans run on a DB-API connection
    (a subclass brings :meth:`_transaction`)."""

    @abstractmethod
    def _transaction(self, write: bool) -> AbstractContextManager[Cursor]:
        """One transaction: committed when the block ends, rolled back on an error.
        A write transaction serialises with every other writer of the session."""

    @abstractmethod
    def _close(self) -> None:
        """Close the connection."""

    def _execute(self, step: Any) -> Any:
        if isinstance(step, Transaction):
            with self._transaction(step.write) as cur:
                return Stepper(step.body).run(lambda sql: execute(cur, sql))
        if isinstance(step, Read):
            return self._read(step.sql, step.params, step.planned)
        if isinstance(step, Disconnect):
            self._close()
            return None
        raise TypeError(f"not a step of an SQL store: {step!r}")

    def _read(self, sql: str, params: Sequence[Any], planned: bool = False) -> list[Any]:
        """The rows of one query: a single statement reads one committed state, so
        a database may run it without a transaction around it (fewer round trips).
        ``planned``: its best plan depends on its parameters (see :class:`Read`)."""
        with self._transaction(write=False) as cur:
            return execute(cur, Sql(sql, params))
