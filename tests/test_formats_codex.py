"""Codex rollouts read by ``ptree.formats.codex``: the real fixtures and small hand-made ones.

Expected numbers come from :func:`source_counts`, a plain reading of the rollout that
follows ``formats.md`` (runs of model items, outputs, user and developer messages),
and from lines looked up in the files by hand.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import ptree
from ptree import (
    Compaction,
    Custom,
    CustomMessage,
    MessageEntry,
    ModelChange,
    SessionTree,
    ThinkingLevelChange,
)
from ptree.formats import ImportFormatError, codex
from tests.helpers import require_shared

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "codex"
POMODORO = FIXTURES / "ai-sessions" / "codex-pomodor-timer.jsonl"
TUI = (
    FIXTURES / "codemie" / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
)
TRIMMED = (
    FIXTURES / "codemie" / "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"
)
SMALL = (
    FIXTURES
    / "localpush"
    / "rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl"
)
BIG = (
    FIXTURES
    / "localpush"
    / "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
)
ALL = [POMODORO, TUI, TRIMMED, SMALL, BIG]

require_shared(FIXTURES, module_level=True)


def tree_of(path: Path) -> SessionTree:
    """The tree of a rollout, its reports (checked by TestReports) set aside."""
    return codex.read(path, on_report=lambda _line: None).tree


MODEL = {
    "reasoning",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "tool_search_call",
    "web_search_call",
    "image_generation_call",
}


def source_counts(path: Path) -> Counter[str]:
    """assistant (runs of model items), toolResult, user, developer, compaction."""
    counts: Counter[str] = Counter()
    in_run = False

    def feed(item: dict[str, Any]) -> None:
        nonlocal in_run
        t = item.get("type")
        if (t == "message" and item.get("role") == "assistant") or t in MODEL:
            if not in_run:
                counts["assistant"] += 1
            in_run = True
        elif t == "message":
            in_run = False
            counts["user" if item.get("role") == "user" else "developer"] += 1
        elif isinstance(t, str) and t.endswith("_output"):
            in_run = False
            counts["toolResult"] += 1

    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r["type"] == "response_item":
            feed(r["payload"])
        elif r["type"] == "compacted":
            in_run = False
            counts["compaction"] += 1
            for item in r["payload"].get("replacement_history") or []:
                feed(item)
            in_run = False
    return counts


def tree_counts(tree: SessionTree) -> Counter[str]:
    counts: Counter[str] = Counter()
    for e in tree.entries():
        if isinstance(e, MessageEntry):
            counts[e.role] += 1
        elif isinstance(e, CustomMessage):
            counts["developer"] += 1
        elif isinstance(e, Compaction):
            counts["compaction"] += 1
    return counts


class TestFixtures:
    @pytest.mark.parametrize("path", ALL, ids=lambda p: p.name[:30])
    def test_every_message_once_all_on_the_path(self, path: Path) -> None:
        """Each message of the rollout is in the tree once; with no rollback in these
        files, all of them are on the path to the leaf."""
        tree = tree_of(path)
        tree._check()
        assert tree_counts(tree) == source_counts(path)
        on_path = [
            e for e in tree.path() if isinstance(e, (MessageEntry, CustomMessage, Compaction))
        ]
        assert len(on_path) == sum(source_counts(path).values())

    @pytest.mark.parametrize("path", ALL, ids=lambda p: p.name[:30])
    def test_every_line_is_an_entry_or_folded(self, path: Path) -> None:
        """Line n gives entry n, or is listed in the codex.lines of the assistant message
        it was folded into; the leaf is the entry of the file's last line."""
        tree = tree_of(path)
        folded = {
            n
            for e in tree.entries()
            if isinstance(e, MessageEntry) and "codex" in e.extra
            for n in e.extra["codex"]["lines"]
        }
        lines = len(path.read_text(encoding="utf-8").splitlines())
        for n in range(1, lines + 1):
            assert str(n) in tree or n in folded, n
        last = str(lines)
        assert tree.leaf_id == last or lines in folded
        assert tree.ids()[-1] == tree.leaf_id

    @pytest.mark.parametrize("path", ALL, ids=lambda p: p.name[:30])
    def test_results_right_after_their_calls(self, path: Path) -> None:
        """Each result hangs under its call's message or under a result of it."""
        tree = tree_of(path)
        owner = {
            b["id"]: e.id
            for e in tree.entries()
            if isinstance(e, MessageEntry) and e.role == "assistant"
            for b in e.message["content"]
            if b["type"] == "toolCall"
        }
        for e in tree.entries():
            if isinstance(e, MessageEntry) and e.role == "toolResult":
                call_owner = owner[e.message["toolCallId"]]
                parent = tree[e.parent_id] if e.parent_id else None
                assert isinstance(parent, MessageEntry)
                assert parent.id == call_owner or (
                    parent.role == "toolResult"
                    and owner[parent.message["toolCallId"]] == call_owner
                )

    @pytest.mark.parametrize("path", ALL, ids=lambda p: p.name[:30])
    def test_deterministic(self, path: Path, tmp_path: Path) -> None:
        ptree.dump(tree_of(path), tmp_path / "a.jsonl")
        ptree.dump(tree_of(path), tmp_path / "b.jsonl")
        assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()

    def test_developer_message_between_call_and_output(self) -> None:
        """localpush 12-47: the call of line 807 (in the response that starts with the
        reasoning of line 804) is answered on line 810, after two events (805, 808) and
        a developer message (809); the result goes right after the response, what was
        written meanwhile after it."""
        tree = tree_of(SMALL)
        result = tree["810"]
        assert isinstance(result, MessageEntry)
        assert result.parent_id == "804"
        path = [e.id for e in tree.path()]
        assert path[path.index("804") : path.index("804") + 5] == [
            "804",
            "810",
            "805",
            "808",
            "809",
        ]
        assert isinstance(tree["809"], CustomMessage)
        assert tree["809"].custom_type == "codex.developer"

    def test_call_without_output(self) -> None:
        """localpush 12-47: the call of line 826 never got an output; it stays a call."""
        tree = tree_of(SMALL)
        calls = [
            b
            for e in tree.entries()
            if isinstance(e, MessageEntry) and e.role == "assistant"
            for b in e.message["content"]
            if b["type"] == "toolCall" and b["id"] == "call_BpTazJ89W9PntRqGPwDNfwEY"
        ]
        assert len(calls) == 1
        results = [
            e
            for e in tree.entries()
            if isinstance(e, MessageEntry)
            and e.role == "toolResult"
            and e.message["toolCallId"] == "call_BpTazJ89W9PntRqGPwDNfwEY"
        ]
        assert results == []

    def test_compaction(self) -> None:
        """localpush 12-54: line 1788 is a compaction (its message redacted to an empty
        text) followed by its 40 replacement items; the context is the summary, the 39
        replacement messages and what follows; the encrypted item is a custom entry."""
        tree = tree_of(BIG)
        entry = tree["1788"]
        assert isinstance(entry, Compaction)
        assert entry.first_kept_entry_id == "1788"
        assert entry.tokens_before == 940499  # the last token_count before it
        encrypted = tree["1788.40"]
        assert isinstance(encrypted, Custom)
        assert encrypted.data["type"] == "compaction"
        context = ptree.build_context(tree).messages
        assert context[0]["role"] == "compactionSummary"
        after = source_counts_after(BIG, 1788)
        assert len(context) == 1 + 39 + after

    def test_turn_context_gives_model_and_thinking_level(self) -> None:
        """localpush 12-54 runs gpt-5.3-codex throughout; its turn_context lines say
        effort high from line 11 and medium from line 138: one model change and two
        thinking-level changes."""
        tree = tree_of(BIG)
        changes = [e for e in tree.entries() if isinstance(e, (ModelChange, ThinkingLevelChange))]
        assert [(e.id, type(e).__name__) for e in changes] == [
            ("11.1", "ModelChange"),
            ("11.2", "ThinkingLevelChange"),
            ("138.1", "ThinkingLevelChange"),
        ]
        assert [e.thinking_level for e in changes[1:]] == ["high", "medium"]  # type: ignore[union-attr]
        context = ptree.build_context(tree)
        assert context.model is not None
        assert (context.model.provider, context.model.model_id) == ("openai", "gpt-5.3-codex")
        assert context.thinking_level == "medium"

    def test_reasoning_kept_whole(self) -> None:
        """The pomodoro file's reasoning items have summaries: thinking text is the
        summary, the signature the whole item."""
        tree = tree_of(POMODORO)
        lines = POMODORO.read_text(encoding="utf-8").splitlines()
        first = next(i for i, line in enumerate(lines, 1) if '"type":"reasoning"' in line)
        item = json.loads(lines[first - 1])["payload"]
        holder = next(
            e
            for e in tree.entries()
            if isinstance(e, MessageEntry)
            and "codex" in e.extra
            and first in e.extra["codex"]["lines"]
        )
        block = holder.message["content"][0]
        assert block["type"] == "thinking"
        assert block["thinking"] == "\n".join(p["text"] for p in item["summary"])
        assert json.loads(block["thinkingSignature"]) == item

    def test_trimmed_file_has_no_user_messages(self) -> None:
        """The trimmed Desktop copy has the prompts only as user_message events."""
        tree = tree_of(TRIMMED)
        assert not [e for e in tree.entries() if isinstance(e, MessageEntry) and e.role == "user"]
        prompts = [
            e
            for e in tree.entries()
            if isinstance(e, Custom) and e.data.get("type") == "user_message"
        ]
        assert len(prompts) == 3


