"""TreeSessionStore with the real Claude Agent SDK (``claude-agent-sdk``), offline.

The SDK's own conformance suite (``run_session_store_conformance``) runs on every kind
of store; a property test compares every sequence of appends and deletes with the
SDK's reference ``InMemorySessionStore``; real processes append to one transcript at
once.  Expected values are the SDK's (its reference store, its summary fold) or
written by hand.
"""

from __future__ import annotations

import asyncio
import doctest
import io
import json
import multiprocessing
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import InMemorySessionStore, SessionStore, fold_session_summary
from claude_agent_sdk.testing import run_session_store_conformance
from hypothesis import given, settings
from hypothesis import strategies as st

from ptree import Custom, build_context, stores
from ptree.cli import main
from ptree.formats import ImportFormatError, claude_code
from ptree.integrations.claude_agent import (
    ENTRY_TYPE,
    SessionKeyError,
    TranscriptEntryError,
    TreeSessionStore,
    stored_id,
    transcript_tree,
)
from tests.conftest import store_url_of
from tests.helpers import SHARED
from tests.strategies import json_values, keys

FIXTURES = SHARED / "fixtures" / "claude-code"
ALL_KINDS = ["sqlite-file", "sqlite-memory", "jsonl", "postgres"]
SHARED_KINDS = ["sqlite-file", "postgres"]
OPTIONAL = ["list_sessions", "list_session_summaries", "delete", "list_subkeys"]
KEY: Any = {"project_key": "proj", "session_id": "s1"}
SUB: Any = {**KEY, "subpath": "subagents/agent-x1"}
FORK = multiprocessing.get_context("fork")
# Each example opens a store and runs its calls in threads: sized for CI, more on demand.
EXAMPLES = int(os.environ.get("PTREE_CLAUDE_AGENT_EXAMPLES", "40"))


def fresh_urls(kind: str, tmp_path: Path) -> Callable[[], str]:
    """URLs of new, empty stores of one kind (a PostgreSQL database is emptied)."""
    count = iter(range(10**6))

    def fresh() -> str:
        d = tmp_path / f"store{next(count)}"
        d.mkdir()
        return store_url_of(kind, d)

    return fresh


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class TestConformance:
    @pytest.mark.parametrize("kind", ALL_KINDS)
    def test_the_sdks_suite_passes_with_every_optional_method(
        self, kind: str, tmp_path: Path
    ) -> None:
        """run_session_store_conformance, all 14 contracts, each on a fresh store."""
        fresh = fresh_urls(kind, tmp_path)
        opened: list[TreeSessionStore] = []

        def make() -> TreeSessionStore:
            opened.append(TreeSessionStore(fresh()))
            return opened[-1]

        async def conform() -> None:
            try:
                await run_session_store_conformance(make, skip_optional=frozenset())
            finally:
                for s in opened:
                    await s.close()

        run(conform())
        assert len(opened) == 15  # the probe and one per contract: none was skipped

    def test_every_optional_method_is_implemented(self) -> None:
        """The SDK probes for an override of the protocol's default; each is one."""
        for name in OPTIONAL:
            assert getattr(TreeSessionStore, name) is not getattr(SessionStore, name)


# ---------------------------------------------------------------------------- model


PROJECTS = ["A", "a/b", "a%2Fb"]  # ids that percent-encoding must keep apart
SESSIONS = ["s1", "s 2"]
SUBPATHS = [None, "subagents/agent-1", "subagents/workflows/r1/agent-2"]
SDK_FIELDS: st.SearchStrategy[dict[str, Any]] = st.sampled_from(
    [
        {"type": "user", "message": {"role": "user", "content": "fix the bug"}},
        {"type": "summary", "summary": "Bug fix"},
        {"type": "custom-title", "customTitle": "My title"},
        {"type": "tag", "tag": "urgent"},
        {"type": "user", "isSidechain": True, "gitBranch": "main", "cwd": "/w"},
        {"type": "x"},
    ]
)


@st.composite
def sdk_entries(draw: st.DrawFn) -> Any:
    entry: dict[str, Any] = dict(draw(SDK_FIELDS))
    entry.update(draw(st.dictionaries(keys, json_values(), max_size=3)))
    if draw(st.booleans()):
        entry["timestamp"] = draw(
            st.sampled_from(["2026-01-01T00:00:00.000Z", "2026-01-02T10:00:00Z", "bad"])
        )
    return entry


