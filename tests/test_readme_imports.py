"""The command-line guide's Python import example (docs/how-to/command-line.md) is
``tests/readme_imports.py`` (mypy --strict checks
it with the tests) and does what it says on the real fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import ptree
from tests.helpers import require_shared
from tests.readme_imports import import_sessions

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures"


def test_readme_shows_this_file() -> None:
    readme = (ROOT / "docs" / "how-to" / "command-line.md").read_text(encoding="utf-8")
    code = (ROOT / "tests" / "readme_imports.py").read_text(encoding="utf-8")
    assert f"```python\n{code}```" in readme


def test_example_runs(tmp_path: Path) -> None:
    """short.jsonl: 5 messages, 3 branches (the snapshot root, the progress record written
    between the two calls, the main line); the pomodoro rollout: 43 messages on one
    line; a LibreChat export of two messages."""
    require_shared(FIXTURES)
    export = tmp_path / "export.json"
    export.write_text(
        json.dumps(
            {
                "conversationId": "c",
                "messages": [
                    {"messageId": "a", "isCreatedByUser": True, "text": "hi"},
                    {
                        "messageId": "b",
                        "parentMessageId": "a",
                        "isCreatedByUser": False,
                        "text": "hello",
                    },
                ],
            }
        ),
        encoding="utf-8",
    )
    said = import_sessions(
        FIXTURES / "claude-code" / "spotter" / "short.jsonl",
        FIXTURES / "codex" / "ai-sessions" / "codex-pomodor-timer.jsonl",
        export,
        tmp_path,
    )
    assert said == [
        "claude-code: 5 messages in context, 3 branches, leaf 40003bdd-2613-4975-83d5-36fb0b6bbc59",
        "codex: 43 messages in context, 1 branches, leaf 152",
        "librechat: 2 messages in context, 1 branches, leaf b",
    ]
    for name in ("claude-code", "codex", "librechat"):
        ptree.load(tmp_path / f"{name}.jsonl")
