"""TreeSession with the real OpenAI Agents SDK, offline.

The agent runs on the SDK's own ``Runner`` with the SDK's ``ScriptedModel`` (its test
double implementing the ``Model`` interface), which records exactly what each model
call was given.  The property test compares every sequence of ``add_items`` /
``pop_item`` / ``get_items(limit)`` / ``clear_session`` with the SDK's own
``SQLiteSession`` in memory.  Expected values are written by hand.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

os.environ.setdefault("OPENAI_API_KEY", "sk-test-not-used")  # nothing reaches the network

from agents import Agent, Runner, Session, SQLiteSession, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

import ptree
from ptree import SessionTree, build_context, load
from ptree.integrations.openai_agents import (
    CUSTOM_TYPE,
    ITEM_FIELD,
    TreeSession,
    branch_items,
    pi_message,
)

set_tracing_disabled(True)

# What the SDK's Runner stores, written out by hand.
U1: Any = {"role": "user", "content": "Weather in Paris?"}
CALL1: Any = {
    "type": "function_call",
    "id": "fc1",
    "call_id": "c1",
    "name": "weather",
    "arguments": '{"city":"Paris"}',
}
OUT1: Any = {"type": "function_call_output", "call_id": "c1", "output": "sunny in Paris"}


def answer(text: str, item_id: str) -> Any:
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
    }


A1: Any = answer("Sunny in Paris.", "m1")
U2: Any = {"role": "user", "content": "And Rome?"}
CALL2: Any = {
    "type": "function_call",
    "id": "fc2",
    "call_id": "c2",
    "name": "weather",
    "arguments": '{"city":"Rome"}',
}
OUT2: Any = {"type": "function_call_output", "call_id": "c2", "output": "sunny in Rome"}
A2: Any = answer("Sunny in Rome.", "m2")
U3: Any = {"role": "user", "content": "And London?"}
A3: Any = answer("London: no tool needed, it rains.", "m3")

ZERO_USAGE = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 0,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def scripted() -> ScriptedModel:
    return ScriptedModel(
        [
            [function_call("weather", {"city": "Paris"}, call_id="c1", item_id="fc1")],
            [assistant_message("Sunny in Paris.", item_id="m1")],
            [function_call("weather", {"city": "Rome"}, call_id="c2", item_id="fc2")],
            [assistant_message("Sunny in Rome.", item_id="m2")],
            [assistant_message("London: no tool needed, it rains.", item_id="m3")],
        ]
    )


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class TestProtocol:
    def test_is_an_sdk_session(self) -> None:
        """The SDK's runtime check of its Session protocol accepts a TreeSession."""
        s = TreeSession("s")
        assert isinstance(s, Session)
        assert s.session_id == "s"
        assert s.session_settings is not None
        assert s.session_settings.limit is None

    def test_limit_like_sqlite_session(self) -> None:
        """limit: None all, n the latest n, 0 none, negative all; settings give the default."""
        items: list[Any] = [{"role": "user", "content": str(i)} for i in range(5)]
        s = TreeSession("s")
        run(s.add_items(items))
        assert run(s.get_items()) == items
        assert run(s.get_items(2)) == items[3:]
        assert run(s.get_items(0)) == []
        assert run(s.get_items(-1)) == items
        assert run(s.get_items(9)) == items
        limited = TreeSession("s", session_settings={"limit": 3})
        run(limited.add_items(items))
        assert run(limited.get_items()) == items[2:]
        assert run(limited.get_items(1)) == items[4:]

    def test_items_are_fresh_copies(self) -> None:
        """Changing what get_items returned, or what was added, changes no stored item."""
        item: Any = {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}
        s = TreeSession("s")
        run(s.add_items([item]))
        item["content"].append({"type": "input_text", "text": "later"})
        got = run(s.get_items())
        got[0]["content"].clear()
        assert run(s.get_items()) == [
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}
        ]

    def test_pop_keeps_the_entry(self) -> None:
        """pop_item returns the latest item, moves the leaf back, deletes nothing."""
        s = TreeSession("s")
        run(s.add_items([U1, CALL1]))
        assert run(s.pop_item()) == CALL1
        assert run(s.get_items()) == [U1]
        assert len(s.tree) == 2
        assert s.tree.leaf_id == "e1"
        assert run(s.pop_item()) == U1
        assert run(s.pop_item()) is None
        assert run(s.get_items()) == []

    def test_clear_then_add_starts_a_new_root(self) -> None:
        """clear_session empties the branch; the next add starts a second root."""
        s = TreeSession("s")
        run(s.add_items([U1]))
        run(s.clear_session())
        assert run(s.get_items()) == []
        run(s.add_items([U2]))
        assert run(s.get_items()) == [U2]
        assert [e.id for e in s.tree.roots()] == ["e1", "e2"]

    def test_empty_add_is_no_step(self) -> None:
        """add_items([]) changes nothing: no entry, no undo step."""
        s = TreeSession("s")
        run(s.add_items([]))
        assert len(s.tree) == 0
        assert not s.history.can_undo

    def test_bad_item_adds_nothing(self) -> None:
        """A non-mapping item is refused with its index, and no item of the call is added."""
        s = TreeSession("s")
        with pytest.raises(ptree.InvalidMessageError, match=r"items\[1\]"):
            run(s.add_items([U1, "not an item"]))  # type: ignore[list-item]
        assert len(s.tree) == 0

    def test_closed_session_refuses(self) -> None:
        """Every call on a closed session raises ValueError; closing twice is fine."""
        s = TreeSession("s")
        s.close()
        s.close()
        for call in (s.get_items(), s.add_items([U1]), s.pop_item(), s.clear_session()):
            with pytest.raises(ValueError, match="closed"):
                run(call)
        with pytest.raises(ValueError, match="closed"):
            s.undo()

    def test_path_and_tree_exclusive(self) -> None:
        """A session lives in a file, in memory or in a store: one of them."""
        with pytest.raises(ValueError, match="give one of"):
            TreeSession("s", "x.jsonl", tree=SessionTree())