keys_st = st.builds(
    lambda p, s, sub: {"project_key": p, "session_id": s, **({"subpath": sub} if sub else {})},
    st.sampled_from(PROJECTS),
    st.sampled_from(SESSIONS),
    st.sampled_from(SUBPATHS),
)
operations = st.lists(
    st.tuples(st.sampled_from(["append", "append", "append", "delete"]), keys_st)
    | st.tuples(st.just("append"), keys_st),
    max_size=12,
)


class TestAgainstTheSdksReference:
    @settings(max_examples=EXAMPLES, deadline=None)
    @given(ops=operations, data=st.data())
    def test_same_contents_as_in_memory_store(self, ops: list[Any], data: st.DataObject) -> None:
        """Any appends and deletes: every key loads, lists and summarises as in the SDK's
        InMemorySessionStore (entries with distinct uuids, as the CLI writes them)."""
        counter = iter(range(10**6))

        async def compare() -> None:
            reference = InMemorySessionStore()
            async with TreeSessionStore("sqlite:///:memory:") as store:
                for op, key in ops:
                    if op == "delete":
                        await reference.delete(key)
                        await store.delete(key)
                        continue
                    batch = data.draw(st.lists(sdk_entries(), max_size=4))
                    for entry in batch:
                        if data.draw(st.booleans()):
                            entry["uuid"] = f"u{next(counter)}"
                    await reference.append(key, batch)
                    await store.append(key, json.loads(json.dumps(batch)))
                for p in PROJECTS:
                    mine = await store.list_sessions(p)
                    theirs = await reference.list_sessions(p)
                    assert sorted(s["session_id"] for s in mine) == sorted(
                        s["session_id"] for s in theirs
                    )
                    summaries = {
                        s["session_id"]: s["data"] for s in await store.list_session_summaries(p)
                    }
                    expected = {
                        s["session_id"]: s["data"]
                        for s in await reference.list_session_summaries(p)
                    }
                    assert summaries == expected
                    for s in SESSIONS:
                        main_key: Any = {"project_key": p, "session_id": s}
                        assert await store.list_subkeys(main_key) == sorted(
                            await reference.list_subkeys(main_key)
                        )
                        for sub in SUBPATHS:
                            k: Any = {**main_key, **({"subpath": sub} if sub else {})}
                            assert await store.load(k) == await reference.load(k)

        run(compare())


class TestRoundTrip:
    @settings(max_examples=EXAMPLES, deadline=None)
    @given(batches=st.lists(st.lists(st.dictionaries(keys, json_values(12)), max_size=4)))
    def test_opaque_entries_come_back_equal(self, batches: list[list[dict[str, Any]]]) -> None:
        """Entries of any JSON fields load deep-equal, in append order, and equal to
        their own json round trip (the SDK's one required invariant)."""
        appended: Any = [{"type": "x", **e} for batch in batches for e in batch]

        async def go() -> Any:
            async with TreeSessionStore("sqlite:///:memory:") as store:
                for batch in batches:
                    entries: Any = [{"type": "x", **e} for e in batch]
                    await store.append(KEY, entries)
                return await store.load(KEY)

        loaded = run(go())
        assert loaded == (appended if batches else None)  # an empty batch creates it
        assert json.loads(json.dumps(loaded)) == loaded

    def test_unusual_values_survive(self, tmp_path: Path) -> None:
        """Big integers, -0.0, floats, escapes, lone surrogates, deep nesting under the
        limit: each comes back as it went in."""
        entry: Any = {
            "type": "x",
            "uuid": "u1",
            "big": 2**70,
            "neg": -0.0,
            "f": 1.5e300,
            "s": '\u2028\x00\ud800 "quoted" é方',
            "deep": [[[[[[[[[[{"k": None}]]]]]]]]]],
            "empty": {},
        }

        async def go() -> Any:
            async with TreeSessionStore(f"sqlite://{tmp_path}/s.db") as store:
                await store.append(KEY, [entry])
            async with TreeSessionStore(f"sqlite://{tmp_path}/s.db") as store:
                return await store.load(KEY)

        loaded = run(go())
        assert loaded == [entry]
        assert str(loaded[0]["neg"]) == "-0.0"
        assert type(loaded[0]["big"]) is int


