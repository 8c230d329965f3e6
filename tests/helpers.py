"""What many test modules share: the missing-component rule, a plain session header,
message lines made from raw JSON, golden files and the shared folder's paths."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
FIXTURES = SHARED / "fixtures"
PI_FIXTURES = FIXTURES / "pi"
GOLDEN = ROOT / "tests" / "golden"

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "t", "cwd": "/"}
"""The header line of a small version-3 session file, as a JSON object."""

TS = "2026-01-01T00:00:00.000Z"


def missing(reason: str, *, module_level: bool = False) -> NoReturn:
    """A real component the test needs is absent (the shared folder, Node and Pi,
    Chromium, a C extension, a package of the test extra).

    Outside CI the test is skipped, saying why; under ``CI=true`` it fails, since CI
    installs every component and a skip there would hide a test that never ran.
    """
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI installs it: a missing component fails the run)", pytrace=False)
    pytest.skip(reason, allow_module_level=module_level)


def require_shared(path: Path = FIXTURES, *, module_level: bool = False) -> Path:
    """``path`` inside ``../shared``, or :func:`missing` when it is not there."""
    if not path.exists():
        missing(f"the shared folder's {path.name} is not at {path}", module_level=module_level)
    return path


def message_line(entry_id: str, parent: str | None, message: str) -> str:
    """A plain version-3 message line with ``message`` spliced in as raw JSON text."""
    return (
        f'{{"type":"message","id":"{entry_id}","parentId":{json.dumps(parent)},'
        f'"timestamp":"{TS}","message":{message}}}'
    )


def golden(name: str, actual: str) -> None:
    """Compare with (or, under PTREE_UPDATE_GOLDEN=1, rewrite) a golden file."""
    path = GOLDEN / name
    if os.environ.get("PTREE_UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == actual