class TestBranching:
    def test_branch_at_index_keeps_prefix(self) -> None:
        """branch(at=i) keeps get_items()[:i+1]; negative indices count from the end."""
        s = TreeSession("s")
        run(s.add_items([U1, CALL1, OUT1, A1]))
        s.branch(at=1)
        assert run(s.get_items()) == [U1, CALL1]
        s.branch(at=-1)  # the leaf is already there: no step
        assert run(s.get_items()) == [U1, CALL1]
        with pytest.raises(IndexError, match="no item 2"):
            s.branch(at=2)
        with pytest.raises(TypeError):
            s.branch(at=True)

    def test_branch_at_entry_on_another_branch(self) -> None:
        """branch(at=entry_id) accepts an entry of any branch; unknown ids raise KeyError."""
        s = TreeSession("s")
        run(s.add_items([U1, A1]))
        s.branch(at=0)
        run(s.add_items([A2]))
        assert run(s.get_items()) == [U1, A2]
        s.branch(at="e2")
        assert run(s.get_items()) == [U1, A1]
        with pytest.raises(ptree.UnknownEntryError):
            s.branch(at="nope")

    def test_undo_redo_every_kind_of_step(self) -> None:
        """Each add_items, pop_item, clear_session and branch is one step."""
        s = TreeSession("s")
        run(s.add_items([U1, A1]))
        run(s.add_items([U2]))
        run(s.pop_item())
        run(s.clear_session())
        s.branch(at="e1")
        expected = [[], [U1, A1], [U1, A1, U2], [U1, A1], [], [U1]]
        assert run(s.get_items()) == expected[-1]
        for want in reversed(expected[:-1]):
            s.undo()
            assert run(s.get_items()) == want
        with pytest.raises(ptree.NothingToUndo):
            s.undo()
        for want in expected[1:]:
            s.redo()
            assert run(s.get_items()) == want
        with pytest.raises(ptree.NothingToRedo):
            s.redo()

    def test_add_after_undo_never_reuses_ids(self) -> None:
        """Undone items stay in the tree; later items get new ids and redo is gone."""
        s = TreeSession("s")
        run(s.add_items([U1]))
        run(s.add_items([A1]))
        s.undo()
        run(s.add_items([A2]))
        assert s.item_entry_ids() == ["e1", "e3"]
        assert branch_items(s.tree, "e2") == [U1, A1]
        assert not s.history.can_redo

    def test_old_values_unchanged(self) -> None:
        """Every value the session had still gives its own items."""
        s = TreeSession("s")
        run(s.add_items([U1, A1]))
        before = s.tree
        s.branch(at=0)
        run(s.add_items([A2]))
        assert branch_items(before) == [U1, A1]
        assert branch_items(s.tree) == [U1, A2]