class TestIdempotency:
    def test_a_retried_batch_is_stored_once(self) -> None:
        """The same uuid with the same content (a batch retried after it landed) is
        skipped; entries without a uuid are always appended."""
        a: Any = {"type": "user", "uuid": "u1", "n": 1}
        b: Any = {"type": "tag", "tag": "t"}

        async def go() -> Any:
            async with TreeSessionStore("sqlite:///:memory:") as store:
                await store.append(KEY, [a, b])
                await store.append(KEY, [a, b])
                return await store.load(KEY)

        assert run(go()) == [a, b, b]

    def test_same_uuid_with_other_content_is_kept(self) -> None:
        """A second record under a uuid already stored, but different, is not lost."""
        first: Any = {"type": "user", "uuid": "u1", "n": 1}
        second: Any = {"type": "user", "uuid": "u1", "n": 2}

        async def go() -> Any:
            async with TreeSessionStore("sqlite:///:memory:") as store:
                await store.append(KEY, [first])
                await store.append(KEY, [second, first, second])
                return await store.load(KEY)

        assert run(go()) == [first, second]


# ---------------------------------------------------------------------------- bad input


class Unserializable:
    pass


BAD_ENTRIES: list[tuple[Any, int, str]] = [
    ([{"type": "x"}, {"type": "x", "s": {1, 2}}], 1, "entries[1]['s']"),
    ([{"type": "x", "f": float("nan")}], 0, "entries[0]['f']"),
    ([{"type": "x", "b": b"bytes"}], 0, "entries[0]['b']"),
    ([{"type": "x", "o": Unserializable()}], 0, "entries[0]['o']"),
    ([{"type": "x", 3: "int key"}], 0, "entries[0]"),
    ([{"type": "x"}, ["not", "an", "object"]], 1, "entries[1]"),
    ([{"type": "x", "deep": json.loads("[" * 150 + "]" * 150)}], 0, "entries[0]['deep']"),
]


class TestBadInput:
    @pytest.mark.parametrize(("entries", "index", "where"), BAD_ENTRIES)
    def test_an_unserializable_entry_stores_nothing(
        self, entries: Any, index: int, where: str, tmp_path: Path
    ) -> None:
        """TranscriptEntryError (a ValueError) naming the entry; no part of the batch
        is stored, in a new transcript or an existing one."""
        url = f"sqlite://{tmp_path}/s.db"

        async def go() -> None:
            async with TreeSessionStore(url) as store:
                await store.append(KEY, [{"type": "x", "uuid": "before"}])
                new: Any = {**KEY, "session_id": "new"}
                for key in (KEY, new):
                    with pytest.raises(TranscriptEntryError) as caught:
                        await store.append(key, entries)
                    assert caught.value.index == index
                    assert caught.value.where.startswith(where)
                    assert isinstance(caught.value, ValueError)
                assert await store.load(KEY) == [{"type": "x", "uuid": "before"}]
                assert await store.load(new) is None

        run(go())
        with stores.open(url) as s:
            assert [x.id for x in s.sessions()] == ["claude/proj/s1"]

    def test_entries_not_a_list(self) -> None:
        """A batch that is not a list of entries is refused whole."""

        async def go() -> None:
            async with TreeSessionStore("sqlite:///:memory:") as store:
                with pytest.raises(TranscriptEntryError, match="list of entries"):
                    await store.append(KEY, {"type": "x"})  # type: ignore[arg-type]
                assert await store.load(KEY) is None

        run(go())

    @pytest.mark.parametrize(
        ("key", "field"),
        [
            ({"project_key": "p", "session_id": 7}, "session_id"),
            ({"project_key": None, "session_id": "s"}, "project_key"),
            ({"project_key": "p"}, "session_id"),
            ({"project_key": "p", "session_id": "s", "subpath": ""}, "subpath"),
            ({"project_key": "p", "session_id": "s", "subpath": ["a"]}, "subpath"),
            ("p/s", None),
        ],
    )
    def test_a_bad_key_is_refused_by_every_method(
        self, key: Any, field: str | None, tmp_path: Path
    ) -> None:
        """SessionKeyError (a ValueError and a TypeError) naming the part; nothing stored."""
        url = f"sqlite://{tmp_path}/s.db"

        async def go() -> None:
            async with TreeSessionStore(url) as store:
                calls = [
                    store.append(key, [{"type": "x"}]),
                    store.load(key),
                    store.delete(key),
                ]
                for call in calls:
                    with pytest.raises(SessionKeyError) as caught:
                        await call
                    assert caught.value.field == field
                    assert isinstance(caught.value, ValueError)
                    assert isinstance(caught.value, TypeError)

        run(go())
        with stores.open(url) as s:
            assert list(s.sessions()) == []

    def test_a_project_key_that_is_not_a_string(self) -> None:
        async def go() -> None:
            async with TreeSessionStore("sqlite:///:memory:") as store:
                for method in (store.list_sessions, store.list_session_summaries):
                    with pytest.raises(SessionKeyError, match="project_key"):
                        await method(5)  # type: ignore[arg-type]
                with pytest.raises(SessionKeyError, match="subpath"):
                    await store.list_subkeys(SUB)

        run(go())

    def test_an_unknown_url_scheme(self) -> None:
        """Refused when the object is made, by the stores' own error naming the scheme."""
        with pytest.raises(stores.StoreError, match="unknown store scheme 'redis'"):
            TreeSessionStore("redis://localhost/0")
        with pytest.raises(stores.StoreError, match="unknown store scheme ''"):
            TreeSessionStore("sessions.db")
        with pytest.raises(TypeError):
            TreeSessionStore(None)  # type: ignore[arg-type]

    def test_a_closed_store(self) -> None:
        async def go() -> None:
            store = TreeSessionStore("sqlite:///:memory:")
            await store.append(KEY, [{"type": "x"}])
            await store.close()
            await store.close()
            with pytest.raises(stores.StoreError, match="closed"):
                await store.load(KEY)

        run(go())


