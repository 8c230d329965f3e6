"""LibreChat exports read by ``ptree.formats.librechat``.

The exports are written by hand in the shape LibreChat's "Export conversation"
(JSON) writes: ``{conversationId, title, endpoint, recursive, messages}`` with
``messageId``, ``parentMessageId`` (``00000000-…`` for a root), ``isCreatedByUser``,
``sender``, ``text``, ``createdAt`` and, with ``recursive``, nested ``children``.
"""

from __future__ import annotations

import gc
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ptree import MessageEntry, SessionTree, dump
from ptree.formats import ImportFormatError, librechat
from ptree.formats._common import parse_deep_json

from .helpers import missing

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

    def test_agent_content_with_tool_calls(self, path_kind: str, tmp_path: Path) -> None:
        """think → thinking, tool_call → toolCall and a result, the text after it a
        second assistant message (whichever way the reader goes)."""
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
        assert first.extra["librechat"]["sender"] == "GPT-4o"
        assert "librechat" not in result.extra
        assert "librechat" not in second.extra

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


# ------------------------------------------- the direct path, in C and in Python

USAGE = (
    '{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,'
    '"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}'
)


@pytest.fixture(params=["c", "python", "general"])
def path_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which way the reader goes: the direct path in C, the direct path in Python (the C
    module switched off, as where no compiler was found), or the general path (nodes
    and ``assemble``, the direct path switched off)."""
    kind: str = request.param
    if kind == "c" and not librechat.COMPILED:  # pragma: no cover - built by pip install
        missing("ptree/formats/_librechat.c was not built here")
    if kind != "c":
        monkeypatch.setattr(librechat, "_librechat", None)
    if kind == "general":
        monkeypatch.setattr(librechat._Reader, "direct", lambda self: None)
    return kind


def dumped(src: Path) -> list[str]:
    """The lines of the Pi file ``ptree import`` writes for ``src``."""
    out = src.with_suffix(".jsonl")
    dump(librechat.read(src).tree, out, overwrite=True)
    return out.read_text(encoding="utf-8").splitlines()


def read_counting_nodes(src: Path) -> tuple[list[str], SessionTree]:
    """The ids of the nodes the reader made for ``src`` (none on the direct path), and
    the tree it read."""
    made: list[str] = []
    real = librechat._Reader.node

    def spy(self: Any, wanted: str, fields: dict[str, Any], where: str) -> Any:
        made.append(wanted)
        return real(self, wanted, fields, where)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(librechat._Reader, "node", spy)
        tree = librechat.read(src).tree
    return made, tree


def at(second: int) -> str:
    return f"2024-05-01T16:35:{second:02d}.000Z"


class TestDirectPath:
    def test_a_plain_export_as_written_by_hand(self, path_kind: str, tmp_path: Path) -> None:
        """A flat export of one message per entry: the title first, then every message
        under its parent, a branch's other replies before the one toward the newest
        message, which is the leaf and last; a message whose parent is missing is a
        root, before the leaf's root.  Every line written out by hand."""
        msgs = [
            {
                "messageId": "u1",
                "parentMessageId": ROOT,
                "isCreatedByUser": True,
                "sender": "User",
                "text": "hi",
                "createdAt": at(1),
            },
            {
                "messageId": "a1",
                "parentMessageId": "u1",
                "isCreatedByUser": False,
                "sender": "GPT-4o",
                "model": None,
                "text": "one",
                "error": True,
                "createdAt": at(2),
            },
            {
                "messageId": "u2",
                "parentMessageId": "a1",
                "isCreatedByUser": True,
                "text": {"value": "again?"},
                "createdAt": at(3),
            },
            {
                "messageId": "a2",
                "parentMessageId": "u2",
                "isCreatedByUser": False,
                "model": "gpt-4o",
                "endpoint": "anthropic",
                "text": "first",
                "createdAt": at(4),
            },
            {
                "messageId": "a3",
                "parentMessageId": "u2",
                "isCreatedByUser": False,
                "model": "gpt-4o",
                "text": "",
                "unfinished": True,
                "createdAt": at(5),
                "files": [{"name": "a.txt"}],
            },
            {
                "messageId": "x1",
                "parentMessageId": "nowhere",
                "isCreatedByUser": True,
                "text": "lost",
                "createdAt": at(0),
            },
        ]
        export = {"conversationId": "c9", "title": "Plans", "endpoint": "openAI", "messages": msgs}
        src = write(tmp_path / "e.json", export)
        assistant = '"role":"assistant","api":"librechat-export"'
        assert dumped(src) == [
            '{"type":"session","version":3,"id":"c9","timestamp":"2024-05-01T16:35:01.000Z",'
            '"cwd":"","importedFrom":{"format":"librechat","conversationId":"c9",'
            '"file":"e.json","title":"Plans"}}',
            '{"type":"session_info","id":"session-name","parentId":null,'
            '"timestamp":"2024-05-01T16:35:01.000Z","name":"Plans"}',
            '{"type":"message","id":"x1","parentId":null,"timestamp":"2024-05-01T16:35:00.000Z",'
            '"message":{"role":"user","content":"lost","timestamp":1714581300000},'
            '"librechat":{"isCreatedByUser":true,"createdAt":"2024-05-01T16:35:00.000Z"}}',
            '{"type":"message","id":"u1","parentId":null,"timestamp":"2024-05-01T16:35:01.000Z",'
            '"message":{"role":"user","content":"hi","timestamp":1714581301000},'
            '"librechat":{"isCreatedByUser":true,"sender":"User",'
            '"createdAt":"2024-05-01T16:35:01.000Z"}}',
            '{"type":"message","id":"a1","parentId":"u1","timestamp":"2024-05-01T16:35:02.000Z",'
            f'"message":{{{assistant},"provider":"openAI","model":"GPT-4o","usage":{USAGE},'
            '"timestamp":1714581302000,"content":[{"type":"text","text":"one"}],'
            '"stopReason":"error","errorMessage":"one"},'
            '"librechat":{"isCreatedByUser":false,"sender":"GPT-4o","model":null,"error":true,'
            '"createdAt":"2024-05-01T16:35:02.000Z"}}',
            '{"type":"message","id":"u2","parentId":"a1","timestamp":"2024-05-01T16:35:03.000Z",'
            '"message":{"role":"user","content":"again?","timestamp":1714581303000},'
            '"librechat":{"isCreatedByUser":true,"createdAt":"2024-05-01T16:35:03.000Z"}}',
            '{"type":"message","id":"a2","parentId":"u2","timestamp":"2024-05-01T16:35:04.000Z",'
            f'"message":{{{assistant},"provider":"anthropic","model":"gpt-4o","usage":{USAGE},'
            '"timestamp":1714581304000,"content":[{"type":"text","text":"first"}],'
            '"stopReason":"stop"},"librechat":{"isCreatedByUser":false,"model":"gpt-4o",'
            '"endpoint":"anthropic","createdAt":"2024-05-01T16:35:04.000Z"}}',
            '{"type":"message","id":"a3","parentId":"u2","timestamp":"2024-05-01T16:35:05.000Z",'
            f'"message":{{{assistant},"provider":"openAI","model":"gpt-4o","usage":{USAGE},'
            '"timestamp":1714581305000,"content":[{"type":"text","text":""}],'
            '"stopReason":"aborted"},"librechat":{"isCreatedByUser":false,"model":"gpt-4o",'
            '"unfinished":true,"createdAt":"2024-05-01T16:35:05.000Z",'
            '"files":[{"name":"a.txt"}]}}',
        ]

    def test_the_plain_case_goes_the_direct_way(self, tmp_path: Path) -> None:
        """The benchmark's shape (a flat export, regenerated answers) never makes nodes."""
        msgs = [m(f"m{i}", f"m{i - 1}" if i else ROOT, i % 2 == 0, str(i), i) for i in range(9)]
        msgs.append(m("m8-again", "m7", True, "again", 9))
        export = {"conversationId": "c", "messages": msgs}
        made, tree = read_counting_nodes(write(tmp_path / "e.json", export))
        assert made == []
        assert list(tree.ids()[-2:]) == ["m8", "m8-again"]  # the newest, the leaf, last
        assert tree.leaf_id == "m8-again"

    def test_an_agents_export_goes_the_direct_way(self, tmp_path: Path) -> None:
        """Structured content (an agent's steps and tool calls) makes no nodes either: its
        entries are a chain, the reply hangs under the chain's last entry, and a
        regenerated answer is a sibling of the first answer's first entry."""
        call = {"type": "tool_call", "tool_call": {"id": "t1", "name": "ls", "args": "{}"}}
        steps = [call, {"type": "text", "text": "done"}]
        msgs = [
            m("q", ROOT, True, "list", 1),
            m("r", "q", False, "", 2, content=steps),
            m("q2", "r", True, "again", 3),
            m("r-again", "q", False, "", 4, content=[{"type": "text", "text": "other"}]),
        ]
        export = {"conversationId": "c", "messages": msgs}
        made, tree = read_counting_nodes(write(tmp_path / "e.json", export))
        assert made == []
        assert [e.id for e in tree.path()] == ["q", "r-again"]  # the newest
        assert [e.id for e in tree.path("q2")] == ["q", "r", "r#2", "r#3", "q2"]
        assert [e.id for e in tree.children("q")] == ["r", "r-again"]


