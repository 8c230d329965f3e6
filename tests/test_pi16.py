"""ptree reads, writes and builds context exactly like Pi 1.6 (``@earendil-works/pi-coding-agent``).

Every expected value here comes from Pi 1.6 itself, run by Node (``.ci/run`` installs
the package into ``.cache/pi16``; ``tests/interop/pi16.mjs`` drives it):

- hand-built scenarios for each change ``pi-1.6-changes.md`` describes, as files Pi
  opens and ptree loads strictly: the entries, leaf, labels, name and the context (and
  its provider form) at every entry must be equal, field for field;
- seeded random trees of every kind (hundreds), ptree's context against Pi's
  ``buildSessionContext`` at every entry, then written by ptree and opened by Pi;
- seeded random sessions that Pi writes through its own ``SessionManager`` API
  (branches, summaries, compactions, edits, forks), loaded by ptree strictly.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import ptree
from ptree import SessionTree, build_context, dump, load, thaw
from tests.helpers import missing

from .seeded import random_ops, random_tree
from .strategies import trees
from .test_context_pi_fixtures import _js_int, assert_same_as_pi

ROOT = Path(__file__).resolve().parent.parent
PI16 = ROOT / ".cache" / "pi16" / "node_modules" / "@earendil-works" / "pi-coding-agent"
SCRIPT = Path(__file__).resolve().parent / "interop" / "pi16.mjs"
TS = "2026-11-20T09:00:00.000Z"
HEADER = {"type": "session", "version": 3, "id": "s16", "timestamp": TS, "cwd": "/work/p"}
# Hundreds of random sessions in CI; more with PTREE_PI16_SESSIONS=2000.
SESSIONS = int(os.environ.get("PTREE_PI16_SESSIONS", "300"))


@pytest.fixture(scope="module")
def pi16() -> Path:
    """Pi 1.6's package; under CI its absence is a failure, not a skip."""
    if shutil.which("node") is None or not (PI16 / "package.json").is_file():
        missing("Node and Pi 1.6 (.cache/pi16, set up by .ci/run) are absent")
    version = json.loads((PI16 / "package.json").read_text())["version"]
    assert version.startswith("1.6."), version
    return PI16


def run(pkg: Path, jobs: list[dict[str, Any]]) -> list[Any]:
    """Pi 1.6's answers to a batch of jobs (one Node process)."""
    done = subprocess.run(
        ["node", str(SCRIPT), str(pkg)],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout, parse_int=_js_int)  # type: ignore[no-any-return]


def write_file(path: Path, *records: Any, end: str = "\n") -> Path:
    """A session file by hand: dicts as compact JSON lines, strings as they are."""
    lines = [r if isinstance(r, str) else json.dumps(r, separators=(",", ":")) for r in records]
    path.write_bytes(("\n".join(lines) + end).encode())
    return path


def assert_same_view(tree: SessionTree, view: dict[str, Any], where: object = None) -> None:
    """What ptree loaded is what Pi 1.6 opened: header, entries (field for field), leaf,
    labels, name, and the context and provider messages at the leaf and every entry."""
    assert "error" not in view, (where, view.get("error"))
    header = tree.header
    assert header is not None
    assert header.to_json() == view["header"], where
    # Pi lists an exact duplicate line twice; ptree keeps one entry.
    pi_entries = list({json.dumps(e, sort_keys=True): e for e in view["entries"]}.values())
    assert [thaw(e.to_json()) for e in tree.entries()] == pi_entries, where
    assert tree.leaf_id == view["leafId"], where
    assert tree.labels() == view["labels"], where
    assert tree.session_name == view["name"], where
    assert_same_as_pi(build_context(tree), view["context"], (where, "leaf"), "1.6")
    for entry_id, pi in view["contexts"].items():
        assert_same_as_pi(build_context(tree, entry_id), pi, (where, entry_id), "1.6")


def e(i: str, parent: str | None, type_: str = "message", **fields: Any) -> dict[str, Any]:
    """An entry line."""
    return {"type": type_, "id": i, "parentId": parent, "timestamp": TS, **fields}


def m(role: str, text: Any = None, **fields: Any) -> dict[str, Any]:
    """A message; ``text`` defaults to the role."""
    return {"role": role, "content": role if text is None else text, "timestamp": 1, **fields}