# ---------------------------------------------------------------------------- the loop


class TestNeverBlocksTheLoop:
    @pytest.mark.parametrize(
        ("method", "args", "blocking"),
        [
            ("append", (KEY, [{"type": "x", "uuid": "u2"}]), "update"),
            ("load", (KEY,), "load"),
            ("list_sessions", ("proj",), "sessions"),
            ("list_session_summaries", ("proj",), "sessions"),
            ("list_subkeys", (KEY,), "sessions"),
            ("delete", (KEY,), "sessions"),
            ("tree", (KEY,), "load"),
        ],
    )
    def test_the_store_is_called_off_the_loop(
        self, method: str, args: Any, blocking: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The blocking store call waits for the event loop to run another task: it
        completes only if the call runs in another thread."""
        released = threading.Event()
        real = getattr(stores.Store, blocking)

        def waiting(self: stores.Store, *a: Any, **k: Any) -> Any:
            if not released.wait(10):
                raise AssertionError("the event loop did not run while the store was called")
            return real(self, *a, **k)

        async def go() -> None:
            async with TreeSessionStore("sqlite:///:memory:") as store:
                await store.append(KEY, [{"type": "x", "uuid": "u1"}])
                monkeypatch.setattr(stores.Store, blocking, waiting)

                async def release() -> None:
                    await asyncio.sleep(0.01)
                    released.set()

                await asyncio.gather(getattr(store, method)(*args), release())

        run(go())

    def test_tasks_of_one_loop_append_at_once(self) -> None:
        """40 tasks appending to one transcript through one object: all 40 batches, each
        whole."""

        async def go() -> Any:
            async with TreeSessionStore("sqlite:///:memory:") as store:
                await asyncio.gather(
                    *(
                        store.append(KEY, [{"type": "x", "uuid": f"t{t}-{k}"} for k in range(3)])
                        for t in range(40)
                    )
                )
                return await store.load(KEY)

        loaded = run(go())
        assert len(loaded) == 120
        for i in range(0, 120, 3):
            task = loaded[i]["uuid"].split("-")[0]
            assert [e["uuid"] for e in loaded[i : i + 3]] == [f"{task}-{k}" for k in range(3)]


# ---------------------------------------------------------------------------- processes

WORKERS = 4
BATCHES = 25


def appender(url: str, worker: int, go: Any) -> None:
    async def work() -> None:
        async with TreeSessionStore(url) as store:
            for j in range(BATCHES):
                batch: Any = [
                    {
                        "type": "user",
                        "uuid": f"w{worker}-{j}-{k}",
                        "timestamp": "2026-01-01T00:00:00.000Z",
                        "gitBranch": f"b{worker}",
                    }
                    for k in range(3)
                ]
                await store.append(KEY, batch)
                await store.append(SUB, batch[:1])

    go.wait()
    asyncio.run(work())


class TestProcesses:
    @pytest.mark.parametrize("kind", SHARED_KINDS)
    def test_concurrent_appends_lose_nothing(self, kind: str, tmp_path: Path) -> None:
        """4 processes x 25 batches of 3 to one transcript (and 1 to its subagent's):
        every entry once, every batch whole, each process's in its order, and the summary
        the SDK's fold of what was stored."""
        url = store_url_of(kind, tmp_path)
        go = FORK.Event()
        procs = [FORK.Process(target=appender, args=(url, w, go)) for w in range(WORKERS)]
        for p in procs:
            p.start()
        go.set()
        for p in procs:
            p.join(300)
        assert [p.exitcode for p in procs] == [0] * WORKERS

        async def read() -> Any:
            async with TreeSessionStore(url) as store:
                return (
                    await store.load(KEY),
                    await store.load(SUB),
                    await store.list_session_summaries("proj"),
                )

        loaded, sub, summaries = run(read())
        uuids = [e["uuid"] for e in loaded]
        assert sorted(uuids) == sorted(
            f"w{w}-{j}-{k}" for w in range(WORKERS) for j in range(BATCHES) for k in range(3)
        )
        for i in range(0, len(uuids), 3):
            w, j, _ = uuids[i].split("-")
            assert uuids[i : i + 3] == [f"{w}-{j}-{k}" for k in range(3)]
        for w in range(WORKERS):
            mine = [u for u in uuids if u.startswith(f"w{w}-")]
            assert mine == [f"w{w}-{j}-{k}" for j in range(BATCHES) for k in range(3)]
        assert len(sub) == WORKERS * BATCHES
        assert [s["data"] for s in summaries] == [fold_session_summary(None, KEY, loaded)["data"]]


# ---------------------------------------------------------------------------- the tree view

TS = "2026-01-01T00:00:0{}.000Z"
MAIN_RECORDS: list[Any] = [
    {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": "s1",
        "cwd": "/w",
        "timestamp": TS.format(0),
        "message": {"role": "user", "content": "Find the bug"},
    },
    {
        "type": "assistant",
        "uuid": "a1",
        "parentUuid": "u1",
        "sessionId": "s1",
        "timestamp": TS.format(1),
        "message": {
            "id": "m1",
            "role": "assistant",
            "model": "claude-x",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Task",
                    "input": {"prompt": "look", "subagent_type": "explorer"},
                }
            ],
            "stop_reason": "tool_use",
        },
    },
    {
        "type": "user",
        "uuid": "r1",
        "parentUuid": "a1",
        "sessionId": "s1",
        "timestamp": TS.format(4),
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "in parse()"}],
        },
        "toolUseResult": {"agentId": "x1"},
    },
    {
        "type": "assistant",
        "uuid": "a2",
        "parentUuid": "r1",
        "sessionId": "s1",
        "timestamp": TS.format(5),
        "message": {
            "id": "m2",
            "role": "assistant",
            "model": "claude-x",
            "content": [{"type": "text", "text": "The bug is in parse()."}],
            "stop_reason": "end_turn",
        },
    },
]
SUB_RECORDS: list[Any] = [
    {"type": "agent_metadata", "toolUseId": "t1"},
    {
        "type": "user",
        "uuid": "s1u",
        "parentUuid": None,
        "isSidechain": True,
        "agentId": "x1",
        "sessionId": "s1",
        "timestamp": TS.format(2),
        "message": {"role": "user", "content": "look"},
    },
    {
        "type": "assistant",
        "uuid": "s1a",
        "parentUuid": "s1u",
        "isSidechain": True,
        "agentId": "x1",
        "sessionId": "s1",
        "timestamp": TS.format(3),
        "message": {
            "id": "m3",
            "role": "assistant",
            "model": "claude-x",
            "content": [{"type": "text", "text": "in parse()"}],
        },
    },
]


