"""TreeSaver, LangGraph's checkpointer over a ptree store: the official conformance suite,
a real graph run offline beside InMemorySaver, the storage of messages, bad input."""

from __future__ import annotations

import asyncio
import io
import itertools
import os
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from ptree import Custom, MessageEntry, build_context
from ptree.cli import main
from ptree.integrations.langgraph import (
    CheckpointSerializationError,
    ThreadIdError,
    TreeSaver,
    pi_message,
)
from ptree.stores import StoreError
from ptree.stores import open as open_store

from .conftest import store_url_of

# ---------------------------------------------------------------------------- conformance


@pytest.mark.parametrize("kind", ["sqlite-file", "postgres", "jsonl"])
def test_conformance_all_eight_capabilities(kind: str, tmp_path: Path) -> None:
    """langgraph-checkpoint-conformance 0.0.2 finds all eight capabilities, and each passes."""
    url = store_url_of(kind, tmp_path)

    @checkpointer_test(name=f"TreeSaver[{kind}]")
    async def make() -> AsyncIterator[TreeSaver]:
        saver = TreeSaver(url)
        yield saver
        saver.close()

    report = asyncio.run(validate(make))
    failures = {name: r.failures for name, r in report.results.items() if r.passed is not True}
    assert failures == {}
    assert {name for name, r in report.results.items() if r.detected} == {
        c.value for c in ALL_CAPABILITIES
    }
    assert report.conformance_level() == "FULL"


# ---------------------------------------------------------------------------- a real graph


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"result for {query}"


def _replies() -> Iterator[AIMessage]:
    for i in itertools.count():
        if i % 3 == 1:
            call = {"name": "lookup", "args": {"query": f"q{i}"}, "id": f"call_{i}"}
            yield AIMessage("", tool_calls=[call], id=f"ai-call-{i}")
        yield AIMessage(f"answer {i}", id=f"ai-{i}")


def _graph(saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any, Any, Any, Any]:
    model = GenericFakeChatModel(messages=_replies())

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([lookup]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=saver)


def _shape(messages: list[BaseMessage]) -> list[tuple[str, Any, Any]]:
    # ToolNode's and add_messages' ids are random uuids: everything else must match.
    return [(m.type, m.content, getattr(m, "tool_calls", None)) for m in messages]


def _session(saver: BaseCheckpointSaver[Any]) -> list[Any]:
    """Three turns, time travel back to a past checkpoint, a resumed run from it, an
    update_state fork: what a user sees at each point."""
    graph = _graph(saver)
    config: Any = {"configurable": {"thread_id": "chat"}}
    seen: list[Any] = []
    for i in range(3):
        out = graph.invoke({"messages": [HumanMessage(f"question {i}", id=f"h{i}")]}, config)
        seen.append(_shape(out["messages"]))
    history = list(graph.get_state_history(config))
    seen.append([(s.metadata, _shape(s.values.get("messages", [])), s.next) for s in history])
    past = history[5]
    resumed = graph.invoke(None, past.config)  # replay from a past checkpoint: a branch
    seen.append(_shape(resumed["messages"]))
    forked = graph.update_state(history[8].config, {"messages": [HumanMessage("other", id="o")]})
    seen.append(_shape(graph.invoke(None, forked)["messages"]))
    final = graph.get_state(config)
    seen.append((_shape(final.values["messages"]), final.next, final.metadata))
    seen.append(
        [
            (s.metadata, _shape(s.values.get("messages", [])))
            for s in graph.get_state_history(config)
        ]
    )
    return seen


def test_time_travel_and_fork_same_as_in_memory(tmp_path: Path) -> None:
    """get_state_history, a resume from a past checkpoint and an update_state fork give the
    same states with TreeSaver as with LangGraph's InMemorySaver."""
    expected = _session(InMemorySaver())
    with TreeSaver(f"sqlite://{tmp_path}/threads.db") as saver:
        actual = _session(saver)
    assert actual == expected


