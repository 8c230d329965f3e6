"""LibreChat exports read by ``ptree.formats.librechat``.

The exports are written by hand in the shape LibreChat's "Export conversation"
(JSON) writes: ``{conversationId, title, endpoint, recursive, messages}`` with
``messageId``, ``parentMessageId`` (``00000000-…`` for a root), ``isCreatedByUser``,
``sender``, ``text``, ``createdAt`` and, with ``recursive``, nested ``children``.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ptree import MessageEntry
from ptree.formats import ImportFormatError, librechat
from ptree.formats._common import parse_deep_json

ROOT = librechat.NO_PARENT


def m(
    mid: str,
    parent: str | None,
    user: bool,
    text: str,
    second: int,
    children: list[dict[str, Any]] | None = None,
    **more: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "messageId": mid,
        "conversationId": "conv-1",
        "isCreatedByUser": user,
        "sender": "User" if user else "GPT-4o",
        "text": text,
        "error": False,
        "unfinished": False,
        "createdAt": f"2024-05-01T16:35:{second:02d}.000Z",
        "model": None if user else "gpt-4o",
        "endpoint": "openAI",
        **more,
    }
    if parent is not None:
        out["parentMessageId"] = parent
    if children is not None:
        out["children"] = children
    return out


def tree_export() -> dict[str, Any]:
    """u1 ─ a1 ─┬ u2 "thanks" ─┬ a2 (10s)
    │              └ a3 (12s, regenerated) ─ u4 (14s) ─ a4 (15s, newest)
    └ u3 "lol" (11s) ─ a5 (13s)"""
    a4 = m("a4", "u4", False, "Sometimes.", 15, [])
    u4 = m("u4", "a3", True, "does coding make you happy", 14, [a4])
    a2 = m("a2", "u2", False, "You're welcome!", 10, [])
    a3 = m("a3", "u2", False, "You're welcome! Happy coding!", 12, [u4])
    u2 = m("u2", "a1", True, "thanks", 9, [a2, a3])
    a5 = m("a5", "u3", False, "Glad it amused you.", 13, [])
    u3 = m("u3", "a1", True, "lol", 11, [a5])
    a1 = m("a1", "u1", False, "Create it with python3 -m venv venv.", 8, [u2, u3])
    u1 = m("u1", ROOT, True, "How do I use source venv/bin/activate?", 7, [a1])
    return {
        "conversationId": "conv-1",
        "endpoint": "openAI",
        "title": "Venv trouble",
        "exportAt": "13:18:04 GMT-0400",
        "branches": True,
        "recursive": True,
        "options": {"model": "gpt-4o"},
        "messages": [u1],
    }


def flat(export: dict[str, Any]) -> dict[str, Any]:
    """The same conversation as LibreChat's non-recursive export: a flat list."""
    out: list[dict[str, Any]] = []
    stack = list(reversed(export["messages"]))
    while stack:
        msg = stack.pop()
        out.append({k: v for k, v in msg.items() if k != "children"})
        stack.extend(reversed(msg.get("children", [])))
    return dict(export, recursive=False, messages=out)


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


