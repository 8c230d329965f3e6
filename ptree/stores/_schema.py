"""The SQL stores' schema versions: what each version adds, and the upgrade in place.

``ptree_schema (version)`` holds the version of a database's tables.  Opening a store
(or ``ptree migrate URL``) creates the tables of a new database, refuses one whose
version is newer than :data:`SCHEMA_VERSION` (:class:`~ptree.stores.SchemaVersionError`,
naming both), and upgrades an older one in place, step by step, inside the same
transaction: either the whole upgrade is committed, or nothing changed.

Versions:

1. ``ptree_sessions``, ``ptree_entries`` (ptree 0.x, before search).
2. The search index (see :mod:`ptree.stores._search`), filled from the stored entries
   by the upgrade; ``ptree_pruned (session, id, digest)``, the entries a prune removed
   (the SHA-256 of their JSON line: a save bringing one back is refused); the
   sessions' paging index on ``(updated, id)``.
3. The order entries were indexed, for search to rank the newest matches: PostgreSQL's
   ``ptree_search`` gains ``n`` (numbered in the order its rows are stored, on upgrade)
   and a B-tree on it, and each row's words its block's marker (``_b`` and
   ``n // 4096``, set by a trigger on insert, and for the rows there are by the
   upgrade), and its GIN index's pending list at most 64 kB (a search scans GIN once a
   block, and each scan reads that list); SQLite's FTS5 rowid is that order already.
4. SQLite's FTS5 table keeps no copy of the words (contentless; rebuilt from the words
   it kept): they are recomputed from the stored entries where needed, so the word rule
   is part of the schema (see :mod:`ptree.stores._search`).  PostgreSQL: no change.

A new database is made as version 1, then upgraded: one path for new and old
databases, so the upgrade is run by every test that opens a store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..entries import entry_from_json
from ..pi.lines import parse_line
from ._plan import Plan, Sql, recorded
from ._search import entry_words
from .errors import SchemaVersionError

if TYPE_CHECKING:
    from ._sql import SqlStore

__all__ = ["SCHEMA_VERSION", "init_schema"]

SCHEMA_VERSION = 4
"""The version of the tables this ptree writes; a database with a newer one is refused."""


def init_schema(store: SqlStore) -> Plan[int | None]:
    """Create, check or upgrade the schema: the body of the caller's write transaction
    (a plan of :class:`~ptree.stores._plan.Sql` steps).

    Returns:
        the version the database had before (``None``: it was new).

    Raises:
        SchemaVersionError: the database's version is newer than this ptree's.
    """
    yield Sql("CREATE TABLE IF NOT EXISTS ptree_schema (version INTEGER NOT NULL)")
    rows = yield Sql("SELECT max(version) FROM ptree_schema")
    found: int | None = rows[0][0] if rows else None
    version = found
    if version is None:
        yield from recorded(store._create_schema)
        yield Sql("INSERT INTO ptree_schema (version) VALUES (?)", (1,))
        version = 1
    if version > SCHEMA_VERSION:
        raise SchemaVersionError(store.url, version, SCHEMA_VERSION)
    while version < SCHEMA_VERSION:
        yield from _UPGRADES[version](store)
        version += 1
        yield Sql("UPDATE ptree_schema SET version = ?", (version,))
    return found


def _to_2(store: SqlStore) -> Plan[None]:
    """Version 2: search, prune tombstones, the paging index."""
    index = store.SEARCH_INDEX
    yield from recorded(index.create)
    yield Sql(
        "CREATE TABLE ptree_pruned (session TEXT NOT NULL, id TEXT NOT NULL,"
        " digest TEXT NOT NULL, PRIMARY KEY (session, id, digest))"
    )
    yield Sql("DROP INDEX IF EXISTS ptree_sessions_updated")
    yield Sql(f"CREATE INDEX ptree_sessions_page ON ptree_sessions (updated, {store.ID_KEY})")
    if store.ID_KEY != "id":
        yield Sql(f"CREATE INDEX ptree_sessions_id ON ptree_sessions ({store.ID_KEY})")
    # Index what is stored, a session at a time (a database may be large).
    keys = [k for (k,) in (yield Sql("SELECT id FROM ptree_sessions ORDER BY id"))]
    for key in keys:
        rows = yield Sql(
            "SELECT id, payload FROM ptree_entries WHERE session = ? ORDER BY seq", (key,)
        )
        found = []
        for entry_key, payload in rows:
            said = entry_words(entry_from_json(parse_line(payload)))
            if said is not None:
                found.append((entry_key, said[0], said[1]))
        yield from recorded(index.add, key, found)


def _to_4(store: SqlStore) -> Plan[None]:
    """Version 4: SQLite's search index keeps no copy of the words."""
    yield from recorded(store.SEARCH_INDEX.drop_words)


def _to_3(store: SqlStore) -> Plan[None]:
    """Version 3: the order entries were indexed (see :mod:`ptree.stores._search`)."""
    yield from recorded(store.SEARCH_INDEX.number_rows)


_UPGRADES: dict[int, Callable[[SqlStore], Plan[None]]] = {1: _to_2, 2: _to_3, 3: _to_4}