def test_loaded_state_equals_the_run(tmp_path: Path) -> None:
    """The state a new saver loads from the store is == the messages the run returned,
    ids and all; the fork is a branch of the thread's tree."""
    url = f"sqlite://{tmp_path}/threads.db"
    config: Any = {"configurable": {"thread_id": "chat"}}
    with TreeSaver(url) as saver:
        graph = _graph(saver)
        for i in range(4):
            out = graph.invoke({"messages": [HumanMessage(f"question {i}")]}, config)
        past = list(graph.get_state_history(config))[4]
        graph.update_state(past.config, {"messages": [HumanMessage("instead")]})
    with TreeSaver(url) as fresh:
        assert _graph(fresh).get_state(past.config).values == past.values
        tree = fresh.thread("chat")
    run = out["messages"]
    assert len(run) == 4 * 2 + 2  # a tool call and its result in the second turn
    assert len(tree.leaves()) == 2  # the main line and the fork
    # Each message is stored once, as a Pi message: the run's, and the fork's question.
    stored = [e for e in tree.entries() if isinstance(e, MessageEntry)]
    assert len(stored) == len(run) + 1
    # The main line's path holds the conversation, in order.
    main_leaf = next(leaf for leaf in tree.leaves() if leaf.id != tree.leaf_id)
    path_roles = [m["role"] for m in tree.move_to(main_leaf.id).current_path() if "role" in m]
    expected_roles = {"human": "user", "ai": "assistant", "tool": "toolResult"}
    assert path_roles == [expected_roles[m.type] for m in run]


def test_async_run_keeps_the_conversation_in_order(tmp_path: Path) -> None:
    """A graph run with ainvoke (writes racing ahead of their checkpoints) gives the
    same messages as InMemorySaver, and the thread's path holds them in order, once."""

    async def turns(saver: BaseCheckpointSaver[Any]) -> list[BaseMessage]:
        graph = _graph(saver)
        config: Any = {"configurable": {"thread_id": "a"}}
        for i in range(5):
            out = await graph.ainvoke({"messages": [HumanMessage(f"q{i}", id=f"h{i}")]}, config)
        state = await graph.aget_state(config)
        assert state.values["messages"] == out["messages"]
        return list(out["messages"])

    expected = asyncio.run(turns(InMemorySaver()))
    with TreeSaver(f"sqlite://{tmp_path}/threads.db") as saver:
        actual = asyncio.run(turns(saver))
        tree = saver.thread("a")
    assert _shape(actual) == _shape(expected)
    path = [m for m in tree.current_path() if "role" in m]
    assert [(m["role"], m["content"]) for m in path] == [
        (pi_message(m)["role"], pi_message(m)["content"]) for m in actual
    ]
    assert sum(isinstance(e, MessageEntry) for e in tree.entries()) == len(actual)


def test_build_context_show_and_html_on_a_thread(tmp_path: Path) -> None:
    """A stored thread is a ptree session: build_context gives its conversation, and
    `ptree show` / `ptree export --format html` read it as URL#thread-id."""
    url = f"sqlite://{tmp_path}/threads.db"
    with TreeSaver(url) as saver:
        _graph(saver).invoke(
            {"messages": [HumanMessage("hello"), HumanMessage("and a lookup")]},
            {"configurable": {"thread_id": "t-1"}},
        )
    with open_store(url) as store:
        context = build_context(store.load("t-1"))
    assert [m["role"] for m in context.messages] == ["user", "user", "assistant"]
    assert context.messages[2]["content"] == [{"type": "text", "text": "answer 0"}]
    out = io.StringIO()
    assert main(["show", f"{url}#t-1"], out=out, err=io.StringIO()) == 0
    assert "user: and a lookup" in out.getvalue()
    assert "assistant: answer 0" in out.getvalue()
    page = tmp_path / "t.html"
    assert main(["export", "--format", "html", f"{url}#t-1", "-o", str(page)]) == 0
    assert "and a lookup" in page.read_text()


def test_entry_id_names_each_checkpoints_entry(tmp_path: Path) -> None:
    """entry_id(config) is the custom entry whose data holds that checkpoint's id (found
    here by scanning the tree), for every checkpoint of a thread with a fork; a config
    naming no checkpoint gives the namespace's latest; unknown ones give None."""
    with TreeSaver(f"sqlite://{tmp_path}/threads.db") as saver:
        graph = _graph(saver)
        config: Any = {"configurable": {"thread_id": "t-1"}}
        graph.invoke({"messages": [HumanMessage("hello")]}, config)
        graph.invoke({"messages": [HumanMessage("and a lookup")]}, config)
        history = list(graph.get_state_history(config))
        graph.update_state(history[-3].config, {"messages": [HumanMessage("forked")]})
        tree = saver.thread("t-1")
        by_checkpoint = {
            e.data["id"]: e.id
            for e in tree.entries()
            if isinstance(e, Custom) and e.custom_type == "langgraph.checkpoint"
        }
        snapshots = list(graph.get_state_history(config))
        assert len(snapshots) == len(by_checkpoint) > 5
        for snapshot in snapshots:
            cid = snapshot.config["configurable"]["checkpoint_id"]
            assert saver.entry_id(snapshot.config) == by_checkpoint[cid]
            assert asyncio.run(saver.aentry_id(snapshot.config)) == by_checkpoint[cid]
        latest = graph.get_state(config).config["configurable"]["checkpoint_id"]
        assert saver.entry_id(config) == by_checkpoint[latest]
        gone: Any = {"configurable": {"thread_id": "t-1", "checkpoint_id": "no-such"}}
        assert saver.entry_id(gone) is None
        assert saver.entry_id({"configurable": {"thread_id": "nobody"}}) is None
        with pytest.raises(ThreadIdError):
            saver.entry_id({"configurable": {"thread_id": 7}})


