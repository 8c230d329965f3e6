"""Tests of build_context and to_provider_messages: Pi's vectors, edge cases, a reference."""

from __future__ import annotations

import calendar
import json
import sys
from datetime import datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptree
from ptree import (
    ActiveToolsChange,
    BranchSummary,
    Compaction,
    Context,
    CustomMessage,
    Entry,
    MessageEntry,
    ModelChange,
    SessionTree,
    ThinkingLevelChange,
    build_context,
)
from ptree.context import ModelRef, to_provider_messages

from .strategies import trees

TS = "2026-01-01T00:00:00.000Z"
TS_MS = 1767225600000


def u(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def a(text: str, provider: str = "anthropic", model: str = "claude-opus-4-5") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "provider": provider,
        "model": model,
    }


def chain(*steps: tuple[str, Any]) -> SessionTree:
    """A straight path: ("u", "1") is a user message with id "1", ("C", ("5", "3")) a
    compaction with id "5" keeping from "3"."""
    t = SessionTree()
    for kind, arg in steps:
        if kind == "u":
            t = t.append(u(arg), id=arg, timestamp=TS)
        elif kind == "a":
            t = t.append(a(arg), id=arg, timestamp=TS)
        elif kind == "C":
            cid, first = arg
            t = t.append_compaction(f"summary {cid}", first, 1000, id=cid, timestamp=TS)
        else:  # pragma: no cover - test helper misuse
            raise AssertionError(kind)
    return t


def texts(ctx: Context) -> list[str]:
    """A readable picture of the context: the text of each message, or its role."""
    out = []
    for m in ctx.messages:
        if m["role"] == "user":
            out.append(m["content"])
        elif m["role"] == "assistant":
            out.append(m["content"][0]["text"])
        elif m["role"] == "compactionSummary":
            out.append(m["summary"])
        else:
            out.append(m["role"])
    return out


class TestPiVectors:
    """The vectors of Pi's own tests, as listed in docs/pi-session-format.md."""

    def test_compaction_keeps_from_first_kept(self) -> None:
        """1u 2a 3u 4a C5(first=3) 6u 7a → summary, 3, 4, 6, 7."""
        t = chain(
            ("u", "1"),
            ("a", "2"),
            ("u", "3"),
            ("a", "4"),
            ("C", ("5", "3")),
            ("u", "6"),
            ("a", "7"),
        )
        assert texts(build_context(t)) == ["summary 5", "3", "4", "6", "7"]

    def test_compaction_keeping_everything_before_it(self) -> None:
        """1 2 C3(first=1) 4 → summary, 1, 2, 4."""
        t = chain(("u", "1"), ("a", "2"), ("C", ("3", "1")), ("u", "4"))
        assert texts(build_context(t)) == ["summary 3", "1", "2", "4"]

    def test_chained_compactions_only_latest_counts(self) -> None:
        """1 2 C3(first=1) 4 5 C6(first=4) 7 → summary of C6, then 4, 5, 7."""
        t = chain(
            ("u", "1"),
            ("a", "2"),
            ("C", ("3", "1")),
            ("u", "4"),
            ("a", "5"),
            ("C", ("6", "4")),
            ("u", "7"),
        )
        assert texts(build_context(t)) == ["summary 6", "4", "5", "7"]

    def test_older_compaction_inside_kept_range_gives_nothing(self) -> None:
        """1 2 C3(first=1) 4 C5(first=2) 6 → summary of C5, then 2, 4, 6 (C3 gives nothing)."""
        t = chain(
            ("u", "1"), ("a", "2"), ("C", ("3", "1")), ("u", "4"), ("C", ("5", "2")), ("u", "6")
        )
        assert texts(build_context(t)) == ["summary 5", "2", "4", "6"]

    def test_branches(self) -> None:
        """Branches 1→2→3 and 2→4: leaf 3 gives 1, 2, 3; leaf 4 gives 1, 2, 4."""
        t = chain(("u", "1"), ("a", "2"), ("u", "3"))
        t = t.move_to("2").append(u("4"), id="4")
        assert texts(build_context(t, "3")) == ["1", "2", "3"]
        assert texts(build_context(t)) == ["1", "2", "4"]
        assert texts(build_context(t, "4")) == ["1", "2", "4"]

    def test_branch_summary(self) -> None:
        """1 2 3 abandoned, branch summary 4 under 2, then 5: leaf 5 → 1, 2, summary, 5."""
        t = chain(("u", "1"), ("a", "2"), ("u", "3"))
        t = t.move_to("2").append_branch_summary("3", "tried 3", id="4", timestamp=TS)
        t = t.append(u("5"), id="5")
        ctx = build_context(t)
        assert texts(ctx) == ["1", "2", "branchSummary", "5"]
        assert ctx.messages[2] == {
            "role": "branchSummary",
            "summary": "tried 3",
            "fromId": "3",
            "timestamp": TS_MS,
        }

    def test_model_from_assistant_message_wins(self) -> None:
        """A model change followed by an assistant message: the message's model wins."""
        t = SessionTree().append_model_change("openai", "gpt-5")
        t = t.append(u("hi")).append(a("hello", "anthropic", "claude-sonnet-4-5"))
        assert build_context(t).model == ModelRef("anthropic", "claude-sonnet-4-5")

    def test_model_change_after_assistant_wins(self) -> None:
        """An assistant message followed by a model change: the change wins."""
        t = SessionTree().append(a("hello", "anthropic", "claude-sonnet-4-5"))
        t = t.append_model_change("openai", "gpt-5")
        assert build_context(t).model == ModelRef("openai", "gpt-5")

    def test_labels_never_reach_the_context(self) -> None:
        """Label and session-info entries give no message and change no state."""
        t = SessionTree().append(u("hi")).append_label("e1", "start")
        t = t.append_session_info("name").append(a("ok"))
        ctx = build_context(t)
        assert texts(ctx) == ["hi", "ok"]


