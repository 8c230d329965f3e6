"""``TreeSession(session_id, store=URL)``: the OpenAI Agents SDK's session in a ptree store.

Every kind of store (SQLite, PostgreSQL, JSONL): the SDK's protocol, branch/undo/redo,
a reopened session; 8 processes adding to different sessions of one PostgreSQL store
and 4 tasks on one loop adding to one session lose nothing, while a ticker task on the
loop keeps ticking; bad input is a typed error and stores nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("OPENAI_API_KEY", "sk-test-not-used")  # nothing reaches the network

from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message

from ptree import SessionWriter
from ptree.integrations.openai_agents import TreeSession
from ptree.stores import StoreError, open_async
from ptree.stores import open as open_store

from .conftest import postgres_url

set_tracing_disabled(True)


def user(text: str) -> Any:  # a TResponseInputItem
    return {"role": "user", "content": text}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class TestProtocol:
    """The SDK's session protocol on every kind of store."""

    def test_add_get_pop_clear(self, store_url: str) -> None:
        """Items come back as added; pop and clear move the leaf; the store keeps all."""

        async def scenario() -> None:
            async with TreeSession("chat", store=store_url) as session:
                await session.add_items([user("a"), user("b")])
                await session.add_items([user("c")])
                assert await session.get_items() == [user("a"), user("b"), user("c")]
                assert await session.get_items(2) == [user("b"), user("c")]
                assert await session.pop_item() == user("c")
                assert await session.get_items() == [user("a"), user("b")]
                await session.clear_session()
                assert await session.get_items() == []
                await session.aundo()
                assert await session.get_items() == [user("a"), user("b")]
                await session.aredo()
                assert await session.get_items() == []
                await session.aundo()
                await session.abranch(0)
                await session.add_items([user("b2")])
                assert await session.get_items() == [user("a"), user("b2")]
                assert len(session.tree) == 4  # nothing deleted: c and b stay in the tree

        run(scenario())

    def test_reopened(self, shared_store_url: str) -> None:
        """A second session object on the same store and id sees the items."""

        async def scenario() -> None:
            async with TreeSession("chat", store=shared_store_url) as first:
                await first.add_items([user("a"), user("b")])
            again = await TreeSession.connect("chat", shared_store_url)
            try:
                assert await again.get_items() == [user("a"), user("b")]
                await again.abranch(0)
                assert await again.get_items() == [user("a")]
            finally:
                await again.aclose()

        run(scenario())

    def test_runner(self, shared_store_url: str) -> None:
        """A Runner turn through a store session: the model sees the history."""
        model = ScriptedModel([[assistant_message("One.")], [assistant_message("Two.")]])
        agent = Agent(name="assistant", model=model)

        async def scenario() -> None:
            async with TreeSession("chat", store=shared_store_url, model="gpt-test") as s:
                await Runner.run(agent, "first", session=s)
                await Runner.run(agent, "second", session=s)
                items = await s.get_items()
            assert [i.get("role") for i in items] == ["user", "assistant", "user", "assistant"]
            assert model.calls[-1].input[0] == {"role": "user", "content": "first"}

        run(scenario())