# ---------------------------------------------------------------------------- messages


class TestPiMessage:
    def test_human_is_user(self) -> None:
        """A HumanMessage is a Pi user message with its text."""
        assert pi_message(HumanMessage("hi"), 5) == {
            "role": "user",
            "content": "hi",
            "timestamp": 5,
        }

    def test_ai_with_tool_calls(self) -> None:
        """An AIMessage's text and tool calls are text and toolCall blocks."""
        m = AIMessage("let me see", tool_calls=[{"name": "f", "args": {"x": 1}, "id": "c1"}])
        pi = pi_message(m)
        assert pi["role"] == "assistant"
        assert pi["content"] == [
            {"type": "text", "text": "let me see"},
            {"type": "toolCall", "id": "c1", "name": "f", "arguments": {"x": 1}},
        ]
        assert pi["stopReason"] == "toolUse"

    def test_tool_is_tool_result(self) -> None:
        """A ToolMessage is a toolResult; an error status makes it an error."""
        m = ToolMessage("boom", tool_call_id="c1", name="f", status="error")
        assert pi_message(m) == {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "f",
            "content": [{"type": "text", "text": "boom"}],
            "isError": True,
            "timestamp": 0,
        }


# ---------------------------------------------------------------------------- bad input


def _config(thread_id: Any) -> Any:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}


def _checkpoint(values: dict[str, Any]) -> Any:
    return {
        "v": 1,
        "id": "1f0-bad",
        "ts": "2026-12-03T00:00:00+00:00",
        "channel_values": values,
        "channel_versions": dict.fromkeys(values, 1),
        "versions_seen": {},
        "updated_channels": None,
    }


class TestBadInput:
    def test_unserializable_value(self) -> None:
        """A channel value the serializer cannot write: a TypeError naming the thread,
        checkpoint and channel; nothing stored."""
        with TreeSaver("sqlite:///:memory:") as saver:
            values = {"ok": "fine", "bad": threading.Lock()}
            with pytest.raises(CheckpointSerializationError) as info:
                saver.put(_config("t"), _checkpoint(values), {}, {"ok": 1, "bad": 1})
            assert isinstance(info.value, TypeError)
            assert (info.value.thread_id, info.value.checkpoint_id, info.value.channel) == (
                "t",
                "1f0-bad",
                "bad",
            )
            assert "'bad'" in str(info.value)
            assert saver.get_tuple(_config("t")) is None
            assert "t" not in saver.store

    def test_unserializable_message_stores_nothing(self) -> None:
        """A message list with an unserializable message stores no entry at all."""
        with TreeSaver("sqlite:///:memory:") as saver:
            bad = HumanMessage("hi", additional_kwargs={"lock": threading.Lock()})
            values = {"messages": [HumanMessage("fine"), bad]}
            saver.put(_config("t"), _checkpoint({"a": 1}), {}, {"a": 1})
            before = saver.thread("t")
            with pytest.raises(CheckpointSerializationError):
                saver.put(_config("t"), _checkpoint(values), {}, {"messages": 1})
            assert saver.thread("t") == before

    @pytest.mark.parametrize("thread_id", [7, None, b"t", ""])
    def test_thread_id_not_a_string(self, thread_id: Any) -> None:
        """A thread id that is not a non-empty str: ThreadIdError (a TypeError) naming it."""
        with TreeSaver("sqlite:///:memory:") as saver:
            with pytest.raises(ThreadIdError, match=repr(thread_id).replace("'", ".")):
                saver.put(_config(thread_id), _checkpoint({"a": 1}), {}, {"a": 1})
            assert list(saver.store.sessions()) == []

    def test_unknown_scheme(self) -> None:
        """A store URL of an unknown scheme: StoreError naming the scheme."""
        with pytest.raises(StoreError, match="unknown store scheme 'redis'"):
            TreeSaver("redis://localhost/0")