ids = st.sampled_from(["a", "b", "c", "d", "e", "session-name", "a#2"])
stamps = st.sampled_from([at(1), at(2), at(2), "", "1960-01-01T00:00:00Z", "soon", 3, None])
plain_values = st.none() | st.booleans() | st.integers() | st.text(max_size=3)
kept_values = plain_values | st.lists(plain_values, max_size=2)
parts = st.sampled_from(
    [[], [{"type": "text", "text": "t"}], [{"type": "odd"}], "x", [{"type": "think", "think": 1}]]
)
# The parts of an agent's structured content, each kind the reader reads and some it
# reports or refuses: the direct path takes a content of the first kind alone.
read_parts = st.sampled_from(
    [
        {"type": "text", "text": "t"},
        {"type": "text", "text": {"value": "v"}},
        {"type": "text"},
        {"type": "think", "think": "hm"},
        {"type": "think", "think": {"value": 3}},
        {"type": "error", "error": "bad"},
        {"type": "tool_call", "tool_call": {"id": "c1", "name": "ls", "args": '{"a": 1}'}},
        {"type": "tool_call", "tool_call": {"id": "", "name": 5, "args": "not json", "output": 7}},
        {"type": "tool_call", "tool_call": {"args": {"x": [1, {"y": None}]}, "output": "out"}},
        {"type": "tool_call", "tool_call": {"id": "c2", "args": None, "output": {"k": [1]}}},
        {"type": "tool_call", "tool_call": {"id": "c3", "args": [1], "output": None}},
    ]
)
odd_parts = st.sampled_from(
    [{"type": "odd"}, {"type": "tool_call", "tool_call": "x"}, {"text": "no type"}, "x", 5]
)
structured = st.lists(read_parts, min_size=1, max_size=5) | st.lists(
    read_parts | odd_parts, min_size=1, max_size=4
)