class TestBadInput:
    """A typed error naming what is wrong, and nothing stored."""

    def test_session_id_not_a_string(self, tmp_path: Path) -> None:
        """An int session id: TypeError naming its type; the store is not even created."""
        url = f"sqlite://{tmp_path}/s.db"
        with pytest.raises(TypeError, match="session_id must be a str, not int"):
            TreeSession(7, store=url)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="not int"):
            run(TreeSession.connect(7, url))  # type: ignore[arg-type]
        assert not (tmp_path / "s.db").exists()

    def test_unknown_scheme(self, tmp_path: Path) -> None:
        """An unknown scheme: StoreError (a ValueError) naming the scheme and the URL."""
        with pytest.raises(StoreError, match="unknown store scheme 'redis'") as caught:
            TreeSession("chat", store="redis://localhost/0")
        assert isinstance(caught.value, ValueError)
        assert "redis://localhost/0" in str(caught.value)
        assert list(tmp_path.iterdir()) == []

    def test_bad_item_stores_nothing(self, tmp_path: Path) -> None:
        """An item that is not a mapping: nothing of the call is saved."""
        url = f"sqlite://{tmp_path}/s.db"

        async def scenario() -> None:
            async with TreeSession("chat", store=url) as session:
                await session.add_items([user("a")])
                with pytest.raises(ValueError, match=r"items\[1\]"):
                    await session.add_items([user("b"), "not an item"])  # type: ignore[list-item]

        run(scenario())
        with open_store(url) as store:
            assert len(store.load("chat")) == 1


# ------------------------------------------------------------------------- concurrency

PER_WRITER = 20


def _add_in_process(url: str, session_id: str) -> None:
    async def scenario() -> None:
        async with await TreeSession.connect(session_id, url) as session:
            for i in range(PER_WRITER):
                await session.add_items([user(f"{session_id}-{i}")])

    asyncio.run(scenario())


class TestConcurrency:
    """Nothing lost between processes and tasks; the loop is never held by the store."""

    def test_eight_processes_postgres(self) -> None:
        """8 processes, each adding 20 items to its own session of one PostgreSQL store."""
        url = postgres_url()
        # fork: the children start with this process's imports (the SDK takes seconds to
        # import on a loaded machine); each opens its own store, none is carried over
        ctx = multiprocessing.get_context("fork")
        procs = [ctx.Process(target=_add_in_process, args=(url, f"s{n}")) for n in range(8)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=300)
        assert [p.exitcode for p in procs] == [0] * 8
        with open_store(url) as store:
            for n in range(8):
                got = [m["content"] for m in store.load(f"s{n}").current_path()]
                assert got == [f"s{n}-{i}" for i in range(PER_WRITER)]

    @pytest.mark.parametrize("shared_object", [True, False])
    def test_four_tasks_one_session(self, shared_store_url: str, shared_object: bool) -> None:
        """4 tasks on one loop add 20 items each to one session (through one session
        object, or one each): all 80 are on the branch, each once, each task's in its
        order; a ticker task on the same loop keeps ticking meanwhile."""

        async def scenario() -> tuple[list[Any], list[float]]:
            shared = await TreeSession.connect("one", shared_store_url)
            gaps: list[float] = []
            done = asyncio.Event()

            async def ticker() -> None:
                last = time.monotonic()
                while not done.is_set():
                    await asyncio.sleep(0.005)
                    now = time.monotonic()
                    gaps.append(now - last)
                    last = now

            async def writer(n: int) -> None:
                session = (
                    shared if shared_object else await TreeSession.connect("one", shared_store_url)
                )
                try:
                    for i in range(PER_WRITER):
                        await session.add_items([user(f"t{n}-{i}")])
                finally:
                    if session is not shared:
                        await session.aclose()

            tick = asyncio.create_task(ticker())
            await asyncio.gather(*(writer(n) for n in range(4)))
            done.set()
            await tick
            items = await shared.get_items()
            await shared.aclose()
            return items, gaps

        items, gaps = run(scenario())
        texts = [i["content"] for i in items]
        assert sorted(texts) == sorted(f"t{n}-{i}" for n in range(4) for i in range(PER_WRITER))
        for n in range(4):
            mine = [t for t in texts if t.startswith(f"t{n}-")]
            assert mine == [f"t{n}-{i}" for i in range(PER_WRITER)]
        # Not a timing benchmark: the loop was free to run the ticker between the
        # store's calls (a blocking store would show one gap as long as all the writes).
        assert len(gaps) >= 10
        # No gap near the whole run (which a blocking store would give), whatever the
        # machine's speed: the first use of a store may pause the loop once (imports).
        assert max(gaps) < 0.6 * sum(gaps), (max(gaps), sum(gaps))


