"""Schema versions: a store written by ptree's schema version 1 (committed in
``tests/store_v1/`` before version 2 existed: a SQLite file and a PostgreSQL dump) is
upgraded in place when opened, every session loading equal and search and paging
working; a database newer than this ptree is refused, untouched."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from ptree import stores
from ptree.stores import SchemaVersionError
from tests.conftest import postgres_url
from tests.store_v1.make import sessions

FIXTURES = Path(__file__).parent / "store_v1"


def restore_postgres() -> str:
    """The test database holding exactly what ``postgres.sql`` dumped (version 1)."""
    import psycopg

    url = postgres_url()
    # Into the schema the URL's search_path names: without psql's \restrict lines,
    # the dump's empty search_path and its "public." prefixes.
    sql = "\n".join(
        line.replace("public.", "")
        for line in (FIXTURES / "postgres.sql").read_text("utf-8").splitlines()
        if not line.startswith("\\") and "set_config('search_path'" not in line
    )
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql)
    return url


def sqlite_copy(tmp_path: Path) -> str:
    target = tmp_path / "old.db"
    shutil.copyfile(FIXTURES / "store.db", target)
    return f"sqlite://{target}"


@pytest.fixture(params=["sqlite", "postgres"])
def old_store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL of a version 1 store, as today's main left it."""
    return sqlite_copy(tmp_path) if request.param == "sqlite" else restore_postgres()


class TestUpgrade:
    def test_the_fixture_is_version_1(self, tmp_path: Path) -> None:
        """The committed file really is the old schema (no search table)."""
        conn = sqlite3.connect(FIXTURES / "store.db")
        try:
            assert conn.execute("SELECT version FROM ptree_schema").fetchall() == [(1,)]
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            assert "ptree_search" not in tables
        finally:
            conn.close()

    def test_open_upgrades_and_every_session_loads_equal(self, old_store: str) -> None:
        """Opening upgrades 1 -> 4; each session equals what version 1 saved."""
        with stores.open(old_store) as store:
            assert store.schema_version == (1, 4)
            for tree in sessions():
                assert tree.header is not None
                loaded = store.load(tree.header.id)
                assert [e.to_json() for e in loaded.entries()] == [
                    e.to_json() for e in tree.entries()
                ]
                assert loaded.leaf_id == tree.leaf_id
                assert loaded == tree
        with stores.open(old_store) as store:
            assert store.schema_version == (4, 4)

    def test_search_finds_what_version_1_stored(self, old_store: str) -> None:
        """The upgrade indexed the stored entries: text, tool results, names, summaries,
        custom messages; never the base64 of an image or a JSON key."""
        with stores.open(old_store) as store:
            hits = store.search("kettle service")
            assert sorted(h.session_id for h in hits) == sorted(
                ["plain-0", '"quoted', "nul\x00id", "ünï-çødé", *(f"s{n}" for n in range(4, 10))]
            )
            assert {h.role for h in hits} == {"user"}
            assert {(h.session_id, h.role) for h in store.search("8002")} == {
                ("nul\x00id", "toolResult")
            }
            assert {h.session_id for h in store.search('"kettle deploy"')} == {
                '"quoted',
                "ünï-çødé",
                "s5",
                "s7",
                "s9",
            }
            assert [h.role for h in store.search("naïve café", session="s4")] == ["custom_message"]
            assert {h.role for h in store.search("abandoned")} == {"branch_summary"}
            assert {h.role for h in store.search("deploy so far")} == {"compaction"}
            with pytest.raises(stores.SearchQueryError):
                store.search("!!")
            assert store.search("iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB") == []
            assert store.search("mimeType") == []
            assert store.search("toolCallId") == []
        if old_store.startswith("postgres"):  # every row has its block's marker
            import psycopg

            with psycopg.connect(old_store, autocommit=True) as conn:
                rows = conn.execute(
                    "SELECT count(*) FILTER (WHERE words @@ CAST('_b' || n / 4096 AS tsquery)),"
                    " count(*) FROM ptree_search"
                ).fetchone()
            assert rows is not None
            assert rows[0] == rows[1] > 20

    def test_paging_walks_every_session_once(self, old_store: str) -> None:
        with stores.open(old_store) as store:
            seen: list[str] = []
            page = store.sessions(limit=3)
            while True:
                seen += [s.id for s in page]
                if page.next_cursor is None:
                    break
                page = store.sessions(limit=3, after=page.next_cursor)
            assert sorted(seen) == sorted(t.header.id for t in sessions() if t.header)
            assert seen == [s.id for s in store.sessions()]

    def test_saving_after_the_upgrade_indexes_the_new_entries(self, old_store: str) -> None:
        with stores.open(old_store) as store:
            store.update("s4", lambda t: t.append({"role": "user", "content": "samovar"}))
            assert [(h.session_id, h.role) for h in store.search("samovar")] == [("s4", "user")]


