"""Hypothesis properties of the session readers on generated Claude Code and Codex files.

Each strategy writes a session the way the tool does (Claude Code: one record per
content block, results hanging under their own call, progress records inside the
chain; Codex: runs of model items, outputs after whatever was written meanwhile,
rollbacks) and knows, from how it built it, what the conversation is: the expected
values come from the generator, never from the reader.  Checked on every example:
every source record is in the tree, the tree passes ``_check()``, the path is the
conversation, and import → Pi file → load gives the same tree.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import ptree
from ptree import MessageEntry, SessionTree
from ptree.formats import claude_code, codex

T = "2026-01-01T00:00:00.000Z"
words = st.text(alphabet="ab é\n", min_size=1, max_size=6)


class Session:
    """A generated source file and what it should give."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.path_messages: list[str] = []  # ids of the messages on the path, in order
        self.uuids_of: dict[str, list[str]] = {}  # assistant message id -> record uuids
        self.n = 0

    def uuid(self) -> str:
        self.n += 1
        return f"u{self.n:04d}"


@st.composite
def claude_sessions(draw: st.DrawFn) -> Session:
    s = Session()
    last: str | None = None

    def record(kind: str, parent: str | None, **fields: Any) -> str:
        uid = s.uuid()
        s.records.append(
            {
                "type": kind,
                "uuid": uid,
                "parentUuid": parent,
                "sessionId": "s",
                "timestamp": T,
                "cwd": "/w",
                **fields,
            }
        )
        return uid

    def progress(parent: str | None) -> str:
        return record("progress", parent, data={"type": "hook_progress"})

    for turn in range(draw(st.integers(1, 3))):
        for _ in range(draw(st.integers(0, 2))):
            last = progress(last)
        if draw(st.booleans()):
            s.records.append(
                {"type": "file-history-snapshot", "messageId": f"snap{turn}", "snapshot": {}}
            )
        last = record("user", last, message={"role": "user", "content": draw(words)})
        s.path_messages.append(last)
        for r in range(draw(st.integers(1, 3))):
            mid = f"msg-{turn}-{r}"
            kinds = draw(
                st.lists(st.sampled_from(["text", "thinking", "tool_use"]), min_size=1, max_size=4)
            )
            block_records: list[str] = []
            calls: list[tuple[str, str]] = []  # (call id, record uuid)
            for b, kind in enumerate(kinds):
                if kind == "text":
                    block: dict[str, Any] = {"type": "text", "text": draw(words)}
                elif kind == "thinking":
                    block = {"type": "thinking", "thinking": draw(words), "signature": "sig"}
                else:
                    block = {
                        "type": "tool_use",
                        "id": f"toolu_{turn}_{r}_{b}",
                        "name": "Bash",
                        "input": {"command": draw(words)},
                    }
                last = record(
                    "assistant",
                    last,
                    message={
                        "id": mid,
                        "role": "assistant",
                        "model": "claude-x",
                        "content": [block],
                        "stop_reason": None,
                        "usage": {"input_tokens": 1, "output_tokens": 2},
                    },
                )
                block_records.append(last)
                if kind == "tool_use":
                    calls.append((block["id"], last))
                if draw(st.booleans()):
                    last = progress(last)  # a hook ran between two blocks
            s.path_messages.append(block_records[0])
            s.uuids_of[block_records[0]] = block_records
            order = draw(st.permutations(calls))
            for call_id, call_record in order:
                last = record(
                    "user",
                    call_record,
                    message={
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": call_id,
                                "content": draw(words),
                                "is_error": draw(st.booleans()),
                            }
                        ],
                    },
                    toolUseResult={"stdout": "x"},
                )
                s.path_messages.append(last)
        if draw(st.booleans()):
            last = record("system", last, subtype="turn_duration", durationMs=5)
    return s


def write_lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def round_trips(tree: SessionTree, path: Path) -> None:
    written = ptree.dump(tree, path, overwrite=True)  # Hypothesis reuses tmp_path
    again = ptree.load(path)
    assert again == written
    assert [e.to_json() for e in again.entries()] == [e.to_json() for e in tree.entries()]
    assert again.leaf_id == tree.leaf_id
    assert path.read_text(encoding="utf-8").splitlines()[-1].find('"type":"leaf"') < 0


# Each example writes, reads and dumps a file (~50 ms): 100 examples in every profile
# keep this file at seconds; PTREE_FORMAT_EXAMPLES asks for more.
_SETTINGS = settings(
    max_examples=int(os.environ.get("PTREE_FORMAT_EXAMPLES", "100")),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    deadline=None,
)