class TestPiMessages:
    """The Pi message each kind of item gets (hand-written expectations)."""

    def test_user_text_and_parts(self) -> None:
        assert pi_message(U1, timestamp=5) == {
            "role": "user",
            "content": "Weather in Paris?",
            "timestamp": 5,
        }
        item = {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Look:"},
                {
                    "type": "input_image",
                    "image_url": "data:image/png;base64,iVBORw==",
                    "detail": "auto",
                },
            ],
        }
        assert pi_message(item) == {
            "role": "user",
            "content": [
                {"type": "text", "text": "Look:"},
                {"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
            ],
            "timestamp": 0,
        }

    def test_unfaithful_items_have_none(self) -> None:
        """System messages, file inputs, URL images, bad arguments and hosted calls: None."""
        for item in (
            {"role": "system", "content": "Be brief."},
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": [{"type": "input_file", "file_id": "f1"}]},
            {"role": "user", "content": [{"type": "input_image", "image_url": "https://x/y.png"}]},
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": "[1]"},
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{"},
            {"type": "web_search_call", "id": "ws1", "status": "completed"},
        ):
            assert pi_message(item) is None, item

    def test_assistant_text_and_refusal(self) -> None:
        """One text block, the parts joined, the item's id in textSignature (as Pi does)."""
        item = answer("Hello.", "m1")
        item["content"].append({"type": "refusal", "refusal": " No."})
        item["phase"] = "final_answer"
        assert pi_message(item, model="gpt-5", timestamp=7) == {
            "role": "assistant",
            "content": [
                {
                    "type": "text",
                    "text": "Hello. No.",
                    "textSignature": '{"v":1,"id":"m1","phase":"final_answer"}',
                }
            ],
            "api": "openai-responses",
            "provider": "openai",
            "model": "gpt-5",
            "usage": ZERO_USAGE,
            "stopReason": "stop",
            "timestamp": 7,
        }

    def test_function_call_and_output(self) -> None:
        """A call's Pi id is call_id|id, as Pi's Responses provider writes it."""
        assert pi_message(CALL1) == {
            "role": "assistant",
            "content": [
                {
                    "type": "toolCall",
                    "id": "c1|fc1",
                    "name": "weather",
                    "arguments": {"city": "Paris"},
                }
            ],
            "api": "openai-responses",
            "usage": ZERO_USAGE,
            "stopReason": "toolUse",
            "timestamp": 0,
        }
        assert pi_message(OUT1, calls={"c1": ("weather", "c1|fc1")}) == {
            "role": "toolResult",
            "toolCallId": "c1|fc1",
            "toolName": "weather",
            "content": [{"type": "text", "text": "sunny in Paris"}],
            "isError": False,
            "timestamp": 0,
        }

    def test_reasoning_is_signed_thinking(self) -> None:
        item = {
            "type": "reasoning",
            "id": "rs1",
            "summary": [
                {"type": "summary_text", "text": "First."},
                {"type": "summary_text", "text": "Second."},
            ],
            "encrypted_content": "opaque",
        }
        message = pi_message(item)
        assert message is not None
        assert message["content"] == [
            {
                "type": "thinking",
                "thinking": "First.\n\nSecond.",
                "thinkingSignature": (
                    '{"type":"reasoning","id":"rs1","summary":[{"type":"summary_text",'
                    '"text":"First."},{"type":"summary_text","text":"Second."}],'
                    '"encrypted_content":"opaque"}'
                ),
            }
        ]

    def test_session_stores_item_beside_message(self) -> None:
        """A message entry keeps the item in openaiAgentsItem; others are custom entries."""
        system: Any = {"role": "system", "content": "Be brief."}
        s = TreeSession("s")
        run(s.add_items([system, CALL1]))
        run(s.add_items([OUT1]))  # answers a call of an earlier add_items
        e1, e2, e3 = s.tree.entries()
        assert isinstance(e1, ptree.Custom)
        assert (e1.custom_type, e1.data) == (CUSTOM_TYPE, system)
        assert isinstance(e2, ptree.MessageEntry)
        assert e2.extra[ITEM_FIELD] == CALL1
        assert isinstance(e3, ptree.MessageEntry)
        assert e3.message["toolName"] == "weather"
        assert e3.message["toolCallId"] == "c1|fc1"

    def test_a_turn_is_one_assistant_message(self) -> None:
        """Reasoning and parallel calls added together: one Pi message on the last entry."""
        reasoning: Any = {"type": "reasoning", "id": "rs1", "summary": []}
        s = TreeSession("s")
        run(s.add_items([U1, reasoning, CALL1, CALL2, OUT1, OUT2, A1]))
        kinds = [e.type for e in s.tree.entries()]
        assert kinds == [
            "message",  # U1
            "custom",  # reasoning, CALL1: their blocks are in the next message
            "custom",
            "message",  # CALL2: the turn's message
            "message",  # OUT1
            "message",  # OUT2
            "message",  # A1: a turn of its own (after the results)
        ]
        turn = s.tree.entries()[3]
        assert isinstance(turn, ptree.MessageEntry)
        assert [b["type"] for b in turn.message["content"]] == ["thinking", "toolCall", "toolCall"]
        assert turn.message["stopReason"] == "toolUse"
        assert run(s.get_items()) == [U1, reasoning, CALL1, CALL2, OUT1, OUT2, A1]
        assert [m["role"] for m in build_context(s.tree).messages] == [
            "user",
            "assistant",
            "toolResult",
            "toolResult",
            "assistant",
        ]


class TestRunner:
    def test_branching_conversation_with_tools(self, tmp_path: Path) -> None:
        """Several turns with tool calls, a branch back, a new run, undo/redo, reload."""
        path = tmp_path / "chat.jsonl"
        model = scripted()
        agent = Agent(name="assistant", model=model, tools=[weather])

        async def scenario() -> None:
            async with TreeSession("chat", path, model="scripted") as session:
                r = await Runner.run(agent, "Weather in Paris?", session=session)
                assert r.final_output == "Sunny in Paris."
                await Runner.run(agent, "And Rome?", session=session)
                first_branch = [U1, CALL1, OUT1, A1, U2, CALL2, OUT2, A2]
                assert await session.get_items() == first_branch
                old_leaf = session.tree.leaf_id

                # Go back to the first answer and ask something else.
                session.branch(at=3)
                steps = session.history.undo_count
                r = await Runner.run(agent, "And London?", session=session)
                assert r.final_output == "London: no tool needed, it rains."
                # The model was given exactly the new branch's history.
                assert model.calls[-1].input == [U1, CALL1, OUT1, A1, U3]
                second_branch = [U1, CALL1, OUT1, A1, U3, A3]
                assert await session.get_items() == second_branch
                # Both branches are in the tree.
                assert len(session.tree.leaves()) == 2
                assert session.items_at(old_leaf) == first_branch

                # Undo the run's steps, then the branch; redo them all.
                for _ in range(session.history.undo_count - steps):
                    session.undo()
                assert await session.get_items() == [U1, CALL1, OUT1, A1]
                session.undo()
                assert await session.get_items() == first_branch
                while session.history.can_redo:
                    session.redo()
                assert await session.get_items() == second_branch
                final_tree = session.tree

            # Reloading from disk gives the same tree and items.
            assert load(path) == final_tree
            async with TreeSession("chat", path) as again:
                assert await again.get_items() == second_branch
                assert again.items_at(old_leaf) == first_branch

        run(scenario())
        model.assert_complete()

    def test_file_opens_as_a_pi_context(self, tmp_path: Path) -> None:
        """The file loads with ptree.pi.load and builds the context Pi would send."""
        path = tmp_path / "chat.jsonl"
        model = scripted()
        agent = Agent(name="assistant", model=model, tools=[weather])

        async def scenario() -> None:
            async with TreeSession("chat", path, model="scripted") as session:
                await Runner.run(agent, "Weather in Paris?", session=session)

        run(scenario())
        ctx = build_context(load(path))
        assert [m["role"] for m in ctx.messages] == ["user", "assistant", "toolResult", "assistant"]
        assert ctx.messages[0]["content"] == "Weather in Paris?"
        assert ctx.messages[1]["content"] == [
            {"type": "toolCall", "id": "c1|fc1", "name": "weather", "arguments": {"city": "Paris"}}
        ]
        assert ctx.messages[2]["toolName"] == "weather"
        assert ctx.messages[2]["toolCallId"] == "c1|fc1"
        assert ctx.messages[2]["content"] == [{"type": "text", "text": "sunny in Paris"}]
        assert ctx.messages[3]["content"] == [
            {"type": "text", "text": "Sunny in Paris.", "textSignature": '{"v":1,"id":"m1"}'}
        ]
        assert ctx.model == ptree.context.ModelRef(provider="openai", model_id="scripted")
        header = json.loads(path.read_text().splitlines()[0])
        assert header["id"] == "chat"

    def test_session_continued_in_pi(self, tmp_path: Path) -> None:
        """Messages Pi appended to the file come back as the items Pi would send."""
        path = tmp_path / "chat.jsonl"
        model = ScriptedModel(
            [[assistant_message("Sunny in Paris.", item_id="m1")], [assistant_message("Done.")]]
        )
        agent = Agent(name="assistant", model=model, tools=[weather])

        async def first() -> None:
            async with TreeSession("chat", path, model="gpt-test") as session:
                await Runner.run(agent, "Weather in Paris?", session=session)

        run(first())
        # Pi appends a turn of its own, in its own format (hand-written here).
        with ptree.SessionWriter(path) as w:
            t = w.value.append({"role": "user", "content": "And Rome?", "timestamp": 1})
            t = t.append(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "unsigned: not replayable"},
                        {"type": "text", "text": "Checking.", "textSignature": '{"v":1,"id":"m9"}'},
                        {
                            "type": "toolCall",
                            "id": "c9|fc_9",
                            "name": "weather",
                            "arguments": {"city": "Rome"},
                        },
                    ],
                    "api": "openai-responses",
                    "provider": "openai",
                    "model": "gpt-test",
                    "stopReason": "toolUse",
                    "timestamp": 2,
                }
            )
            t = t.append(
                {
                    "role": "toolResult",
                    "toolCallId": "c9|fc_9",
                    "toolName": "weather",
                    "content": [{"type": "text", "text": "sunny in Rome"}],
                    "isError": False,
                    "timestamp": 3,
                }
            )
            w.commit(t.append_label(t.leaf_id or "", "from Pi"))
        # pi-ai's items (its user text is a list of parts, as pi-ai sends it)
        from_pi: list[Any] = [
            {"role": "user", "content": [{"type": "input_text", "text": "And Rome?"}]},
            answer("Checking.", "m9")
            | {"content": [{"type": "output_text", "text": "Checking.", "annotations": []}]},
            {
                "type": "function_call",
                "call_id": "c9",
                "id": "fc_9",
                "name": "weather",
                "arguments": '{"city":"Rome"}',
            },
            {"type": "function_call_output", "call_id": "c9", "output": "sunny in Rome"},
        ]
        first_turn = [U1, A1]

        async def back() -> None:
            async with TreeSession("chat", path) as session:
                assert await session.get_items() == first_turn + from_pi
                assert await session.get_items(3) == from_pi[1:]
                steps = session.history.undo_count
                await Runner.run(agent, "Thanks.", session=session)
                assert model.calls[-1].input == [
                    *first_turn,
                    *from_pi,
                    {"role": "user", "content": "Thanks."},
                ]
                for _ in range(session.history.undo_count - steps):
                    session.undo()  # the run's steps: back to what Pi left
                assert await session.get_items() == first_turn + from_pi
                with pytest.raises(ValueError, match="not the last"):
                    session.branch(at=3)  # inside Pi's assistant message
                assert await session.pop_item() == from_pi[3]
                # Pi's assistant message leaves whole; its last item is returned.
                assert await session.pop_item() == from_pi[2]
                assert await session.get_items() == [*first_turn, from_pi[0]]

        run(back())

    def test_second_writer_is_locked_out(self, tmp_path: Path) -> None:
        """While a session holds its file, another gets SessionLockedError; close frees it."""
        path = tmp_path / "chat.jsonl"
        first = TreeSession("chat", path)
        with pytest.raises(ptree.SessionLockedError):
            TreeSession("chat", path)
        first.close()
        TreeSession("chat", path).close()