def store_transcript(url: str) -> None:
    async def go() -> None:
        async with TreeSessionStore(url) as store:
            await store.append(KEY, MAIN_RECORDS[:2])
            await store.append(SUB, SUB_RECORDS)
            await store.append(KEY, MAIN_RECORDS[2:])

    run(go())


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


class TestTreeView:
    def test_main_and_subagent_read_as_one_tree(self, tmp_path: Path) -> None:
        """The main line is the conversation; the subagent hangs under a marker naming
        its Task call; build_context gives what the model saw."""
        url = f"sqlite://{tmp_path}/s.db"
        store_transcript(url)

        async def go() -> Any:
            async with TreeSessionStore(url) as store:
                none: Any = {**KEY, "session_id": "none"}
                return await store.tree(KEY), await store.tree(none)

        tree, missing = run(go())
        assert missing is None
        assert [e.id for e in tree.path()] == ["u1", "a1", "r1", "a2"]
        context = build_context(tree)
        assert [m["role"] for m in context.messages] == [
            "user",
            "assistant",
            "toolResult",
            "assistant",
        ]
        assert context.messages[3]["content"][0]["text"] == "The bug is in parse()."
        sub_path = tree.path("s1a")
        marker = sub_path[0]
        assert isinstance(marker, Custom)
        assert marker.custom_type == "claude-code.subagent"
        assert marker.data["agentId"] == "x1"
        assert marker.data["toolCallId"] == "t1"
        assert marker.data["subagentType"] == "explorer"
        assert [e.id for e in sub_path[1:]] == ["s1u", "s1a"]
        metadata = [
            e for e in tree.entries() if isinstance(e, Custom) and e.data.get("toolUseId") == "t1"
        ]
        assert len(metadata) == 1  # the SDK's agent_metadata record, kept

    def test_same_tree_as_the_importer_on_the_files(self, tmp_path: Path) -> None:
        """A real Claude Code session with two subagents, mirrored as the SDK mirrors it
        (subpath subagents/agent-<id>), reads as the importer reads the files."""
        main_file = FIXTURES / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
        if not main_file.is_file():
            pytest.skip(f"no fixtures at {FIXTURES}")
        key: Any = {"project_key": "-srv", "session_id": main_file.stem}
        url = f"sqlite://{tmp_path}/s.db"

        def lines(path: Path) -> list[Any]:
            return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]

        async def go() -> Any:
            async with TreeSessionStore(url) as store:
                records = lines(main_file)
                for i in range(0, len(records), 50):
                    await store.append(key, records[i : i + 50])
                for sub in sorted((main_file.parent / main_file.stem / "subagents").iterdir()):
                    sub_key: Any = {**key, "subpath": f"subagents/{sub.stem}"}
                    await store.append(sub_key, lines(sub))
                return await store.tree(key)

        tree = run(go())
        expected: Any = claude_code.read(main_file)
        expected = getattr(expected, "tree", expected)
        assert [e.to_json() for e in tree.entries()] == [e.to_json() for e in expected.entries()]
        assert tree.leaf_id == expected.leaf_id
        assert tree.header == expected.header

    def test_cli_shows_exports_and_lists_a_stored_transcript(self, tmp_path: Path) -> None:
        """ptree show / path / export read URL#claude/... through the mapping."""
        url = f"sqlite://{tmp_path}/s.db"
        store_transcript(url)
        ref = f"{url}#{stored_id(KEY)}"
        status, out, err = cli("show", ref)
        assert (status, err) == (0, "")
        assert "Find the bug" in out
        assert "The bug is in parse()." in out
        assert "claude-code.subagent" in out
        status, out, err = cli("path", ref)
        assert status == 0
        assert out.index("Find the bug") < out.index("The bug is in parse().")
        status, out, err = cli("export", ref, "--format", "html", "-o", str(tmp_path / "s.html"))
        assert status == 0, err
        assert "The bug is in parse()." in (tmp_path / "s.html").read_text(encoding="utf-8")
        status, out, err = cli("sessions", url)
        assert status == 0
        assert [line.split()[0] for line in out.splitlines()] == [
            "claude/proj/s1",
            "claude/proj/s1/subagents/agent-x1",
        ]

    def test_a_subagent_alone(self, tmp_path: Path) -> None:
        url = f"sqlite://{tmp_path}/s.db"
        store_transcript(url)
        with stores.open(url) as s:
            tree = transcript_tree(s, stored_id(SUB))
        assert [e.id for e in tree.path("s1a")][-2:] == ["s1u", "s1a"]

    def test_a_record_the_mapping_refuses_names_the_stored_session(self, tmp_path: Path) -> None:
        """The raw entries still load; the tree view names the store, session and record."""
        url = f"sqlite://{tmp_path}/s.db"
        bad: Any = {"type": "user", "uuid": "u9", "parentUuid": 5, "message": {"content": "x"}}

        async def go() -> Any:
            async with TreeSessionStore(url) as store:
                await store.append(KEY, [MAIN_RECORDS[0], bad])
                assert await store.load(KEY) == [MAIN_RECORDS[0], bad]
                return await store.tree(KEY)

        with pytest.raises(ImportFormatError) as caught:
            run(go())
        assert caught.value.path == f"{url}#claude/proj/s1"
        assert caught.value.line == 2

    def test_stored_entries_are_custom_entries(self, tmp_path: Path) -> None:
        """What the store holds: one custom entry per SDK entry, the entry as its data."""
        url = f"sqlite://{tmp_path}/s.db"
        store_transcript(url)
        with stores.open(url) as s:
            raw = s.load(stored_id(SUB))
        assert [e.data for e in raw.entries() if isinstance(e, Custom)] == SUB_RECORDS
        assert {e.custom_type for e in raw.entries() if isinstance(e, Custom)} == {ENTRY_TYPE}
        assert len(raw) == len(SUB_RECORDS)


