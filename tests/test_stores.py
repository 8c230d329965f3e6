"""The store contract, one suite run against every store: SQLite (a file and
``:memory:``), a directory of Pi files and a real PostgreSQL server."""

from __future__ import annotations

import os
import sqlite3
import warnings
from collections.abc import Callable, Generator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import ptree
from ptree import SessionHeader, SessionTree, UnknownEntry, dump, stores
from tests.conftest import postgres_url

TS = "2026-01-01T00:00:00.000Z"


def clock() -> str:
    return TS


def header(session_id: str = "s1") -> SessionHeader:
    return SessionHeader(id=session_id, timestamp=TS, cwd="/work")


def new_tree(session_id: str = "s1") -> SessionTree:
    return SessionTree(header=header(session_id), clock=clock)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def grow(tree: SessionTree, n: int, prefix: str = "m") -> SessionTree:
    for i in range(n):
        tree = tree.append(user(f"{prefix}{i}"))
    return tree


def same(a: SessionTree, b: SessionTree) -> None:
    """Equal as values, and entry by entry in the JSON ptree writes."""
    assert [e.to_json() for e in a.entries()] == [e.to_json() for e in b.entries()]
    assert a.leaf_id == b.leaf_id
    assert a.header == b.header
    assert a.labels() == b.labels()
    assert a == b


@pytest.fixture
def store(store_url: str, open_store: Callable[[str], Any]) -> Iterator[stores.Store]:
    with open_store(store_url) as s:
        yield s


def every_kind(session_id: str = "s1") -> SessionTree:
    """A tree with every entry kind, unknown kinds and fields, branches and labels."""
    t = new_tree(session_id).append(user("hello"), timestamp=TS)
    t = t.append({"role": "assistant", "content": [{"type": "text", "text": "hi"}], "x": 1})
    t = t.append_thinking_level_change("high")
    t = t.append_model_change("anthropic", "claude")
    t = t.append_active_tools_change(["read", "bash"])
    t = t.append_custom("ext", {"k": [1, 2.5, None, True]})
    t = t.append_custom_message("note", "shown", display=True)
    t = t.append_session_info("my session")
    t = t.append_label("e1", "start")
    t = t.append_compaction("summary", "e2", 1234)
    t = t.move_to("e1").append_branch_summary("e2", "went elsewhere")
    t = t.insert(
        UnknownEntry(
            id="future-1",
            parent_id=t.leaf_id,
            timestamp=TS,
            entry_type="future_kind",
            extra={"payload": {"z": 1, "a": [{"b": "c"}]}, "order": "kept"},
        )
    )
    return t.move_to("e3")