def test_async_methods_leave_the_loop(tmp_path: Path) -> None:
    """The async methods run the store's blocking calls on another thread."""
    threads: set[int] = set()
    saver = TreeSaver(f"sqlite://{tmp_path}/t.db")
    put = saver.put

    def spy(*args: Any) -> Any:
        threads.add(threading.get_ident())
        return put(*args)

    saver.put = spy  # type: ignore[method-assign,assignment]

    async def run() -> int:
        await saver.aput(_config("t"), _checkpoint({"a": 1}), {}, {"a": 1})
        return threading.get_ident()

    loop_thread = asyncio.run(run())
    saver.close()
    assert threads
    assert loop_thread not in threads


# ---------------------------------------------------------------------------- properties

_MESSAGE = st.builds(
    lambda kind, text, mid: {
        "human": HumanMessage,
        "ai": AIMessage,
        "system": SystemMessage,
    }[kind](text, id=mid),
    st.sampled_from(["human", "ai", "system"]),
    st.sampled_from(["hi", "ok", "", "a\u00e9\U0001f600", "x" * 30]),
    st.one_of(st.none(), st.sampled_from(["m1", "m2", "m3"])),
) | st.builds(
    lambda text, mid, call: ToolMessage(text, id=mid, tool_call_id=call),
    st.sampled_from(["ok", "err"]),
    st.one_of(st.none(), st.just("t1")),
    st.sampled_from(["c1", "c2"]),
)

_STEP = st.tuples(
    st.one_of(st.none(), st.integers(0, 30)),  # the parent: None, or one of those put
    st.integers(0, 5),  # how many of the parent's messages to keep (at most)
    st.lists(_MESSAGE, max_size=3),  # messages added after them
    st.one_of(
        st.none(), st.integers(-(2**63), 2**63 - 1), st.text(max_size=5), st.lists(st.booleans())
    ),
    st.booleans(),  # whether the other channel changes (or is dropped, when None)
    st.sampled_from(["", "child:1"]),
)


@settings(max_examples=int(os.environ.get("PTREE_LANGGRAPH_EXAMPLES", "25")))
@given(st.lists(_STEP, min_size=1, max_size=12))
def test_any_checkpoint_reads_back_as_in_memory(steps: list[Any]) -> None:
    """Whatever checkpoints are put (forks, kept or replaced messages, messages without
    ids or repeated, channels changed or dropped), each one reads back exactly as
    InMemorySaver gives it: values, versions, metadata, parent."""
    memory = InMemorySaver()
    with TreeSaver("sqlite:///:memory:") as saver:
        put: list[tuple[Any, Any]] = []  # (config, checkpoint) as put
        for n, (parent_at, keep, added, other, change, ns) in enumerate(steps):
            parent = None
            config: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ns}}
            same_ns = [p for p in put if p[0]["configurable"]["checkpoint_ns"] == ns]
            if parent_at is not None and same_ns:
                parent = same_ns[parent_at % len(same_ns)]
                config["configurable"]["checkpoint_id"] = parent[0]["configurable"]["checkpoint_id"]
            old = {} if parent is None else parent[1]
            old_messages = old.get("channel_values", {}).get("messages", [])
            messages = [*old_messages[:keep], *added]
            versions = dict(old.get("channel_versions", {}))
            values = {"messages": messages}
            new_versions: dict[str, Any] = {"messages": n + 1}
            if change:
                new_versions["other"] = n + 1
                if other is not None:
                    values["other"] = other
                else:
                    versions.pop("other", None)
                    new_versions.pop("other")
            elif "other" in versions:
                values["other"] = old["channel_values"]["other"]
            versions.update(new_versions)
            checkpoint: Any = {
                "v": 4,
                "id": f"1f0-{n:04}",
                "ts": f"2026-12-03T00:00:{n:02}+00:00",
                "channel_values": values,
                "channel_versions": versions,
                "versions_seen": {"node": {"messages": n}} if n % 2 else {},
                "updated_channels": list(new_versions),
            }
            metadata: Any = {"source": "loop", "step": n, "parents": {}}
            stored = memory.put(config, checkpoint, metadata, new_versions)
            assert saver.put(config, checkpoint, metadata, new_versions) == stored
            put.append((stored, checkpoint))
        fresh = TreeSaver(saver.store)  # what another process would read
        for config, _ in put:
            expected = memory.get_tuple(config)
            for reader in (saver, fresh):
                actual = reader.get_tuple(config)
                assert actual is not None
                assert expected is not None
                assert actual.checkpoint == expected.checkpoint
                assert actual.metadata == expected.metadata
                assert actual.parent_config == expected.parent_config
                assert actual.config == expected.config