# ------------------------------------------------------------------------- the event loop


@contextlib.contextmanager
def writers_held(url: str) -> Iterator[None]:
    """Another connection holds the store's write lock until the block ends: SQLite's
    ``BEGIN IMMEDIATE``, PostgreSQL's ``LOCK TABLE ... IN EXCLUSIVE MODE`` (reads go
    on; the session's save waits)."""
    if url.startswith("sqlite:"):
        conn = sqlite3.connect(url.removeprefix("sqlite://"), isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            conn.execute("ROLLBACK")
            conn.close()
        return
    import psycopg

    with psycopg.connect(url) as pg:
        pg.execute("LOCK TABLE ptree_sessions IN EXCLUSIVE MODE")
        try:
            yield
        finally:
            pg.rollback()


class TestEventLoop:
    """No method blocks the loop, and none starts a thread per call."""

    @pytest.mark.parametrize("kind", ["sqlite-file", "postgres"])
    def test_loop_runs_while_the_store_waits(self, kind: str, tmp_path: Path) -> None:
        """While another connection holds the store's write lock, add_items waits for
        it and the loop goes on: a ticker ticks, and the loop itself lets the lock go
        (a method blocking the loop would wait for a release that never comes)."""
        from .conftest import store_url_of

        url = store_url_of(kind, tmp_path)

        async def scenario() -> tuple[int, list[Any]]:
            async with await TreeSession.connect("gate", url) as session:
                await session.add_items([user("before")])
                ticks = 0
                with writers_held(url):
                    adding = asyncio.create_task(session.add_items([user("held")]))
                    while ticks < 20:  # 0.2 s and more of the loop running meanwhile
                        await asyncio.sleep(0.01)
                        ticks += 1
                    assert not adding.done()  # it is waiting for the lock
                await adding
                return ticks, await session.get_items()

        ticks, items = run(scenario())
        assert ticks == 20
        assert items == [user("before"), user("held")]

    def test_file_session_writes_on_its_one_worker(self, tmp_path: Path) -> None:
        """A Pi file session's writes run on one worker thread of the session, never on
        the loop's thread, the same thread for every call; close ends it."""
        seen: list[str] = []
        commit = SessionWriter.commit

        def spy(writer: SessionWriter, tree: Any) -> Any:
            seen.append(threading.current_thread().name)
            return commit(writer, tree)

        async def scenario() -> None:
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(SessionWriter, "commit", spy)
                async with TreeSession("chat", tmp_path / "chat.jsonl") as session:
                    for i in range(5):
                        await session.add_items([user(f"{i}")])
                    await session.pop_item()
                    await session.aundo()
                    assert len(await session.get_items()) == 5

        before = threading.active_count()
        run(scenario())
        assert len(seen) == 7
        assert len(set(seen)) == 1, seen
        assert seen[0].startswith("ptree-session")
        deadline = time.monotonic() + 10  # the worker ends soon after the close ran on it
        while threading.active_count() > before and time.monotonic() < deadline:
            time.sleep(0.01)
        assert threading.active_count() == before

    def test_no_thread_per_call(self, store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
        """asyncio.to_thread is never called, and 60 calls of every method start no
        thread beyond what the store opened with (PostgreSQL: none at all)."""

        def refuse(*args: object, **kwargs: object) -> None:
            raise AssertionError("asyncio.to_thread was called")

        monkeypatch.setattr(asyncio, "to_thread", refuse)

        async def scenario() -> tuple[set[threading.Thread], set[threading.Thread]]:
            first = set(threading.enumerate())
            async with await TreeSession.connect("chat", store_url) as session:
                opened = set(threading.enumerate())
                for i in range(10):
                    await session.add_items([user(f"{i}"), user(f"{i}b")])
                    assert (await session.get_items(1)) == [user(f"{i}b")]
                    assert await session.pop_item() == user(f"{i}b")
                    await session.clear_session()
                    await session.aundo()
                    await session.abranch(-1)
                later = set(threading.enumerate())
                assert len(await session.get_items()) == 10
            return opened - first, later - opened

        at_open, per_call = run(scenario())
        assert per_call == set()
        if store_url.startswith("postgresql"):
            assert at_open == set()  # psycopg's AsyncConnection: no thread at all
        else:
            assert {t.name.split("_")[0] for t in at_open} <= {"ptree-store"}

    def test_shared_async_store(self, shared_store_url: str) -> None:
        """Sessions on one open AsyncStore share it and leave it open; a reopened
        session's undo goes back to the value it first read, not to an empty branch."""

        async def scenario() -> None:
            async with await open_async(shared_store_url) as store:
                async with TreeSession("chat", store=store) as first:
                    await first.add_items([user("a")])
                async with await TreeSession.connect("chat", store) as again:
                    await again.add_items([user("b")])
                    await again.aundo()
                    assert await again.get_items() == [user("a")]
                assert [s.id for s in await store.sessions()] == ["chat"]

        run(scenario())

    def test_a_big_add_items_lets_other_tasks_run(
        self, shared_store_url: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """While one add_items builds 200 entries (on the loop: a session's first save,
        and every PostgreSQL update), another task runs between them: the count it
        keeps differs between the first entry built and the last."""
        from ptree.integrations import openai_agents

        counted = [0]
        seen: list[int] = []
        entry = openai_agents._entry

        def spy(*args: Any) -> Any:
            seen.append(counted[0])
            return entry(*args)

        monkeypatch.setattr(openai_agents, "_entry", spy)

        async def scenario() -> list[Any]:
            done = asyncio.Event()

            async def other() -> None:
                while not done.is_set():
                    counted[0] += 1
                    await asyncio.sleep(0)

            task = asyncio.create_task(other())
            async with await TreeSession.connect("big", shared_store_url) as session:
                await session.add_items([user(f"{i}") for i in range(200)])
                done.set()
                await task
                return await session.get_items()

        items = run(scenario())
        assert len(items) == 200
        assert len(seen) >= 200
        assert seen[199] > seen[0]  # the first build of the 200 entries was interleaved


class TestBlockingMethods:
    """The blocking methods run the same plans on a blocking store."""

    def test_sync_and_async_calls_mix(self, shared_store_url: str) -> None:
        """branch/undo/redo called blocking on a store session between awaited calls
        (on one loop, whose async store the session keeps): each sees what the other
        stored, one undo history."""

        async def scenario() -> None:
            async with TreeSession("chat", store=shared_store_url) as session:
                await session.add_items([user("a"), user("b")])
                await session.add_items([user("c")])
                session.branch(0)
                assert await session.get_items() == [user("a")]
                session.undo()
                assert await session.get_items() == [user("a"), user("b"), user("c")]
                session.redo()
                await session.add_items([user("b2")])
                session.undo()
                await session.aundo()
                assert await session.get_items() == [user("a"), user("b"), user("c")]

        run(scenario())
        with open_store(shared_store_url) as store:
            tree = store.load("chat")
            assert len(tree) == 4
            assert [m["content"] for m in tree.current_path()] == ["a", "b", "c"]

    def test_blocking_store_object(self, tmp_path: Path) -> None:
        """A blocking Store object: shared and left open; the async methods run on the
        session's worker thread, never in asyncio.to_thread."""
        with open_store(f"sqlite://{tmp_path}/s.db") as store:

            async def scenario() -> list[Any]:
                async with TreeSession("chat", store=store) as session:
                    await session.add_items([user("a")])
                    await session.abranch(0)
                    return await session.get_items()

            assert run(scenario()) == [user("a")]
            assert not store.closed
            assert len(store.load("chat")) == 1