class TestSave:
    def test_round_trip_of_every_kind(self, store: stores.Store) -> None:
        """Entries of every kind (unknown kinds and fields too), leaf, header and
        labels come back equal."""
        t = every_kind()
        assert store.save(t) == t
        same(store.load("s1"), t)

    def test_round_trip_of_awkward_text(self, store: stores.Store) -> None:
        """Unicode, NUL, a lone surrogate, quotes and a 2 MB message survive exactly."""
        t = new_tree().append(user('方 é \x00 \ud800 "q" \\ \n\u2028 😀'))
        t = t.append(user("x" * 2_000_000))
        t = t.insert(
            UnknownEntry(id='"quoted"\x00id', parent_id="e2", timestamp=TS, entry_type="odd\ud83d")
        )
        store.save(t)
        loaded = store.load("s1")
        same(loaded, t)
        assert loaded['"quoted"\x00id'].type == "odd\ud83d"

    def test_awkward_session_ids(self, store: stores.Store) -> None:
        """Session ids with slashes, dots, NULs, spaces, quotes or great length round-trip."""
        ids = ["../escape", "a/b", ".hidden", "with space", '"q"', "nul\x00x", "é" * 300, "x"]
        for sid in ids:
            store.save(grow(new_tree(sid), 2, sid[:3]))
        assert sorted(s.id for s in store.sessions()) == sorted(ids)
        for sid in ids:
            same(store.load(sid), grow(new_tree(sid), 2, sid[:3]))

    def test_many_small_saves_of_a_growing_tree(self, store: stores.Store) -> None:
        """Saving after every append keeps the store equal to the latest value."""
        t = new_tree()
        for i in range(60):
            t = store.save(t.append(user(f"turn {i}")))
            if i % 7 == 0:
                t = store.save(t.move_to(f"e{i // 2 + 1}"))
            if i % 10 == 0:
                same(store.load("s1"), t)
        same(store.load("s1"), t)
        assert len(store.load("s1")) == 60

    def test_two_writers_from_one_base_conflict(self, store: stores.Store) -> None:
        """The second of two saves grown from one base raises ConflictError and
        changes nothing."""
        base = store.save(grow(new_tree(), 3))
        first = store.save(base.append(user("first")))
        with pytest.raises(stores.ConflictError) as info:
            store.save(base.append(user("second")))
        assert info.value.session_id == "s1"
        assert isinstance(info.value, ptree.SessionError)
        same(store.load("s1"), first)

    def test_a_stale_leaf_move_conflicts(self, store: stores.Store) -> None:
        """Moving the leaf in a tree that lacks stored entries conflicts too."""
        base = store.save(grow(new_tree(), 3))
        newer = store.save(base.append(user("more")))
        with pytest.raises(stores.ConflictError):
            store.save(base.move_to("e1"))
        same(store.load("s1"), newer)

    def test_a_leaf_move_from_the_latest_tree_is_saved(self, store: stores.Store) -> None:
        """A move without new entries is saved; the last writer's leaf wins."""
        t = store.save(grow(new_tree(), 3))
        store.save(t.move_to("e1"))
        assert store.load("s1").leaf_id == "e1"
        store.save(t.move_to(None))
        assert store.load("s1").leaf_id is None
        store.save(t)
        assert store.load("s1").leaf_id == "e3"

    def test_a_shorter_tree_conflicts(self, store: stores.Store) -> None:
        """A tree with fewer entries than stored would lose some: ConflictError."""
        store.save(grow(new_tree(), 3))
        with pytest.raises(stores.ConflictError):
            store.save(grow(new_tree(), 2))
        assert len(store.load("s1")) == 3

    def test_equal_entries_made_elsewhere_are_accepted(self, store: stores.Store) -> None:
        """A tree built independently with the same entries is a later version."""
        store.save(grow(new_tree(), 3))
        again = grow(new_tree(), 5)  # no shared objects with the saved tree
        store.save(again)
        same(store.load("s1"), again)

    def test_a_diverging_entry_in_the_middle_conflicts(self, store: stores.Store) -> None:
        """Same count and same last entry but another entry before it: ConflictError."""
        store.save(grow(new_tree(), 3))
        other = new_tree().append(user("m0")).append(user("DIFFERENT")).append(user("m2"))
        with pytest.raises(stores.ConflictError):
            store.save(other.append(user("m3")))

    def test_another_header_conflicts(self, store: stores.Store) -> None:
        """The same session id with another header: ConflictError, nothing changed."""
        store.save(grow(new_tree(), 2))
        other = SessionTree(header=SessionHeader(id="s1", timestamp=TS, cwd="/elsewhere"))
        with pytest.raises(stores.ConflictError):
            store.save(grow(other, 3))
        assert store.load("s1").header == header()

    def test_a_tree_without_header_is_refused(self, store: stores.Store) -> None:
        """No header, no session id: StoreError (a ValueError)."""
        with pytest.raises(stores.StoreError) as info:
            store.save(SessionTree().append(user("x")))
        assert isinstance(info.value, ValueError)
        assert list(store.sessions()) == []

    def test_an_old_header_is_stored_as_version_3(self, store: stores.Store) -> None:
        """A version-1 header is saved as version 3, as dump writes it."""
        old = SessionHeader(id="s1", timestamp=TS, cwd="/work", version=1)
        saved = store.save(grow(SessionTree(header=old), 2))
        assert saved.header == header()
        same(store.load("s1"), saved)
        store.save(saved.append(user("again")))  # and saves on from there

    def test_saving_an_unchanged_tree_writes_nothing(self, store: stores.Store) -> None:
        """An equal tree saved again leaves the store as it was (not even the time)."""
        t = store.save(grow(new_tree(), 3))
        before = store.sessions()
        assert store.save(t) == t
        assert store.save(grow(new_tree(), 3)) == t
        assert store.sessions() == before

    def test_a_dump_of_a_stored_session_is_byte_identical(
        self, store: stores.Store, tmp_path: Path
    ) -> None:
        """ptree.dump of the loaded tree writes exactly the bytes of the original's."""
        t = every_kind().move_to("future-1")
        t = t.append(user("last \ud800 \x00"))
        store.save(t)
        dump(t, tmp_path / "a.jsonl")
        dump(store.load("s1"), tmp_path / "b.jsonl")
        assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