# ---------------------------------------------------------------- property test

texts = st.text(max_size=12)
json_leaf = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | texts
json_values = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
call_ids = st.sampled_from(["c1", "c2", "c3"])
items = st.one_of(
    st.builds(lambda t: {"role": "user", "content": t}, texts),
    st.builds(
        lambda t: {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": t}],
        },
        texts,
    ),
    st.builds(lambda t: {"role": "system", "content": t}, texts),
    st.builds(answer, texts, texts),
    st.builds(
        lambda c, n, a: {"type": "function_call", "call_id": c, "name": n, "arguments": a},
        call_ids,
        st.sampled_from(["f", "g"]),
        st.dictionaries(texts, json_values, max_size=3).map(json.dumps) | texts,
    ),
    st.builds(
        lambda c, o: {"type": "function_call_output", "call_id": c, "output": o}, call_ids, texts
    ),
    st.builds(
        lambda i, t: {
            "type": "reasoning",
            "id": i,
            "summary": [{"type": "summary_text", "text": t}],
        },
        texts,
        texts,
    ),
    # anything else, with fields nobody knows
    st.dictionaries(texts, json_values, max_size=4).map(lambda d: {**d, "type": "x_call"}),
)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.lists(items, max_size=4)),
        st.tuples(st.just("pop"), st.none()),
        st.tuples(st.just("get"), st.none() | st.integers(-3, 8)),
        st.tuples(st.just("clear"), st.none()),
    ),
    max_size=12,
)