@st.composite
def messages_of(draw: st.DrawFn, plain: bool) -> dict[str, Any]:
    """A message; ``plain``: one the direct path takes (its own id given by the caller,
    a link to an id or none, no structured content or children)."""
    out: dict[str, Any] = {"messageId": draw(ids | st.sampled_from(["", 5]))}
    link = draw(ids | st.sampled_from([ROOT, None, "missing", "absent"] + ([] if plain else [7])))
    if link != "absent":
        out["parentMessageId"] = link
    out["isCreatedByUser"] = draw(st.sampled_from([True, False, False, None, "yes"]))
    for name, values in (
        ("sender", st.sampled_from(["User", "GPT", "", None])),
        ("model", st.sampled_from(["gpt-4o", "", None, 0, [1]])),
        ("endpoint", st.sampled_from(["openAI", "", None, 5])),
        ("text", st.sampled_from(["hi", "", {"value": "v"}, {"value": 3}, 5])),
        ("createdAt", stamps),
        ("error", st.booleans()),
        ("unfinished", st.booleans()),
        ("files", kept_values),
        ("content", st.sampled_from([[], "x"]) | structured if plain else parts | structured),
        ("children", st.sampled_from([[], None] if plain else [[], None, "bad"])),
    ):
        if draw(st.booleans()):
            out[name] = draw(values)
    return out


@st.composite
def exports(draw: st.DrawFn) -> Any:
    plain = draw(st.booleans())
    msgs: list[Any] = draw(
        st.lists(
            messages_of(plain) if plain else messages_of(plain) | st.sampled_from([5, "x"]),
            max_size=7,
        )
    )
    if plain:
        # ("a#2": the id the second entry of a's structured content would take)
        order = draw(st.permutations(["a", "b", "c", "d", "e", "f", "a#2"]))
        for x, mid in zip(msgs, order, strict=False):
            x["messageId"] = mid
    export: dict[str, Any] = {"conversationId": draw(st.sampled_from(["c", "", None]))}
    if draw(st.booleans()):
        export["title"] = draw(st.sampled_from(["T", "", None, 4]))
    if draw(st.booleans()):
        export["endpoint"] = draw(st.sampled_from(["anthropic", "", 7]))
    if draw(st.booleans()) and all(type(x) is dict for x in msgs):
        # A tree export: each message under the first earlier one it names.
        roots: list[dict[str, Any]] = []
        by_id: dict[Any, dict[str, Any]] = {}
        for x in msgs:
            x["children"] = []
            parent = by_id.get(x.get("parentMessageId"))
            (roots if parent is None else parent["children"]).append(x)
            by_id.setdefault(x.get("messageId"), x)
        export["recursive"] = draw(st.booleans())
        msgs = roots
    export["messages"] = msgs
    return export


