"""The ``ptree`` command, run through a real subprocess as a user would type it.

Golden outputs live in ``tests/golden/``; ``PTREE_UPDATE_GOLDEN=1`` rewrites them from
the current output (then review the diff).
"""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

import ptree
from tests.helpers import golden, missing
from tests.test_importers import gpt_conversation, webui_chat

GOLDEN = Path(__file__).parent / "golden"
PLANS = GOLDEN / "plans.jsonl"
HEADER = (
    '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-05T09:00:00.000Z","cwd":"/w"}'
)


def run(
    *argv: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m ptree ARGV`` with captured output (not a terminal)."""
    return subprocess.run(
        [sys.executable, "-m", "ptree", *map(str, argv)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def message(eid: str, parent: str | None, text: str = "hi") -> str:
    """One message line of a session file."""
    return json.dumps(
        {
            "type": "message",
            "id": eid,
            "parentId": parent,
            "timestamp": "2026-01-05T09:00:01.000Z",
            "message": {"role": "user", "content": text},
        }
    )


def session_file(tmp_path: Path, *lines: str, name: str = "s.jsonl", end: str = "\n") -> Path:
    """A session file of these lines (the header first unless a line is given for it)."""
    path = tmp_path / name
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


def assert_one_line_error(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit status 1, nothing on stdout, exactly one line on stderr, no traceback."""
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    for needle in needles:
        assert needle in done.stderr


class TestShow:
    def test_golden_drawing(self) -> None:
        """The drawing of the sample session matches the golden file."""
        done = run("show", PLANS)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        golden("show_plans.txt", done.stdout)

    def test_golden_ascii_folded(self) -> None:
        """--ascii --fold 2 matches its golden file."""
        done = run("show", PLANS, "--ascii", "--fold", "2")
        assert done.returncode == 0, done.stderr
        golden("show_plans_ascii_fold2.txt", done.stdout)

    def test_golden_several_roots(self, tmp_path: Path) -> None:
        """Several roots, a branch inside a branch, and no session name."""
        path = session_file(
            tmp_path,
            HEADER,
            message("r1", None, "first root"),
            message("r2", None, "second root"),
            message("x", "r2", "left"),
            message("y", "r2", "right"),
            message("y1", "y", "deeper"),
            message("y2", "y", "other"),
            message("z", "r2", "third"),
        )
        done = run("show", path)
        assert done.returncode == 0, done.stderr
        golden("show_roots.txt", done.stdout)

    def test_json_is_the_library_picture(self) -> None:
        """--json prints tree_to_json of the loaded tree."""
        done = run("show", PLANS, "--json")
        assert done.returncode == 0, done.stderr
        from ptree.cli.render import tree_to_json

        assert json.loads(done.stdout) == json.loads(json.dumps(tree_to_json(ptree.load(PLANS))))

    def test_no_colour_when_piped_colour_when_asked(self) -> None:
        """Piped output has no escape codes; --color always has them; NO_COLOR is plain."""
        assert "\x1b[" not in run("show", PLANS).stdout
        assert "\x1b[" in run("show", PLANS, "--color", "always").stdout
        assert "\x1b[" not in run("show", PLANS, env={"NO_COLOR": "1"}).stdout

    def test_colour_on_a_terminal_unless_no_color(self) -> None:
        """On a terminal (a pty) the drawing is coloured, unless NO_COLOR is set."""
        assert "\x1b[" in on_terminal("show", str(PLANS))
        assert "\x1b[" not in on_terminal("show", str(PLANS), env={"NO_COLOR": "1"})

    def test_large_session_shows_every_entry(self, tmp_path: Path) -> None:
        """A 100,000-entry linear session draws one line per entry (plus the summary)."""
        lines = [HEADER] + [
            message(f"m{i}", f"m{i - 1}" if i else None, f"n{i}") for i in range(100_000)
        ]
        path = session_file(tmp_path, *lines)
        done = run("show", path)
        assert done.returncode == 0, done.stderr
        out = done.stdout.splitlines()
        assert len(out) == 100_001
        assert out[-1] == "* m99999 user: n99999  ← leaf"
        folded = run("show", path, "--fold", "10").stdout.splitlines()
        assert folded[6] == "* … 99989 more"

    def test_showing_a_file_loads_no_store_importer_or_framework(self) -> None:
        """``show FILE`` pays at start-up only for what it uses: telling a file from a
        store URL imports no store (nor asyncio and ssl, which the stores pull in)."""
        script = (
            "import contextlib, io, json, sys\nimport ptree.cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    ptree.cli.main(['show', {str(PLANS)!r}])\n"
            "print(json.dumps(sorted(sys.modules)))"
        )
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        loaded = set(json.loads(done.stdout.splitlines()[-1]))
        heavy = ("ptree.stores", "ptree.integrations", "ptree.providers", "asyncio", "ssl")
        assert sorted(m for m in loaded if m.startswith(heavy)) == []
        assert "ptree.formats._common" not in loaded

    def test_lenient_shows_a_damaged_file_with_warnings(self, tmp_path: Path) -> None:
        """--lenient draws what it can and warns, one line per problem, on stderr."""
        path = session_file(tmp_path, HEADER, message("a", None), "{broken", message("b", "a"))
        assert_one_line_error(run("show", path), "s.jsonl:3")
        done = run("show", path, "--lenient")
        assert done.returncode == 0
        assert "b user: hi  ← leaf" in done.stdout
        assert done.stderr.startswith("ptree show: warning: ")
        assert "s.jsonl:3" in done.stderr


def on_terminal(*argv: str, env: dict[str, str] | None = None) -> str:
    """Run ptree with stdout and stderr on a pseudo-terminal; what the terminal got."""
    master, slave = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ptree", *argv],
        stdout=slave,
        stderr=slave,
        env={**environ, **(env or {})},
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    proc.wait(timeout=60)
    return b"".join(chunks).decode("utf-8", "replace")


def stored_messages(*ids: str) -> list[Any]:
    """The messages of these entries of plans.jsonl, read with plain json (no ptree)."""
    with PLANS.open(encoding="utf-8") as f:
        by_id = {o["id"]: o for o in map(json.loads, f) if o["type"] == "message"}
    return [by_id[i]["message"] for i in ids]


SONNET = {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}


class TestPath:
    def test_the_context_at_the_leaf(self) -> None:
        """ptree path prints the context at the leaf a9: the messages on a0..a9 as
        stored, the model the last assistant message named, the thinking level a7 set."""
        done = run("path", PLANS)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {
            "leafId": "a9",
            "model": SONNET,
            "thinkingLevel": "high",
            "activeTools": None,
            "messages": stored_messages("a1", "a4", "a6", "a8"),
        }

    def test_at_another_leaf(self) -> None:
        """--leaf ID builds the context there (the abandoned branch)."""
        done = run("path", PLANS, "--leaf", "a3")
        assert json.loads(done.stdout) == {
            "leafId": "a3",
            "model": SONNET,
            "thinkingLevel": "off",
            "activeTools": None,
            "messages": stored_messages("a1", "a2", "a3"),
        }
        assert [m["content"][0]["text"][:6] for m in json.loads(done.stdout)["messages"]] == [
            "Which ",
            "Plan A",
            "Too ri",
        ]

    def test_provider_messages(self, tmp_path: Path) -> None:
        """--provider gives provider-level messages: a custom message becomes user text,
        with the time of its entry; without it, the agent-level message is printed."""
        t = ptree.SessionTree().append({"role": "user", "content": "hi"})
        t = t.append_custom_message("note", "remember", timestamp="2026-01-01T00:00:00.000Z")
        path = tmp_path / "custom.jsonl"
        ptree.dump(t, path)
        done = run("path", path, "--provider")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["messages"] == [
            {"role": "user", "content": "hi"},
            {
                "role": "user",
                "content": [{"type": "text", "text": "remember"}],
                "timestamp": 1767225600000,
            },
        ]
        agent_level = json.loads(run("path", path).stdout)["messages"]
        assert agent_level[1] == {
            "role": "custom",
            "customType": "note",
            "content": "remember",
            "display": True,
            "timestamp": 1767225600000,
        }

    def test_real_pi_file_with_compactions(self, pi_fixtures: Path) -> None:
        """On Pi's own recording: 446 messages, a compaction summary first (Pi's numbers)."""
        done = run("path", pi_fixtures / "before-compaction.jsonl")
        assert done.returncode == 0, done.stderr
        doc = json.loads(done.stdout)
        assert len(doc["messages"]) == 446
        assert doc["messages"][0]["role"] == "compactionSummary"
        assert doc["model"] == {"provider": "anthropic", "modelId": "claude-opus-4-5"}

    def test_unknown_leaf(self) -> None:
        """An unknown --leaf is one line naming the file and the id."""
        assert_one_line_error(run("path", PLANS, "--leaf", "nope"), "plans.jsonl", "'nope'")


class TestCheck:
    def test_valid_file(self) -> None:
        """A valid file: exit 0 and one 'ok' line."""
        done = run("check", PLANS)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"{PLANS}: ok, session 'Parser plans' · 10 entries")

    @pytest.mark.parametrize(
        ("lines", "line", "words"),
        [
            ([message("a", None), "{not json"], 3, "malformed JSON"),
            ([message("a", None), "[1, 2]"], 3, "not a JSON object"),
            ([message("a", None), message("a", "a")], 3, "duplicate id 'a'"),
            ([message("a", "ghost")], 2, "parent 'ghost' does not exist"),
            ([message("a", "b"), message("b", "a")], 2, "cycle"),
            (
                ['{"type":"message","parentId":null,"timestamp":"t","message":{"role":"user"}}'],
                2,
                "id",
            ),
            (
                [
                    '{"type":"model_change","id":"m","parentId":null,"timestamp":"t","provider":3,'
                    '"modelId":"x"}'
                ],
                2,
                "provider",
            ),
            (
                ['{"type":"message","id":"m","parentId":null,"timestamp":"t","message":{}}'],
                2,
                "role",
            ),
            (
                [
                    message("a", None),
                    '{"type":"leaf","id":"L","parentId":"a","timestamp":"t","targetId":"zz"}',
                ],
                3,
                "unknown entry 'zz'",
            ),
        ],
    )
    def test_each_kind_of_corruption(
        self, tmp_path: Path, lines: list[str], line: int, words: str
    ) -> None:
        """Each corruption is reported with its line; exit status 1."""
        path = session_file(tmp_path, HEADER, *lines)
        done = run("check", path)
        assert done.returncode == 1
        [problem] = done.stdout.splitlines()
        assert problem.startswith(f"{path}:{line}: ")
        assert words in problem
        assert done.stderr == f"ptree check: {path}: 1 problem\n"

    def test_bad_header(self, tmp_path: Path) -> None:
        """A file whose first line is not a session header: line 1."""
        path = session_file(tmp_path, message("a", None))
        done = run("check", path)
        assert done.returncode == 1
        assert done.stdout.startswith(f"{path}:1: no session header")

    def test_torn_last_line(self, tmp_path: Path) -> None:
        """A torn last line, which a strict load recovers, is a warning with its line,
        not a problem: check agrees with load (exit 0)."""
        path = session_file(tmp_path, HEADER, message("a", None), '{"type":"mes', end="")
        done = run("check", path)
        assert done.returncode == 0
        assert done.stderr.startswith(f"ptree check: warning: {path}:3: recovered a torn last line")
        assert done.stdout.startswith(f"{path}: ok, 1 entry")

    def test_not_utf8(self, tmp_path: Path) -> None:
        """A line that is not UTF-8 is reported with its line."""
        path = tmp_path / "s.jsonl"
        path.write_bytes(HEADER.encode() + b"\n" + b'{"x": "\xff"}\n')
        done = run("check", path)
        assert done.returncode == 1
        assert done.stdout.startswith(f"{path}:2: ")

    def test_every_problem_in_line_order(self, tmp_path: Path) -> None:
        """Several problems: all reported, in line order, the count on stderr."""
        path = session_file(
            tmp_path,
            HEADER,
            message("a", None),
            "{bad",
            message("b", "nope"),
            message("a", "a"),
            "[]",
        )
        done = run("check", path)
        assert done.returncode == 1
        assert [p.split(": ")[0] for p in done.stdout.splitlines()] == [
            f"{path}:3",
            f"{path}:4",
            f"{path}:5",
            f"{path}:6",
        ]
        assert done.stderr == f"ptree check: {path}: 4 problems\n"

    def test_real_pi_files_are_valid(self, pi_fixtures: Path) -> None:
        """Pi's own (version 1) recordings pass."""
        for name in ("before-compaction.jsonl", "large-session.jsonl"):
            assert run("check", pi_fixtures / name).returncode == 0

    def test_missing_file(self, tmp_path: Path) -> None:
        """A missing file: one line, non-zero."""
        assert_one_line_error(run("check", tmp_path / "none.jsonl"), "none.jsonl")


