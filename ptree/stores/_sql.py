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
from ._base import Anchor, SessionSummary, Store, entry_payload, header_payload
from ._paging import Order, Position, SessionPage, cut
from ._prune import digest, refuse_pruned
from ._schema import SCHEMA_VERSION, init_schema
from ._search import NEWEST, Query, SearchHit, SqlIndex, best, entry_words, snippet
from .errors import ConflictError, SessionNotFoundError

__all__ = ["SCHEMA_VERSION", "Cursor", "SqlStore", "db_key", "from_db_key"]


class Cursor(Protocol):
    """The part of a DB-API cursor the SQL stores use (``?`` placeholders)."""

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


class SqlStore(Store):
    """A store in two SQL tables (see the module doc); subclasses bring the connection."""

    #: Appended to the query that reads a session's row before changing it.
    FOR_UPDATE = ""
    #: The search index of the dialect (:mod:`ptree.stores._search`).
    SEARCH_INDEX: SqlIndex
    #: The session id as sorted by paging (a PostgreSQL database may collate otherwise).
    ID_KEY = "id"
    #: The incarnation of a session a prune rewrote starts with this.
    PRUNED = "pruned-"
    #: ``updated`` as listings read it (and :meth:`_datetime` takes it).
    UPDATED = "updated"

    def __init__(self, url: str) -> None:
        super().__init__(url)

    # ------------------------------------------------------------------ connection

    @abstractmethod
    def _transaction(self, write: bool) -> AbstractContextManager[Cursor]:
        """One transaction: committed when the block ends, rolled back on an error.
        A write transaction serialises with every other writer of the session."""

    @abstractmethod
    def _now(self) -> Any:
        """The value ``updated`` gets now."""

    @abstractmethod
    def _datetime(self, value: Any) -> datetime:
        """``updated`` as read back, as a UTC datetime."""

    @abstractmethod
    def _create_schema(self, cur: Cursor) -> None:
        """Create the tables and indexes of :data:`SCHEMA_VERSION` (fresh database)."""

    def _init_schema(self, cur: Cursor) -> None:
        """Create, check or upgrade the schema (:mod:`ptree.stores._schema`).  Inside a
        write transaction."""
        found = init_schema(self, cur)
        self._schema_found = SCHEMA_VERSION if found is None else found

    @property
    def schema_version(self) -> tuple[int, int]:
        return self._schema_found, SCHEMA_VERSION

    # ------------------------------------------------------------------ saving

    def _session_row(self, cur: Cursor, key: str, lock: bool) -> Any:
        sql = "SELECT header, leaf, entry_count, incarnation FROM ptree_sessions WHERE id = ?" + (
            self.FOR_UPDATE if lock else ""
        )
        return cur.execute(sql, (key,)).fetchone()

    def _save(self, tree: SessionTree) -> Anchor:
        header = tree.header
        assert header is not None
        sid = header.id
        key = db_key(sid)
        head = header_payload(header)
        with self._transaction(write=True) as cur:
            row = self._session_row(cur, key, lock=True)
            if row is None:
                cur.execute(
                    "INSERT INTO ptree_sessions (id, header, leaf, name, updated, entry_count,"
                    " incarnation) VALUES (?, ?, NULL, NULL, ?, 0, ?)"
                    " ON CONFLICT (id) DO NOTHING",
                    (key, head, self._now(), uuid.uuid4().hex),
                )
                row = self._session_row(cur, key, lock=True)
            stored_head, stored_leaf, count, incarnation = row
            if stored_head != head:
                raise ConflictError(sid, self._url, "the stored session has another header")
            if len(tree) < count:
                raise ConflictError(
                    sid,
                    self._url,
                    f"the stored session has {count} entries, the tree only {len(tree)}: "
                    "another writer saved since this tree was loaded",
                )
            found = self._best_anchor(sid, tree, incarnation, count)
            if found is not None:
                start, tail = found[0].count, found[1]
            else:
                start, tail = 0, tree.entries()
            if count > start:
                rows = cur.execute(
                    "SELECT payload FROM ptree_entries WHERE session = ? AND seq >= ?"
                    " AND seq < ? ORDER BY seq",
                    (key, start, count),
                ).fetchall()
                for i, (payload,) in enumerate(rows):
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
                self._refuse_pruned(cur, sid, key, new)
            if new:
                self._insert_entries(cur, key, count, new)
                self._index(cur, key, new)
            if new or leaf != stored_leaf:
                cur.execute(
                    "UPDATE ptree_sessions SET leaf = ?, name = ?, updated = ?, entry_count = ?"
                    " WHERE id = ?",
                    (leaf, tree.session_name, self._now(), len(tree), key),
                )
        return Anchor(tree, incarnation, len(tree), len(tree))

    def _insert_entries(self, cur: Cursor, key: str, start: int, entries: Sequence[Entry]) -> None:
        """Write entries as rows ``start``, ``start + 1``, ... of the session."""
        cur.executemany(
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
                for i, e in enumerate(entries)
            ],
        )

    # ------------------------------------------------------------------ loading

    def _build(self, sid: str, head: str, payloads: list[str], leaf: str | None) -> SessionTree:
        """The tree of a header line and entry lines, read as the file they make."""
        parts = [head, *payloads, ""]
        data = "\n".join(parts).encode("utf-8")
        tree = read_state(f"{self._url}#{sid}", data).tree
        return tree.move_to(_opt_id(leaf))

    def _load(self, session_id: str) -> Anchor:
        key = db_key(session_id)
        with self._transaction(write=False) as cur:
            row = self._session_row(cur, key, lock=False)
            if row is None:
                raise SessionNotFoundError(session_id, self._url)
            head, leaf, count, incarnation = row
            payloads = [
                p
                for (p,) in cur.execute(
                    "SELECT payload FROM ptree_entries WHERE session = ? AND seq < ? ORDER BY seq",
                    (key, count),
                ).fetchall()
            ]
        tree = self._build(session_id, head, payloads, leaf)
        return Anchor(tree, incarnation, count, count)

    def _refresh(self, session_id: str) -> SessionTree:
        # update()'s load: from the last version this object saw, only the entries since.
        with self._lock:
            self._check_open()
            anchor = self._latest_anchor(session_id)
            if anchor is None:
                return self.load(session_id)
            key = db_key(session_id)
            rows: list[Any] | None = None
            with self._transaction(write=False) as cur:
                row = self._session_row(cur, key, lock=False)
                if row is None:
                    raise SessionNotFoundError(session_id, self._url)
                _head, leaf, count, incarnation = row
                if incarnation == anchor.incarnation and count >= anchor.count:
                    rows = cur.execute(
                        "SELECT payload FROM ptree_entries WHERE session = ? AND seq >= ?"
                        " AND seq < ? ORDER BY seq",
                        (key, anchor.count, count),
                    ).fetchall()
            if rows is None:  # deleted and saved again since: read it whole
                return self.load(session_id)
            tree = anchor.tree
            for (payload,) in rows:
                tree = tree.insert(entry_from_json(parse_line(payload)))
            tree = tree.move_to(_opt_id(leaf))
            self._remember(session_id, Anchor(tree, incarnation, count, count))
            return tree

    def _load_path(self, session_id: str) -> SessionTree:
        key = db_key(session_id)
        with self._transaction(write=False) as cur:
            row = self._session_row(cur, key, lock=False)
            if row is None:
                raise SessionNotFoundError(session_id, self._url)
            head, leaf, _count, _incarnation = row
            payloads: list[str] = []
            if leaf is not None:
                # The database follows the parent links: O(depth) index lookups.
                payloads = [
                    p
                    for (p,) in cur.execute(
                        "WITH RECURSIVE path(seq, parent, payload) AS ("
                        " SELECT seq, parent, payload FROM ptree_entries"
                        " WHERE session = ? AND id = ?"
                        " UNION ALL"
                        " SELECT e.seq, e.parent, e.payload FROM ptree_entries e, path"
                        " WHERE e.session = ? AND e.id = path.parent"
                        ") SELECT payload FROM path ORDER BY seq",
                        (key, leaf, key),
                    ).fetchall()
                ]
        return self._build(session_id, head, payloads, leaf)

    # ------------------------------------------------------------------ the rest

    def _sessions(self) -> list[SessionSummary]:
        with self._transaction(write=False) as cur:
            rows = cur.execute(
                f"SELECT id, name, entry_count, {self.UPDATED} FROM ptree_sessions"
                " ORDER BY updated DESC, id"
            ).fetchall()
        return [
            SessionSummary(from_db_key(k), name, count, self._datetime(updated))
            for k, name, count, updated in rows
        ]

    def _delete(self, session_id: str) -> None:
        key = db_key(session_id)
        with self._transaction(write=True) as cur:
            if self._session_row(cur, key, lock=True) is None:
                raise SessionNotFoundError(session_id, self._url)
            cur.execute("DELETE FROM ptree_entries WHERE session = ?", (key,))
            cur.execute("DELETE FROM ptree_sessions WHERE id = ?", (key,))
            cur.execute("DELETE FROM ptree_pruned WHERE session = ?", (key,))
            self.SEARCH_INDEX.remove(cur, key)

    def _exists(self, session_id: str) -> bool:
        with self._transaction(write=False) as cur:
            return self._session_row(cur, db_key(session_id), lock=False) is not None

    # ------------------------------------------------------------------ scale (issue 25)

    def _page(self, order: Order, limit: int | None, after: Position | None) -> SessionPage:
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
        rows = self._read(sql, params)
        summaries = [
            SessionSummary(from_db_key(k), name, count, self._datetime(updated))
            for k, name, count, updated in rows
        ]
        return cut(order, summaries, limit)

    def _read(self, sql: str, params: Sequence[Any]) -> list[Any]:
        """The rows of one query: a single statement reads one committed state, so
        a database may run it without a transaction around it (fewer round trips)."""
        with self._transaction(write=False) as cur:
            rows: list[Any] = cur.execute(sql, params).fetchall()
        return rows

    def _db_time(self, value: datetime | None) -> Any:
        """A time of a page cursor as the ``updated`` column holds it."""
        return value

    def _index(self, cur: Cursor, key: str, entries: Sequence[Entry]) -> None:
        """Index new entries for search, in the save's transaction."""
        rows = []
        for e in entries:
            said = entry_words(e)
            if said is not None:
                rows.append((db_key(e.id), said[0], said[1]))
        self.SEARCH_INDEX.add(cur, key, rows)

    def _refuse_pruned(self, cur: Cursor, sid: str, key: str, new: Sequence[Entry]) -> None:
        by_id = {db_key(e.id): e for e in new}
        ids = list(by_id)
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ", ".join("?" * len(chunk))
            rows = cur.execute(
                f"SELECT id, digest FROM ptree_pruned WHERE session = ? AND id IN ({marks})",
                [key, *chunk],
            ).fetchall()
            refuse_pruned(self._url, sid, by_id.values(), {(from_db_key(k), d) for k, d in rows})

    def _search(self, query: Query, limit: int, session: str | None) -> list[SearchHit]:
        # The newest NEWEST matches (or limit, if more) are ranked, here, by one rule
        # for every store; then the payloads (for snippets) of the best only.
        found = self.SEARCH_INDEX.newest(
            self._read_planned,
            query,
            max(NEWEST, limit),
            None if session is None else db_key(session),
        )
        chosen = best(query, found, limit)
        if not chosen:
            return []
        pairs = ", ".join("(?, ?)" for _ in chosen)
        payloads = {
            (k, e): p
            for k, e, p in self._read(
                # A join (SQLite scans the table for "(session, id) IN (VALUES ...)").
                f"SELECT e.session, e.id, e.payload FROM (VALUES {pairs}) v"
                " JOIN ptree_entries e ON e.session = v.column1 AND e.id = v.column2",
                [v for c in chosen for v in (c.session, c.entry)],
            )
        }
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

    def _read_planned(self, sql: str, params: Sequence[Any]) -> list[Any]:
        """:meth:`_read` for a statement whose best plan depends on its parameters."""
        return self._read(sql, params)

    def _prune(
        self, session_id: str, anchor: Anchor, new: SessionTree, removed: tuple[Entry, ...]
    ) -> bool:
        key = db_key(session_id)
        with self._transaction(write=True) as cur:
            row = self._session_row(cur, key, lock=True)
            if row is None:
                raise SessionNotFoundError(session_id, self._url)
            _head, leaf, count, incarnation = row
            if (
                incarnation != anchor.incarnation
                or count != anchor.count
                or leaf != _opt_key(anchor.tree.leaf_id)
            ):
                return False
            # Rewritten whole: seq stays 0, 1, ... (what saves and loads rely on).
            cur.execute("DELETE FROM ptree_entries WHERE session = ?", (key,))
            self._insert_entries(cur, key, 0, new.entries())
            self.SEARCH_INDEX.remove(cur, key, [db_key(e.id) for e in removed])
            cur.executemany(
                "INSERT INTO ptree_pruned (session, id, digest) VALUES (?, ?, ?)"
                " ON CONFLICT DO NOTHING",
                [(key, db_key(e.id), digest(e)) for e in removed],
            )
            cur.execute(
                "UPDATE ptree_sessions SET name = ?, updated = ?, entry_count = ?,"
                " incarnation = ? WHERE id = ?",
                (new.session_name, self._now(), len(new), self.PRUNED + uuid.uuid4().hex, key),
            )
        self._after_prune()
        return True

    def _after_prune(self) -> None:
        """Give freed space back, where the database can (outside the transaction)."""