class TestBuildContext:
    """build_context's state, shapes, leaves and errors."""

    def test_empty_tree(self) -> None:
        """An empty tree gives an empty context with the defaults."""
        assert build_context(SessionTree()) == Context((), None, "off", None, None)

    def test_no_leaf(self) -> None:
        """A tree moved above its roots gives an empty context (Pi: leafId null)."""
        t = SessionTree().append(u("hi")).move_to(None)
        assert build_context(t).messages == ()

    def test_unknown_leaf_raises(self) -> None:
        """An unknown leaf id raises UnknownEntryError (a KeyError) carrying the id."""
        with pytest.raises(ptree.UnknownEntryError) as info:
            build_context(SessionTree().append(u("hi")), "nope")
        assert info.value.entry_id == "nope"
        assert isinstance(info.value, KeyError)

    def test_leaf_id_recorded(self) -> None:
        """The context says where it was built."""
        t = chain(("u", "1"), ("a", "2"))
        assert build_context(t).leaf_id == "2"
        assert build_context(t, "1").leaf_id == "1"

    def test_defaults(self) -> None:
        """Without state entries: no model, thinking off, no active tools."""
        ctx = build_context(SessionTree().append(u("hi")))
        assert (ctx.model, ctx.thinking_level, ctx.active_tools) == (None, "off", None)

    def test_state_last_value_wins_over_the_whole_path(self) -> None:
        """Thinking level and active tools take the latest value, even before a compaction."""
        t = SessionTree().append_thinking_level_change("high")
        t = t.append_active_tools_change(["read", "bash"])
        t = t.append(u("1"), id="1").append(a("2"), id="2").append(u("3"), id="3")
        t = t.append_compaction("s", "3", 10)
        ctx = build_context(t)
        assert (ctx.thinking_level, ctx.active_tools) == ("high", ("read", "bash"))
        assert ctx.model == ModelRef("anthropic", "claude-opus-4-5")
        t = t.append_thinking_level_change("low").append_active_tools_change([])
        ctx = build_context(t)
        assert (ctx.thinking_level, ctx.active_tools) == ("low", ())

    def test_state_from_branch_not_taken_is_ignored(self) -> None:
        """State on another branch does not count."""
        t = SessionTree().append(u("1"), id="1").append_thinking_level_change("high")
        t = t.move_to("1").append(u("2"))
        assert build_context(t).thinking_level == "off"

    def test_assistant_without_model_fields_sets_no_model(self) -> None:
        """An assistant message lacking provider or model, as the latest model setter,
        leaves no model (Pi's model then has undefined fields and names none), not the
        model of an earlier change."""
        t = SessionTree().append_model_change("openai", "gpt-5")
        message: dict[str, Any]
        for message in (
            {"role": "assistant", "content": []},
            {"role": "assistant", "content": [], "provider": "x"},
            {"role": "assistant", "content": [], "provider": "x", "model": None},
        ):
            assert build_context(t.append(message)).model is None
            later = t.append(message).append_model_change("p", "m")
            assert build_context(later).model == ModelRef("p", "m")

    def test_assistant_without_model_fields_before_kept_range(self) -> None:
        """Also when the compaction dropped that message: it still was the latest setter."""
        t = SessionTree().append_model_change("openai", "gpt-5")
        t = t.append({"role": "assistant", "content": []}, id="1").append(u("2"), id="2")
        t = t.append_compaction("s", "2", 1)
        assert build_context(t).model is None

    def test_model_from_assistant_before_kept_range(self) -> None:
        """The model of an assistant message that the compaction dropped still counts."""
        t = chain(("u", "1"), ("a", "2"), ("u", "3"), ("C", ("4", "3")), ("u", "5"))
        ctx = build_context(t)
        assert texts(ctx) == ["summary 4", "3", "5"]
        assert ctx.model == ModelRef("anthropic", "claude-opus-4-5")

    def test_first_kept_not_on_path_keeps_nothing(self) -> None:
        """A firstKeptEntryId on another branch keeps nothing before the compaction."""
        t = chain(("u", "1"), ("a", "2"))
        t = t.move_to("1").append(a("x"), id="x").append_compaction("s", "2", 5, id="C")
        t = t.append(u("after"), id="after")
        assert texts(build_context(t)) == ["s", "after"]

    def test_first_kept_after_compaction_keeps_nothing(self) -> None:
        """A firstKeptEntryId below the compaction keeps nothing before it."""
        t = chain(("u", "1"), ("a", "2"))
        t = t.append_compaction("s", "1", 5, id="C").append(u("3"), id="3")
        c2 = t.append_compaction("s2", "3", 5, id="C2")
        # C2 keeps from 3, so C (before 3) is outside the kept range.
        assert texts(build_context(c2)) == ["s2", "3"]
        t = t.move_to("2").append_compaction("s3", "3", 5, id="C3")
        assert texts(build_context(t)) == ["s3"]

    def test_compaction_summary_shape(self) -> None:
        """compactionSummary: role, summary, tokensBefore, timestamp in ms, in that order."""
        t = chain(("u", "1"), ("C", ("2", "1")))
        first = build_context(t).messages[0]
        assert list(first.items()) == [
            ("role", "compactionSummary"),
            ("summary", "summary 2"),
            ("tokensBefore", 1000),
            ("timestamp", TS_MS),
        ]

    def test_custom_message_shape(self) -> None:
        """custom_message: role custom with customType, content, display, details, ms."""
        t = SessionTree().append_custom_message(
            "note", "hello", display=False, details={"k": 1}, timestamp=TS
        )
        msg = build_context(t).messages[0]
        assert list(msg.items()) == [
            ("role", "custom"),
            ("customType", "note"),
            ("content", "hello"),
            ("display", False),
            ("details", {"k": 1}),
            ("timestamp", TS_MS),
        ]

    def test_custom_message_without_details_omits_them(self) -> None:
        """Pi's undefined details vanish in JSON; an explicit null stays null."""
        t = SessionTree().append_custom_message("note", "hi", timestamp=TS)
        assert "details" not in build_context(t).messages[0]
        e = ptree.entries.entry_from_json(
            {
                "type": "custom_message",
                "id": "x",
                "parentId": None,
                "timestamp": TS,
                "customType": "n",
                "content": "c",
                "display": True,
                "details": None,
            }
        )
        msg = build_context(SessionTree().insert(e)).messages[0]
        assert "details" in msg
        assert msg["details"] is None

    def test_empty_branch_summary_never_reaches_context(self) -> None:
        """A branch summary with an empty summary gives nothing."""
        t = SessionTree().append(u("1")).append_branch_summary("1", "")
        assert texts(build_context(t)) == ["1"]

    def test_blank_branch_summary_reaches_context(self) -> None:
        """Pi tests the summary's truthiness: whitespace is not empty, so it is sent."""
        t = SessionTree().append(u("1")).append_branch_summary("1", " \n", timestamp=TS)
        assert build_context(t).messages[1] == {
            "role": "branchSummary",
            "summary": " \n",
            "fromId": "1",
            "timestamp": TS_MS,
        }

    def test_hidden_custom_message_reaches_context(self) -> None:
        """display=False only hides a custom message in Pi's UI: the model still gets it."""
        t = SessionTree().append_custom_message("n", "secret", display=False, timestamp=TS)
        assert to_provider_messages(build_context(t).messages) == [
            {"role": "user", "content": [{"type": "text", "text": "secret"}], "timestamp": TS_MS}
        ]

    def test_leaf_on_a_compaction_or_label(self) -> None:
        """Built at a compaction entry, or at a label entry, as at any other entry."""
        t = chain(("u", "1"), ("a", "2"), ("C", ("3", "2")))
        assert texts(build_context(t, "3")) == ["summary 3", "2"]
        t = t.append_label("1", "x", id="L")
        assert texts(build_context(t, "L")) == ["summary 3", "2"]

    def test_compaction_keeping_from_itself_keeps_nothing(self) -> None:
        """firstKeptEntryId naming the compaction itself keeps nothing before it."""
        t = chain(("u", "1"))
        t = t.insert(
            ptree.entries.entry_from_json(
                {
                    "type": "compaction",
                    "id": "2",
                    "parentId": "1",
                    "timestamp": TS,
                    "summary": "summary 2",
                    "firstKeptEntryId": "2",
                    "tokensBefore": 1,
                }
            )
        )
        t = t.append(u("3"), id="3")
        assert texts(build_context(t)) == ["summary 2", "3"]

    def test_kinds_without_messages_give_nothing(self) -> None:
        """custom, label, session_info, unknown kinds and state changes give no message."""
        t = SessionTree().append(u("1"), id="1").append_custom("ext", {"a": 1})
        t = t.append_label("1", "x").append_session_info("n").append_model_change("p", "m")
        t = t.insert(
            ptree.UnknownEntry(
                id="z", parent_id=t.leaf_id, timestamp=TS, entry_type="future", extra={"x": 1}
            )
        )
        assert texts(build_context(t)) == ["1"]

    def test_messages_are_the_stored_ones(self) -> None:
        """No message is copied: the context holds the stored frozen dicts themselves."""
        t = SessionTree().append(u("1")).append(a("2"))
        ctx = build_context(t)
        stored = [e.message for e in t.path() if isinstance(e, MessageEntry)]
        assert [m is s for m, s in zip(ctx.messages, stored, strict=True)] == [True, True]

    def test_messages_are_json_and_thaw_to_plain(self) -> None:
        """The messages json.dumps as a list; thaw gives plain mutable dicts and lists."""
        t = SessionTree().append_custom_message("n", [{"type": "text", "text": "x"}], timestamp=TS)
        t = t.append(a("2"))
        ctx = build_context(t)
        assert all(isinstance(m, dict) for m in ctx.messages)
        plain = ptree.thaw(ctx.messages)
        assert json.loads(json.dumps(list(ctx.messages))) == plain
        assert type(plain) is list
        assert type(plain[0]) is dict
        assert type(plain[0]["content"]) is list
        plain[0]["content"].append("changed")
        assert build_context(t).messages[0]["content"] == [{"type": "text", "text": "x"}]

    def test_old_version_unchanged(self) -> None:
        """Building a context changes no tree: the same tree gives the same context."""
        t = chain(("u", "1"), ("a", "2"))
        before = build_context(t)
        build_context(t.append(u("3")))
        assert build_context(t) == before
        t._check()

    def test_context_is_a_value(self) -> None:
        """Messages are Messages, tools a tuple; equal contexts of two trees are == and
        hash alike, and like a context made by hand of a tuple of the same messages."""
        t = SessionTree().append_active_tools_change(["read"]).append(u("hi"))
        a = build_context(t)
        b = build_context(SessionTree().append_active_tools_change(["read"]).append(u("hi")))
        assert (type(a.messages), type(a.active_tools)) == (ptree.Messages, tuple)
        assert a == b
        assert hash(a) == hash(b)
        assert a.messages == ({"role": "user", "content": "hi"},)
        hi = ptree.freeze({"role": "user", "content": "hi"})
        by_hand = Context((hi,), None, "off", ("read",), a.leaf_id)
        assert a == by_hand
        assert by_hand == a
        assert hash(a) == hash(by_hand)
        assert repr(a) == repr(by_hand)

    def test_context_made_from_a_list_holds_messages(self) -> None:
        """A Context built by hand from a list keeps those very dicts, as Messages."""
        hi = {"role": "user", "content": "hi"}
        ctx = Context([hi])
        assert ctx.messages == ({"role": "user", "content": "hi"},)
        assert type(ctx.messages) is ptree.Messages
        assert ctx.messages[0] is hi

    def test_model_ref_unpacks(self) -> None:
        """ModelRef unpacks like Pi's {provider, modelId} pair."""
        assert tuple(ModelRef("p", "m")) == ("p", "m")