class TestRead:
    @pytest.mark.parametrize("shape", ["tree", "flat"])
    def test_every_branch_and_the_newest_leaf(self, shape: str, tmp_path: Path) -> None:
        """All nine messages under their parents; the leaf is a4, the newest."""
        data = tree_export() if shape == "tree" else flat(tree_export())
        tree = librechat.read(write(tmp_path / "e.json", data)).tree
        tree._check()
        parents = {
            "u1": None,
            "a1": "u1",
            "u2": "a1",
            "u3": "a1",
            "a2": "u2",
            "a3": "u2",
            "u4": "a3",
            "a4": "u4",
            "a5": "u3",
        }
        assert {e.id: e.parent_id for e in tree.entries() if isinstance(e, MessageEntry)} == parents
        assert [e.id for e in tree.path()] == ["u1", "a1", "u2", "a3", "u4", "a4"]
        assert tree.ids()[-1] == "a4"
        assert tree.session_name == "Venv trouble"
        a4 = tree["a4"]
        assert isinstance(a4, MessageEntry)
        assert a4.message["model"] == "gpt-4o"
        assert a4.message["provider"] == "openAI"
        assert a4.extra["librechat"]["sender"] == "GPT-4o"
        assert tree.header is not None
        assert tree.header.id == "conv-1"

    def test_linear_variant(self, tmp_path: Path) -> None:
        """Messages without parentMessageId follow one another in list order."""
        msgs = [
            m("x1", None, True, "a", 1),
            m("x2", None, False, "b", 2),
            m("x3", None, True, "c", 3),
        ]
        tree = librechat.read(
            write(tmp_path / "e.json", {"conversationId": "c", "messages": msgs})
        ).tree
        assert [e.id for e in tree.path()] == ["x1", "x2", "x3"]

    def test_agent_content_with_tool_calls(self, tmp_path: Path) -> None:
        """think → thinking, tool_call → toolCall and a result, the text after it a
        second assistant message."""
        content = [
            {"type": "think", "think": "Need the weather."},
            {"type": "text", "text": "Checking."},
            {
                "type": "tool_call",
                "tool_call": {
                    "id": "t1",
                    "name": "weather",
                    "args": '{"city": "Oslo"}',
                    "output": "3 C, rain",
                },
            },
            {"type": "text", "text": {"value": "It is 3 C and raining."}},
        ]
        msgs = [
            m("q", ROOT, True, "Weather in Oslo?", 1),
            m("r", "q", False, "", 2, content=content, unfinished=True),
        ]
        tree = librechat.read(
            write(tmp_path / "e.json", {"conversationId": "c", "messages": msgs})
        ).tree
        assert [e.id for e in tree.path()] == ["q", "r", "r#2", "r#3"]
        first, result, second = (tree[i] for i in ("r", "r#2", "r#3"))
        assert isinstance(first, MessageEntry)
        assert isinstance(result, MessageEntry)
        assert isinstance(second, MessageEntry)
        assert first.message["content"] == [
            {"type": "thinking", "thinking": "Need the weather."},
            {"type": "text", "text": "Checking."},
            {"type": "toolCall", "id": "t1", "name": "weather", "arguments": {"city": "Oslo"}},
        ]
        assert first.message["stopReason"] == "toolUse"
        assert result.message["toolCallId"] == "t1"
        assert result.message["content"] == [{"type": "text", "text": "3 C, rain"}]
        assert second.message["content"] == [{"type": "text", "text": "It is 3 C and raining."}]
        assert second.message["stopReason"] == "aborted"  # unfinished

    def test_long_conversation_nests_deeper_than_json_loads_goes(self, tmp_path: Path) -> None:
        """A recursive export of 3,000 messages nests 6,000 levels deep: it is read
        (without recursion) and every message is on the path."""
        parts: list[str] = []
        closing: list[str] = []
        for i in range(3000):
            msg = m(f"m{i}", f"m{i - 1}" if i else ROOT, i % 2 == 0, str(i), 0)
            parts.append(json.dumps(msg)[:-1] + ', "children": [')
            closing.append("]}")
        doc = (
            '{"conversationId": "c", "recursive": true, "messages": ['
            + "".join(parts)
            + "".join(closing)
            + "]}"
        )
        path = tmp_path / "deep.json"
        path.write_text(doc, encoding="utf-8")
        tree = librechat.read(path).tree
        assert len(tree.path()) == 3000
        assert tree.leaf_id == "m2999"