def chain(*items: tuple[str, str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries in a line: (id, kind, fields), each the child of the one before."""
    out: list[dict[str, Any]] = []
    for i, type_, fields in items:
        out.append(e(i, out[-1]["id"] if out else None, type_, **fields))
    return out


SYSTEM_1 = m("system", "Base.", sections={"a": "A1", "b": "B"}, toolsAdded=[{"name": "read"}])
SYSTEM_2 = m("system", "", sections={"a": "A2", "b": None}, toolsRemoved=[{"name": "read"}])
SYSTEM_3 = m("system", [{"type": "text", "text": "Later."}], toolsAdded=[{"name": "bash"}])
USAGE = {
    "input": 0,
    "output": 0,
    "cacheRead": 50000,
    "cacheWrite": 0,
    "totalTokens": 50000,
    "cost": {"input": 0, "output": 0, "cacheRead": 0.015, "cacheWrite": 0, "total": 0.015},
}


def checkpoint(*systems: dict[str, Any]) -> dict[str, Any] | None:
    """Pi 1.6's fold, for a checkpoint stored in a hand-built file (ptree's own fold)."""
    out = ptree.context.current_system_message(systems)
    return None if out is None else thaw(out)


SCENARIOS: dict[str, list[Any]] = {
    # S1 u1 a1 u2 S2 a2 u3 C(first=u2) S3 u4: checkpoint, summary, u2 a2 u3, S3, u4.
    "checkpoint": chain(
        ("S1", "message", {"message": SYSTEM_1}),
        ("u1", "message", {"message": m("user")}),
        ("a1", "message", {"message": m("assistant", provider="p", model="x")}),
        ("u2", "message", {"message": m("user")}),
        ("S2", "message", {"message": SYSTEM_2}),
        ("a2", "message", {"message": m("assistant")}),
        ("u3", "message", {"message": m("user")}),
        (
            "C",
            "compaction",
            {
                "summary": "s",
                "firstKeptEntryId": "u2",
                "tokensBefore": 9,
                "usage": USAGE,
                "systemMessage": checkpoint(SYSTEM_1, SYSTEM_2),
            },
        ),
        ("S3", "message", {"message": SYSTEM_3}),
        ("u4", "message", {"message": m("user")}),
    ),
    # System messages in the kept range are dropped even without a checkpoint.
    "system_dropped_without_checkpoint": chain(
        ("u1", "message", {"message": m("user")}),
        ("S1", "message", {"message": SYSTEM_1}),
        ("a1", "message", {"message": m("assistant")}),
        ("C", "compaction", {"summary": "s", "firstKeptEntryId": "S1", "tokensBefore": 1}),
        ("S2", "message", {"message": SYSTEM_2}),
    ),
    # Retain-none: naming itself, missing (0.73.1 wrote these), null.
    "retain_none_self": chain(
        ("u1", "message", {"message": m("user")}),
        ("a1", "message", {"message": m("assistant")}),
        ("C", "compaction", {"summary": "s", "firstKeptEntryId": "C", "tokensBefore": 1}),
        ("u2", "message", {"message": m("user")}),
    ),
    "retain_none_missing": chain(
        ("u1", "message", {"message": m("user")}),
        ("C", "compaction", {"summary": "s", "tokensBefore": 1, "details": {"x": 1}}),
        ("u2", "message", {"message": m("user")}),
    ),
    "retain_none_null": chain(
        ("u1", "message", {"message": m("user")}),
        ("C", "compaction", {"summary": "s", "firstKeptEntryId": None, "tokensBefore": 1}),
        ("u2", "message", {"message": m("user")}),
    ),
    # u1 a1 r1 E(u1, "x") E(r1, null) u2.
    "edits": chain(
        ("u1", "message", {"message": m("user")}),
        ("a1", "message", {"message": m("assistant")}),
        ("r1", "message", {"message": m("toolResult", toolCallId="c", toolName="read")}),
        ("E1", "context_edit", {"targetId": "u1", "replacement": {"content": "x"}}),
        ("E2", "context_edit", {"targetId": "r1", "replacement": None}),
        ("E3", "context_edit", {"targetId": "a1", "replacement": {"content": "as text"}}),
        ("u2", "message", {"message": m("user")}),
    ),
    # u1 E(u1, "x") u2 E(u1, null) u3, and a branch growing at u2.
    "latest_edit_wins": [
        *chain(
            ("u1", "message", {"message": m("user")}),
            ("E1", "context_edit", {"targetId": "u1", "replacement": {"content": "x"}}),
            ("u2", "message", {"message": m("user")}),
            ("E2", "context_edit", {"targetId": "u1", "replacement": None}),
            ("u3", "message", {"message": m("user")}),
        ),
        e("b1", "u2", message=m("assistant", "on a branch")),
    ],
    # u1 a1 u2 E(u2, "x") a3 C(first=u2) E(a1, "y") u4: a1 was summarised.
    "edit_before_kept_range": chain(
        ("u1", "message", {"message": m("user")}),
        ("a1", "message", {"message": m("assistant")}),
        ("u2", "message", {"message": m("user")}),
        ("E1", "context_edit", {"targetId": "u2", "replacement": {"content": "x"}}),
        ("a3", "message", {"message": m("assistant")}),
        ("C", "compaction", {"summary": "s", "firstKeptEntryId": "u2", "tokensBefore": 1}),
        ("E2", "context_edit", {"targetId": "a1", "replacement": {"content": "y"}}),
        ("u4", "message", {"message": m("user")}),
    ),
    # Edits aimed at what Pi's API refuses: summaries, system and bash messages, the
    # compaction itself (checkpoint and summary), custom messages, unknown ids.
    "edit_any_target": chain(
        ("S1", "message", {"message": SYSTEM_1}),
        ("u1", "message", {"message": m("user")}),
        ("B", "branch_summary", {"fromId": "root", "summary": "tried"}),
        ("x", "message", {"message": {"role": "bashExecution", "command": "ls", "output": ""}}),
        (
            "M",
            "custom_message",
            {"customType": "t", "content": "note", "display": True},
        ),
        ("E1", "context_edit", {"targetId": "S1", "replacement": {"content": "no"}}),
        ("E2", "context_edit", {"targetId": "B", "replacement": None}),
        ("E3", "context_edit", {"targetId": "x", "replacement": {"content": "no"}}),
        ("E4", "context_edit", {"targetId": "M", "replacement": {"content": "edited"}}),
        ("E5", "context_edit", {"targetId": "nobody", "replacement": None}),
        ("E6", "context_edit", {"targetId": "E1", "replacement": None}),
        (
            "C",
            "compaction",
            {
                "summary": "s",
                "firstKeptEntryId": "u1",
                "tokensBefore": 1,
                "systemMessage": checkpoint(SYSTEM_1),
            },
        ),
        ("E7", "context_edit", {"targetId": "C", "replacement": {"content": "no"}}),
        ("u2", "message", {"message": m("user")}),
        ("E8", "context_edit", {"targetId": "C", "replacement": None}),
    ),
    # Null or absent content; display null; content null on custom messages.
    "null_content": chain(
        ("S", "message", {"message": {"role": "system", "content": None, "timestamp": 0}}),
        ("u", "message", {"message": {"role": "user", "timestamp": 1}}),
        ("a", "message", {"message": {"role": "assistant", "content": None}}),
        ("r", "message", {"message": {"role": "toolResult", "toolCallId": "c"}}),
        ("b", "message", {"message": {"role": "bashExecution", "command": "ls"}}),
        ("M1", "custom_message", {"customType": "t", "content": None, "display": None}),
        ("M2", "custom_message", {"customType": "t", "details": None}),
        ("E", "context_edit", {"targetId": "M2", "replacement": {"content": "now"}}),
    ),
    # Usage entries: never in context, no state; on compactions and summaries too.
    "usage": chain(
        ("u1", "message", {"message": m("user")}),
        (
            "U",
            "usage",
            {
                "kind": "cache_warm",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": USAGE,
                "note": "extension override",
            },
        ),
        ("U2", "usage", {"kind": "other", "provider": "p", "model": "m", "usage": USAGE}),
        ("B", "branch_summary", {"fromId": "root", "summary": "went back", "usage": USAGE}),
    ),
    # fromId: the abandoned leaf (1.6), the entry moved to (0.73.1), "root".
    "from_id": [
        *chain(
            ("u1", "message", {"message": m("user")}),
            ("a1", "message", {"message": m("assistant")}),
        ),
        e("B1", "u1", "branch_summary", fromId="a1", summary="abandoned a1"),
        e("B2", "u1", "branch_summary", fromId="u1", summary="0.73.1 style"),
        e("B3", None, "branch_summary", fromId="root", summary="from nothing"),
    ],
    # Session names, trimmed JavaScript's way.
    "names": chain(
        ("u1", "message", {"message": m("user")}),
        ("N1", "session_info", {"name": "  named  "}),
        ("N2", "session_info", {"name": " \u001c "}),
    ),
    "name_bom": chain(
        ("u1", "message", {"message": m("user")}),
        ("N1", "session_info", {"name": "\ufeff"}),
    ),
    "name_nel": chain(
        ("u1", "message", {"message": m("user")}),
        ("N1", "session_info", {"name": "\u0085x\u0085\u3000"}),
    ),
    # New optional message fields pass through.
    "message_fields": chain(
        (
            "a",
            "message",
            {
                "message": m(
                    "assistant",
                    provider="p",
                    model="m",
                    thinkingLevel="high",
                    providerThinkingLevel="max",
                    responseModel="m-2026",
                    responseId="r1",
                    diagnostics=[{"k": 1}],
                )
            },
        ),
        (
            "r",
            "message",
            {"message": m("toolResult", usage=USAGE, durationMs=12, nestedCalls=[])},
        ),
    ),
}


class TestScenarios:
    """Each change of Pi 1.6, as a file: ptree (strict) sees what Pi 1.6 sees."""

    def test_every_scenario_at_every_entry(self, pi16: Path, tmp_path: Path) -> None:
        """Header, entries, leaf, labels, name, and the context and provider messages at
        the leaf and at every entry, equal to Pi 1.6's, for every scenario."""
        files = {
            name: write_file(tmp_path / f"{name}.jsonl", HEADER, *entries)
            for name, entries in SCENARIOS.items()
        }
        views = run(pi16, [{"open": str(f)} for f in files.values()])
        for (name, path), view in zip(files.items(), views, strict=True):
            assert_same_view(load(path), view, name)

    def test_the_doc_examples(self, pi16: Path, tmp_path: Path) -> None:
        """The examples of pi-1.6-changes.md give what the page says (by hand) and what
        Pi 1.6 gives."""
        files = {n: write_file(tmp_path / f"{n}.jsonl", HEADER, *SCENARIOS[n]) for n in SCENARIOS}

        def roles_at(name: str, leaf: str | None = None) -> list[tuple[str, Any]]:
            ctx = build_context(load(files[name]), leaf)
            return [(x["role"], x.get("content", x.get("summary"))) for x in ctx.messages]

        assert [r for r, _ in roles_at("checkpoint")] == [
            "system",
            "compactionSummary",
            "user",
            "assistant",
            "user",
            "system",
            "user",
        ]
        assert roles_at("retain_none_self") == [("compactionSummary", "s"), ("user", "user")]
        assert roles_at("retain_none_missing") == roles_at("retain_none_null")
        assert roles_at("edits") == [
            ("user", "x"),
            ("assistant", [{"type": "text", "text": "as text"}]),
            ("user", "user"),
        ]
        assert roles_at("edits", "a1") == [("user", "user"), ("assistant", "assistant")]
        assert roles_at("latest_edit_wins", "u3") == [("user", "user"), ("user", "user")]
        assert roles_at("latest_edit_wins", "b1") == [
            ("user", "x"),
            ("user", "user"),
            ("assistant", "on a branch"),
        ]
        assert roles_at("edit_before_kept_range") == [
            ("compactionSummary", "s"),
            ("user", "x"),
            ("assistant", "assistant"),
            ("user", "user"),
        ]

    def test_bom_is_refused_by_both(self, pi16: Path, tmp_path: Path) -> None:
        """A byte-order mark: Pi 1.6 refuses the file, and so does ptree (strictly and
        leniently); neither touches it."""
        path = tmp_path / "bom.jsonl"
        data = b"\xef\xbb\xbf" + json.dumps(HEADER).encode() + b"\n"
        data += json.dumps(e("u1", None, message=m("user"))).encode() + b"\n"
        path.write_bytes(data)
        (view,) = run(pi16, [{"open": str(path)}])
        assert "not a valid" in view["error"]
        for strict in (True, False):
            with pytest.raises(ptree.SessionFileError, match="byte-order mark"):
                load(path, strict=strict)
        assert path.read_bytes() == data

    def test_exact_duplicate_lines(self, pi16: Path, tmp_path: Path) -> None:
        """Pi 0.73.1 flushed whole sessions twice: header and entries repeated.  ptree
        reads them as Pi 1.6 does (one entry each, the leaf the last line's id), warning;
        the same id with other content stays an error."""
        entries = chain(
            ("u1", "message", {"message": m("user")}),
            ("a1", "message", {"message": m("assistant")}),
        )
        path = write_file(tmp_path / "dup.jsonl", HEADER, *entries, HEADER, *entries)
        (view,) = run(pi16, [{"open": str(path)}])
        with pytest.warns(ptree.SessionFileWarning) as record:
            tree = load(path)
        assert [str(w.message).partition(": ")[2] for w in record] == [
            "skipped a second session header",
            "skipped an exact duplicate of line 2 (entry 'u1')",
            "skipped an exact duplicate of line 3 (entry 'a1')",
        ]
        assert len(view["entries"]) == 4
        assert len(tree) == 2
        assert_same_view(tree, view)
        # The leaf is the last line's id even when the repeated line is an earlier one.
        path = write_file(tmp_path / "dup2.jsonl", HEADER, *entries, entries[0])
        (view,) = run(pi16, [{"open": str(path)}])
        with pytest.warns(ptree.SessionFileWarning):
            tree = load(path)
        assert (tree.leaf_id, view["leafId"]) == ("u1", "u1")
        assert_same_view(tree, view)
        other = {**entries[0], "message": m("user", "changed")}
        path = write_file(tmp_path / "dup3.jsonl", HEADER, *entries, other)
        with pytest.raises(ptree.SessionFileError, match=r":4: duplicate id 'u1'"):
            load(path)

    def test_missing_final_newline_is_repaired_on_the_next_append(
        self, pi16: Path, tmp_path: Path
    ) -> None:
        """A last line without its newline: ptree's next commit starts on a fresh line
        (as Pi 1.6 repairs it when opening), and Pi 1.6 then reads every entry."""
        entries = chain(("u1", "message", {"message": m("user")}))
        path = write_file(tmp_path / "open.jsonl", HEADER, *entries, end="")
        with ptree.SessionWriter(path) as writer:
            writer.commit(writer.value.append({"role": "user", "content": "next"}, id="u2"))
        (view,) = run(pi16, [{"open": str(path)}])
        assert [x["id"] for x in view["entries"]] == ["u1", "u2"]
        assert_same_view(load(path), view)

    def test_lenient_keeps_entries_with_wrongly_typed_optional_fields(
        self, pi16: Path, tmp_path: Path
    ) -> None:
        """Pi keeps an entry whose optional field has the wrong type; ptree's lenient
        loader keeps it too (with a warning, the field set aside and written back), so
        its children keep their parent and the context matches Pi's; strict refuses."""
        entries = chain(
            ("u1", "message", {"message": m("user")}),
            ("B", "branch_summary", {"fromId": "u1", "summary": "s", "fromHook": "yes"}),
            ("u2", "message", {"message": m("user")}),
        )
        path = write_file(tmp_path / "odd.jsonl", HEADER, *entries)
        with pytest.raises(ptree.SessionFileError, match=r":3: .*fromHook"):
            load(path)
        with pytest.warns(ptree.SessionFileWarning, match="kept entry 'B'"):
            tree = load(path, strict=False)
        (view,) = run(pi16, [{"open": str(path)}])
        assert_same_view(tree, view)
        assert tree["B"].to_json()["fromHook"] == "yes"

    def test_lenient_set_aside_fields_reach_the_context_as_pi_passes_them(
        self, pi16: Path, tmp_path: Path
    ) -> None:
        """Fields the lenient loader sets aside for their type (a custom message's
        ``display`` and ``content``, a compaction's ``systemMessage``) still reach the
        context (and the provider messages) as Pi 1.6 passes them, at every entry."""
        entries = chain(
            ("u1", "message", {"message": m("user")}),
            ("c1", "custom_message", {"customType": "n", "content": "a", "display": "yes"}),
            ("c2", "custom_message", {"customType": "n", "content": 5, "display": 0}),
            ("c3", "custom_message", {"customType": "n", "content": {"k": 1}, "display": []}),
            ("c4", "custom_message", {"customType": "n", "content": False}),
            (
                "C",
                "compaction",
                {
                    "summary": "s",
                    "firstKeptEntryId": "c1",
                    "tokensBefore": 9,
                    "systemMessage": {"role": 7, "content": "odd"},
                },
            ),
            ("a1", "message", {"message": m("assistant", [{"type": "text", "text": "ok"}])}),
            ("E", "context_edit", {"targetId": "C", "replacement": None}),
            (
                "D",
                "compaction",
                {
                    "summary": "t",
                    "firstKeptEntryId": "a1",
                    "tokensBefore": 9,
                    "systemMessage": "just text",
                },
            ),
            ("u2", "message", {"message": m("user")}),
        )
        path = write_file(tmp_path / "aside.jsonl", HEADER, *entries)
        with pytest.warns(ptree.SessionFileWarning):
            tree = load(path, strict=False)
        assert tree["c1"].extra == {"display": "yes"}  # set aside, as the test means
        (view,) = run(pi16, [{"open": str(path)}])
        assert_same_view(tree, view)
        at_c4 = thaw(build_context(tree, "c4").messages)
        assert [x.get("display", "absent") for x in at_c4[1:]] == ["yes", 0, [], "absent"]
        assert [x["content"] for x in at_c4[1:]] == ["a", 5, {"k": 1}, False]

    def test_fork_relinks_like_pi(self, pi16: Path, tmp_path: Path) -> None:
        """ptree.branching.fork and Pi 1.6's createBranchedSession give the same entries (but for
        the new label ids), parents, firstKeptEntryId remapping, label times and
        context."""
        ops: list[list[Any]] = [
            ["message", m("user", "q")],
            ["label", 0, "first"],
            ["message", m("assistant", "a", provider="p", model="x")],
            ["label", 2, "answer"],
            ["message", m("user", "more")],
            ["compaction", "sum", 3, 10, None, None, None],
            ["message", m("user", "after")],
            ["label", 0, "renamed"],
            ["fork", 6],
        ]
        (done,) = run(pi16, [{"write": str(tmp_path), "ops": ops}])
        source, forked = done["files"]
        tree = load(source["file"])
        mine = ptree.branching.fork(tree, done["results"][6], parent_session=source["file"])
        pi_entries = forked["view"]["entries"]
        ours = [thaw(x.to_json()) for x in mine.entries()]
        not_labels = [x for x in pi_entries if x["type"] != "label"]
        assert [x for x in ours if x["type"] != "label"] == not_labels
        strip = [{k: v for k, v in x.items() if k not in ("id", "parentId")} for x in ours]
        pi_strip = [{k: v for k, v in x.items() if k not in ("id", "parentId")} for x in pi_entries]
        assert strip == pi_strip
        assert mine.labels() == forked["view"]["labels"]
        assert_same_as_pi(build_context(mine), forked["view"]["context"], "fork", "1.6")

    def test_move_with_summary_writes_what_pi_writes(self, pi16: Path, tmp_path: Path) -> None:
        """branchWithSummary and ptree.branching.move_with_summary (to a non-message target, so
        both stay there) write the same fromId (the abandoned leaf), parent and
        summary."""
        ops: list[list[Any]] = [
            ["message", m("user", "q")],
            ["thinking", "high"],
            ["message", m("assistant", "a")],
            ["branch_summary", 1, "went back", None, None, None],
        ]
        (done,) = run(pi16, [{"write": str(tmp_path), "ops": ops}])
        pi_summary = done["files"][0]["view"]["entries"][-1]
        tree = load(done["files"][0]["file"]).move_to(done["results"][2])
        moved = ptree.branching.move_with_summary(tree, done["results"][1], "went back").tree.leaf
        assert isinstance(moved, ptree.BranchSummary)
        assert (moved.from_id, moved.parent_id, moved.summary) == (
            pi_summary["fromId"],
            pi_summary["parentId"],
            pi_summary["summary"],
        )


def _tree_jobs(batch: list[SessionTree]) -> list[dict[str, Any]]:
    return [
        {"entries": [thaw(x.to_json()) for x in t.entries()], "leaves": list(t.ids())}
        for t in batch
    ]


def _check_trees(pkg: Path, batch: list[SessionTree], tmp: Path, label: str) -> None:
    """Context at every entry on the raw entries, then as files ptree wrote."""
    results = run(pkg, _tree_jobs(batch))
    for n, (tree, per_leaf) in enumerate(zip(batch, results, strict=True)):
        for leaf, pi in zip(tree.ids(), per_leaf, strict=True):
            assert_same_as_pi(build_context(tree, leaf), pi, (label, n, leaf), "1.6")
    paths = []
    for n, tree in enumerate(batch):
        if not tree:
            continue
        path = tmp / f"{label}-{n}.jsonl"
        paths.append((n, path, dump(tree, path)))
    views = run(pkg, [{"open": str(p)} for _, p, _ in paths])
    for (n, path, saved), view in zip(paths, views, strict=True):
        assert_same_view(load(path), view, (label, n))
        assert load(path) == saved


class TestRandomTrees:
    """Seeded random trees of every kind: ptree's context is Pi 1.6's at every entry,
    and the files ptree writes open in Pi 1.6 with the same entries and contexts."""

    def test_seeded_trees(self, pi16: Path, tmp_path: Path) -> None:
        """SESSIONS trees (300 by default) of up to 40 entries each, one Node run."""
        batch = [
            random_tree(random.Random(seed), random.Random(-seed).randint(1, 40))
            for seed in range(SESSIONS)
        ]
        _check_trees(pi16, batch, tmp_path, "seed")

    @settings(
        max_examples=4,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        suppress_health_check=[HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    )
    @given(st.lists(trees(max_steps=20, pi16=True), min_size=10, max_size=10))
    def test_hypothesis_trees(
        self, pi16: Path, tmp_path_factory: pytest.TempPathFactory, batch: list[SessionTree]
    ) -> None:
        """Hypothesis's trees with Pi 1.6's kinds (its shapes and edge cases)."""
        _check_trees(pi16, batch, tmp_path_factory.mktemp("pi16"), "hyp")


class TestWriterCommits:
    """Trees committed entry by entry through SessionWriter open in Pi 1.6 with ptree's
    context at the leaf and at every entry (leaf records included: Pi reads them as
    unknown kinds, which change nothing)."""

    def test_seeded_commits(self, pi16: Path, tmp_path: Path) -> None:
        batch = [random_tree(random.Random(1000 + seed), 30) for seed in range(40)]
        paths = []
        for n, tree in enumerate(batch):
            path = tmp_path / f"w{n}.jsonl"
            with ptree.SessionWriter(path, fsync=False) as writer:
                value = writer.value
                for entry in tree.entries():
                    value = writer.commit(value.insert(entry))
                    if random.Random(n).random() < 0.3:
                        value = writer.commit(value.move_to(entry.parent_id))
                writer.commit(value.move_to(tree.leaf_id))
            assert load(path) == tree.with_header(load(path).header)
            paths.append(path)
        views = run(pi16, [{"open": str(p)} for p in paths])
        for n, (tree, view) in enumerate(zip(batch, views, strict=True)):
            assert "error" not in view, view
            assert_same_as_pi(build_context(tree), view["context"], (n, "leaf"), "1.6")
            for entry_id in tree.ids():
                pi = view["contexts"][entry_id]
                assert_same_as_pi(build_context(tree, entry_id), pi, (n, entry_id), "1.6")


class TestPiWrites:
    """Sessions Pi 1.6 writes through its own API load strictly in ptree as Pi sees them."""

    def test_seeded_sessions(self, pi16: Path, tmp_path: Path) -> None:
        """SESSIONS/2 scripts of up to 40 SessionManager calls (forks included): every
        file Pi wrote loads strictly with Pi's entries, leaf, labels, name and context
        at every entry."""
        count = max(SESSIONS // 2, 10)
        jobs = []
        for seed in range(count):
            rng = random.Random(seed)
            d = tmp_path / f"s{seed}"
            jobs.append({"write": str(d), "ops": random_ops(rng, rng.randint(2, 40))})
        files = 0
        for seed, done in enumerate(run(pi16, jobs)):
            for written in done["files"]:
                assert_same_view(load(written["file"]), written["view"], (seed, written["file"]))
                files += 1
        assert files >= count
