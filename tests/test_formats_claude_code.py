"""Claude Code sessions read by ``ptree.formats.claude_code`` (the real fixtures).

Expected values come from reading the fixture files by hand (line numbers and uuids
below were looked up in the files) or from the counts in the fixtures' README,
checked by the small independent reader :func:`source_counts` here, which follows
``formats.md`` without any of ptree's code.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import ptree
from ptree import Compaction, Custom, MessageEntry, SessionTree
from ptree.formats import ImportFormatError, claude_code
from tests.helpers import require_shared

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "claude-code"
SPOTTER = FIXTURES / "spotter"
BIG = SPOTTER / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
TURN2 = FIXTURES / "codemie" / "incremental-subagents" / "turn-2.jsonl"
OLD = FIXTURES / "codemie" / "old-layout" / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
POMODORO = FIXTURES / "ai-sessions" / "claude-code-pomodoro-timer.jsonl"
CODEMIE = FIXTURES / "codemie" / "session-9eda1058.jsonl"

ALL = [
    SPOTTER / "short.jsonl",
    SPOTTER / "tool_heavy.jsonl",
    SPOTTER / "subagent.jsonl",
    BIG,
    CODEMIE,
    TURN2,
    OLD,
    POMODORO,
]

require_shared(FIXTURES, module_level=True)


def records(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def source_counts(path: Path) -> tuple[int, int, int]:
    """(responses, tool results, prompts) of one file, read the plain way.

    A response is one distinct ``message.id``; a result one ``tool_result`` block; a
    prompt a user record with a string content or any block that is not a result,
    the compaction summary excepted.
    """
    responses: set[object] = set()
    results = prompts = 0
    for r in records(path):
        if r.get("type") == "assistant":
            responses.add(r["message"].get("id"))
        elif r.get("type") == "user":
            content = r["message"]["content"]
            if isinstance(content, str):
                prompts += 0 if r.get("isCompactSummary") else 1
                continue
            results += sum(1 for b in content if b.get("type") == "tool_result")
            if any(b.get("type") != "tool_result" for b in content) and not r.get(
                "isCompactSummary"
            ):
                prompts += 1
    return len(responses), results, prompts


def messages(tree: SessionTree, ids: tuple[str, ...] | None = None) -> list[MessageEntry]:
    entries = tree.entries() if ids is None else [tree[i] for i in ids]
    return [e for e in entries if isinstance(e, MessageEntry)]


def assert_results_follow_calls(path: tuple[ptree.Entry, ...]) -> None:
    """Every assistant message on the path is followed by one result per call it made."""
    msgs = [e for e in path if isinstance(e, MessageEntry)]
    for i, entry in enumerate(msgs):
        if entry.role != "assistant":
            continue
        calls = {b["id"] for b in entry.message["content"] if b["type"] == "toolCall"}
        after = msgs[i + 1 : i + 1 + len(calls)]
        if not calls or (not after and entry is msgs[-1]):
            continue
        got = {e.message["toolCallId"] for e in after if e.role == "toolResult"}
        assert got == calls, f"results after {entry.id}: {got} != {calls}"


class TestShortSession:
    """spotter/short.jsonl, every line checked by hand (15 lines)."""

    def test_path_to_the_leaf(self) -> None:
        """Two progress records, the prompt, the merged response, both parallel results
        (line 12's hangs under line 10's call, not under line 11's result), the
        interruption note, the two local_command records; the leaf is line 15."""
        tree = claude_code.read(SPOTTER / "short.jsonl").tree
        assert [e.id for e in tree.path()] == [
            "3579fa66-0f5d-400c-97b8-e2fbecfeb4ba",
            "7c676cb6-c0f4-4952-a21f-18df6af360c7",
            "7d48cbd2-6615-4dd8-87f6-38f12b8167d6",
            "1b7d717f-d6a2-46a6-8575-fa4f937450ea",
            "ff80d82a-4ac1-4945-83dd-1226f98b8cf6",
            "2618ef5d-c1c6-4938-b81c-8a3230ccad76",
            "c06a9fe4-ba05-44f2-b619-a057c18101e5",
            "87cfd146-38ca-48ef-96f2-3c893113b511",
            "40003bdd-2613-4975-83d5-36fb0b6bbc59",
        ]
        assert tree.leaf_id == "40003bdd-2613-4975-83d5-36fb0b6bbc59"

    def test_response_merged_from_five_records(self) -> None:
        """Lines 5-8 and 10 share message.id: one assistant message, its blocks in file
        order (text, thinking, text, two calls), every record's uuid kept."""
        tree = claude_code.read(SPOTTER / "short.jsonl").tree
        entry = tree["1b7d717f-d6a2-46a6-8575-fa4f937450ea"]
        assert isinstance(entry, MessageEntry)
        assert [b["type"] for b in entry.message["content"]] == [
            "text",
            "thinking",
            "text",
            "toolCall",
            "toolCall",
        ]
        assert [b["id"] for b in entry.message["content"] if b["type"] == "toolCall"] == [
            "toolu_0116Hyi5v8ut7Ffb7d8qV1Sc",
            "toolu_01FdQ8qTyVyZjE3Kw4dguQGx",
        ]
        assert entry.extra["claudeCode"]["uuids"] == [
            "1b7d717f-d6a2-46a6-8575-fa4f937450ea",
            "c228f841-697c-48dd-b33e-3ebc5ced6a41",
            "d4ad15f7-a11f-43cc-b2f3-e01c02800bf3",
            "194d33b0-6cf7-4c54-8200-07dfd3fb88cf",
            "ed2ec700-d1ee-4a18-9100-da63317716fc",
        ]
        assert entry.message["stopReason"] == "toolUse"
        assert entry.message["api"] == "anthropic-messages"

    def test_other_records_kept(self) -> None:
        """The snapshot (no uuid) is a root named after its line; the progress record
        written between the two calls (line 9) hangs below the batch's last result."""
        tree = claude_code.read(SPOTTER / "short.jsonl").tree
        snapshot = tree["L1"]
        assert isinstance(snapshot, Custom)
        assert snapshot.custom_type == "claude-code.file-history-snapshot"
        assert snapshot.parent_id is None
        progress = tree["c45785f8-6c6d-429f-9608-65b454721668"]
        assert progress.parent_id == "2618ef5d-c1c6-4938-b81c-8a3230ccad76"
        assert len(tree) == 11  # 15 lines, 4 of them folded into the response


class TestCounts:
    """Every message of every fixture is in the tree, once."""

    @pytest.mark.parametrize("main", ALL, ids=lambda p: p.name[:24])
    def test_every_message_once(self, main: Path) -> None:
        """Messages = responses + results + prompts, over the main and subagent files."""
        tree = claude_code.read(main).tree
        tree._check()
        expected = [0, 0, 0]
        for f in claude_code.session_files(main):
            for i, n in enumerate(source_counts(f)):
                expected[i] += n
        roles = Counter(e.role for e in messages(tree))
        assert (roles["assistant"], roles["toolResult"], roles["user"]) == tuple(expected)

    @pytest.mark.parametrize("main", ALL, ids=lambda p: p.name[:24])
    def test_every_uuid_kept(self, main: Path, tmp_path: Path) -> None:
        """Every record's uuid occurs in the written file; every record kind too."""
        out = ptree.dump(claude_code.read(main).tree, tmp_path / "out.jsonl")
        text = (tmp_path / "out.jsonl").read_text(encoding="utf-8")
        assert out is not None
        for f in claude_code.session_files(main):
            for r in records(f):
                if "uuid" in r:
                    assert f'"{r["uuid"]}"' in text, r["uuid"]
                kinds = {e.custom_type for e in out.entries() if isinstance(e, Custom)}
                if r["type"] not in ("user", "assistant") and r.get("subtype") != (
                    "compact_boundary"
                ):
                    assert f"claude-code.{r['type']}" in kinds

    @pytest.mark.parametrize("main", ALL, ids=lambda p: p.name[:24])
    def test_parallel_results_all_on_the_path(self, main: Path) -> None:
        """After each response on the path come the results of all its calls."""
        tree = claude_code.read(main).tree
        assert_results_follow_calls(tree.path())

    @pytest.mark.parametrize("main", ALL, ids=lambda p: p.name[:24])
    def test_deterministic(self, main: Path, tmp_path: Path) -> None:
        """Two imports give the same bytes."""
        ptree.dump(claude_code.read(main).tree, tmp_path / "a.jsonl")
        ptree.dump(claude_code.read(main).tree, tmp_path / "b.jsonl")
        assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()

    @pytest.mark.parametrize(
        ("main", "leaf", "path_messages"),
        [
            (SPOTTER / "tool_heavy.jsonl", "29e6224a-ea4f-445c-964f-d2bbddd138d0", 17),
            (SPOTTER / "subagent.jsonl", "ee1ff9df-75d6-4535-a195-22863f4e7d27", 32),
            (CODEMIE, "23dc4268-ecab-43bc-a16d-25e136c038e4", 12),
            (TURN2, "c72ed4c1-5de2-46b7-8403-c658500b6c50", 26),
            (OLD, "556d2e86-494c-4e6f-ba98-ce28538213d1", 16),
            (POMODORO, "d83ac5d7-a841-47c5-8e08-1cf1778c1c49", 83),
        ],
        ids=lambda v: v.name[:20] if isinstance(v, Path) else str(v)[:8],
    )
    def test_leaf_and_main_line(self, main: Path, leaf: str, path_messages: int) -> None:
        """The leaf is the last main-file record of the main line (a message, or the
        system/progress records that end the file below it), looked up by hand; every
        main-file message is on the path (these sessions never branch for real)."""
        tree = claude_code.read(main).tree
        assert tree.leaf_id == leaf
        assert len(messages(tree, tuple(e.id for e in tree.path()))) == path_messages
        assert tree.entries()[-1].id == leaf
        assert not tree.children(leaf)


class TestBigSession:
    """spotter/258c7280-…: compaction, a Task subagent, the compaction's own conversation."""

    @pytest.fixture(scope="class")
    @classmethod
    def tree(cls) -> SessionTree:
        return claude_code.read(BIG).tree

    def test_counts(self, tree: SessionTree) -> None:
        """353 messages, 344 on the path (the compaction included), 115 in the context
        (the README's figures); 188 tool calls, 22 responses with parallel calls."""
        assert len(messages(tree)) == 353
        on_path = [e for e in tree.path() if isinstance(e, (MessageEntry, Compaction))]
        assert len(on_path) == 344
        assert len(ptree.build_context(tree).messages) == 115
        calls = [
            b
            for e in messages(tree)
            if e.role == "assistant"
            for b in e.message["content"]
            if b["type"] == "toolCall"
        ]
        assert len(calls) == 188
        parallel = [
            e
            for e in messages(tree)
            if e.role == "assistant"
            and sum(b["type"] == "toolCall" for b in e.message["content"]) > 1
        ]
        assert len(parallel) == 22

    def test_leaf(self, tree: SessionTree) -> None:
        """The last message record is line 1859 (d3231929); three hook_progress records
        and the stop_hook_summary of line 1863 follow it: that is the leaf."""
        assert tree.leaf_id == "e48bcdbd-3567-43c5-978d-0568187510b7"
        ids = [e.id for e in tree.path()]
        assert ids[-5:] == [
            "d3231929-5c7c-41e7-9d4d-ef12e6c9b880",
            "e0109d68-b69d-4c08-ac62-00fdbaf75589",
            "7a366cc5-daba-44c9-a2cb-7ebab8c374c4",
            "bdf2c857-dca5-4acd-9e1e-e064b8119851",
            "e48bcdbd-3567-43c5-978d-0568187510b7",
        ]

    def test_compaction(self, tree: SessionTree) -> None:
        """Lines 1256-1257 are one compaction, linked under line 1255 (its
        logicalParentUuid); the context starts with its summary."""
        entry = tree["d46d6800-2f43-4360-ba84-c1de9c1ecbae"]
        assert isinstance(entry, Compaction)
        assert entry.tokens_before == 167094
        assert entry.first_kept_entry_id == entry.id
        assert entry.summary.startswith("This session is being continued")
        assert entry.details == {"trigger": "auto"}
        assert entry.extra["claudeCode"]["uuids"] == [
            "d46d6800-2f43-4360-ba84-c1de9c1ecbae",
            "58436800-0a29-451b-a8f5-3a0c59957945",
        ]
        assert entry.parent_id == "7c642069-996d-4ae0-a61c-554b35d36fb6"
        assert "58436800-0a29-451b-a8f5-3a0c59957945" not in tree
        ids = [e.id for e in tree.path()]
        assert entry.id in ids
        first = ptree.build_context(tree).messages[0]
        assert first["role"] == "compactionSummary"

    def test_subagent_is_its_own_root(self, tree: SessionTree) -> None:
        """agent-a881341 hangs under a marker root naming the Task call that started it
        (line 1480's result answers toolu_01VmaERAwhb19LGUwu9GenaK, a claude-code-guide
        Task); its 6 messages are below it, so their context is the subagent's own."""
        marker = tree["subagent:a881341"]
        assert isinstance(marker, Custom)
        assert marker.parent_id is None
        assert marker.data == {
            "agentId": "a881341",
            "file": "agent-a881341.jsonl",
            "toolCallId": "toolu_01VmaERAwhb19LGUwu9GenaK",
            "subagentType": "claude-code-guide",
        }
        below = [e for e in messages(tree) if tree.is_ancestor(marker.id, e.id)]
        assert len(below) == 6
        last = below[-1]
        context = ptree.build_context(tree, last.id).messages
        assert context[0]["role"] == "user"
        assert context[0]["content"].startswith("What is the output contract")

    def test_compaction_conversation_branches_off(self, tree: SessionTree) -> None:
        """agent-acompact-fffbd0's records hang under three main-file records: three
        markers, each a side branch off the main line."""
        markers = [
            e
            for e in tree.entries()
            if isinstance(e, Custom)
            and e.custom_type == "claude-code.subagent"
            and e.data["agentId"] == "acompact-fffbd0"
        ]
        assert len(markers) == 3
        main = {e.id for e in tree.path()}
        assert {m.parent_id for m in markers} == {
            "c4da3d33-5edb-41a0-a0fe-af94b1a46765",
            "defa1eda-49f2-49e3-a13d-42b1b8893c48",
            "7c642069-996d-4ae0-a61c-554b35d36fb6",
        }
        assert all(m.parent_id in main and m.id not in main for m in markers)

    def test_snapshots(self, tree: SessionTree) -> None:
        """28 file-history snapshots and 1,335 progress records (1,333 in the main file,
        2 in agent-a881341), kept."""
        kinds = Counter(e.custom_type for e in tree.entries() if isinstance(e, Custom))
        assert kinds["claude-code.file-history-snapshot"] == 28
        assert kinds["claude-code.progress"] == 1335


class TestSubagentLayouts:
    def test_layout_2_1(self) -> None:
        """turn-2/subagents/agent-a485154.jsonl: 27 sidechain messages under its marker."""
        tree = claude_code.read(TURN2).tree
        marker = tree["subagent:a485154"]
        below = [e for e in messages(tree) if tree.is_ancestor(marker.id, e.id)]
        assert len(below) == 27
        assert marker.parent_id is None

    def test_layout_2_0(self) -> None:
        """The two agent-*.jsonl beside the 2.0 main file (same sessionId) are read."""
        files = [p.name for p in claude_code.session_files(OLD)]
        assert files == [OLD.name, "agent-36541525.jsonl", "agent-50243ee8.jsonl"]
        tree = claude_code.read(OLD).tree
        assert "subagent:36541525" in tree
        assert "subagent:50243ee8" in tree
        assert "9dbb4e8d-73e8-4af5-9f90-c76b7404477c" in tree  # agent-50243ee8's prompt

    def test_unrelated_agent_file_ignored(self, tmp_path: Path) -> None:
        """An agent-*.jsonl of another session in the folder is not read."""
        main = tmp_path / OLD.name
        main.write_bytes(OLD.read_bytes())
        other = tmp_path / "agent-zzz.jsonl"
        other.write_text(
            json.dumps(
                {
                    "type": "user",
                    "uuid": "x",
                    "parentUuid": None,
                    "sessionId": "another",
                    "message": {"role": "user", "content": "hi"},
                }
            )
            + "\n"
        )
        assert [p.name for p in claude_code.session_files(main)] == [main.name]

    def test_progress_left_out_on_request(self) -> None:
        """keep_progress=False leaves progress records out, reports how many, and hangs
        what was below one under its parent."""
        said: list[str] = []
        tree = claude_code.read(
            SPOTTER / "short.jsonl", keep_progress=False, on_report=said.append
        ).tree
        assert said == ["left out 3 progress records"]
        assert tree["7d48cbd2-6615-4dd8-87f6-38f12b8167d6"].parent_id is None
        tree._check()


def user(uuid: str, parent: str | None, content: Any = "hi", **more: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": content},
        **more,
    }


def write(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


class TestBadInput:
    """Malformed files fail with an ImportFormatError naming the file, line and record."""

    def fails(self, path: Path, line: int | None, reason: str) -> ImportFormatError:
        with pytest.raises(ImportFormatError) as caught:
            claude_code.read(path)
        err = caught.value
        assert isinstance(err, ValueError)
        assert isinstance(err, ptree.SessionError)
        assert err.path == path
        assert err.line == line
        assert reason in err.reason, err.reason
        return err

    def test_garbled_middle_line(self, tmp_path: Path) -> None:
        """A copy of short.jsonl with line 7 cut in half."""
        lines = (SPOTTER / "short.jsonl").read_bytes().split(b"\n")
        lines[6] = lines[6][: len(lines[6]) // 2]
        bad = tmp_path / "short.jsonl"
        bad.write_bytes(b"\n".join(lines))
        self.fails(bad, 7, "not JSON")

    def test_torn_last_line(self, tmp_path: Path) -> None:
        """A file cut off in the middle of its last record."""
        data = (SPOTTER / "short.jsonl").read_bytes()
        bad = tmp_path / "short.jsonl"
        bad.write_bytes(data[: len(data) - 40])
        self.fails(bad, 15, "torn last line")

    def test_bad_utf8(self, tmp_path: Path) -> None:
        bad = tmp_path / "s.jsonl"
        bad.write_bytes(json.dumps(user("u1", None)).encode() + b'\n{"type": "\xff"}\n')
        self.fails(bad, 2, "not UTF-8")

    def test_not_an_object(self, tmp_path: Path) -> None:
        self.fails(
            write(tmp_path / "s.jsonl", [user("u1", None), [1, 2]]),
            2,
            "expected a JSON object, found a list",
        )

    def test_deeply_nested_line(self, tmp_path: Path) -> None:
        """JSON nested 100,000 deep is an error on its line, not a RecursionError."""
        bad = tmp_path / "s.jsonl"
        bad.write_text(json.dumps(user("u1", None)) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
        self.fails(bad, 2, "nested too deeply")

    @pytest.mark.parametrize("levels", [90, 600])
    def test_deep_content_is_kept_or_refused(self, tmp_path: Path, levels: int) -> None:
        """A tool input nested 90 deep imports, writes and loads; one nested 600 deep
        (readable JSON, but past ptree.frozen.MAX_DEPTH, issue 16) is refused with a typed
        error naming the line, never a RecursionError."""
        deep = '{"a":' * levels + '"x"' + "}" * levels
        call = (
            '{"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": {'
            '"id": "m1", "role": "assistant", "content": [{"type": "tool_use", '
            f'"id": "t1", "name": "T", "input": {deep}}}]}}}}'
        )
        path = tmp_path / "s.jsonl"
        path.write_text(json.dumps(user("u1", None)) + "\n" + call + "\n")
        if levels > ptree.frozen.MAX_DEPTH:
            with pytest.raises(
                ptree.formats.ImportFormatError, match=r":2: .*nested deeper than 100"
            ):
                claude_code.read(path)
            return
        tree = claude_code.read(path).tree
        ptree.dump(tree, tmp_path / "out.jsonl")
        again = ptree.load(tmp_path / "out.jsonl")
        entry = again["a1"]
        assert isinstance(entry, MessageEntry)
        value = entry.message["content"][0]["arguments"]
        depth = 0
        while isinstance(value, dict):
            value, depth = value["a"], depth + 1
        assert (depth, value) == (levels, "x")

    def test_record_fields(self, tmp_path: Path) -> None:
        """A uuid that is not a string, a message that is not an object, a tool_use
        without an id: each names its line and record."""
        self.fails(
            write(tmp_path / "a.jsonl", [user("u1", None), user(7, "u1")]),  # type: ignore[arg-type]
            2,
            "'uuid' must be a non-empty string",
        )
        err = self.fails(
            write(
                tmp_path / "b.jsonl",
                [{"type": "assistant", "uuid": "a9", "parentUuid": None, "message": "x"}],
            ),
            1,
            "needs a 'message' object",
        )
        assert err.record_id == "a9"
        self.fails(
            write(
                tmp_path / "c.jsonl",
                [
                    {
                        "type": "assistant",
                        "uuid": "a9",
                        "parentUuid": None,
                        "message": {"id": "m", "content": [{"type": "tool_use"}]},
                    }
                ],
            ),
            1,
            "tool_use block needs a string 'id'",
        )

    def test_cycle(self, tmp_path: Path) -> None:
        """Records whose parentUuid links go round are refused, naming one of them."""
        err = self.fails(
            write(tmp_path / "s.jsonl", [user("u1", "u2"), user("u2", "u1")]), 1, "cycle"
        )
        assert err.record_id == "u1"

    def test_missing_parent_and_duplicate(self, tmp_path: Path) -> None:
        """A parent the session does not have makes a root; a uuid written twice keeps
        the first record as the message and the copy as a custom entry."""
        tree = claude_code.read(
            write(
                tmp_path / "s.jsonl",
                [user("u1", "gone"), user("u1", None, "again"), user("u2", "u1")],
            )
        ).tree
        first = tree["u1"]
        assert isinstance(first, MessageEntry)
        assert first.parent_id is None
        assert first.message["content"] == "hi"
        copy = tree["u1#duplicate"]
        assert isinstance(copy, Custom)
        assert copy.custom_type == "claude-code.duplicate"
        assert tree.leaf_id == "u2"
        assert tree["u2"].parent_id == "u1"


# ---------------------------------------------------------------- an independent oracle


def oracle_message_tree(main: Path) -> dict[str, str | None]:
    """Each message's id -> the id of the message it follows, by formats.md's rules.

    Written from the doc alone, the plain way (no re-threading graph, just walks up
    ``parentUuid``): rule 1 (raw parent through records that give no message, a
    boundary through ``logicalParentUuid``), rules 2-4 (results chained after their
    call's response; everything else under the tail of a response), with the ids the
    doc recommends (a record's uuid, ``<uuid>#<n>`` for its n-th message).
    """
    recs = [r for f in claude_code.session_files(main) for r in records(f)]
    by_uuid: dict[str, dict[str, Any]] = {}
    for r in recs:
        if "uuid" in r:
            by_uuid.setdefault(r["uuid"], r)
    firsts = [r for r in recs if "uuid" in r and by_uuid[r["uuid"]] is r]
    summary_of: dict[str, dict[str, Any]] = {}
    for r in firsts:
        parent = by_uuid.get(r.get("parentUuid") or "")
        if (
            r["type"] == "user"
            and r.get("isCompactSummary")
            and parent is not None
            and parent.get("subtype") == "compact_boundary"
        ):
            summary_of.setdefault(parent["uuid"], r)
    summaries = {id(r) for r in summary_of.values()}
    # Responses: the first record's uuid names the message; calls -> response.
    response_of: dict[int, str] = {}
    first_of_mid: dict[tuple[str, Any], str] = {}
    call_owner: dict[str, str] = {}
    for r in firsts:
        if r["type"] != "assistant":
            continue
        key = (r.get("agentId") or "", r["message"].get("id"))
        first_of_mid.setdefault(key, r["uuid"])
        response_of[id(r)] = first_of_mid[key]
        for b in r["message"]["content"]:
            if b.get("type") == "tool_use":
                call_owner.setdefault(b["id"], first_of_mid[key])
    # Each user record's messages: [(id, kind, owner response or None)].
    made: dict[int, list[tuple[str, str, str | None]]] = {}
    for r in firsts:
        if r["type"] != "user" or id(r) in summaries:
            continue
        content = r["message"]["content"]
        blocks = [{"type": "text"}] if isinstance(content, str) else content
        out: list[tuple[str, str, str | None]] = []
        for b in blocks:
            if b.get("type") == "tool_result":
                out.append(("", "result", call_owner.get(b["tool_use_id"])))
        if (
            isinstance(content, str)
            or any(b.get("type") != "tool_result" for b in blocks)
            or not blocks
        ):
            out.append(("", "user", None))
        made[id(r)] = [
            (r["uuid"] if n == 0 else f"{r['uuid']}#{n + 1}", k, o)
            for n, (_, k, o) in enumerate(out)
        ]
    results_of: dict[str, list[str]] = {}
    for r in firsts:
        for mid, k, owner in made.get(id(r), []):
            if k == "result" and owner is not None:
                results_of.setdefault(owner, []).append(mid)

    def tail(response: str) -> str:
        return results_of.get(response, [response])[-1]

    def last_message(r: dict[str, Any]) -> str | None:
        """The message a record's children follow (None: it gives none)."""
        if r["type"] == "assistant":
            return tail(response_of[id(r)])
        if id(r) in summaries:
            return str(r["parentUuid"])  # the compaction
        if r.get("subtype") == "compact_boundary":
            return str(r["uuid"])
        if id(r) in made:
            mid, kind, owner = made[id(r)][-1]
            return tail(owner) if kind == "result" and owner is not None else mid
        return None

    def raw_parent(r: dict[str, Any]) -> str | None:
        pid = r.get("parentUuid")
        if pid is None and r.get("subtype") == "compact_boundary":
            pid = r.get("logicalParentUuid")
        seen = set()
        while pid is not None and pid in by_uuid and pid not in seen:
            seen.add(pid)
            above = by_uuid[pid]
            found = last_message(above)
            if found is not None:
                return found
            pid = above.get("parentUuid")
            if pid is None and above.get("subtype") == "compact_boundary":
                pid = above.get("logicalParentUuid")
        return None

    tree: dict[str, str | None] = {}
    for r in firsts:
        first_record = r["type"] == "assistant" and response_of[id(r)] == r["uuid"]
        if first_record or r.get("subtype") == "compact_boundary":
            tree[r["uuid"]] = raw_parent(r)
        elif id(r) in made:
            prev = raw_parent(r)
            for mid, kind, owner in made[id(r)]:
                if kind == "result" and owner is not None:
                    chain = [owner, *results_of[owner]]
                    tree[mid] = chain[chain.index(mid) - 1]
                    prev = tail(owner)
                else:
                    tree[mid] = prev
                    prev = mid
    return tree


def imported_message_tree(tree: SessionTree) -> dict[str, str | None]:
    """Each message entry (and compaction) -> its nearest message ancestor."""

    def is_message(e: ptree.Entry) -> bool:
        return isinstance(e, (MessageEntry, Compaction))

    out: dict[str, str | None] = {}
    for e in tree.entries():
        if not is_message(e):
            continue
        above = tree.parent(e.id)
        while above is not None and not is_message(above):
            above = tree.parent(above.id)
        out[e.id] = None if above is None else above.id
    return out


@pytest.mark.parametrize("main", ALL, ids=lambda p: p.name[:24])
def test_same_message_tree_as_the_rules(main: Path) -> None:
    """Every message of the session (main line, branches, subagents) is in the tree once
    and follows the message formats.md's rules say it follows."""
    assert imported_message_tree(claude_code.read(main).tree) == oracle_message_tree(main)


def assistant(
    uuid: str, parent: str | None, mid: str, block: dict[str, Any], **more: Any
) -> dict[str, Any]:
    message = {
        "id": mid,
        "role": "assistant",
        "model": more.pop("model", "claude-x"),
        "content": [block],
        "stop_reason": more.pop("stop_reason", None),
        "usage": {
            "input_tokens": 3,
            "output_tokens": 4,
            "cache_read_input_tokens": 5,
            "cache_creation_input_tokens": 6,
        },
    }
    return {
        "type": "assistant",
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s",
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": message,
        **more,
    }


def system(uuid: str, parent: str | None, subtype: str, **more: Any) -> dict[str, Any]:
    return {
        "type": "system",
        "uuid": uuid,
        "parentUuid": parent,
        "subtype": subtype,
        "sessionId": "s",
        "timestamp": "2026-01-01T00:00:02.000Z",
        **more,
    }


class TestHandMade:
    """What the real fixtures lack (formats.md lists them): rewinds, images, redacted
    thinking, API errors, a compaction whose older history is missing, old in-file
    sidechains, titles."""

    def test_rewind_is_a_branch(self, tmp_path: Path) -> None:
        """Editing the first prompt adds a second child under its parent: both branches
        stay; the leaf is the last message of the file, on the new branch."""
        tree = claude_code.read(
            write(
                tmp_path / "s.jsonl",
                [
                    system("s0", None, "informational"),
                    user("p1", "s0", "first try"),
                    assistant("a1", "p1", "m1", {"type": "text", "text": "answer 1"}),
                    user("p2", "s0", "second try"),
                    assistant("a2", "p2", "m2", {"type": "text", "text": "answer 2"}),
                ],
            )
        ).tree
        assert [c.id for c in tree.children("s0")] == ["p1", "p2"]
        assert [e.id for e in tree.path()] == ["s0", "p2", "a2"]
        assert tree.leaf_id == "a2"

    def test_usage_stop_reason_and_model(self, tmp_path: Path) -> None:
        tree = claude_code.read(
            write(
                tmp_path / "s.jsonl",
                [
                    user("p1", None),
                    assistant(
                        "a1", "p1", "m1", {"type": "text", "text": "hi"}, stop_reason="max_tokens"
                    ),
                ],
            )
        ).tree
        a1 = tree["a1"]
        assert isinstance(a1, MessageEntry)
        assert a1.message["usage"] == {
            "input": 3,
            "output": 4,
            "cacheRead": 5,
            "cacheWrite": 6,
            "totalTokens": 18,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        }
        assert a1.message["stopReason"] == "length"
        assert a1.message["timestamp"] == 1767225601000
        assert a1.timestamp == "2026-01-01T00:00:01.000Z"

    def test_images_and_redacted_thinking(self, tmp_path: Path) -> None:
        """Image blocks (in a prompt and in a tool result) become Pi image blocks;
        redacted thinking a redacted thinking block keeping its data."""
        image = {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
        }
        tree = claude_code.read(
            write(
                tmp_path / "s.jsonl",
                [
                    user("p1", None, [{"type": "text", "text": "see"}, image]),
                    assistant("a1", "p1", "m1", {"type": "redacted_thinking", "data": "opaque"}),
                    assistant(
                        "a2",
                        "a1",
                        "m1",
                        {
                            "type": "tool_use",
                            "id": "t1",
                            "name": "Read",
                            "input": {"path": "x.png"},
                        },
                    ),
                    user(
                        "r1",
                        "a2",
                        [
                            {
                                "type": "tool_result",
                                "tool_use_id": "t1",
                                "content": [image, {"type": "text", "text": "a picture"}],
                            }
                        ],
                    ),
                ],
            )
        ).tree
        p1, a1, r1 = tree["p1"], tree["a1"], tree["r1"]
        assert isinstance(p1, MessageEntry)
        assert isinstance(a1, MessageEntry)
        assert isinstance(r1, MessageEntry)
        png = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
        assert p1.message["content"] == [{"type": "text", "text": "see"}, png]
        assert a1.message["content"][0] == {
            "type": "thinking",
            "thinking": "",
            "redacted": True,
            "thinkingSignature": "opaque",
        }
        assert r1.message["content"] == [png, {"type": "text", "text": "a picture"}]
        assert r1.message["toolName"] == "Read"

    def test_api_error_message(self, tmp_path: Path) -> None:
        """A <synthetic> API error is an assistant message with stopReason error."""
        tree = claude_code.read(
            write(
                tmp_path / "s.jsonl",
                [
                    user("p1", None),
                    assistant(
                        "a1",
                        "p1",
                        "m1",
                        {"type": "text", "text": "API Error: overloaded"},
                        model="<synthetic>",
                        isApiErrorMessage=True,
                    ),
                ],
            )
        ).tree
        a1 = tree["a1"]
        assert isinstance(a1, MessageEntry)
        assert a1.message["stopReason"] == "error"
        assert a1.message["errorMessage"] == "API Error: overloaded"
        assert a1.message["model"] == "<synthetic>"

    def test_compaction_whose_history_is_missing(self, tmp_path: Path) -> None:
        """logicalParentUuid names a record the file does not have: the compaction
        starts a root; the context is its summary and what follows."""
        tree = claude_code.read(
            write(
                tmp_path / "s.jsonl",
                [
                    user("old", None, "before"),
                    system(
                        "b1",
                        None,
                        "compact_boundary",
                        logicalParentUuid="gone",
                        compactMetadata={"trigger": "manual", "preTokens": 1234},
                        content="Conversation compacted",
                    ),
                    user(
                        "s1",
                        "b1",
                        "This session is being continued...",
                        isCompactSummary=True,
                        isVisibleInTranscriptOnly=True,
                    ),
                    user("p2", "s1", "go on"),
                ],
            )
        ).tree
        compaction = tree["b1"]
        assert isinstance(compaction, Compaction)
        assert compaction.parent_id is None
        assert compaction.summary == "This session is being continued..."
        assert compaction.details == {"trigger": "manual"}
        assert tree["p2"].parent_id == "b1"
        context = ptree.build_context(tree).messages
        assert [m["role"] for m in context] == ["compactionSummary", "user"]

    def test_summary_without_boundary_is_a_user_message(self, tmp_path: Path) -> None:
        tree = claude_code.read(
            write(
                tmp_path / "s.jsonl",
                [
                    user("s1", None, "This session is being continued...", isCompactSummary=True),
                    user("p2", "s1", "go on"),
                ],
            )
        ).tree
        assert isinstance(tree["s1"], MessageEntry)

    def test_old_in_file_sidechain(self, tmp_path: Path) -> None:
        """Before 1.0.60 sidechain records sat in the main file: they go under a marker
        root and are never the leaf."""
        tree = claude_code.read(
            write(
                tmp_path / "s.jsonl",
                [
                    user("p1", None, "main"),
                    user("x1", None, "task prompt", isSidechain=True),
                    assistant(
                        "x2", "x1", "mx", {"type": "text", "text": "task done"}, isSidechain=True
                    ),
                    assistant("a1", "p1", "m1", {"type": "text", "text": "main answer"}),
                ],
            )
        ).tree
        marker = tree["x1"].parent_id
        assert marker is not None
        entry = tree[marker]
        assert isinstance(entry, Custom)
        assert entry.custom_type == "claude-code.subagent"
        assert entry.parent_id is None
        assert tree.leaf_id == "a1"

    def test_title_is_the_session_name(self, tmp_path: Path) -> None:
        """The latest custom-title names the session (a session_info first root); else
        the summary whose leafUuid is on the main line."""
        lines = [
            user("p1", None),
            assistant("a1", "p1", "m1", {"type": "text", "text": "x"}),
            {"type": "summary", "summary": "Elsewhere", "leafUuid": "zzz"},
            {"type": "summary", "summary": "Greeting", "leafUuid": "a1"},
        ]
        tree = claude_code.read(write(tmp_path / "s.jsonl", lines)).tree
        assert tree.session_name == "Greeting"
        assert tree.roots()[0].type == "session_info"
        assert tree.leaf_id == "L4"  # the last summary line hangs below the answer
        titled = claude_code.read(
            write(
                tmp_path / "t.jsonl",
                [*lines, {"type": "custom-title", "customTitle": "Mine", "sessionId": "s"}],
            )
        ).tree
        assert titled.session_name == "Mine"