class TestFork:
    def test_at(self, tmp_path: Path) -> None:
        """--at keeps only the path to the entry; the source file is untouched."""
        before = PLANS.read_bytes()
        out = tmp_path / "fork.jsonl"
        done = run("fork", PLANS, "--at", "a3", "-o", out)
        assert done.returncode == 0, done.stderr
        forked = ptree.load(out)
        assert [e.id for e in forked.path()] == ["a0", "a1", "a2", "a3"]
        assert len(forked) == 4
        assert forked.header is not None
        assert forked.header.parent_session == str(PLANS.resolve())
        assert PLANS.read_bytes() == before

    def test_before_and_labels(self, tmp_path: Path) -> None:
        """--before ends at the user message's parent; labels on the path come along."""
        out = tmp_path / "fork.jsonl"
        assert run("fork", PLANS, "--at", "a6", "--before", "-o", out).returncode == 0
        forked = ptree.load(out)
        assert "a6" not in forked
        assert [e.id for e in forked.path() if e.type == "message"] == ["a1", "a4"]
        assert forked.labels() == {"a4": "chosen"}
        library = ptree.branching.fork(ptree.load(PLANS), "a6", position="before")
        assert [(e.id, e.type, e.parent_id) for e in forked.entries()] == [
            (e.id, e.type, e.parent_id) for e in library.entries()
        ]

    def test_before_needs_a_user_message(self, tmp_path: Path) -> None:
        """--before on an assistant message or a label: one line saying what the entry is."""
        out = tmp_path / "fork.jsonl"
        assert_one_line_error(
            run("fork", PLANS, "--at", "a2", "--before", "-o", out),
            f"ptree fork: error: {PLANS}: --before needs a user message, "
            "and 'a2' is an assistant message",
        )
        assert_one_line_error(
            run("fork", PLANS, "--at", "a5", "--before", "-o", out), "'a5' is a label entry"
        )
        assert not out.exists()

    def test_output_folder_missing_or_a_directory(self, tmp_path: Path) -> None:
        """OUT in a folder that is not there, or OUT a folder: one line naming OUT only."""
        out = tmp_path / "nowhere" / "fork.jsonl"
        done = run("fork", PLANS, "--at", "a3", "-o", out)
        assert_one_line_error(done, f"{out}: no folder")
        assert ".tmp" not in done.stderr  # not the writer's temporary file
        assert_one_line_error(
            run("fork", PLANS, "--at", "a3", "-o", tmp_path, "--force"),
            f"{tmp_path}: is a directory",
        )
        assert_one_line_error(
            run("export", PLANS, "--format", "dot", "-o", tmp_path), f"{tmp_path}: is a directory"
        )

    def test_unknown_id_and_existing_output(self, tmp_path: Path) -> None:
        """An unknown id, or an OUT that exists (without --force), are errors."""
        out = tmp_path / "fork.jsonl"
        assert_one_line_error(run("fork", PLANS, "--at", "zz", "-o", out), "'zz'")
        out.write_text("keep me", encoding="utf-8")
        assert_one_line_error(run("fork", PLANS, "--at", "a3", "-o", out), "--force")
        assert out.read_text(encoding="utf-8") == "keep me"
        assert run("fork", PLANS, "--at", "a3", "-o", out, "--force").returncode == 0