def test_store_refresh_reads_what_others_added(tmp_path: Path) -> None:
    """Store.refresh gives the session as stored now, grown from the tree this store
    object last gave (so added_since names what another writer saved since)."""
    from ptree import SessionHeader, SessionTree

    url = f"sqlite://{tmp_path}/s.db"
    with open_store(url) as mine, open_store(url) as other:
        header = SessionHeader(id="s", timestamp="2026-12-03T00:00:00Z", cwd="/")
        first = mine.save(SessionTree(header=header).append({"role": "user", "content": "a"}))
        other.update("s", lambda t: t.append({"role": "assistant", "content": "b"}))
        now = mine.refresh("s")
        added = now.added_since(first)
        assert added is not None
        assert [e.message["content"] for e in added if isinstance(e, MessageEntry)] == ["b"]
        assert now == other.load("s")


# ---------------------------------------------------------------------------- paths

# Pi's role for each LangChain type of the graph's messages (written out here: the
# expected side of the test does not call the saver's own mapping).
_PI_ROLE = {"human": "user", "ai": "assistant", "tool": "toolResult", "system": "system"}


def _said(message: BaseMessage) -> tuple[str, str, list[tuple[str, str]]]:
    """What a LangChain message of the graph says: Pi's role, its text, its tool calls."""
    assert isinstance(message.content, str)
    calls = [(c["id"] or "", c["name"]) for c in getattr(message, "tool_calls", [])]
    return _PI_ROLE[message.type], message.content, calls


def _pi_said(pi: Any) -> tuple[str, str, list[tuple[str, str]]]:
    """What a Pi message of a context says, in the terms of _said."""
    content = pi["content"]
    if isinstance(content, str):
        return pi["role"], content, []
    text = "".join(b["text"] for b in content if b["type"] == "text")
    calls = [(b["id"], b["name"]) for b in content if b["type"] == "toolCall"]
    return pi["role"], text, calls


_OP = st.one_of(
    st.tuples(st.just("invoke"), st.just(0), st.just("")),
    # a run resumed from a past checkpoint (any: written on an input, or by a step),
    # with a new question or without input
    st.tuples(st.just("resume"), st.integers(0, 99), st.sampled_from(["question", "none"])),
    # update_state on a past checkpoint: a message added, one replaced, one removed
    st.tuples(st.just("update"), st.integers(0, 99), st.sampled_from(["add", "replace", "remove"])),
)


def _run(saver: BaseCheckpointSaver[Any], ops: list[tuple[str, int, str]]) -> list[Any]:
    """The ops on one thread of the tool graph; the thread's state after each."""
    graph = _graph(saver)
    config: Any = {"configurable": {"thread_id": "t"}}
    seen: list[Any] = []
    for n, (kind, at, how) in enumerate(ops):
        history = list(graph.get_state_history(config))
        question = HumanMessage(f"question {n}", id=f"h{n}")
        if kind == "invoke" or not history:
            graph.invoke({"messages": [question]}, config)
        elif kind == "resume":
            past = history[at % len(history)]
            graph.invoke({"messages": [question]} if how == "question" else None, past.config)
        else:
            past = history[at % len(history)]
            humans = [m for m in past.values.get("messages", []) if m.type == "human"]
            change: list[BaseMessage] = [question]
            if how == "replace" and humans:
                change = [HumanMessage(f"edited {n}", id=humans[at % len(humans)].id)]
            elif how == "remove" and humans:
                change = [RemoveMessage(id=humans[at % len(humans)].id or "")]
            graph.update_state(past.config, {"messages": change})
        state = graph.get_state(config)
        seen.append((_shape(state.values.get("messages", [])), state.next, state.metadata))
    return seen