class TestLoad:
    def test_an_unknown_id_raises_a_key_error(self, store: stores.Store) -> None:
        """SessionNotFoundError is a KeyError and a SessionError naming the id."""
        with pytest.raises(KeyError) as info:
            store.load("nope")
        assert isinstance(info.value, stores.SessionNotFoundError)
        assert isinstance(info.value, ptree.SessionError)
        assert info.value.session_id == "nope"
        assert "'nope'" in str(info.value)

    def test_sessions_are_separate(self, store: stores.Store) -> None:
        """Two sessions keep their own entries."""
        a = store.save(grow(new_tree("a"), 3, "a"))
        b = store.save(grow(new_tree("b"), 5, "b"))
        same(store.load("a"), a)
        same(store.load("b"), b)
        assert "a" in store
        assert "c" not in store


class TestLoadPath:
    def test_only_the_path_to_the_leaf(self, store: stores.Store) -> None:
        """The path tree holds the leaf's ancestors in order, with the same context."""
        t = grow(new_tree(), 5).move_to("e2")
        t = grow(t, 3, "branch").move_to("e7")
        store.save(t)
        path = store.load_path("s1")
        assert path.ids() == ("e1", "e2", "e6", "e7")
        assert path.leaf_id == "e7"
        assert path.header == t.header
        assert path.current_path() == t.current_path()
        assert ptree.build_context(path) == ptree.build_context(t)

    def test_no_leaf_gives_an_empty_path(self, store: stores.Store) -> None:
        """A session whose leaf is above the roots has an empty path."""
        store.save(grow(new_tree(), 2).move_to(None))
        path = store.load_path("s1")
        assert len(path) == 0
        assert path.leaf_id is None

    def test_an_unknown_id_raises(self, store: stores.Store) -> None:
        with pytest.raises(stores.SessionNotFoundError):
            store.load_path("nope")


