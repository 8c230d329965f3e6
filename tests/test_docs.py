"""The documentation's tutorials are complete programs (docs/examples/): each page shows
its program verbatim, and the programs run and do what the pages say.

The pages' ``>>>`` examples are doctests (``--doctest-glob=docs/*.md``) and are
type-checked by tests/test_readme_types.py; the site itself is built and checked by
tests/test_docs_site.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

import ptree
from tests.helpers import SHARED

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"
sys.path.insert(0, str(EXAMPLES))

import continue_session  # noqa: E402
import undo_editor  # noqa: E402

PROGRAMS = {
    "docs/tutorials/undo-editor.md": "docs/examples/undo_editor.py",
    "docs/tutorials/continue-session.md": "docs/examples/continue_session.py",
    "docs/tutorials/agent-server.md": "tests/example_server.py",
}


@pytest.mark.parametrize(("page", "program"), PROGRAMS.items())
def test_the_page_shows_its_program_verbatim(page: str, program: str) -> None:
    code = (ROOT / program).read_text(encoding="utf-8")
    assert f"```python\n{code}```\n" in (ROOT / page).read_text(encoding="utf-8")


class TestUndoEditor:
    def run(self, commands: str) -> tuple[str, ptree.History[ptree.SessionTree]]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            history = undo_editor.main(commands.splitlines())
        return out.getvalue(), history

    def test_the_pages_session(self) -> None:
        """The commands the page pipes in: an undo, a new answer, its path."""
        said, history = self.run(
            "say Rename the module\nreply Renamed it io.\nundo\nreply Renamed it files.\nshow\n"
        )
        assert said == "undone (1 more)\nRename the module / Renamed it files.\n"
        assert history.can_undo
        assert not history.can_redo

    def test_branches_undo_and_errors(self) -> None:
        """go makes a branch (and is undoable); a commit after undo drops the redo
        values; mistakes are reported, never raised."""
        said, history = self.run(
            "say q\nreply A\ngo e1\nreply B\nbranches\nundo\nundo\nshow\nredo\nredo\nredo\n"
            "go nope\nfly\n"
        )
        assert said.splitlines() == [
            "at e1",
            "q / A",
            "q / B",
            "undone (3 more)",
            "undone (2 more)",
            "q / A",
            "redone (1 more)",
            "redone (0 more)",
            "error: nothing to redo: no value was undone since the last commit",
            "error: no entry with id 'nope' in this tree",
            "error: unknown command 'fly'",
        ]
        assert len(history.present) == 3


REPLY = {
    "id": "resp_1",
    "object": "response",
    "created_at": 0,
    "model": "gpt-5",
    "status": "completed",
    "output": [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Here are the tests.", "annotations": []}],
        }
    ],
    "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
}


@pytest.mark.parametrize(
    ("fixture", "entries", "kinds"),
    [
        # the counts are the fixtures' own (the importer tests', README of the fixtures)
        ("claude-code/spotter/short.jsonl", 11, {"function_call_output", "message"}),
        ("codex/ai-sessions/codex-pomodor-timer.jsonl", 134, {"function_call_output"}),
    ],
)
def test_continue_session(fixture: str, entries: int, kinds: set[str], tmp_path: Path) -> None:
    """The tutorial's program on a real Claude Code session and a real Codex rollout:
    the whole context goes to the Responses API (tool outputs included), ending with the
    question; the reply is appended, and the file written loads back equal."""
    source = SHARED / "fixtures" / fixture
    if not source.exists():  # pragma: no cover - the shared fixtures are there in CI
        pytest.skip(f"no fixture at {source}")
    sent: list[Any] = []

    def server(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        return httpx2.Response(200, json=REPLY)

    http = httpx2.Client(transport=httpx2.MockTransport(server))
    client = openai.OpenAI(api_key="sk-test", http_client=http)
    out = tmp_path / "continued.jsonl"
    tree = continue_session.main(source, "Now write the tests.", out, client)
    assert len(sent) == 1
    items = sent[0]["input"]
    assert items[-1]["role"] == "user"
    assert items[-1]["content"] == [{"type": "input_text", "text": "Now write the tests."}]
    assert kinds <= {i.get("type", "message") for i in items}
    assert len(tree) == entries + 2
    assert ptree.load(out) == tree
    last = ptree.build_context(tree).messages[-1]
    assert last["role"] == "assistant"
    assert last["content"][0]["text"] == "Here are the tests."
    with pytest.raises(FileExistsError):  # the program never replaces a file
        continue_session.main(source, "Again.", out, client)


class TestReadme:
    """The README is the front page: short, and its quick start is what CI runs."""

    def test_at_most_250_lines(self) -> None:
        lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
        assert len(lines) <= 250

    def test_the_quick_start_commands(self) -> None:
        """The demo command, and the test command exactly as .ci/run runs it."""
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        demo = "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/ptree demo"
        tests = (
            "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' "
            "&& .venv/bin/python -m pytest"
        )
        assert f"```sh\n{demo}\n```" in readme
        assert f"```sh\n{tests}\n```" in readme
        assert f"\n{tests}\n" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")

    def test_building_the_site_is_one_command(self) -> None:
        """One shell line installs the docs extra and builds or serves the site (the
        build test_docs_site.py runs)."""
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        blocks = re.findall(r"```sh\n(.*?)```", readme, re.DOTALL)
        one_line = [b.strip() for b in blocks if b.count("\n") == 1]
        site = [b for b in one_line if "pip install -e '.[docs]'" in b and "mkdocs " in b]
        assert len(site) == 1
        assert re.search(r"mkdocs (serve|build --strict)$", site[0])

    def test_links_into_the_site_exist(self) -> None:
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        links = re.findall(r"\]\((docs/[^)#]+)", readme)
        assert len(links) > 15
        assert [link for link in links if not (ROOT / link).is_file()] == []
