"""The ChatGPT and Open WebUI importer fixes of issue 14.

The exports are written by hand in the shape the tools write (node and field names
as in real ``conversations.json`` and Open WebUI chat exports); expected values are
read off them by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ptree
from ptree import Custom, MessageEntry
from ptree.formats import chatgpt, openwebui


def node(
    nid: str, parent: str | None, children: list[str], message: dict[str, Any] | None
) -> dict[str, Any]:
    return {"id": nid, "message": message, "parent": parent, "children": children}


def msg(
    nid: str, role: str, content: dict[str, Any], t: float | None = 1_700_000_000.0, **more: Any
) -> dict[str, Any]:
    metadata = more.pop("metadata", {})
    return {
        "id": nid,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": t,
        "update_time": None,
        "content": content,
        "status": more.pop("status", "finished_successfully"),
        "end_turn": True,
        "weight": 1.0,
        "metadata": metadata,
        "recipient": "all",
        **more,
    }


def text(*parts: str) -> dict[str, Any]:
    return {"content_type": "text", "parts": list(parts)}


CONTEXT = {
    "content_type": "user_editable_context",
    "user_profile": "The user provided the following information about themselves: I teach.",
    "user_instructions": "The user provided the additional info about how they would like "
    "you to respond: Be brief.",
}


def conversation(current: str | None) -> dict[str, Any]:
    """root ─ ctx (hidden custom instructions) ─ u1 ─ a1 ─┬ u2 ─ a2 (interrupted, cited)
    └ h (hidden, newest)"""
    mapping = {
        "root": node("root", None, ["ctx"], None),
        "ctx": node(
            "ctx",
            "root",
            ["u1"],
            msg(
                "ctx",
                "user",
                CONTEXT,
                None,
                metadata={
                    "is_visually_hidden_from_conversation": True,
                    "is_user_system_message": True,
                },
            ),
        ),
        "u1": node("u1", "ctx", ["a1"], msg("u1", "user", text("Find me a source"))),
        "a1": node(
            "a1",
            "u1",
            ["u2", "h"],
            msg("a1", "assistant", text("Which topic?"), metadata={"model_slug": "gpt-4o"}),
        ),
        "u2": node("u2", "a1", ["a2"], msg("u2", "user", text("Tides"))),
        "a2": node(
            "a2",
            "u2",
            [],
            msg(
                "a2",
                "assistant",
                text("Tides are caused by"),
                status="finished_partial_completion",
                metadata={
                    "finish_details": {"type": "interrupted"},
                    "citations": [
                        {
                            "start_ix": 0,
                            "end_ix": 5,
                            "metadata": {"url": "https://example.org/tides"},
                        }
                    ],
                    "content_references": [{"matched_text": "Tides", "type": "webpage"}],
                },
            ),
        ),
        "h": node(
            "h",
            "a1",
            [],
            msg(
                "h",
                "system",
                text("hidden tool state"),
                metadata={"is_visually_hidden_from_conversation": True},
            ),
        ),
    }
    conv: dict[str, Any] = {
        "title": "Tides",
        "create_time": 1_700_000_000.0,
        "id": "c-1",
        "conversation_id": "c-1",
        "mapping": mapping,
    }
    if current is not None:
        conv["current_node"] = current
    return conv


class TestChatgptFixes:
    def test_custom_instructions_keep_their_text(self) -> None:
        """--include-hidden: the user_editable_context node keeps both its texts."""
        [s] = list(chatgpt.sessions([conversation("a2")], include_hidden=True, cwd="/"))
        ctx = s.tree["ctx"]
        assert isinstance(ctx, Custom)
        assert ctx.custom_type == "chatgpt.hidden"
        assert ctx.data == {
            "role": "user",
            "text": CONTEXT["user_profile"] + "\n" + CONTEXT["user_instructions"],
        }

    def test_leaf_stays_on_the_branch_of_a_hidden_current_node(self, tmp_path: Path) -> None:
        """current_node is the hidden h: the leaf is a1, written last so that Pi's CLI
        (which takes the last entry) opens the same branch; no leaf record."""
        [s] = list(chatgpt.sessions([conversation("h")], cwd="/"))
        assert s.tree.leaf_id == "a1"
        assert s.tree.ids()[-1] == "a1"
        ptree.dump(s.tree, tmp_path / "s.jsonl")
        lines = (tmp_path / "s.jsonl").read_text(encoding="utf-8").splitlines()
        assert json.loads(lines[-1])["id"] == "a1"
        assert ptree.load(tmp_path / "s.jsonl").leaf_id == "a1"

    def test_leaf_without_current_node_follows_the_newest_child(self) -> None:
        """No current_node: the newest child at every step, here the hidden h, so the
        leaf is its parent a1, not the older branch's a2."""
        [s] = list(chatgpt.sessions([conversation(None)], cwd="/"))
        assert s.tree.leaf_id == "a1"
        assert s.tree.ids()[-1] == "a1"

    def test_interrupted_answer_keeps_status_and_citations(self) -> None:
        """a2 was stopped: stopReason aborted; status, finish details, citations and
        content references kept on the entry."""
        [s] = list(chatgpt.sessions([conversation("a2")], cwd="/"))
        a2 = s.tree["a2"]
        assert isinstance(a2, MessageEntry)
        assert a2.message["stopReason"] == "aborted"
        kept = a2.extra["chatgpt"]
        assert kept["status"] == "finished_partial_completion"
        assert kept["finishDetails"] == {"type": "interrupted"}
        assert kept["citations"][0]["metadata"]["url"] == "https://example.org/tides"
        assert kept["contentReferences"] == [{"matched_text": "Tides", "type": "webpage"}]
        a1 = s.tree["a1"]
        assert isinstance(a1, MessageEntry)
        assert a1.message["stopReason"] == "stop"
        assert "chatgpt" not in a1.extra

    def test_same_export_same_bytes(self, tmp_path: Path) -> None:
        """The session id derives from the conversation: two imports, same bytes."""
        for name in ("a", "b"):
            [s] = list(chatgpt.sessions([conversation("a2")], cwd="/"))
            ptree.dump(s.tree, tmp_path / f"{name}.jsonl")
        assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
        [other] = list(
            chatgpt.sessions([dict(conversation("a2"), id="c-2", conversation_id="c-2")], cwd="/")
        )
        assert other.tree.header is not None
        assert s.tree.header is not None
        assert other.tree.header.id != s.tree.header.id