class TestIsoToMs:
    """iso_to_ms mirrors JavaScript's Date parsing of Pi's timestamps."""

    @pytest.mark.parametrize(
        ("text", "ms"),
        [
            ("1970-01-01T00:00:00.000Z", 0),
            ("2026-01-01T00:00:00.000Z", TS_MS),
            ("2025-12-08T22:41:05.306Z", 1765233665306),
            ("2026-01-01T01:00:00.000+01:00", TS_MS),
            ("2026-01-01T00:00:00", TS_MS),
            ("1969-12-31T23:59:59.999Z", -1),
        ],
    )
    def test_known_times(self, text: str, ms: int) -> None:
        """ISO times give JavaScript's milliseconds; no offset means UTC."""
        assert ptree.context.iso_to_ms(text) == ms

    def test_not_a_time(self) -> None:
        """Text that is no time gives None (JavaScript's NaN, written as null)."""
        assert ptree.context.iso_to_ms("soon") is None
        assert ptree.context.iso_to_ms("") is None

    # Each value is what Node 20 (V8) gives for new Date(text).getTime() with TZ=UTC;
    # None stands for NaN.  Python's datetime.fromisoformat disagrees on every one.
    @pytest.mark.parametrize(
        ("text", "ms"),
        [
            ("2026", TS_MS),
            ("2026-01", TS_MS),
            ("2026-01-01t00:00:00z", TS_MS),
            ("2026-01-01T24:00:00Z", TS_MS + 86_400_000),
            ("2026-01-01T24:00:00.0001Z", None),
            ("2026-02-30T00:00:00Z", 1772409600000),
            ("2026-02-32T00:00:00Z", None),
            ("+002026-01-01T00:00:00Z", TS_MS),
            ("-000001-01-01T00:00:00Z", -62198755200000),
            ("-000000-01-01T00:00:00Z", None),
            ("0000-01-01T00:00:00Z", -62167219200000),
            ("+275760-09-13T00:00:00.000Z", 8_640_000_000_000_000),
            ("+275760-09-13T00:00:00.001Z", None),
            ("2026-01-01T00:00:00.000+0100", TS_MS - 3_600_000),
            ("1999-12-31T23:59:59.9999999Z", 946684799999),
            ("20260101T000000Z", None),
            ("2026-W01-1", None),
            ("2026-01-01T00:00:00,5Z", None),
            ("2026-01-01T00:00:00+05", None),
            ("2026-01-01T00Z", None),
            ("2026-01-01T00:00:00.Z", None),
            ("2026-01-01T00:00:00+24:00", None),
            ("2026-01-01T00:00:00Z ", None),
        ],
    )
    def test_javascript_edges(self, text: str, ms: int | None) -> None:
        """Forms JavaScript reads and Python does not, and the other way round."""
        assert ptree.context.iso_to_ms(text) == ms

    def test_python_datetime_text(self) -> None:
        """str() of an aware Python datetime (a space, microseconds) reads as in V8."""
        assert ptree.context.iso_to_ms("2026-01-01 00:00:00.123456+00:00") == TS_MS + 123
        assert ptree.context.iso_to_ms("0099-01-01 00:00:00Z") is None  # V8's fallback: 1999

    def test_not_text(self) -> None:
        """A value that is not text gives None rather than raising."""
        assert ptree.context.iso_to_ms(1767225600000) is None  # type: ignore[arg-type]