class TestClaudeCode:
    @_SETTINGS
    @given(claude_sessions())
    def test_generated_sessions(self, tmp_path: Path, session: Session) -> None:
        """The path holds every prompt, response and result in order (parallel results
        all present, right after their response), every record is in the tree, the
        leaf is the last record, and the file round-trips."""
        note(json.dumps(session.records))
        src = write_lines(tmp_path / "s.jsonl", session.records)
        tree = claude_code.read(src).tree
        tree._check()
        path_ids = [e.id for e in tree.path() if isinstance(e, MessageEntry)]
        assert path_ids == session.path_messages
        for first, uuids in session.uuids_of.items():
            entry = tree[first]
            assert isinstance(entry, MessageEntry)
            assert list(entry.extra["claudeCode"]["uuids"]) == uuids
        folded = {u for us in session.uuids_of.values() for u in us[1:]}
        for r in session.records:
            if "uuid" in r and r["uuid"] not in folded:
                assert r["uuid"] in tree
        assert len(tree) == len(session.records) - len(folded)
        # The leaf: the last message of the conversation, or below it only the
        # non-message records that end the line (progress, turn_duration); childless,
        # and the last entry of the file.
        path = tree.path()
        tail = next(i for i, e in enumerate(path) if e.id == session.path_messages[-1])
        assert all(not isinstance(e, MessageEntry) for e in path[tail + 1 :])
        assert not tree.children(tree.leaf_id)
        assert tree.ids()[-1] == tree.leaf_id
        round_trips(tree, tmp_path / "out.jsonl")


class Rollout(Session):
    def __init__(self) -> None:
        super().__init__()
        self.turns: list[list[str]] = []  # the messages (entry ids) of each turn kept


@st.composite
def codex_rollouts(draw: st.DrawFn) -> Rollout:
    s = Rollout()

    def line(kind: str, payload: dict[str, Any]) -> str:
        s.records.append({"timestamp": T, "type": kind, "payload": payload})
        return str(len(s.records))

    line("session_meta", {"id": "sess", "cwd": "/w", "cli_version": "0.99"})
    line(
        "turn_context",
        {"model": "gpt-x", "effort": draw(st.sampled_from(["low", "medium", "high"]))},
    )
    for turn in range(draw(st.integers(1, 4))):
        if turn and draw(st.integers(0, 4)) == 0:
            n = draw(st.integers(1, 3))
            line("event_msg", {"type": "thread_rolled_back", "num_turns": n})
            # The last n turns go (all of them when there are fewer).
            del s.turns[max(len(s.turns) - n, 0) :]
        messages: list[str] = [
            line(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": draw(words)}],
                },
            )
        ]
        responses = draw(st.integers(1, 3))
        for r in range(responses):
            first: str | None = None
            calls: list[str] = []
            if draw(st.booleans()):
                first = line(
                    "response_item",
                    {
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": draw(words)}],
                        "content": None,
                    },
                )
            # Only a turn's last response may end without calls: the model answers
            # again only after the outputs of its calls.
            for c in range(draw(st.integers(0 if r == responses - 1 else 1, 3))):
                call_id = f"call_{turn}_{r}_{c}"
                at = line(
                    "response_item",
                    {
                        "type": "function_call",
                        "name": "shell",
                        "call_id": call_id,
                        "arguments": "{}",
                    },
                )
                first = first or at
                calls.append(call_id)
                if draw(st.booleans()):
                    line("event_msg", {"type": "token_count", "info": None})
            if not calls or draw(st.booleans()):
                at = line(
                    "response_item",
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": draw(words)}],
                    },
                )
                first = first or at
            assert first is not None
            messages.append(first)
            meanwhile: list[str] = []
            for call_id in draw(st.permutations(calls)):
                if draw(st.integers(0, 3)) == 0:
                    meanwhile.append(
                        line(
                            "response_item",
                            {
                                "type": "message",
                                "role": "developer",
                                "content": [{"type": "input_text", "text": "note"}],
                            },
                        )
                    )
                messages.append(
                    line(
                        "response_item",
                        {"type": "function_call_output", "call_id": call_id, "output": "ok"},
                    )
                )
            messages.extend(meanwhile)
        s.turns.append(messages)
    return s


class TestCodex:
    @_SETTINGS
    @given(codex_rollouts())
    def test_generated_rollouts(self, tmp_path: Path, rollout: Rollout) -> None:
        """The path holds the kept turns' messages in order (results right after their
        response, what was written meanwhile after them; rolled-back turns off the
        path but in the tree), every line is an entry or folded into one, and the file
        round-trips."""
        note(json.dumps(rollout.records))
        src = write_lines(tmp_path / "r.jsonl", rollout.records)
        tree = codex.read(src).tree
        tree._check()
        path_ids = [e.id for e in tree.path() if e.type in ("message", "custom_message")]
        assert path_ids == [m for turn in rollout.turns for m in turn]
        folded = {
            n
            for e in tree.entries()
            if isinstance(e, MessageEntry) and "codex" in e.extra
            for n in e.extra["codex"]["lines"][1:]
        }
        for n in range(1, len(rollout.records) + 1):
            assert (str(n) in tree) != (n in folded), n
        assert tree.ids()[-1] == tree.leaf_id
        round_trips(tree, tmp_path / "out.jsonl")