class TestUpdate:
    def test_returns_the_saved_tree(self, store: stores.Store) -> None:
        """update applies fn to the stored value and saves the result."""
        store.save(grow(new_tree(), 1))
        out = store.update("s1", lambda t: t.append(user("added")))
        assert out.ids() == ("e1", "e2")
        same(store.load("s1"), out)

    def test_an_exception_from_fn_changes_nothing(self, store: stores.Store) -> None:
        t = store.save(grow(new_tree(), 2))

        def boom(tree: SessionTree) -> SessionTree:
            raise RuntimeError("no")

        with pytest.raises(RuntimeError):
            store.update("s1", boom)
        same(store.load("s1"), t)

    def test_an_unknown_id_raises(self, store: stores.Store) -> None:
        with pytest.raises(stores.SessionNotFoundError):
            store.update("nope", lambda t: t)

    def test_fn_may_pause(self, store: stores.Store) -> None:
        """A generator fn yields Pause() between its pieces and returns the new value:
        the same result as a plain fn (the async store lets the loop run there)."""
        store.save(grow(new_tree(), 1))

        def long(tree: SessionTree) -> Generator[stores.Pause, None, SessionTree]:
            for i in range(3):
                yield stores.Pause()
                tree = tree.append(user(f"piece {i}"))
            return tree

        out = store.update("s1", long)
        assert [m["content"] for m in out.current_path()] == ["m0", "piece 0", "piece 1", "piece 2"]
        same(store.load("s1"), out)

    def test_fn_yielding_anything_else_changes_nothing(self, store: stores.Store) -> None:
        """A generator fn yielding something other than Pause(): TypeError naming it."""
        t = store.save(grow(new_tree(), 1))

        def bad(tree: SessionTree) -> Generator[object, None, SessionTree]:
            yield "SELECT 1"
            return tree.append(user("never"))

        with pytest.raises(TypeError, match=r"Pause\(\) steps only, not 'SELECT 1'"):
            store.update("s1", bad)
        same(store.load("s1"), t)

    def test_fn_runs_again_after_a_conflict(
        self, shared_store_url: str, open_store: Callable[[str], Any]
    ) -> None:
        """Another writer saving between load and save makes fn run again on the new
        value: both changes end up stored."""
        with open_store(shared_store_url) as a, open_store(shared_store_url) as b:
            a.save(grow(new_tree(), 1))
            calls: list[int] = []

            def fn(tree: SessionTree) -> SessionTree:
                calls.append(len(tree))
                if len(calls) == 1:
                    b.update("s1", lambda t: t.append(user("from b")))
                return tree.append(user("from a"))

            out = a.update("s1", fn)
            assert calls == [1, 2]
            texts = [m["content"] for m in out.current_path()]
            assert texts == ["m0", "from b", "from a"]
            same(b.load("s1"), out)

    def test_after_another_writer_made_the_session_anew(
        self, shared_store_url: str, open_store: Callable[[str], Any]
    ) -> None:
        """A session deleted and saved again elsewhere: update starts from the new one."""
        with open_store(shared_store_url) as a, open_store(shared_store_url) as b:
            a.save(grow(new_tree(), 3))
            a.update("s1", lambda t: t.append(user("seen by a")))
            b.delete("s1")
            b.save(grow(new_tree(), 1, "new"))
            out = a.update("s1", lambda t: t.append(user("again")))
            assert [m["content"] for m in out.current_path()] == ["new0", "again"]
            same(b.load("s1"), out)

    def test_gives_up_after_its_attempts(
        self, shared_store_url: str, open_store: Callable[[str], Any]
    ) -> None:
        """When another writer always saves first, update raises ConflictError."""
        with open_store(shared_store_url) as a, open_store(shared_store_url) as b:
            a.save(grow(new_tree(), 1))

            def fn(tree: SessionTree) -> SessionTree:
                b.update("s1", lambda t: t.append(user("b")))
                return tree.append(user("a"))

            with pytest.raises(stores.ConflictError):
                a.update("s1", fn, attempts=3)
            assert len(b.load("s1")) == 4  # b's three, none of a's

    def test_a_second_store_object_sees_every_save(
        self, shared_store_url: str, open_store: Callable[[str], Any]
    ) -> None:
        """Saves through one object are loaded by another; their versions interleave."""
        with open_store(shared_store_url) as a, open_store(shared_store_url) as b:
            a.save(grow(new_tree(), 2))
            for i in range(10):
                text = f"u{i}"

                def add(tree: SessionTree, text: str = text) -> SessionTree:
                    return tree.append(user(text))

                (a if i % 2 else b).update("s1", add)
            loaded = a.load("s1")
            assert [m["content"] for m in loaded.current_path()][2:] == [f"u{i}" for i in range(10)]
            same(b.load("s1"), loaded)


class TestSessions:
    def test_summaries_newest_first(self, store: stores.Store) -> None:
        """id, name, entry count and a UTC time; the last saved first."""
        start = datetime.now(UTC) - timedelta(seconds=5)
        store.save(grow(new_tree("old"), 2))
        store.save(grow(new_tree("new"), 3).append_session_info("  Named  "))
        listed = store.sessions()
        assert [(s.id, s.name, s.entry_count) for s in listed] == [
            ("new", "Named", 4),
            ("old", None, 2),
        ]
        for s in listed:
            assert s.updated.tzinfo is not None
            assert s.updated.utcoffset() == timedelta(0)
            assert start <= s.updated <= datetime.now(UTC) + timedelta(seconds=5)
        store.update("old", lambda t: t.append(user("touch")))
        assert [s.id for s in store.sessions()] == ["old", "new"]

    def test_an_empty_store(self, store: stores.Store) -> None:
        assert list(store.sessions()) == []


