"""``TreeSession(session_id, store=URL)``: the OpenAI Agents SDK's session in a ptree store.

Every kind of store (SQLite, PostgreSQL, JSONL): the SDK's protocol, branch/undo/redo,
a reopened session; 8 processes adding to different sessions of one PostgreSQL store
and 4 tasks on one loop adding to one session lose nothing, while a ticker task on the
loop keeps ticking; bad input is a typed error and stores nothing.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import time
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("OPENAI_API_KEY", "sk-test-not-used")  # nothing reaches the network

from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message

from ptree.integrations.openai_agents import TreeSession
from ptree.stores import StoreError
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