def outcome(src: Path) -> Any:
    """The file ``ptree import`` writes and what was reported, or the error in full."""
    reports: list[str] = []
    try:
        out = src.with_suffix(".jsonl")
        dump(librechat.read(src, on_report=reports.append).tree, out, overwrite=True)
    except ImportFormatError as exc:
        return ("error", str(exc), exc.line, exc.where, exc.record_id, reports)
    return (out.read_text(encoding="utf-8"), reports)


def outcomes(export: Any) -> dict[str, Any]:
    """:func:`outcome` of ``export`` each way the reader can go: the general path, the
    direct path in Python, and in C (where it is built)."""
    got = {}
    with tempfile.TemporaryDirectory() as folder:
        src = write(Path(folder) / "e.json", export)
        for kind in ("general", "python", "c"):
            with pytest.MonkeyPatch.context() as patch:
                if kind != "c":
                    patch.setattr(librechat, "_librechat", None)
                if kind == "general":
                    patch.setattr(librechat._Reader, "direct", lambda self: None)
                got[kind] = outcome(src)
    return got


@settings(max_examples=400, deadline=None)
@given(exports())
def test_every_path_writes_the_same_file(export: Any) -> None:
    """On any export, valid or not, the direct path in C and in Python give what the
    general path gives: the same file byte for byte, the same reports, or the same
    error (reason, place, record)."""
    got = outcomes(export)
    assert got["python"] == got["general"]
    assert got["c"] == got["general"]


@pytest.mark.parametrize("depth", [90, 94, 95, 96, 97, 98, 120])
@pytest.mark.parametrize("where", ["args", "args text", "kept"])
def test_every_path_agrees_at_the_depth_limit(depth: int, where: str) -> None:
    """A tool call's arguments (an object, or its JSON text) or a kept field nested
    around freeze's limit: the direct paths refuse exactly what the general path
    refuses (it then names the message), and store the same file otherwise."""
    deep: Any = 1
    for _ in range(depth):
        deep = [deep]
    args: Any = {"a": deep} if where != "kept" else "{}"
    if where == "args text":
        args = json.dumps(args)
    answer = m("r", "q", False, "", 2, content=[{"type": "tool_call", "tool_call": {"args": args}}])
    if where == "kept":
        answer["files"] = deep
    export = {"conversationId": "c", "messages": [m("q", ROOT, True, "hi", 1), answer]}
    got = outcomes(export)
    assert got["python"] == got["general"]
    assert got["c"] == got["general"]


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from("0123456789"), min_size=17, max_size=17),
    st.sampled_from(["", "x", "Z", "+01:00", "0Z"]),
)
def test_times_read_in_c_as_iso_to_ms_reads_them(digits: list[str], tail: str) -> None:
    """The C reader's own reading of ``yyyy-mm-ddThh:mm:ss.sssZ`` (any digits, a day 31 in
    any month, month 13, hour 24 ...) gives what ``iso_to_ms`` gives, or leaves the text
    to it; every time of that shape in range is read in C."""
    if not librechat.COMPILED:  # pragma: no cover - built by pip install
        missing("ptree/formats/_librechat.c was not built here")
    from ptree.context import iso_to_ms
    from ptree.formats import _librechat

    d = "".join(digits)
    text = f"{d[:4]}-{d[4:6]}-{d[6:8]}T{d[8:10]}:{d[10:12]}:{d[12:14]}.{d[14:17]}" + (tail or "Z")
    got = _librechat.ms_fixed(text)
    if got is not None:
        assert got == iso_to_ms(text)
    year, month, day, hour, minute, second = (
        int(d[a:b]) for a, b in zip((0, 4, 6, 8, 10, 12), (4, 6, 8, 10, 12, 14), strict=True)
    )
    plain = (tail or "Z") == "Z"
    in_range = year >= 1 and 1 <= month <= 12 and 1 <= day <= 31 and hour < 24
    assert (got is not None) == (plain and in_range and minute < 60 and second < 60)