class TestDelete:
    def test_delete_then_save_again(self, store: stores.Store) -> None:
        """A deleted session is gone; its id can be saved again, with other entries."""
        old = store.save(grow(new_tree(), 4, "old"))
        store.delete("s1")
        assert "s1" not in store
        with pytest.raises(stores.SessionNotFoundError):
            store.load("s1")
        assert list(store.sessions()) == []
        new = store.save(grow(new_tree(), 2, "new"))
        same(store.load("s1"), new)
        with pytest.raises(stores.ConflictError):
            store.save(old.append(user("stale")))  # the old tree is not this session

    def test_deleting_an_unknown_id_raises(self, store: stores.Store) -> None:
        with pytest.raises(stores.SessionNotFoundError) as info:
            store.delete("nope")
        assert "'nope'" in str(info.value)


class TestOpen:
    def test_an_unknown_scheme_names_the_schemes(self, open_store: Callable[[str], Any]) -> None:
        with pytest.raises(ValueError, match="sqlite, postgresql, postgres, jsonl"):
            open_store("mysql://host/db")

    @pytest.mark.parametrize(
        "url", ["sqlite://relative/x.db", "jsonl://host/dir", "sqlite:///a.db?mode=ro"]
    )
    def test_bad_sqlite_and_jsonl_urls(self, url: str, open_store: Callable[[str], Any]) -> None:
        with pytest.raises(stores.StoreError):
            open_store(url)

    def test_each_memory_store_is_its_own(self, open_store: Callable[[str], Any]) -> None:
        with open_store("sqlite:///:memory:") as a, open_store("sqlite:///:memory:") as b:
            a.save(grow(new_tree(), 1))
            assert "s1" in a
            assert "s1" not in b

    def test_the_path_is_percent_decoded(
        self, tmp_path: Path, open_store: Callable[[str], Any]
    ) -> None:
        (tmp_path / "a b").mkdir()
        with open_store(f"sqlite://{tmp_path}/a%20b/x%25.db") as s:
            s.save(grow(new_tree(), 1))
        assert (tmp_path / "a b" / "x%.db").is_file()

    def test_a_closed_store_refuses(self, open_store: Callable[[str], Any]) -> None:
        s = open_store("sqlite:///:memory:")
        s.close()
        s.close()
        assert s.closed
        with pytest.raises(stores.StoreError):
            s.load("x")

    def test_postgres_scheme_alias(self, open_store: Callable[[str], Any]) -> None:
        url = postgres_url()
        alias = "postgres://" + url.removeprefix("postgresql://")
        with open_store(alias) as s:
            s.save(grow(new_tree(), 1))
            assert isinstance(
                getattr(s, "awaited", s), stores.PostgresStore | stores.AsyncPostgresStore
            )
            assert "s1" in s


class TestSchema:
    def test_a_newer_sqlite_schema_is_refused(self, tmp_path: Path) -> None:
        url = f"sqlite://{tmp_path}/s.db"
        stores.open(url).close()
        with sqlite3.connect(tmp_path / "s.db") as conn:
            conn.execute("UPDATE ptree_schema SET version = 99")
        conn.close()
        with pytest.raises(stores.StoreError, match="schema version 99"):
            stores.open(url)

    def test_a_newer_postgres_schema_is_refused(self) -> None:
        url = postgres_url()
        stores.open(url).close()
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE ptree_schema SET version = 99")
        with pytest.raises(stores.StoreError, match="schema version 99"):
            stores.open(url)

    def test_the_sqlite_file_is_in_wal_mode(self, tmp_path: Path) -> None:
        stores.open(f"sqlite://{tmp_path}/s.db").close()
        conn = sqlite3.connect(tmp_path / "s.db")
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.close()


