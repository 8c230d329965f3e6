"""``ptree import`` for the session formats (claude-code, codex, librechat) and detection."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

import ptree
from ptree.cli.main import main
from tests.helpers import require_shared

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"
SHORT = FIXTURES / "claude-code" / "spotter" / "short.jsonl"
POMODORO = FIXTURES / "codex" / "ai-sessions" / "codex-pomodor-timer.jsonl"

require_shared(FIXTURES, module_level=True)


def run(*args: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in args], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def librechat_export(path: Path) -> Path:
    path.write_text(
        json.dumps(
            {
                "conversationId": "c1",
                "title": "T",
                "messages": [
                    {
                        "messageId": "a",
                        "parentMessageId": "00000000-0000-0000-0000-000000000000",
                        "isCreatedByUser": True,
                        "text": "hi",
                        "createdAt": "2024-01-01T00:00:00Z",
                    },
                    {
                        "messageId": "b",
                        "parentMessageId": "a",
                        "isCreatedByUser": False,
                        "text": "hello",
                        "createdAt": "2024-01-01T00:00:01Z",
                    },
                ],
            }
        ),
        encoding="utf-8",
    )
    return path


class TestImportSessions:
    def test_claude_code(self, tmp_path: Path) -> None:
        """Writes one strict-loadable file; says what it wrote on stderr."""
        out = tmp_path / "out.jsonl"
        code, stdout, stderr = run("import", "claude-code", SHORT, "-o", out)
        assert code == 0, stderr
        assert stdout == f"{out}\n"
        tree = ptree.load(out)
        assert tree.leaf_id == "40003bdd-2613-4975-83d5-36fb0b6bbc59"
        assert stderr.startswith(f"ptree import: wrote {out}: 11 entries (")
        assert "leaf 40003bdd-2613-4975-83d5-36fb0b6bbc59" in stderr

    def test_codex_and_librechat(self, tmp_path: Path) -> None:
        code, _, stderr = run("import", "codex", POMODORO, "-o", tmp_path / "c.jsonl")
        assert code == 0, stderr
        assert ptree.load(tmp_path / "c.jsonl").leaf_id == "152"
        src = librechat_export(tmp_path / "export.json")
        code, _, stderr = run("import", "librechat", src, "-o", tmp_path / "l.jsonl")
        assert code == 0, stderr
        assert ptree.load(tmp_path / "l.jsonl").leaf_id == "b"

    @pytest.mark.parametrize(
        ("source", "expected"), [(SHORT, "claude-code"), (POMODORO, "codex"), (None, "librechat")]
    )
    def test_detects_the_format(self, source: Path | None, expected: str, tmp_path: Path) -> None:
        """Without a format the file's own records decide, and stderr says which."""
        src = source or librechat_export(tmp_path / "export.json")
        code, _, stderr = run("import", src, "-o", tmp_path / "o.jsonl")
        assert code == 0, stderr
        assert stderr.splitlines()[0] == f"ptree import: {src}: read as {expected} (detected)"

    def test_unknown_file_lists_the_formats(self, tmp_path: Path) -> None:
        src = tmp_path / "notes.txt"
        src.write_text("hello\n", encoding="utf-8")
        code, _, stderr = run("import", src, "-o", tmp_path / "o.jsonl")
        assert code == 1
        assert "not a format ptree recognises" in stderr
        for name in ("claude-code", "codex", "librechat", "chatgpt", "openwebui"):
            assert name in stderr
        assert not (tmp_path / "o.jsonl").exists()

    def test_never_overwrites_without_force(self, tmp_path: Path) -> None:
        out = tmp_path / "out.jsonl"
        out.write_text("mine\n", encoding="utf-8")
        code, _, stderr = run("import", "claude-code", SHORT, "-o", out)
        assert code == 1
        assert "exists (use --force to overwrite it)" in stderr
        assert out.read_text(encoding="utf-8") == "mine\n"
        code, _, _ = run("import", "claude-code", SHORT, "-o", out, "--force")
        assert code == 0
        assert ptree.load(out).leaf_id == "40003bdd-2613-4975-83d5-36fb0b6bbc59"

    def test_default_output_name(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without -o: ./<source name>.pi.jsonl."""
        monkeypatch.chdir(tmp_path)
        code, stdout, _ = run("import", "claude-code", SHORT)
        assert code == 0
        assert stdout == "short.pi.jsonl\n"
        assert (tmp_path / "short.pi.jsonl").is_file()

    @pytest.mark.parametrize("damage", ["garbled", "torn"])
    def test_malformed_source_writes_nothing(self, damage: str, tmp_path: Path) -> None:
        """A garbled middle line or a torn last line: exit 1, FILE:LINE: reason, no file."""
        data = SHORT.read_bytes()
        src = tmp_path / "short.jsonl"
        if damage == "garbled":
            lines = data.split(b"\n")
            lines[4] = b'{"type": "assistant", "uuid": '
            src.write_bytes(b"\n".join(lines))
            where = f"{src}:5: not JSON"
        else:
            src.write_bytes(data[:-10])
            where = f"{src}:15: torn last line"
        out = tmp_path / "out.jsonl"
        code, stdout, stderr = run("import", "claude-code", src, "-o", out)
        assert code == 1
        assert stdout == ""
        assert where in stderr
        assert stderr.count("\n") == 1
        assert not out.exists()
        assert list(tmp_path.iterdir()) == [src]  # no temporary file left either

    def test_skip_progress_is_counted(self, tmp_path: Path) -> None:
        code, _, stderr = run(
            "import", "claude-code", SHORT, "-o", tmp_path / "o.jsonl", "--skip-progress"
        )
        assert code == 0
        assert f"ptree import: {SHORT}: left out 3 progress records" in stderr

    def test_same_bytes_twice(self, tmp_path: Path) -> None:
        for name in ("a", "b"):
            assert run("import", "codex", POMODORO, "-o", tmp_path / f"{name}.jsonl")[0] == 0
        assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()

    def test_output_is_the_source(self, tmp_path: Path) -> None:
        src = tmp_path / "short.jsonl"
        shutil.copyfile(SHORT, src)
        code, _, stderr = run("import", "claude-code", src, "-o", src, "--force")
        assert code == 1
        assert "is the file being imported" in stderr
        assert src.read_bytes() == SHORT.read_bytes()

    def test_options_for_other_formats_are_refused(self, tmp_path: Path) -> None:
        code, _, stderr = run(
            "import", "codex", POMODORO, "-o", tmp_path / "o.jsonl", "--skip-progress"
        )
        assert code == 1
        assert "--skip-progress applies to claude-code sessions only" in stderr


def chatgpt_export(path: Path) -> Path:
    good = {
        "title": "Hi",
        "id": "g-1",
        "create_time": 1_700_000_000,
        "current_node": "b",
        "mapping": {
            "a": {
                "id": "a",
                "parent": None,
                "children": ["b"],
                "message": {"author": {"role": "user"}, "content": {"parts": ["hello"]}},
            },
            "b": {
                "id": "b",
                "parent": "a",
                "children": [],
                "message": {"author": {"role": "assistant"}, "content": {"parts": ["hi!"]}},
            },
        },
    }
    broken = {"title": "Lost", "id": "x-9", "mapping": None}
    path.write_text(json.dumps([good, broken]), encoding="utf-8")
    return path


class TestImportExports:
    def test_broken_conversation_warned_and_skipped(self, tmp_path: Path) -> None:
        src = chatgpt_export(tmp_path / "conversations.json")
        code, stdout, stderr = run("import", "chatgpt", src, "-o", tmp_path / "out")
        assert code == 0, stderr
        assert len(stdout.splitlines()) == 1
        assert (
            f"ptree import: {src}: skipped conversations[1] 'Lost' 'x-9': "
            "conversations[1].mapping: expected an object, found null"
        ) in stderr

    def test_strict_makes_it_fatal(self, tmp_path: Path) -> None:
        src = chatgpt_export(tmp_path / "conversations.json")
        code, _, stderr = run("import", "chatgpt", src, "-o", tmp_path / "out", "--strict")
        assert code == 1
        assert "conversations[1].mapping" in stderr
        assert not (tmp_path / "out").exists()

    def test_detected_and_never_overwritten(self, tmp_path: Path) -> None:
        src = chatgpt_export(tmp_path / "conversations.json")
        code, stdout, stderr = run("import", src, "-o", tmp_path / "out")
        assert code == 0
        assert f"ptree import: {src}: read as chatgpt (detected)" in stderr
        written = Path(stdout.strip())
        written.write_text("mine", encoding="utf-8")
        code, _, stderr = run("import", "chatgpt", src, "-o", tmp_path / "out")
        assert code == 1
        assert "exist already" in stderr
        assert written.read_text(encoding="utf-8") == "mine"
        assert run("import", "chatgpt", src, "-o", tmp_path / "out", "--force")[0] == 0