@settings(max_examples=int(os.environ.get("PTREE_LANGGRAPH_EXAMPLES", "25")))
@given(st.lists(_OP, min_size=1, max_size=int(os.environ.get("PTREE_LANGGRAPH_OPS", "6"))))
def test_each_checkpoint_path_holds_its_messages(ops: list[tuple[str, int, str]]) -> None:
    """Whatever a thread went through (runs, resumes from past checkpoints written on an
    input or by a step, update_state forks adding, replacing or removing a message),
    the same states as InMemorySaver, and at every checkpoint's entry build_context
    gives exactly the messages of its state, in order; no message is stored on a path
    twice, and the thread stores at most the messages each checkpoint adds to its
    parent's (LangGraph's states say what those are)."""
    memory = InMemorySaver()
    config: Any = {"configurable": {"thread_id": "t"}}
    expected_seen = _run(memory, ops)
    with TreeSaver("sqlite:///:memory:") as saver:
        assert _run(saver, ops) == expected_seen
        expected = list(_graph(memory).get_state_history(config))
        actual = list(_graph(saver).get_state_history(config))
        tree = saver.thread("t")
    assert [(s.metadata, s.next, _shape(s.values.get("messages", []))) for s in actual] == [
        (s.metadata, s.next, _shape(s.values.get("messages", []))) for s in expected
    ]
    entry_of = {
        e.data["id"]: e.id
        for e in tree.entries()
        if isinstance(e, Custom) and e.custom_type == "langgraph.checkpoint"
    }
    on_paths: set[str] = set()
    for got, want in zip(actual, expected, strict=True):
        entry_id = entry_of[got.config["configurable"]["checkpoint_id"]]
        context = build_context(tree, entry_id).messages
        assert [_pi_said(m) for m in context] == [_said(m) for m in want.values.get("messages", [])]
        on_paths.update(e.id for e in tree.path(entry_id) if isinstance(e, MessageEntry))
    stored = {e.id for e in tree.entries() if isinstance(e, MessageEntry)}
    assert stored == on_paths  # no message entry off every checkpoint's path
    lists = {
        s.config["configurable"]["checkpoint_id"]: s.values.get("messages", []) for s in expected
    }
    added = 0
    for state in expected:
        messages = state.values.get("messages", [])
        parent = state.parent_config
        before = [] if parent is None else lists[parent["configurable"]["checkpoint_id"]]
        keep = 0
        while keep < min(len(before), len(messages)) and before[keep] == messages[keep]:
            keep += 1
        added += len(messages) - keep
    assert len(stored) <= added


# ---------------------------------------------------------------------------- older threads

OLD_THREAD = Path(__file__).parent / "langgraph_v1"


@pytest.mark.parametrize("kind", ["sqlite-file", "postgres"])
def test_thread_written_before_the_compact_entries_still_loads(kind: str, tmp_path: Path) -> None:
    """A thread stored by the saver of commit 678b173 (whole metadata, rest and versions
    in every checkpoint's entry: tests/langgraph_v1/make_thread.py) lists every checkpoint as
    that saver did, and a run resumed on it stores the new, shorter entries beside."""
    import json

    from langchain_core.messages import messages_to_dict

    from ptree import load

    tree = load(OLD_THREAD / "thread.jsonl")
    assert (OLD_THREAD / "thread.jsonl").read_text().count('"metadata":') == 15
    url = store_url_of(kind, tmp_path)
    with open_store(url) as store:
        store.save(tree)
    expected = json.loads((OLD_THREAD / "expected.json").read_text())
    config: Any = {"configurable": {"thread_id": "chat"}}
    with TreeSaver(url) as saver:
        listed = [
            {
                "id": t.config["configurable"]["checkpoint_id"],
                "parent": t.parent_config and t.parent_config["configurable"]["checkpoint_id"],
                "checkpoint": {k: v for k, v in t.checkpoint.items() if k != "channel_values"},
                "metadata": t.metadata,
                "messages": messages_to_dict(t.checkpoint["channel_values"].get("messages", [])),
                "writes": [[task, channel] for task, channel, _ in t.pending_writes or []],
            }
            for t in saver.list(config)
        ]
        assert json.loads(json.dumps(listed)) == expected
        graph = _graph(saver)
        out = graph.invoke({"messages": [HumanMessage("question 3", id="h3")]}, config)
        before = [m["data"]["content"] for m in expected[0]["messages"]]
        assert [m.content for m in out["messages"]] == [*before, "question 3"]
        history = list(graph.get_state_history(config))
        assert len(history) > len(expected)
        newest = history[0].metadata
        assert newest is not None
        assert newest["step"] > expected[0]["metadata"]["step"]
    with TreeSaver(url) as saver:  # the new entries read back beside the old
        again = list(_graph(saver).get_state_history(config))
        assert [(s.metadata, s.values, s.next) for s in again] == [
            (s.metadata, s.values, s.next) for s in history
        ]