class TestBadInput:
    def test_not_json(self, tmp_path: Path) -> None:
        bad = tmp_path / "e.json"
        bad.write_text('{"conversationId": "c",\n "messages": [oops]}', encoding="utf-8")
        with pytest.raises(ImportFormatError) as caught:
            librechat.read(bad)
        assert caught.value.line == 2
        assert "not JSON" in caught.value.reason

    @pytest.mark.parametrize(
        ("data", "where"),
        [
            ({"conversationId": "c"}, "messages: expected a list of messages, found null"),
            ({"conversationId": "c", "messages": [5]}, "messages[0]: expected a message object"),
            (
                {"conversationId": "c", "messages": [{"text": "x"}]},
                "messages[0]: a message needs a string 'messageId'",
            ),
            (
                {
                    "conversationId": "c",
                    "recursive": True,
                    "messages": [
                        {"messageId": "a", "children": [{"messageId": "b", "children": 3}]}
                    ],
                },
                "messages[0].children[0].children: expected a list",
            ),
            ([1, 2], "expected a LibreChat export object, found a list"),
        ],
    )
    def test_wrong_shape_says_where(self, data: Any, where: str, tmp_path: Path) -> None:
        with pytest.raises(ImportFormatError, match=r"e\.json: ") as caught:
            librechat.read(write(tmp_path / "e.json", data))
        assert where in str(caught.value)

    def test_deeply_nested_field(self, tmp_path: Path) -> None:
        """A field nested 20,000 deep is read (explicit stack) but cannot be stored:
        an ImportFormatError naming the message, never a RecursionError."""
        deep = '{"a":' * 20_000 + "1" + "}" * 20_000
        doc = (
            '{"conversationId": "c", "messages": [{"messageId": "a", "isCreatedByUser": '
            f'true, "text": "x", "files": {deep}}}]}}'
        )
        path = tmp_path / "e.json"
        path.write_text(doc, encoding="utf-8")
        with pytest.raises(ImportFormatError, match="nested deeper than 100 levels") as caught:
            librechat.read(path)
        assert caught.value.where == "messages[0]"

    def test_cycle(self, tmp_path: Path) -> None:
        msgs = [m("a", "b", True, "x", 1), m("b", "a", False, "y", 2)]
        with pytest.raises(ImportFormatError, match="cycle"):
            librechat.read(write(tmp_path / "e.json", {"conversationId": "c", "messages": msgs}))


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


class TestDeepParser:
    @settings(max_examples=300)
    @given(json_values, st.booleans())
    def test_same_as_json_loads(self, value: Any, indent: bool) -> None:
        """The explicit-stack parser reads what json.loads reads, to the same value."""
        text = json.dumps(value, indent=2 if indent else None)
        assert parse_deep_json(text) == json.loads(text)

    @settings(max_examples=300)
    @given(st.text(alphabet='{}[],:"0123456789.-eEtrufalsn \\', max_size=30))
    @example("1E309:")
    def test_refuses_what_json_loads_refuses(self, text: str) -> None:
        """On arbitrary text both accept or both refuse, and agree when they accept."""
        try:
            expected = json.loads(text)
        except (ValueError, RecursionError):
            # The first problem in reading order is the one reported: in "1E309:" that
            # is the number out of range, before the extra data json.loads names.
            with pytest.raises(ValueError, match=r"not JSON|out of range"):
                parse_deep_json(text)
        else:
            try:
                assert parse_deep_json(text) == expected
            except ValueError:
                # json.loads reads 1e400 as infinity; ptree refuses it (no JSON value).
                assert "inf" in repr(expected)


class TestCollectorPause:
    """An import pauses the cyclic garbage collector and always gives it back as it was."""

    def export(self, tmp_path: Path, *messages: dict[str, Any]) -> Path:
        path = tmp_path / "export.json"
        path.write_text(json.dumps({"conversationId": "c", "messages": list(messages)}))
        return path

    def test_paused_while_reading_and_enabled_after(self, tmp_path: Path) -> None:
        """During a read the collector is off (seen by the report callback); after, on."""
        seen: list[bool] = []
        odd = m("a1", None, False, "", 1, content=[{"type": "odd"}])
        librechat.read(self.export(tmp_path, odd), on_report=lambda _: seen.append(gc.isenabled()))
        assert seen == [False]
        assert gc.isenabled()

    def test_enabled_after_an_error(self, tmp_path: Path) -> None:
        """A refused export leaves the collector on."""
        with pytest.raises(ImportFormatError):
            librechat.read(self.export(tmp_path, m("u1", None, True, "hi", 1, parentMessageId=3)))
        assert gc.isenabled()

    def test_a_callers_pause_is_kept(self, tmp_path: Path) -> None:
        """A caller that paused the collector finds it still paused."""
        path = self.export(tmp_path, m("u1", None, True, "hi", 1))
        gc.disable()
        try:
            librechat.read(path)
            assert not gc.isenabled()
        finally:
            gc.enable()