class TestExport:
    def test_dot_renders_with_graphviz(self, tmp_path: Path) -> None:
        """The DOT output is accepted by the real `dot`, which makes an SVG of every entry."""
        dot = shutil.which("dot")
        if dot is None:
            missing("graphviz's dot is not installed: .ci/run installs it")
        out = tmp_path / "plans.dot"
        assert run("export", PLANS, "--format", "dot", "-o", out).returncode == 0
        svg = subprocess.run(
            [dot, "-Tsvg", str(out)], capture_output=True, text=True, check=True, timeout=60
        ).stdout
        assert svg.lstrip().startswith("<?xml")
        assert "<svg" in svg
        assert svg.count('class="node"') == 10
        assert svg.count('class="edge"') == 9

    def test_hostile_text_renders_to_valid_svg(self, tmp_path: Path) -> None:
        """Control characters, '&#1;', backslashes and newlines in ids, labels and text:
        `dot` accepts the DOT and its SVG is well-formed XML."""
        dot = shutil.which("dot")
        if dot is None:
            missing("graphviz's dot is not installed: .ci/run installs it")
        text = 'a\x00b\x1b[2J &#1; &amp; \\N \\ "q" <x>\nnext \u202e \ud800'
        t = ptree.SessionTree().append({"role": "user", "content": text}, id="x\x00\\")
        t = t.append_label("x\x00\\", text).append({"role": "assistant", "content": text})
        path = tmp_path / "hostile.jsonl"
        ptree.dump(t, path)
        done = run("export", path, "--format", "dot")
        assert done.returncode == 0, done.stderr
        svg = subprocess.run(
            [dot, "-Tsvg"],
            input=done.stdout,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
        ElementTree.fromstring(svg)  # raises on a control character
        assert svg.count('class="node"') == 3
        assert svg.count('class="edge"') == 2

    def test_mermaid_warns_past_its_edge_limit(self, pi_fixtures: Path) -> None:
        """Mermaid refuses more than 500 edges by default: the whole chart is still written,
        and one warning line on stderr says so; 500 edges or fewer, no warning."""
        done = run("export", pi_fixtures / "large-session.jsonl", "--format", "mermaid")
        assert done.returncode == 0
        assert done.stdout.count(" --> ") == 1017
        assert done.stderr == (
            "ptree export: warning: 1,017 edges; Mermaid draws at most 500 "
            "unless its maxEdges setting is raised (use --format dot for "
            "big trees)\n"
        )
        assert run("export", PLANS, "--format", "mermaid").stderr == ""

    def test_dot_golden(self) -> None:
        """The DOT text of the sample session matches the golden file."""
        done = run("export", PLANS, "--format", "dot")
        assert done.returncode == 0, done.stderr
        golden("export_plans.dot", done.stdout)

    def test_mermaid_golden(self) -> None:
        """The Mermaid text of the sample session matches the golden file."""
        done = run("export", PLANS, "--format", "mermaid")
        assert done.returncode == 0, done.stderr
        golden("export_plans.mmd", done.stdout)


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


class TestImport:
    def test_chatgpt(self, tmp_path: Path) -> None:
        """One session file per conversation, every branch kept, current node the leaf."""
        export = write_json(tmp_path / "conversations.json", [gpt_conversation()])
        done = run("import", "chatgpt", export, "-o", tmp_path / "out")
        assert done.returncode == 0, done.stderr
        [written] = done.stdout.splitlines()
        tree = ptree.load(written)
        assert tree.leaf_id == "u3"
        assert len(tree.leaves()) == 3
        assert tree.session_name == "Small sums"
        assert Path(written).name == "small-sums-6790b1c2.jsonl"
        assert done.stderr == f"ptree import: wrote 1 session file to {tmp_path / 'out'}\n"
        assert run("check", written).returncode == 0

    def test_chatgpt_include_hidden(self, tmp_path: Path) -> None:
        """--include-hidden keeps the hidden system node."""
        export = write_json(tmp_path / "conversations.json", [gpt_conversation()])
        done = run("import", "chatgpt", export, "-o", tmp_path, "--include-hidden")
        assert "sys" in ptree.load(done.stdout.strip())

    def test_openwebui(self, tmp_path: Path) -> None:
        """Open WebUI chats: regenerations are siblings, currentId the leaf."""
        export = write_json(tmp_path / "export.json", [webui_chat(), webui_chat()])
        done = run("import", "openwebui", export, "-o", tmp_path / "out")
        assert done.returncode == 0, done.stderr
        paths = done.stdout.splitlines()
        assert [Path(p).name for p in paths] == [
            "colours-7f3c9e2a.jsonl",
            "colours-7f3c9e2a-2.jsonl",
        ]
        tree = ptree.load(paths[0])
        assert tree.leaf_id == "m4"
        assert [c.id for c in tree.children("m1")] == ["m3", "m2"]

    def test_imported_file_shows(self, tmp_path: Path) -> None:
        """An imported conversation draws as a tree (golden)."""
        export = write_json(tmp_path / "conversations.json", [gpt_conversation()])
        written = run("import", "chatgpt", export, "-o", tmp_path).stdout.strip()
        done = run("show", written)
        golden("show_chatgpt_import.txt", done.stdout)

    def test_bad_exports(self, tmp_path: Path) -> None:
        """Not JSON, or the wrong shape: one line saying where; nothing written."""
        bad = tmp_path / "c.json"
        bad.write_text("{oops", encoding="utf-8")
        assert_one_line_error(run("import", "chatgpt", bad, "-o", tmp_path / "o"), "not JSON")
        write_json(bad, [{"title": "no mapping"}])
        assert_one_line_error(
            run("import", "chatgpt", bad, "-o", tmp_path / "o"), "conversations[0].mapping"
        )
        assert_one_line_error(
            run("import", "openwebui", bad, "-o", tmp_path / "o"), "chats[0].chat.history"
        )
        assert_one_line_error(run("import", "chatgpt", tmp_path / "none.json", "-o", tmp_path))
        assert not (tmp_path / "o").exists()

    def test_progress_bar_only_on_a_terminal(self, tmp_path: Path) -> None:
        """stderr on a terminal shows a bar (then erases it); piped stderr never does."""
        export = write_json(tmp_path / "conversations.json", [gpt_conversation()] * 5)
        piped = run("import", "chatgpt", export, "-o", tmp_path / "a")
        assert "\r" not in piped.stderr
        assert "[" not in piped.stderr
        shown = on_terminal("import", "chatgpt", str(export), "-o", str(tmp_path / "b"))
        assert "importing conversations.json (0 MB)" in shown
        assert "\r\x1b[K" in shown


class TestErrors:
    @pytest.mark.parametrize(
        "command", [["show"], ["path"], ["check"], ["export", "--format", "dot"]]
    )
    def test_missing_file(self, tmp_path: Path, command: list[str]) -> None:
        """Every command: a missing file is one line on stderr, exit 1."""
        missing = tmp_path / "missing.jsonl"
        done = run(command[0], missing, *command[1:])
        assert_one_line_error(done, f"ptree {command[0]}: error: ", "missing.jsonl")

    def test_bad_file(self, tmp_path: Path) -> None:
        """A file that is not a session is one line naming the file and line."""
        path = session_file(tmp_path, "hello")
        assert_one_line_error(run("show", path), f"{path}:1")
        assert_one_line_error(run("path", path), f"{path}:1")

    def test_a_directory(self, tmp_path: Path) -> None:
        """A folder given as the file is one line too."""
        assert_one_line_error(run("show", tmp_path))

    def test_import_into_a_file(self, tmp_path: Path) -> None:
        """-o naming a file, not a folder: said so (not "File exists")."""
        export = write_json(tmp_path / "conversations.json", [gpt_conversation()])
        assert_one_line_error(
            run("import", "chatgpt", export, "-o", PLANS), f"{PLANS}: not a folder"
        )

    def test_fold_must_be_positive(self) -> None:
        """--fold 0 is a usage error (exit 2), not a silent --fold 2."""
        done = run("show", PLANS, "--fold", "0")
        assert done.returncode == 2
        assert "--fold: must be at least 1" in done.stderr

    def test_lone_surrogate_stays_valid_json(self, tmp_path: Path) -> None:
        """A lone surrogate (valid JSON, kept by Pi) prints as its JSON escape, not an error."""
        path = session_file(tmp_path, HEADER, message("a", None, "bad \ud800 x"))
        argvs: list[list[str | Path]] = [["path", path], ["show", path, "--json"], ["show", path]]
        for argv in argvs:
            done = run(*argv)
            assert done.returncode == 0, done.stderr
            assert done.stderr == ""
        assert json.loads(run("path", path).stdout)["messages"] == [
            {"role": "user", "content": "bad \ud800 x"}
        ]

    def test_terminal_without_unicode(self) -> None:
        """A stdout that cannot encode the box drawing still gets the whole drawing."""
        done = run("show", PLANS, env={"PYTHONIOENCODING": "ascii"})
        assert done.returncode == 0, done.stderr
        assert len(done.stdout.splitlines()) == 11

    def test_demo_still_works(self) -> None:
        """The demo is still there."""
        assert run("demo").returncode == 0


def matches(shown: str, actual: str) -> bool:
    """Whether ``actual`` is ``shown``, where a line ``  ...`` in ``shown`` stands for
    any lines."""
    pieces = shown.split("  ...\n")
    if len(pieces) == 1:
        return actual == shown
    if not (actual.startswith(pieces[0]) and actual.endswith(pieces[-1])):
        return False
    at = len(pieces[0])
    for piece in pieces[1:-1]:
        found = actual.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return at <= len(actual) - len(pieces[-1])


class TestReadme:
    def test_examples_are_real_output(self, tmp_path: Path) -> None:
        """Every `$ ptree ...` example of the command-line guide
        (docs/how-to/command-line.md), run in order in a folder holding the files it
        names, prints what the page shows (stdout, then stderr; a line `  ...` elides
        lines)."""
        guide = Path(__file__).parent.parent / "docs" / "how-to" / "command-line.md"
        section = guide.read_text(encoding="utf-8")
        (tmp_path / "tests" / "golden").mkdir(parents=True)
        shutil.copy(PLANS, tmp_path / "tests" / "golden" / "plans.jsonl")
        shutil.copy(GOLDEN / "many.jsonl", tmp_path / "many.jsonl")
        write_json(tmp_path / "conversations.json", [gpt_conversation()])
        write_json(tmp_path / "webui-export.json", [webui_chat()])
        fixtures = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"
        shutil.copy(fixtures / "claude-code" / "spotter" / "short.jsonl", tmp_path / "short.jsonl")
        shutil.copy(
            fixtures / "codex" / "ai-sessions" / "codex-pomodor-timer.jsonl",
            tmp_path / "rollout.jsonl",
        )
        checked = 0
        for block in section.split("```text\n")[1:]:
            body = block[: block.index("```")]
            for command in body.split("$ ")[1:]:
                line, _, shown = command.partition("\n")
                argv = line.split()
                assert argv[0] == "ptree", line
                done = run(*argv[1:], cwd=tmp_path)
                assert "Traceback" not in done.stderr
                assert matches(shown, done.stdout + done.stderr), (line, done.stdout, done.stderr)
                checked += 1
        assert checked >= 12