class TestDocumentation:
    def test_the_pages_examples_run(self) -> None:
        """docs/frameworks/claude-agent-sdk.md: every example gives what it shows."""
        page = (
            Path(__file__).resolve().parent.parent / "docs" / "frameworks" / "claude-agent-sdk.md"
        )
        result = doctest.testfile(
            str(page),
            module_relative=False,
            optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
            raise_on_error=False,
            verbose=False,
        )
        assert result.attempted > 10
        assert result.failed == 0


SID = "8d1c3f0e-1b7a-4c53-9a57-6f1e7c8b2d40"


async def sdk_scenario(store: Any, directory: str) -> Any:
    """The SDK's own store-backed helpers, one after another, on ``store``; what each
    gives, with the fork's random ids left out."""
    import claude_agent_sdk as sdk

    key: Any = {"project_key": sdk.project_key_for_directory(directory), "session_id": SID}
    main_records = [{**r, "sessionId": SID} for r in MAIN_RECORDS]
    await store.append(key, main_records[:2])
    await store.append({**key, "subpath": "subagents/agent-x1"}, SUB_RECORDS)
    await store.append(key, main_records[2:])
    out: list[Any] = []
    messages = await sdk.get_session_messages_from_store(store, SID, directory)
    out.append([(m.type, m.uuid) for m in messages])
    out.append(await sdk.list_subagents_from_store(store, SID, directory))
    sub = await sdk.get_subagent_messages_from_store(store, SID, "x1", directory)
    out.append([(m.type, m.uuid, m.parent_tool_use_id) for m in sub])
    await sdk.rename_session_via_store(store, SID, "Parser bug", directory)
    await sdk.tag_session_via_store(store, SID, "urgent", directory)
    infos = await sdk.list_sessions_from_store(store, directory)
    out.append([(i.session_id, i.summary, i.custom_title, i.tag, i.first_prompt) for i in infos])
    info = await sdk.get_session_info_from_store(store, SID, directory)
    out.append(info and (info.summary, info.tag, info.cwd))
    fork = await sdk.fork_session_via_store(store, SID, directory, title="Forked")
    forked = await sdk.get_session_messages_from_store(store, fork.session_id, directory)
    out.append([m.type for m in forked])
    await sdk.delete_session_via_store(store, SID, directory)
    infos = await sdk.list_sessions_from_store(store, directory)
    out.append([(i.session_id == fork.session_id, i.summary) for i in infos])
    out.append(await store.load(key))
    out.append(await store.load({**key, "subpath": "subagents/agent-x1"}))
    return out


class TestTheSdksHelpers:
    def test_same_answers_as_the_reference_store(self, tmp_path: Path) -> None:
        """Listing, reading, subagents, rename, tag, fork and delete through the SDK's
        store-backed functions give what they give on InMemorySessionStore."""

        async def both() -> tuple[Any, Any]:
            expected = await sdk_scenario(InMemorySessionStore(), str(tmp_path))
            async with TreeSessionStore(f"sqlite://{tmp_path}/s.db") as store:
                return await sdk_scenario(store, str(tmp_path)), expected

        actual, expected = run(both())
        assert actual == expected
        assert expected[0] == [
            ("user", "u1"),
            ("assistant", "a1"),
            ("user", "r1"),
            ("assistant", "a2"),
        ]
        assert expected[1] == ["x1"]
        assert expected[3] == [(SID, "Parser bug", "Parser bug", "urgent", "Find the bug")]
        assert expected[6:] == [[(True, "Forked")], None, None]  # deleted with its subagent