def source_counts_after(path: Path, line: int) -> int:
    """Messages (as Pi messages) made from lines after ``line``."""
    rest = path.read_text(encoding="utf-8").splitlines()[line:]
    counts: Counter[str] = Counter()
    in_run = False
    for text in rest:
        r = json.loads(text)
        if r["type"] != "response_item":
            continue
        item = r["payload"]
        t = item.get("type")
        if (t == "message" and item.get("role") == "assistant") or t in MODEL:
            if not in_run:
                counts["m"] += 1
            in_run = True
        elif t == "message" or (isinstance(t, str) and t.endswith("_output")):
            in_run = False
            counts["m"] += 1
    return counts["m"]


# ---------------------------------------------------------------- hand-made rollouts

T = "2026-01-01T00:00:00.000Z"


def line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": T, "type": kind, "payload": payload}


def meta() -> dict[str, Any]:
    return line(
        "session_meta",
        {
            "id": "sess",
            "timestamp": T,
            "cwd": "/w",
            "cli_version": "0.50.0",
            "model_provider": "openai",
        },
    )


def user(text: str) -> dict[str, Any]:
    return line(
        "response_item",
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
    )


def answer(text: str) -> dict[str, Any]:
    return line(
        "response_item",
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text}],
        },
    )


def write(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


class TestHandMade:
    def test_rollback_keeps_the_turns_as_a_branch(self, tmp_path: Path) -> None:
        """Two turns, one rolled back, a new turn: the new prompt hangs under the first
        answer; the rolled-back turn stays as a sibling branch."""
        path = write(
            tmp_path / "r.jsonl",
            [
                meta(),  # 1
                user("<environment_context>cwd</environment_context>"),  # 2
                user("first"),
                answer("one"),  # 3, 4
                user("second"),
                answer("two"),  # 5, 6
                line("event_msg", {"type": "thread_rolled_back", "num_turns": 1}),  # 7
                user("second again"),
                answer("two again"),  # 8, 9
            ],
        )
        tree = tree_of(path)
        assert [e.id for e in tree.path()] == ["1", "2", "3", "4", "7", "8", "9"]
        assert tree["5"].parent_id == "4"
        assert tree["6"].parent_id == "5"
        assert tree.leaf_id == "9"

    def test_rollback_of_more_turns_than_there_are(self, tmp_path: Path) -> None:
        """num_turns beyond the turns on the line cuts at the first turn; injected
        context is not a turn."""
        path = write(
            tmp_path / "r.jsonl",
            [
                meta(),
                user("<user_instructions>x</user_instructions>"),
                user("a"),
                answer("b"),
                line("event_msg", {"type": "thread_rolled_back", "num_turns": 5}),
                user("c"),
            ],
        )
        tree = tree_of(path)
        assert [e.id for e in tree.path()] == ["1", "2", "5", "6"]
        assert tree["3"].parent_id == "2"

    def test_compaction_without_replacement_history(self, tmp_path: Path) -> None:
        path = write(
            tmp_path / "c.jsonl",
            [
                meta(),
                user("a"),
                answer("b"),
                {"timestamp": T, "type": "compacted", "payload": {"message": "summary"}},
                user("c"),
            ],
        )
        tree = tree_of(path)
        context = ptree.build_context(tree).messages
        assert [m["role"] for m in context] == ["compactionSummary", "user"]
        assert context[0]["summary"] == "summary"

    def test_parallel_calls_and_images(self, tmp_path: Path) -> None:
        """One response with two calls; an image in the prompt and in an output."""
        png = "iVBORw0KGgo="
        path = write(
            tmp_path / "p.jsonl",
            [
                meta(),
                line(
                    "response_item",
                    {
                        "type": "message",
                        "role": "user",
                        "content": [
                            {"type": "input_text", "text": "look"},
                            {"type": "input_image", "image_url": f"data:image/png;base64,{png}"},
                        ],
                    },
                ),
                line(
                    "response_item",
                    {
                        "type": "reasoning",
                        "summary": [],
                        "content": None,
                        "encrypted_content": "xyz",
                    },
                ),
                line(
                    "response_item",
                    {
                        "type": "function_call",
                        "name": "a",
                        "call_id": "c1",
                        "arguments": '{"x": 1}',
                    },
                ),
                line(
                    "event_msg",
                    {
                        "type": "token_count",
                        "info": {
                            "last_token_usage": {
                                "input_tokens": 10,
                                "cached_input_tokens": 4,
                                "output_tokens": 3,
                                "total_tokens": 13,
                            }
                        },
                    },
                ),
                line(
                    "response_item",
                    {
                        "type": "function_call",
                        "name": "b",
                        "call_id": "c2",
                        "arguments": "not json",
                    },
                ),
                line(
                    "response_item",
                    {
                        "type": "function_call_output",
                        "call_id": "c2",
                        "output": [
                            {"type": "input_image", "image_url": f"data:image/png;base64,{png}"}
                        ],
                    },
                ),
                line(
                    "response_item",
                    {"type": "function_call_output", "call_id": "c1", "output": "ok"},
                ),
            ],
        )
        said: list[str] = []
        tree = codex.read(path, on_report=said.append).tree
        assert said == [
            "call arguments that are not a JSON object kept as {'input': arguments}: 1 time,"
            " first at line 6"
        ]
        response = tree["3"]
        assert isinstance(response, MessageEntry)
        assert [b["type"] for b in response.message["content"]] == [
            "thinking",
            "toolCall",
            "toolCall",
        ]
        assert response.message["content"][1]["arguments"] == {"x": 1}
        assert response.message["content"][2]["arguments"] == {"input": "not json"}
        assert response.message["usage"]["input"] == 6
        assert response.message["usage"]["cacheRead"] == 4
        # The outputs go right after the response (c2's first, as written), before the
        # token_count event written between the calls.
        assert [e.id for e in tree.path()] == ["1", "2", "3", "7", "8", "5"]
        prompt = tree["2"]
        assert isinstance(prompt, MessageEntry)
        assert prompt.message["content"][1] == {
            "type": "image",
            "data": png,
            "mimeType": "image/png",
        }
        out = tree["7"]
        assert isinstance(out, MessageEntry)
        assert out.message["content"] == [{"type": "image", "data": png, "mimeType": "image/png"}]

    def test_model_change_mid_session(self, tmp_path: Path) -> None:
        """A turn_context naming another model (and effort none) gives a model_change
        and a thinking_level_change off; the next answer carries the new model."""
        path = write(
            tmp_path / "m.jsonl",
            [
                meta(),
                line("turn_context", {"model": "gpt-5", "effort": "high"}),
                user("a"),
                answer("b"),
                line("turn_context", {"model": "gpt-5-mini", "effort": "none"}),
                user("c"),
                answer("d"),
            ],
        )
        tree = tree_of(path)
        assert [
            (e.id, e.type)
            for e in tree.entries()
            if e.type in ("model_change", "thinking_level_change")
        ] == [
            ("2.1", "model_change"),
            ("2.2", "thinking_level_change"),
            ("5.1", "model_change"),
            ("5.2", "thinking_level_change"),
        ]
        last = tree["7"]
        assert isinstance(last, MessageEntry)
        assert last.message["model"] == "gpt-5-mini"
        context = ptree.build_context(tree)
        assert context.model is not None
        assert context.model.model_id == "gpt-5-mini"
        assert context.thinking_level == "off"

    def test_old_unwrapped_file(self, tmp_path: Path) -> None:
        """Before ~0.30: the meta object alone on line 1, state lines, bare items."""
        path = write(
            tmp_path / "old.jsonl",
            [
                {"id": "old-1", "timestamp": T, "instructions": None, "git": None},
                {"record_type": "state"},
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "hi"}],
                },
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "hello"}],
                },
            ],
        )
        tree = tree_of(path)
        assert tree.header is not None
        assert tree.header.id == "old-1"
        assert [e.type for e in tree.path()] == ["custom", "custom", "message", "message"]


