"""`ptree demo` and `python -m ptree demo`, run as a user would type them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import missing

EXPECTED = """\
[路径：方案 A]
user: 方案 A
assistant: A 的回答

[路径：方案 B]
user: 方案 A
assistant: 改走方案 B

[所有节点]
e1 parent=null user: 方案 A
e2 parent=e1 assistant: A 的回答
e3 parent=e1 assistant: 改走方案 B
"""


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, encoding="utf-8", timeout=60, check=False
    )


class TestDemo:
    def test_python_m_ptree_demo_prints_the_seed_scenario(self) -> None:
        """python -m ptree demo prints both paths and every node, exactly as specified."""
        done = run(sys.executable, "-m", "ptree", "demo")
        assert done.returncode == 0, done.stderr
        assert EXPECTED in done.stdout
        assert done.stderr == ""

    def test_demo_shows_plan_a_is_intact(self) -> None:
        """After plan B is made, the demo shows plan A's value unchanged."""
        out = run(sys.executable, "-m", "ptree", "demo").stdout
        assert "plan_a = SessionTree(2 entries, leaf='e2')" in out
        assert "plan_a.current_path() is still: ['方案 A', 'A 的回答']" in out
        assert "'e3' in plan_a: False" in out

    def test_console_script(self) -> None:
        """The installed `ptree` console script runs the same demo."""
        script = Path(sys.executable).with_name("ptree")
        if not script.exists():  # pragma: no cover - the project is installed in CI
            missing(f"the ptree console script is not installed beside {sys.executable}")
        done = run(str(script), "demo")
        assert done.returncode == 0, done.stderr
        assert EXPECTED in done.stdout

    def test_no_command_is_a_usage_error(self) -> None:
        """ptree without a command prints usage and exits non-zero, no traceback."""
        done = run(sys.executable, "-m", "ptree")
        assert done.returncode != 0
        assert "usage:" in done.stderr
        assert "Traceback" not in done.stderr