class TestToProviderMessages:
    """to_provider_messages: Pi's convertToLlm."""

    def test_pass_through_is_identity(self) -> None:
        """user, assistant and toolResult messages pass through as the same objects."""
        msgs = [
            ptree.freeze(u("1")),
            ptree.freeze(a("2")),
            ptree.freeze({"role": "toolResult", "content": [], "toolCallId": "x"}),
        ]
        out = to_provider_messages(msgs)
        assert [m is n for m, n in zip(out, msgs, strict=True)] == [True, True, True]

    def test_summaries_are_wrapped(self) -> None:
        """Both summaries become one user text block with Pi's exact wrapping."""
        out = to_provider_messages(
            [
                {"role": "compactionSummary", "summary": "C", "tokensBefore": 1, "timestamp": 5},
                {"role": "branchSummary", "summary": "B", "fromId": "x", "timestamp": 6},
            ]
        )
        assert out == [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "The conversation history before this point was compacted "
                        "into the following summary:\n\n<summary>\nC\n</summary>",
                    }
                ],
                "timestamp": 5,
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "The following is a summary of a branch that this conversation "
                        "came back from:\n\n<summary>\nB</summary>",
                    }
                ],
                "timestamp": 6,
            },
        ]

    def test_custom_becomes_user(self) -> None:
        """A custom message becomes a user message; string content becomes one text block."""
        blocks = [{"type": "image", "data": "x", "mimeType": "image/png"}]
        out = to_provider_messages(
            [
                {
                    "role": "custom",
                    "customType": "n",
                    "content": "hi",
                    "display": True,
                    "timestamp": 1,
                },
                {"role": "custom", "customType": "n", "content": blocks, "display": False},
            ]
        )
        assert out == [
            {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1},
            {"role": "user", "content": blocks},
        ]

    def test_bash_execution_text(self) -> None:
        """bashExecution becomes user text in Pi's format."""
        out = to_provider_messages(
            [
                {
                    "role": "bashExecution",
                    "command": "ls",
                    "output": "a\nb",
                    "exitCode": 0,
                    "cancelled": False,
                    "truncated": False,
                    "timestamp": 3,
                }
            ]
        )
        assert out == [
            {
                "role": "user",
                "content": [{"type": "text", "text": "Ran `ls`\n```\na\nb\n```"}],
                "timestamp": 3,
            }
        ]

    @pytest.mark.parametrize(
        ("message", "text"),
        [
            ({"command": "x", "output": ""}, "Ran `x`\n(no output)"),
            (
                {"command": "x", "output": "", "cancelled": True, "exitCode": 1},
                "Ran `x`\n(no output)\n\n(command cancelled)",
            ),
            (
                {"command": "x", "output": "o", "exitCode": 2},
                "Ran `x`\n```\no\n```\n\nCommand exited with code 2",
            ),
            ({"command": "x", "output": "o", "exitCode": None}, "Ran `x`\n```\no\n```"),
            (
                {"command": "x", "output": "o", "truncated": True, "fullOutputPath": "/f"},
                "Ran `x`\n```\no\n```\n\n[Output truncated. Full output: /f]",
            ),
            ({"command": "x", "output": "o", "truncated": True}, "Ran `x`\n```\no\n```"),
            (
                {"output": "o", "exitCode": 1.0},
                "Ran `undefined`\n```\no\n```\n\nCommand exited with code 1",
            ),
            # JavaScript's text of other JSON values (what Node prints for them).
            (
                {"command": "x", "output": "o", "exitCode": False},
                "Ran `x`\n```\no\n```\n\nCommand exited with code false",
            ),
            (
                {"command": ["a", None, ["b", 1.5]], "output": [{"k": 1}, 1e21]},
                "Ran `a,,b,1.5`\n```\n[object Object],1e+21\n```",
            ),
            (
                {"command": 1e-7, "output": 0.000123, "exitCode": 2**60 + 1},
                "Ran `1e-7`\n```\n0.000123\n```\n\nCommand exited with code 1152921504606847000",
            ),
            (
                {"command": -1.5e300, "output": 1.2345e16, "exitCode": -0.0},
                "Ran `-1.5e+300`\n```\n12345000000000000\n```",
            ),
        ],
    )
    def test_bash_text_cases(self, message: dict[str, Any], text: str) -> None:
        """Each branch of Pi's bashExecutionToText."""
        assert ptree.context.bash_execution_text(message) == text

    def test_custom_without_content(self) -> None:
        """A custom message without content gives a user message without content (Pi's
        undefined, left out of JSON), not a null content."""
        assert to_provider_messages([{"role": "custom", "customType": "n"}]) == [{"role": "user"}]

    def test_bash_excluded_from_context(self) -> None:
        """A bashExecution with excludeFromContext gives nothing."""
        assert (
            to_provider_messages(
                [
                    {
                        "role": "bashExecution",
                        "command": "x",
                        "output": "",
                        "excludeFromContext": True,
                    }
                ]
            )
            == []
        )

    def test_unknown_roles(self) -> None:
        """Unknown roles are dropped by default, kept or refused on request."""
        msgs = [{"role": "mystery"}, u("1")]
        assert to_provider_messages(msgs) == [u("1")]
        assert to_provider_messages(msgs, unknown="keep") == msgs
        with pytest.raises(ValueError, match="mystery"):
            to_provider_messages(msgs, unknown="raise")
        with pytest.raises(ValueError, match="unknown"):
            to_provider_messages(msgs, unknown="nope")  # type: ignore[arg-type]

    def test_from_a_context(self) -> None:
        """The two steps compose: every message of a context has a provider form."""
        t = chain(("u", "1"), ("a", "2"), ("C", ("3", "2")))
        t = t.append_custom_message("n", "c").append_branch_summary("x", "b")
        out = to_provider_messages(build_context(t).messages)
        assert [m["role"] for m in out] == ["user", "assistant", "user", "user"]
        assert json.loads(json.dumps(out)) == ptree.thaw(out)