class TestReports:
    """What the conversion leaves out or changes is reported: once per kind, with how
    many times and the first line (issue 23: ``on_report`` the same for every importer)."""

    def rollout(self, tmp_path: Path) -> Path:
        return write(
            tmp_path / "r.jsonl",
            [
                meta(),  # 1
                line(  # 2
                    "response_item",
                    {
                        "type": "message",
                        "role": "user",
                        "content": [
                            {"type": "input_text", "text": "look"},
                            {"type": "input_file", "file_id": "f1"},
                            {"type": "input_image", "image_url": "https://x/y.png"},
                            "bare",
                        ],
                    },
                ),
                line(  # 3
                    "response_item",
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [
                            {"type": "output_text", "text": None},
                            {"type": "output_audio", "data": "x"},
                        ],
                    },
                ),
                line(  # 4
                    "response_item",
                    {"type": "function_call", "call_id": "c1", "arguments": '{"x": 1}'},
                ),
                line(  # 5
                    "response_item",
                    {
                        "type": "function_call_output",
                        "call_id": "c1",
                        "output": {"content": "ok", "success": True, "metadata": {"n": 1}},
                    },
                ),
                line(  # 6
                    "response_item",
                    {
                        "type": "function_call_output",
                        "call_id": "c9",
                        "output": [{"type": "input_text", "text": "a"}, {"type": "audio"}],
                    },
                ),
                line(  # 7
                    "response_item",
                    {"type": "message", "role": "user", "content": [{"type": "input_file"}]},
                ),
            ],
        )

    def test_each_kind_left_out_or_changed_is_reported(self, tmp_path: Path) -> None:
        """Every part, field and name the rollout above loses or changes, in the order
        first met, counted."""
        said: list[str] = []
        tree = codex.read(self.rollout(tmp_path), on_report=said.append).tree
        assert said == [
            "a 'input_file' part of a 'user' message left out: 2 times, first at line 2",
            "an image given by reference kept as '[image: url]' text: 1 time, first at line 2",
            "a part that is a string of a 'user' message left out: 1 time, first at line 2",
            "a 'text' that is null kept as '': 1 time, first at line 3",
            "a 'output_audio' part of an assistant message left out: 1 time, first at line 3",
            "a call without a name named 'unknown': 1 time, first at line 4",
            "a tool output's fields metadata left out: 1 time, first at line 5",
            "a 'audio' part of a tool output kept as JSON text: 1 time, first at line 6",
            "a tool output whose call is not in the file named 'unknown': 1 time, first at line 6",
        ]
        prompt = tree["2"]
        assert isinstance(prompt, MessageEntry)
        assert prompt.message["content"] == [
            {"type": "text", "text": "look"},
            {"type": "text", "text": "[image: https://x/y.png]"},
        ]
        orphan = tree["6"]
        assert isinstance(orphan, MessageEntry)
        assert orphan.message["toolName"] == "unknown"

    def test_without_a_callback_each_report_is_a_warning(self, tmp_path: Path) -> None:
        """on_report=None: a SessionFileWarning naming the file, one per report."""
        path = self.rollout(tmp_path)
        with pytest.warns(ptree.SessionFileWarning) as caught:
            codex.read(path)
        assert len(caught) == 9
        assert str(caught[0].message) == (
            f"{path}: a 'input_file' part of a 'user' message left out: 2 times, first at line 2"
        )

    def test_a_faithful_rollout_reports_nothing(self) -> None:
        """The pomodoro fixture has only parts, calls and outputs Pi can hold."""
        said: list[str] = []
        codex.read(POMODORO, on_report=said.append)
        assert said == []