class TestUpgradeTo3:
    def test_a_version_2_postgres_store_numbers_its_search_rows(self) -> None:
        """Version 3 numbers PostgreSQL's search rows in the order they are stored,
        so a search ranks the newest matches: among equal scores, the later saved
        first, before and after the upgrade."""
        import psycopg

        from ptree import SessionHeader, SessionTree

        url = postgres_url()
        with stores.open(url) as store:
            for sid in ["older", "newer"]:
                tree = SessionTree(header=SessionHeader(id=sid, timestamp="2026-01-01", cwd="/"))
                store.save(tree.append({"role": "user", "content": "boil the kettle"}))
        with psycopg.connect(url, autocommit=True) as conn:  # as version 2 left it
            conn.execute("DROP TRIGGER ptree_search_mark ON ptree_search")
            conn.execute(
                "UPDATE ptree_search SET words = ts_delete(words,"
                " ARRAY(SELECT lexeme FROM unnest(words) WHERE positions IS NULL))"
            )
            assert conn.execute(
                "SELECT count(*) FROM ptree_search WHERE words @@ '_b0'"
            ).fetchone() == (0,)
            conn.execute("ALTER TABLE ptree_search DROP COLUMN n")
            conn.execute("UPDATE ptree_schema SET version = 2")
        with stores.open(url) as store:
            assert store.schema_version == (2, 4)
            with psycopg.connect(url, autocommit=True) as conn:  # every row has its marker
                assert conn.execute(
                    "SELECT count(*) FILTER (WHERE words @@ '_b0'), count(*) FROM ptree_search"
                ).fetchone() == (2, 2)
            assert [h.session_id for h in store.search("kettle")] == ["newer", "older"]
            tree = store.load("older")
            store.save(tree.append({"role": "user", "content": "the kettle again"}))
            assert [h.session_id for h in store.search("kettle boil")] == ["newer", "older"]
            assert [h.session_id for h in store.search("kettle", limit=1)] == ["older"]


class TestNewerSchema:
    def test_a_newer_sqlite_database_is_refused_untouched(self, tmp_path: Path) -> None:
        url = sqlite_copy(tmp_path)
        path = tmp_path / "old.db"
        conn = sqlite3.connect(path)
        conn.execute("UPDATE ptree_schema SET version = 99")
        conn.commit()
        conn.close()
        before = path.read_bytes()
        with pytest.raises(SchemaVersionError) as info:
            stores.open(url)
        assert (info.value.found, info.value.supported) == (99, 4)
        assert "version 99" in str(info.value)
        assert "(4)" in str(info.value)
        assert isinstance(info.value, stores.StoreError)
        assert path.read_bytes() == before

    def test_a_newer_postgres_database_is_refused(self) -> None:
        import psycopg

        url = restore_postgres()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE ptree_schema SET version = 7")
        with pytest.raises(SchemaVersionError) as info:
            stores.open(url)
        assert (info.value.found, info.value.supported) == (7, 4)
        with psycopg.connect(url, autocommit=True) as conn:
            cur = conn.execute("SELECT to_regclass('ptree_search')")
            assert cur.fetchone() == (None,)

    def test_a_failed_upgrade_changes_nothing(self, tmp_path: Path) -> None:
        """The upgrade is one transaction: a failure midway leaves version 1."""
        url = sqlite_copy(tmp_path)
        path = tmp_path / "old.db"
        conn = sqlite3.connect(path)
        # An entry the upgrade cannot read makes it fail after creating tables.
        conn.execute("UPDATE ptree_entries SET payload = '{' WHERE seq = 3 AND session = 's5'")
        conn.commit()
        conn.close()
        with pytest.raises(ValueError, match="JSON"):
            stores.open(url)
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("SELECT version FROM ptree_schema").fetchall() == [(1,)]
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            assert "ptree_search" not in tables
        finally:
            conn.close()