async def compare(steps: list[tuple[str, Any]], session: TreeSession) -> None:
    """Run ``steps`` on ``session`` and on the SDK's SQLiteSession; results must agree."""
    reference = SQLiteSession("ref")
    try:
        states: list[tuple[SessionTree, list[Any]]] = [
            (session.tree, [])
        ]  # each undo step's value and its items
        for op, arg in steps:
            if op == "add":
                await session.add_items(arg)
                await reference.add_items(arg)
            elif op == "pop":
                assert await session.pop_item() == await reference.pop_item()
            elif op == "get":
                assert await session.get_items(arg) == await reference.get_items(arg)
            else:
                await session.clear_session()
                await reference.clear_session()
            expected = await reference.get_items()
            assert await session.get_items() == expected
            if session.history.undo_count == len(states):
                states.append((session.tree, expected))
            assert session.history.undo_count == len(states) - 1
        # Forks never change earlier versions: each kept value still has its items.
        for tree, expected in states:
            assert branch_items(tree) == expected
        # Undo walks back through exactly those states.
        for _, expected in reversed(states[:-1]):
            session.undo()
            assert await session.get_items() == expected
    finally:
        reference.close()


@settings(max_examples=500)
@given(ops)
def test_behaves_like_sqlite_session(steps: list[tuple[str, Any]]) -> None:
    """Any sequence of protocol calls gives what the SDK's own SQLiteSession gives."""
    run(compare(steps, TreeSession("s")))


@settings(max_examples=30)
@given(ops)
def test_file_session_reopens_equal(steps: list[tuple[str, Any]]) -> None:
    """The same on a Pi file; reopening it gives the same items and tree."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        session = TreeSession("s", path, fsync=False)
        run(compare(steps, session))
        items_now, tree_now = run(session.get_items()), session.tree
        session.close()
        again = TreeSession("s", path)
        assert run(again.get_items()) == items_now
        assert again.tree == tree_now
        again.close()


@settings(max_examples=30, deadline=None)
@given(ops)
def test_store_session_behaves_like_sqlite_session(steps: list[tuple[str, Any]]) -> None:
    """The same in a ptree store (a SQLite file: the async methods on the async store,
    undo on a blocking one); reading it back from the store gives the same items."""
    import tempfile

    from ptree.stores import open as open_store

    async def scenario(url: str) -> list[Any]:
        async with TreeSession("s", store=url) as session:
            await compare(steps, session)
            return await session.get_items()

    with tempfile.TemporaryDirectory() as d:
        url = f"sqlite://{d}/s.db"
        items_now = run(scenario(url))
        with open_store(url) as store:
            stored = store.load("s") if "s" in store else SessionTree()
        assert branch_items(stored) == items_now