REASONING = (
    '<details type="reasoning" done="true" duration="3">\n'
    "<summary>Thought for 3 seconds</summary>\n"
    "> The user asks for 2+2.\n"
    ">\n"
    "> That is 4.\n"
    "</details>\n"
    "The answer is 4."
)


def webui(answer: dict[str, Any]) -> dict[str, Any]:
    messages = {
        "m1": {
            "id": "m1",
            "parentId": None,
            "childrenIds": ["m2"],
            "role": "user",
            "content": "What is 2+2?",
            "timestamp": 1_700_000_000,
        },
        "m2": {
            "id": "m2",
            "parentId": "m1",
            "childrenIds": [],
            "role": "assistant",
            "timestamp": 1_700_000_005,
            "model": "qwq:32b",
            **answer,
        },
    }
    return {
        "id": "w-1",
        "title": "Sums",
        "created_at": 1_700_000_000,
        "chat": {"history": {"currentId": "m2", "messages": messages}},
    }


class TestOpenWebuiFixes:
    def test_reasoning_details_become_thinking(self) -> None:
        """The <details type="reasoning"> block is a thinking block (quoting and summary
        removed); only the answer is text, so it is not sent back as the answer."""
        [s] = list(openwebui.sessions([webui({"content": REASONING, "done": True})], cwd="/"))
        m2 = s.tree["m2"]
        assert isinstance(m2, MessageEntry)
        assert m2.message["content"] == [
            {"type": "thinking", "thinking": "The user asks for 2+2.\n\nThat is 4."},
            {"type": "text", "text": "The answer is 4."},
        ]
        assert m2.message["stopReason"] == "stop"

    def test_structured_output(self) -> None:
        """A structured output (reasoning and message items) is read instead of the text."""
        output = [
            {
                "type": "reasoning",
                "id": "r1",
                "summary": [],
                "content": [{"type": "output_text", "text": "Add them."}],
            },
            {
                "type": "message",
                "id": "o1",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "4"}],
            },
        ]
        [s] = list(openwebui.sessions([webui({"content": "4", "output": output})], cwd="/"))
        m2 = s.tree["m2"]
        assert isinstance(m2, MessageEntry)
        assert m2.message["content"] == [
            {"type": "thinking", "thinking": "Add them."},
            {"type": "text", "text": "4"},
        ]

    def test_interrupted_answer_keeps_sources(self) -> None:
        """done: false is an aborted answer; its sources are kept on the entry."""
        sources = [
            {
                "source": {"name": "wiki"},
                "document": ["2+2=4"],
                "metadata": [{"source": "https://example.org"}],
            }
        ]
        [s] = list(
            openwebui.sessions(
                [webui({"content": "The answ", "done": False, "sources": sources})], cwd="/"
            )
        )
        m2 = s.tree["m2"]
        assert isinstance(m2, MessageEntry)
        assert m2.message["stopReason"] == "aborted"
        assert m2.extra["openwebui"] == {"sources": sources, "done": False}