# --------------------------------------------------------------------- reference


def _ms(ts: str) -> int:
    moment = datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ")
    return calendar.timegm(moment.timetuple()) * 1000 + moment.microsecond // 1000


def _message_of(e: Entry) -> dict[str, Any] | None:
    if isinstance(e, MessageEntry):
        return ptree.thaw(e.message)  # type: ignore[no-any-return]
    if isinstance(e, CustomMessage):
        m = {
            "role": "custom",
            "customType": e.custom_type,
            "content": ptree.thaw(e.content),
            "display": e.display,
        }
        if e.details is not None:
            m["details"] = ptree.thaw(e.details)
        m["timestamp"] = _ms(e.timestamp)
        return m
    if isinstance(e, BranchSummary) and e.summary != "":
        return {
            "role": "branchSummary",
            "summary": e.summary,
            "fromId": e.from_id,
            "timestamp": _ms(e.timestamp),
        }
    return None


def reference(tree: SessionTree, leaf: str | None = None) -> Context:
    """Pi's buildSessionContext, written naively from the path (as Pi's TypeScript is)."""
    if leaf is None and tree.leaf_id is None:
        return Context([])
    path = list(tree.path(leaf))
    thinking, model, tools, compaction = "off", None, None, None
    for e in path:
        if isinstance(e, ThinkingLevelChange):
            thinking = e.thinking_level
        elif isinstance(e, ModelChange):
            model = ModelRef(e.provider, e.model_id)
        elif isinstance(e, MessageEntry) and e.message["role"] == "assistant":
            p, m = e.message.get("provider"), e.message.get("model")
            model = ModelRef(p, m) if isinstance(p, str) and isinstance(m, str) else None
        elif isinstance(e, ActiveToolsChange):
            tools = tuple(e.active_tool_names)
        elif isinstance(e, Compaction):
            compaction = e
    chosen: list[ptree.AnyEntry] = []
    messages: list[dict[str, Any]] = []
    if compaction is None:
        chosen = path
    else:
        messages.append(
            {
                "role": "compactionSummary",
                "summary": compaction.summary,
                "tokensBefore": compaction.tokens_before,
                "timestamp": _ms(compaction.timestamp),
            }
        )
        at = path.index(compaction)
        found = False
        for e in path[:at]:
            found = found or e.id == compaction.first_kept_entry_id
            if found:
                chosen.append(e)
        chosen += path[at + 1 :]
    for e in chosen:
        m = _message_of(e)
        if m is not None:
            messages.append(m)
    return Context(messages, model, thinking, tools, path[-1].id)