class TestBadInput:
    def fails(self, path: Path, line_no: int | None, reason: str) -> None:
        with pytest.raises(ImportFormatError) as caught:
            codex.read(path)
        assert caught.value.path == path
        assert caught.value.line == line_no
        assert reason in caught.value.reason

    def test_garbled_middle_line(self, tmp_path: Path) -> None:
        lines = POMODORO.read_bytes().split(b"\n")
        lines[40] = b"{" + lines[40][5:]
        bad = tmp_path / "r.jsonl"
        bad.write_bytes(b"\n".join(lines))
        self.fails(bad, 41, "not JSON")

    def test_torn_last_line(self, tmp_path: Path) -> None:
        data = POMODORO.read_bytes()
        bad = tmp_path / "r.jsonl"
        bad.write_bytes(data[:-100])
        self.fails(bad, 153, "torn last line")

    def test_bad_payload_and_items(self, tmp_path: Path) -> None:
        self.fails(
            write(tmp_path / "a.jsonl", [meta(), {"type": "response_item", "payload": [1]}]),
            2,
            "'payload' must be an object",
        )
        self.fails(
            write(
                tmp_path / "b.jsonl",
                [
                    meta(),
                    line(
                        "response_item", {"type": "function_call", "name": "x", "arguments": "{}"}
                    ),
                ],
            ),
            2,
            "needs a string 'call_id'",
        )
        self.fails(
            write(
                tmp_path / "c.jsonl",
                [meta(), line("response_item", {"type": "message", "role": "user", "content": 5})],
            ),
            2,
            "'content' must be a list",
        )