class TestJsonlFiles:
    """What only a directory of Pi files has: files Pi and ptree read as they are."""

    def test_a_saved_session_is_a_plain_pi_file(self, tmp_path: Path) -> None:
        """The file holds exactly what dump writes for the same tree; ptree.load reads it."""
        t = every_kind().move_to("future-1")
        with stores.open(f"jsonl://{tmp_path}/d") as s:
            s.save(t)
        files = list((tmp_path / "d").glob("*.jsonl"))
        assert [f.name for f in files] == ["s1.jsonl"]
        dump(t, tmp_path / "dumped.jsonl")
        assert files[0].read_bytes() == (tmp_path / "dumped.jsonl").read_bytes()
        same(ptree.load(files[0]), t)

    def test_sessions_are_found_by_header_whatever_the_file_name(self, tmp_path: Path) -> None:
        """A Pi file under any name is the session of its header id; saving into it
        appends, and the file still loads equal."""
        d = tmp_path / "d"
        d.mkdir()
        original = dump(every_kind("pi-made"), d / "2025-12-09T00-53-29_pi-made.jsonl")
        with stores.open(f"jsonl://{d}") as s:
            assert [x.id for x in s.sessions()] == ["pi-made"]
            loaded = s.load("pi-made")
            same(loaded, original)
            grown = s.save(loaded.append(user("one more")))
        with stores.open(f"jsonl://{d}") as s:
            same(s.load("pi-made"), grown)
        assert sorted(p.name for p in d.glob("*.jsonl")) == ["2025-12-09T00-53-29_pi-made.jsonl"]
        same(ptree.load(d / "2025-12-09T00-53-29_pi-made.jsonl"), grown)

    def test_an_old_version_file_loads_but_is_not_appended_to(
        self, tmp_path: Path, pi_fixtures: Path
    ) -> None:
        """Pi's version 1 file loads as ptree.load reads it; a save refuses to mix
        formats in it (StoreError) and leaves the file as it was."""
        d = tmp_path / "d"
        d.mkdir()
        data = (pi_fixtures / "large-session.jsonl").read_bytes()
        (d / "old.jsonl").write_bytes(data)
        original = ptree.load(pi_fixtures / "large-session.jsonl")
        assert original.header is not None
        with stores.open(f"jsonl://{d}") as s:
            loaded = s.load(original.header.id)
            assert loaded == original
            with pytest.raises(stores.StoreError, match="version 1 file"):
                s.save(loaded.append(user("more")))
        assert (d / "old.jsonl").read_bytes() == data

    def test_a_broken_file_is_reported_not_hidden(self, tmp_path: Path) -> None:
        """sessions() lists the good files and warns, naming the one it cannot read."""
        d = tmp_path / "d"
        d.mkdir()
        dump(grow(new_tree("good"), 2), d / "good.jsonl")
        (d / "bad.jsonl").write_text(
            '{"type":"session","version":3,"id":"bad","timestamp":"t","cwd":"/"}\n{oops\n'
        )
        with stores.open(f"jsonl://{d}") as s, pytest.warns(ptree.SessionFileWarning) as caught:
            assert [x.id for x in s.sessions()] == ["good"]
        assert "bad.jsonl" in str(caught[0].message)

    def test_a_file_replaced_by_another_session_is_found(self, tmp_path: Path) -> None:
        """The store's index of files follows a file replaced under the same name."""
        d = tmp_path / "d"
        d.mkdir()
        dump(grow(new_tree("a"), 1), d / "x.jsonl")
        with stores.open(f"jsonl://{d}") as s:
            assert [x.id for x in s.sessions()] == ["a"]
            assert "a" in s
            dump(grow(new_tree("b"), 2), d / "x.jsonl", overwrite=True)  # replaced on purpose
            assert len(s.load("b")) == 2
            assert "a" not in s
            s.save(grow(new_tree("c"), 1))
            assert sorted(x.id for x in s.sessions()) == ["b", "c"]

    def test_odd_ids_stay_inside_the_directory(self, tmp_path: Path) -> None:
        d = tmp_path / "d"
        with stores.open(f"jsonl://{d}") as s:
            for sid in ["../up", "/abs", "a/../../b", "x" * 400, ".", ".."]:
                s.save(grow(new_tree(sid), 1))
        assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]
        names = [p.name for p in d.iterdir()]
        assert all("/" not in n for n in names)
        assert len([n for n in names if n.endswith(".jsonl")]) == 6

    def test_a_save_cut_short_is_not_seen_and_is_cleaned_up(self, tmp_path: Path) -> None:
        """What a save killed mid-write leaves (the first lines of a marked commit, the
        last torn) is skipped by the store and by ptree.load alike, and removed by
        the next save, after which the file holds only whole commits."""
        d = tmp_path / "d"
        with stores.open(f"jsonl://{d}") as s:
            t = s.save(grow(new_tree(), 2))
        path = d / "s1.jsonl"
        committed = path.read_bytes()
        import json

        line = {"type": "message", "id": "e3", "parentId": "e2", "timestamp": "x"}
        first = json.dumps({**line, "message": {"role": "user"}, "ptreeBatch": [1, 3]})
        half = b'{"type":"message","id":"e4","parentId":"e3","timestamp":"x","mess'
        with open(path, "ab") as f:
            f.write(first.encode() + b"\n" + half)
        with pytest.warns(ptree.SessionFileWarning) as caught:
            same(ptree.load(path), t)
        with stores.open(f"jsonl://{d}") as s:
            with pytest.warns(ptree.SessionFileWarning) as also:
                same(s.load("s1"), t)
            assert [str(w.message) for w in also] == [str(w.message) for w in caught]
            assert any("unfinished commit" in str(w.message) for w in caught)
            with pytest.warns(ptree.SessionFileWarning):
                t2 = s.save(t.append(user("after the crash")))
        assert path.read_bytes().startswith(committed)
        assert half not in path.read_bytes()
        assert first.encode() not in path.read_bytes()
        same(ptree.load(path), t2)

    def test_a_save_in_progress_is_not_reported_by_readers(self, tmp_path: Path) -> None:
        """While a saver holds the file's lock, the commit it is writing (a torn line,
        or the first lines of a marked commit) is left out by the store's readers
        without a warning; once the lock is free, the same bytes are a crash's and
        are reported, as ptree.load reports them."""
        import fcntl

        d = tmp_path / "d"
        with stores.open(f"jsonl://{d}") as s:
            t = s.save(grow(new_tree(), 2))
        path = d / "s1.jsonl"
        line = b'{"type":"message","id":"e3","parentId":"e2","timestamp":"x","message":'
        marked = (
            b'{"type":"message","id":"e3","parentId":"e2","timestamp":"x",'
            b'"message":{"role":"user","content":"a"},"ptreeBatch":[1,2]}\n'
        )
        for tail in [line, marked, marked + line[:20]]:
            with open(path, "ab") as f:
                f.write(tail)
            saver = os.open(path, os.O_RDWR)
            try:
                fcntl.flock(saver, fcntl.LOCK_EX)
                with stores.open(f"jsonl://{d}") as s, warnings.catch_warnings():
                    warnings.simplefilter("error")
                    same(s.load("s1"), t)
                    assert len(s.sessions()) == 1
            finally:
                os.close(saver)
            with stores.open(f"jsonl://{d}") as s, pytest.warns(ptree.SessionFileWarning):
                same(s.load("s1"), t)
            with open(path, "r+b") as f:
                f.truncate(f.seek(0, 2) - len(tail))

    def test_lines_appended_by_someone_else_are_kept(self, tmp_path: Path) -> None:
        """Entries another program appends (Pi resuming the session) are part of the
        session: never truncated, and a save from before them conflicts."""
        d = tmp_path / "d"
        with stores.open(f"jsonl://{d}") as s:
            t = s.save(grow(new_tree(), 2))
            with ptree.SessionWriter(d / "s1.jsonl") as w:
                outside = w.commit(w.value.append(user("from Pi")))
            same(s.load("s1"), outside)
            with pytest.raises(stores.ConflictError):
                s.save(t.append(user("stale")))
            later = s.save(s.load("s1").append(user("after")))
        same(ptree.load(d / "s1.jsonl"), later)


def test_the_stores_errors_are_exported() -> None:
    """The errors are ptree.stores', for tracebacks and pickling."""
    for cls in (stores.ConflictError, stores.SessionNotFoundError, stores.StoreError):
        assert getattr(stores, cls.__name__) is cls
        assert cls.__module__ == "ptree.stores"
        assert issubclass(cls, stores.StoreError)
    assert os.environ.get("CI") is None or os.environ.get("PTREE_TEST_POSTGRES_URL")