class TestAgainstReference:
    """Property: build_context equals a naive reference on random trees of every kind."""

    @settings(max_examples=300)
    @given(trees(max_steps=30), st.data())
    def test_equals_reference(self, tree: SessionTree, data: st.DataObject) -> None:
        """At the leaf and at a random entry, the context equals the reference's."""
        assert build_context(tree) == reference(tree)
        if tree:
            leaf = data.draw(st.sampled_from(tree.ids()))
            assert build_context(tree, leaf) == reference(tree, leaf)

    @settings(max_examples=100)
    @given(trees(max_steps=30))
    def test_every_entry(self, tree: SessionTree) -> None:
        """At every entry of the tree, the context equals the reference's."""
        for entry_id in tree.ids():
            assert build_context(tree, entry_id) == reference(tree, entry_id)


class TestDeepPaths:
    """Paths 100,000 deep build without recursion."""

    def test_depth_100000(self) -> None:
        """A 100,000-deep path with a compaction in the middle builds iteratively."""
        t = SessionTree()
        for i in range(100_000):
            t = t.append(u(str(i)) if i % 2 == 0 else a(str(i)))
            if i == 60_000:
                t = t.append_compaction("s", "e50000", 1)
        limit = sys.getrecursionlimit()
        ctx = build_context(t)
        assert sys.getrecursionlimit() == limit
        # Summary, then e50000 .. e60001 (before the compaction), then the rest.
        assert len(ctx.messages) == 1 + (60_001 - 50_000 + 1) + (100_000 - 60_001)
        assert ctx.messages[1] == a("49999")  # e50000 is the 50,000th message (i = 49999)
        assert ctx.model == ModelRef("anthropic", "claude-opus-4-5")
