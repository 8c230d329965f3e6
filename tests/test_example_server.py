"""The agent-server tutorial's program (docs/tutorials/agent-server.md): the page shows
this file's sibling verbatim (so mypy --strict checks it), and it runs against SQLite
and PostgreSQL with no update lost."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from tests import example_server
from tests.conftest import postgres_url

HERE = Path(__file__).resolve().parent


def test_the_tutorial_shows_the_example_verbatim() -> None:
    source = (HERE / "example_server.py").read_text()
    page = (HERE.parent / "docs" / "tutorials" / "agent-server.md").read_text()
    assert f"```python\n{source}```\n" in page


def run(url: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        example_server.main(url)
    return out.getvalue()


def test_it_runs_on_sqlite(tmp_path: Path) -> None:
    assert run(f"sqlite://{tmp_path}/sessions.db") == "{8} 8\n"


def test_it_runs_on_postgres() -> None:
    assert run(postgres_url()) == "{8} 8\n"
