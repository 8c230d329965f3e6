"""``ptree export --format html|markdown|jsonl`` with ``--redact``, run as a user would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ptree
from tests.test_cli import PLANS, assert_one_line_error, run
from tests.test_html_viewer import T0, kyoto
from tests.test_markdown import KYOTO_A3, KYOTO_ALL

SECRET = "sk-proj-Zq81Xw73Vb65Nm49Lk27Jh05Gf"


@pytest.fixture
def kyoto_file(tmp_path: Path) -> Path:
    path = tmp_path / "kyoto.jsonl"
    ptree.dump(kyoto().with_header(ptree.SessionHeader(id="k", timestamp=T0, cwd="/trip")), path)
    return path


def with_facts(doc: str) -> str:
    """A hand-written document of kyoto() with the facts of kyoto_file's header added."""
    head = "# Kyoto trip\n\n"
    facts = (
        "- **Session:** `k`\n"
        "- **Started:** 2026-01-05 09:00 UTC\n"
        "- **Working directory:** `/trip`\n"
    )
    assert doc.startswith(head)
    return head + facts + doc[len(head) :]


class TestExportFormats:
    def test_markdown_to_stdout_and_file(self, kyoto_file: Path, tmp_path: Path) -> None:
        """Markdown of every branch on stdout, of a chosen leaf into a file."""
        done = run("export", kyoto_file, "--format", "markdown", "--all-branches")
        assert done.returncode == 0, done.stderr
        assert done.stdout == with_facts(KYOTO_ALL)
        out = tmp_path / "a3.md"
        done = run("export", kyoto_file, "--format", "markdown", "--leaf", "a3", "-o", out)
        assert done.returncode == 0, done.stderr
        assert done.stdout == ""
        assert out.read_text(encoding="utf-8") == with_facts(KYOTO_A3)

    def test_html_file_opens_on_the_chosen_leaf(self, kyoto_file: Path, tmp_path: Path) -> None:
        """An HTML page with every entry in its data, opening on --leaf."""
        out = tmp_path / "k.html"
        done = run("export", kyoto_file, "--format", "html", "--leaf", "a3", "-o", out)
        assert done.returncode == 0, done.stderr
        page = out.read_text(encoding="utf-8")
        assert page.startswith("<!doctype html>")
        data = page.split('<script type="application/json" id="ptree-data">')[1].split("</script>")[
            0
        ]
        payload = json.loads(data)
        assert payload["show"] == "a3"
        assert payload["leaf"] == "a4"
        assert [e["id"] for e in payload["entries"]] == list(kyoto().ids())

    @pytest.mark.parametrize("fmt", ["html", "markdown", "jsonl", "dot", "mermaid"])
    def test_never_replaces_a_file_without_force(self, fmt: str, tmp_path: Path) -> None:
        """Every format refuses an existing OUT (left as it was), and replaces it with
        --force."""
        out = tmp_path / f"out.{fmt}"
        out.write_text("keep me", encoding="utf-8")
        assert_one_line_error(run("export", PLANS, "--format", fmt, "-o", out), "--force")
        assert out.read_text(encoding="utf-8") == "keep me"
        done = run("export", PLANS, "--format", fmt, "-o", out, "--force")
        assert done.returncode == 0, done.stderr
        assert out.read_text(encoding="utf-8") != "keep me"

    @pytest.mark.parametrize(
        ("argv", "needle"),
        [
            (["--format", "html", "--all-branches"], "--all-branches applies to"),
            (["--format", "dot", "--leaf", "a1"], "--leaf applies to"),
            (["--format", "jsonl"], "-o OUT"),
            (["--format", "markdown", "--leaf", "zz"], "'zz'"),
            (["--format", "markdown", "--redact-pattern", "("], "redaction pattern '('"),
        ],
    )
    def test_usage_errors(self, argv: list[str], needle: str, tmp_path: Path) -> None:
        """Options that do not fit the format, or bad values: one line, no output."""
        assert_one_line_error(run("export", PLANS, *argv), needle)


class TestRedactOption:
    def secret_session(self, tmp_path: Path) -> Path:
        t = kyoto().move_to("a4")
        t = t.append({"role": "user", "content": f"use {SECRET} and password=hunter2"}, id="s1")
        t = t.append({"role": "assistant", "content": "ticket ACME-123456 noted"}, id="s2")
        path = tmp_path / "secret.jsonl"
        ptree.dump(t, path)
        return path

    def test_jsonl_redacted_copy(self, tmp_path: Path) -> None:
        """--format jsonl --redact writes a Pi file with the same entries and leaf, the
        secrets replaced; stderr says how many went."""
        src = self.secret_session(tmp_path)
        out = tmp_path / "clean.jsonl"
        done = run("export", src, "--format", "jsonl", "--redact", "-o", out)
        assert done.returncode == 0, done.stderr
        assert done.stderr == "ptree export: redacted 2 secrets\n"
        text = out.read_text(encoding="utf-8")
        assert SECRET not in text
        assert "hunter2" not in text
        clean = ptree.load(out)
        assert clean.ids() == ptree.load(src).ids()
        assert clean.leaf_id == "s2"
        s1 = clean["s1"]
        assert isinstance(s1, ptree.MessageEntry)
        assert s1.message["content"] == (
            "use [redacted: openai key] and password=[redacted: password]"
        )

    @pytest.mark.parametrize("fmt", ["html", "markdown", "dot", "mermaid"])
    def test_every_format_with_own_pattern(self, fmt: str, tmp_path: Path) -> None:
        """--redact with --redact-pattern: the built-in shapes and the pattern go from
        every format."""
        src = self.secret_session(tmp_path)
        done = run("export", src, "--format", fmt, "--redact", "--redact-pattern", r"ACME-\d+")
        assert done.returncode == 0, done.stderr
        for secret in (SECRET, "hunter2", "ACME-123456"):
            assert secret not in done.stdout
        if fmt == "markdown":
            assert "ticket [redacted: pattern 1] noted" in done.stdout
        assert done.stderr == "ptree export: redacted 3 secrets\n"

    def test_pattern_alone_keeps_the_builtin_shapes(self, tmp_path: Path) -> None:
        """--redact-pattern without --redact scrubs only what the pattern matches."""
        src = self.secret_session(tmp_path)
        done = run("export", src, "--format", "markdown", "--redact-pattern", r"ACME-\d+")
        assert done.returncode == 0, done.stderr
        assert "ACME-123456" not in done.stdout
        assert SECRET in done.stdout
