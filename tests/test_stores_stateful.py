"""A Hypothesis state machine per kind of store against a naive model: random saves of
random versions (grown, moved, forked from old versions), updates, deletes and
reopenings; after every step each session loads equal to the last value saved, and
every save the model says must conflict does, changing nothing.

Steps of issue 25 too: searches (what is found is exactly the messages of the model
holding the words), walks page by page (every session once), and prunes (what stays
is closed over paths, and an older version holding a pruned entry conflicts).

Sized for CI by ``PTREE_STORE_EXAMPLES`` (default 40 runs of up to 25 steps per store).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
)

import ptree
from ptree import MessageEntry, SessionHeader, SessionTree, stores
from ptree.stores import Keep
from tests.conftest import open_with, postgres_url
from tests.strategies import appends

TS = "2026-01-01T00:00:00.000Z"
SIDS = ["a", "b"]
VOCAB = ["zqkettle", "zqteapot", "zqboil", "zqsteam"]
"""Words only the ``say`` step writes (random entries never hold them)."""
EXAMPLES = int(os.environ.get("PTREE_STORE_EXAMPLES", "40"))


def fixed_clock() -> str:
    return TS


def lines(tree: SessionTree) -> list[Any]:
    """The entries as JSON: what the naive model compares."""
    return [e.to_json() for e in tree.entries()]


_PG_READY: list[str] = []


def fresh_postgres() -> str:
    """The test server with empty ptree tables (emptied, not dropped: much faster)."""
    if not _PG_READY:
        url = postgres_url()
        stores.open(url).close()
        _PG_READY.append(url)
    import psycopg

    with psycopg.connect(_PG_READY[0], autocommit=True) as conn:
        for table in ("ptree_entries", "ptree_sessions", "ptree_search", "ptree_pruned"):
            conn.execute(f"DELETE FROM {table}")
    return _PG_READY[0]


class StoreMachine(RuleBasedStateMachine):
    """Subclasses name the kind of store."""

    KIND = ""
    API = "sync"
    versions = Bundle("versions")

    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.mkdtemp(prefix="ptree-stores-")
        if self.KIND == "sqlite-memory":
            self.url = "sqlite:///:memory:"
        elif self.KIND == "sqlite-file":
            self.url = f"sqlite://{self.tmp}/s.db"
        elif self.KIND == "jsonl":
            self.url = f"jsonl://{self.tmp}/d?fsync=false"
        else:
            self.url = fresh_postgres()
        self.store = open_with(self.API, self.url)
        self.model: dict[str, SessionTree] = {}
        self.pruned: dict[str, set[tuple[str, str]]] = {}  # (id, JSON) a prune removed

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def expect_save(self, tree: SessionTree) -> None:
        """Save ``tree``; the model says whether it must succeed."""
        assert tree.header is not None
        sid = tree.header.id
        stored = self.model.get(sid)
        ok = stored is None or (
            stored.header == tree.header and lines(tree)[: len(stored)] == lines(stored)
        )
        if ok and stored is not None:
            ok = not self.resurrects(sid, tree.entries()[len(stored) :])
        if ok:
            assert self.store.save(tree) == tree
            self.model[sid] = tree
        else:
            with pytest.raises(stores.ConflictError):
                self.store.save(tree)

    def resurrects(self, sid: str, entries: Any) -> bool:
        gone = self.pruned.get(sid, set())
        return any((e.id, json.dumps(e.to_json(), sort_keys=True)) in gone for e in entries)

    @initialize(target=versions, sid=st.sampled_from(SIDS))
    def first(self, sid: str) -> SessionTree:
        header = SessionHeader(id=sid, timestamp=TS, cwd="/w")
        tree = SessionTree(header=header, clock=fixed_clock).append(
            {"role": "user", "content": sid}
        )
        self.expect_save(tree)
        return tree

    @rule(target=versions, version=versions, data=st.data())
    def grow(self, version: SessionTree, data: st.DataObject) -> SessionTree:
        """Append to any version held, old or new: later saves of old ones fork."""
        for _ in range(data.draw(st.integers(1, 3))):
            version = data.draw(appends(version))
        return version

    @rule(target=versions, version=versions, data=st.data())
    def move(self, version: SessionTree, data: st.DataObject) -> SessionTree:
        return version.move_to(data.draw(st.sampled_from((None, *version.ids()))))

    @rule(version=versions)
    def save(self, version: SessionTree) -> None:
        self.expect_save(version)

    @rule(target=versions, version=versions, data=st.data())
    def grow_and_save(self, version: SessionTree, data: st.DataObject) -> SessionTree:
        """The usual step of a writer: one more entry, saved (conflicting when stale)."""
        version = data.draw(appends(version))
        self.expect_save(version)
        return version

    @rule(target=versions, version=versions, data=st.data())
    def fork(self, version: SessionTree, data: st.DataObject) -> SessionTree:
        """ptree.branching.fork makes a new session: saving it always succeeds."""
        if not version:
            return version
        forked = ptree.branching.fork(version, data.draw(st.sampled_from(version.ids())))
        forked = forked.with_config(clock=fixed_clock)
        self.expect_save(forked)
        return forked

    @rule(target=versions, sid=st.sampled_from(SIDS), text=st.text(max_size=5))
    def update(self, sid: str, text: str) -> Any:
        def fn(tree: SessionTree) -> SessionTree:
            return tree.with_config(clock=fixed_clock).append({"role": "user", "content": text})

        stored = self.model.get(sid)
        if stored is None:
            with pytest.raises(stores.SessionNotFoundError):
                self.store.update(sid, fn)
            return multiple()
        if self.resurrects(sid, fn(stored).entries()[len(stored) :]):
            # The fixed clock made the very entry a prune removed: refused.
            with pytest.raises(stores.ConflictError):
                self.store.update(sid, fn, attempts=2)
            return multiple()
        out = self.store.update(sid, fn)
        assert lines(out)[:-1] == lines(stored)
        assert out.current_path()[-1] == {"role": "user", "content": text}
        self.model[sid] = out
        return out

    @rule(target=versions, sid=st.sampled_from(SIDS))
    def load(self, sid: str) -> Any:
        if sid not in self.model:
            with pytest.raises(stores.SessionNotFoundError):
                self.store.load(sid)
            return multiple()
        return self.store.load(sid).with_config(clock=fixed_clock)

    @rule(sid=st.sampled_from(SIDS))
    def delete(self, sid: str) -> None:
        if sid in self.model:
            self.store.delete(sid)
            del self.model[sid]
            self.pruned.pop(sid, None)
        else:
            with pytest.raises(stores.SessionNotFoundError):
                self.store.delete(sid)

    @precondition(lambda self: self.KIND != "sqlite-memory")
    @rule()
    def reopen(self) -> None:
        """A new store object knows no versions: saves compare the stored entries."""
        self.store.close()
        self.store = open_with(self.API, self.url)

    @rule(version=consumes(versions))
    def forget(self, version: SessionTree) -> None:
        """Versions may be dropped (the store's memory of them must not matter)."""

    @rule(
        target=versions,
        sid=st.sampled_from(SIDS),
        said=st.lists(st.sampled_from([*VOCAB, "and", "the"]), min_size=1, max_size=4),
        sep=st.sampled_from([" ", ", ", "-", "\n", "_", "*"]),
        upper=st.booleans(),
    )
    def say(self, sid: str, said: list[str], sep: str, upper: bool) -> Any:
        """A message of known words, by update (the search steps look for them)."""
        if sid not in self.model:
            return multiple()
        text = sep.join(w.upper() if upper else w for w in said)
        role = "user" if len(said) % 2 else "assistant"
        return self.update_with(sid, {"role": role, "content": text})

    def update_with(self, sid: str, message: dict[str, Any]) -> Any:
        def fn(tree: SessionTree) -> SessionTree:
            return tree.with_config(clock=fixed_clock).append(message)

        if self.resurrects(sid, fn(self.model[sid]).entries()[len(self.model[sid]) :]):
            return multiple()  # the update step covers this case
        self.model[sid] = out = self.store.update(sid, fn)
        return out

    @rule(
        words=st.lists(st.sampled_from(VOCAB), min_size=1, max_size=2),
        phrase=st.booleans(),
        one=st.sampled_from([None, *SIDS]),
    )
    def search(self, words: list[str], phrase: bool, one: str | None) -> None:
        """Exactly the model's messages holding the words (in a row, for a phrase)."""
        query = " ".join(words)
        if phrase:
            query = f'"{query}"'
        expected = set()
        for sid, tree in self.model.items():
            if one is not None and sid != one:
                continue
            for e in tree.entries():
                content = e.message.get("content") if isinstance(e, MessageEntry) else None
                if not isinstance(content, str):
                    continue  # the say step writes text content; random entries lack the words
                said = re.findall("[a-z]+", content.lower())
                if phrase:
                    n = len(words)
                    hit = any(said[i : i + n] == words for i in range(len(said)))
                else:
                    hit = set(words) <= set(said)
                if hit:
                    expected.add((sid, e.id, e.message["role"]))  # type: ignore[union-attr]
        if one is not None and one not in self.model:
            with pytest.raises(stores.SessionNotFoundError):
                self.store.search(query, session=one)
            return
        hits = self.store.search(query, limit=1000, session=one)
        assert {(h.session_id, h.entry_id, h.role) for h in hits} == expected
        assert len(hits) == len(expected)

    @rule(limit=st.integers(1, 3), order=st.sampled_from(["updated", "id"]))
    def page(self, limit: int, order: Any) -> None:
        """A walk page by page lists every session once, as the unpaged list does."""
        seen: list[str] = []
        page = self.store.sessions(limit=limit, order=order)
        while True:
            assert len(page) <= limit
            seen += [s.id for s in page]
            if page.next_cursor is None:
                break
            page = self.store.sessions(limit=limit, order=order, after=page.next_cursor)
        if order == "id":
            assert seen == sorted(self.model)
        else:
            assert seen == [s.id for s in self.store.sessions()]
            assert sorted(seen) == sorted(self.model)

    @rule(sid=st.sampled_from(SIDS), data=st.data())
    def prune(self, sid: str, data: st.DataObject) -> None:
        """What stays: the chosen entries, the leaf, and every ancestor of what stays;
        what goes is remembered, so older versions holding it conflict."""
        if sid not in self.model:
            with pytest.raises(stores.SessionNotFoundError):
                self.store.prune(sid, keep=[])
            return
        before = self.model[sid]
        chosen = data.draw(
            st.lists(st.sampled_from(before.ids()), max_size=3) if before else st.just([])
        )
        leaves = data.draw(st.booleans())
        keep = Keep.ids(chosen) | (Keep.leaves() if leaves else Keep())
        report = self.store.prune(sid, keep=keep)
        after = self.store.load(sid)
        assert after.ids() == report.kept
        assert set(report.kept) | set(report.removed) == set(before.ids())
        assert set(chosen) <= set(report.kept)
        if leaves:
            assert {e.id for e in before.leaves()} <= set(report.kept)
        assert before.leaf_id is None or before.leaf_id in report.kept
        assert after.leaf_id == before.leaf_id
        for e in after.entries():
            assert e == before[e.id]
            assert e.parent_id is None or e.parent_id in after
        self.model[sid] = after.with_config(clock=fixed_clock)
        self.pruned.setdefault(sid, set()).update(
            (before[i].id, json.dumps(before[i].to_json(), sort_keys=True)) for i in report.removed
        )

    @invariant()
    def every_session_loads_as_last_saved(self) -> None:
        assert {s.id: s.entry_count for s in self.store.sessions()} == {
            sid: len(t) for sid, t in self.model.items()
        }
        for sid, tree in self.model.items():
            loaded = self.store.load(sid)
            assert lines(loaded) == lines(tree)
            assert loaded.leaf_id == tree.leaf_id
            assert loaded.header == tree.header
            assert loaded == tree
            assert self.store.load_path(sid).ids() == tuple(e.id for e in tree.path())


SETTINGS = settings(max_examples=EXAMPLES, stateful_step_count=25, deadline=None)


class SqliteMemoryMachine(StoreMachine):
    KIND = "sqlite-memory"


class SqliteFileMachine(StoreMachine):
    KIND = "sqlite-file"


class JsonlMachine(StoreMachine):
    KIND = "jsonl"


class PostgresMachine(StoreMachine):
    KIND = "postgres"


class AsyncSqliteMemoryMachine(StoreMachine):
    """The async protocol: a worker thread runs the blocking store."""

    KIND = "sqlite-memory"
    API = "async"


class AsyncPostgresMachine(StoreMachine):
    """The async protocol: the same plans on psycopg's async connection."""

    KIND = "postgres"
    API = "async"


TestSqliteMemory = SqliteMemoryMachine.TestCase
TestSqliteMemory.settings = SETTINGS
TestSqliteFile = SqliteFileMachine.TestCase
TestSqliteFile.settings = SETTINGS
TestJsonl = JsonlMachine.TestCase
TestJsonl.settings = SETTINGS
TestPostgres = PostgresMachine.TestCase
TestPostgres.settings = SETTINGS
TestAsyncSqliteMemory = AsyncSqliteMemoryMachine.TestCase
TestAsyncSqliteMemory.settings = SETTINGS
TestAsyncPostgres = AsyncPostgresMachine.TestCase
TestAsyncPostgres.settings = SETTINGS
