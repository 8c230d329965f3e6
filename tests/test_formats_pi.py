"""Imported sessions open in Pi's own package with the same entries, leaf and context.

Every real fixture of ``shared/fixtures/claude-code`` and ``…/codex`` is imported,
written with ``ptree.dump`` and opened with Pi's ``SessionManager`` (0.73.1, run in
Node.js by ``tests/interop/pi_read.mjs``).  The file must need no ``leaf`` record (Pi's
CLI takes the last entry as the leaf), and Pi's context must equal
``ptree.build_context``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ptree
from ptree.formats import claude_code, codex, librechat
from tests.helpers import require_shared
from tests.test_pi_interop import pi_package, pi_views, ptree_context

__all__ = ["pi_package"]  # the fixture, imported so that pytest finds it here

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"
CLAUDE = [
    FIXTURES / "claude-code" / p
    for p in (
        "spotter/short.jsonl",
        "spotter/tool_heavy.jsonl",
        "spotter/subagent.jsonl",
        "spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
        "codemie/session-9eda1058.jsonl",
        "codemie/incremental-subagents/turn-2.jsonl",
        "codemie/old-layout/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl",
        "ai-sessions/claude-code-pomodoro-timer.jsonl",
    )
]
CODEX = sorted((FIXTURES / "codex").glob("*/*.jsonl"))

pytestmark = pytest.mark.slow
require_shared(FIXTURES, module_level=True)


def check_in_pi(trees: list[ptree.SessionTree], package: Path, tmp_path: Path) -> None:
    files = []
    for i, tree in enumerate(trees):
        path = tmp_path / f"import-{i}.jsonl"
        ptree.dump(tree, path)
        last = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
        assert last["type"] != "leaf", "the leaf must be the last entry, not a leaf record"
        files.append(path)
    for tree, view in zip(trees, pi_views(package, files, tmp_path), strict=True):
        assert view["leafId"] == tree.leaf_id
        assert [e["id"] for e in view["entries"]] == list(tree.ids())
        assert view["name"] == tree.session_name
        assert view["context"] == ptree_context(tree)


def test_claude_code_fixtures_open_in_pi(pi_package: Path, tmp_path: Path) -> None:
    check_in_pi([claude_code.read(p).tree for p in CLAUDE], pi_package, tmp_path)


def test_codex_fixtures_open_in_pi(pi_package: Path, tmp_path: Path) -> None:
    # localpush's redacted call arguments are reported (tests/test_formats_codex.py)
    trees = [codex.read(p, on_report=lambda _line: None).tree for p in CODEX]
    check_in_pi(trees, pi_package, tmp_path)


def test_librechat_export_opens_in_pi(pi_package: Path, tmp_path: Path) -> None:
    from tests.test_formats_librechat import flat, tree_export

    trees = []
    for i, data in enumerate((tree_export(), flat(tree_export()))):
        src = tmp_path / f"export-{i}.json"
        src.write_text(json.dumps(data), encoding="utf-8")
        trees.append(librechat.read(src).tree)
    check_in_pi(trees, pi_package, tmp_path)
