"""``ptree copy``, ``ptree sessions`` and ``STORE_URL#SESSION_ID`` in the other commands."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

import ptree
from ptree import SessionTree, stores
from ptree.cli import main
from tests.conftest import postgres_url
from tests.test_stores import every_kind

GOLDEN = Path(__file__).resolve().parent / "golden"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def as_v3(tree: SessionTree) -> SessionTree:
    """The tree as a store keeps it: its header as version 3."""
    assert tree.header is not None
    return tree.with_header(ptree.SessionHeader.from_json(tree.header.to_json(version=3)))


@pytest.fixture
def pi_dir(tmp_path: Path, pi_fixtures: Path) -> Path:
    """A directory of Pi files: two of ptree's (v3) and two of Pi's own (v1)."""
    d = tmp_path / "pi"
    d.mkdir()
    shutil.copy(GOLDEN / "plans.jsonl", d / "plans.jsonl")
    ptree.dump(every_kind("made-here"), d / "made.jsonl")
    shutil.copy(pi_fixtures / "large-session.jsonl", d / "2025-11-20_large.jsonl")
    shutil.copy(pi_fixtures / "before-compaction.jsonl", d / "bc.jsonl")
    return d


def originals(d: Path) -> dict[str, SessionTree]:
    out = {}
    for f in d.glob("*.jsonl"):
        tree = ptree.load(f)
        assert tree.header is not None
        out[tree.header.id] = tree
    return out


class TestCopy:
    def test_pi_files_into_sqlite_and_postgres_and_back(self, pi_dir: Path, tmp_path: Path) -> None:
        """jsonl dir -> SQLite -> PostgreSQL -> jsonl dir: every file loads equal to
        its original (headers as version 3); the source is never changed; copying
        twice copies nothing."""
        before = {f.name: f.read_bytes() for f in pi_dir.iterdir()}
        sqlite = f"sqlite://{tmp_path}/s.db"
        pg = postgres_url()
        back = tmp_path / "back"
        assert run("copy", f"jsonl://{pi_dir}", sqlite)[:2] == (
            0,
            "copied 4 sessions; 0 already there\n",
        )
        assert run("copy", f"jsonl://{pi_dir}", sqlite)[:2] == (
            0,
            "copied 0 sessions; 4 already there\n",
        )
        assert run("copy", sqlite, pg)[:2] == (0, "copied 4 sessions; 0 already there\n")
        assert run("copy", pg, f"jsonl://{back}")[:2] == (0, "copied 4 sessions; 0 already there\n")
        assert run("copy", pg, f"jsonl://{back}")[:2] == (0, "copied 0 sessions; 4 already there\n")
        assert {f.name: f.read_bytes() for f in pi_dir.iterdir()} == before
        expected = {sid: as_v3(t) for sid, t in originals(pi_dir).items()}
        assert originals(back) == expected
        for name in ("plans.jsonl",):  # byte for byte (no leaf record, whose time is new)
            tree = ptree.load(pi_dir / name)
            assert tree.header is not None
            assert (back / f"{tree.header.id}.jsonl").read_bytes() == before[name]

    def test_a_single_file_and_a_single_session(self, tmp_path: Path) -> None:
        """A Pi file into a store, and URL#ID out to a new file, byte for byte."""
        sqlite = f"sqlite://{tmp_path}/s.db"
        assert run("copy", str(GOLDEN / "plans.jsonl"), sqlite)[0] == 0
        sid = ptree.load(GOLDEN / "plans.jsonl").header.id  # type: ignore[union-attr]
        out = tmp_path / "out.jsonl"
        assert run("copy", f"{sqlite}#{sid}", str(out))[0] == 0
        assert out.read_bytes() == (GOLDEN / "plans.jsonl").read_bytes()
        assert run("copy", f"{sqlite}#{sid}", str(out))[1] == "copied 0 sessions; 1 already there\n"

    def test_a_diverged_session_is_reported_and_left(self, tmp_path: Path) -> None:
        """DST holding the session with other entries: exit 1, DST unchanged."""
        sqlite = f"sqlite://{tmp_path}/s.db"
        tree = ptree.load(GOLDEN / "plans.jsonl")
        with stores.open(sqlite) as store:
            other = store.save(
                SessionTree(header=tree.header).append({"role": "user", "content": "other"})
            )
        status, out, err = run("copy", str(GOLDEN / "plans.jsonl"), sqlite)
        assert status == 1
        assert "1 conflicting, left as they were" in out
        assert "ConflictError" not in err
        assert "differs" in err
        with stores.open(sqlite) as store:
            assert store.load(other.header.id) == other  # type: ignore[union-attr]

    def test_an_unreadable_source_file_is_reported(self, tmp_path: Path) -> None:
        """A broken file in a jsonl SRC: the others are copied, it is named, exit 1."""
        d = tmp_path / "d"
        d.mkdir()
        shutil.copy(GOLDEN / "plans.jsonl", d / "plans.jsonl")
        shutil.copy(GOLDEN / "many.jsonl", d / "many.jsonl")  # malformed lines
        status, out, err = run("copy", f"jsonl://{d}", f"sqlite://{tmp_path}/s.db")
        assert status == 1
        assert out == "copied 1 session; 0 already there; 1 unreadable in SRC, not copied\n"
        assert "many.jsonl" in err

    def test_an_existing_different_file_is_not_replaced(self, tmp_path: Path) -> None:
        sqlite = f"sqlite://{tmp_path}/s.db"
        run("copy", str(GOLDEN / "plans.jsonl"), sqlite)
        sid = ptree.load(GOLDEN / "plans.jsonl").header.id  # type: ignore[union-attr]
        target = tmp_path / "x.jsonl"
        ptree.dump(every_kind(), target)
        before = target.read_bytes()
        status, _out, err = run("copy", f"{sqlite}#{sid}", str(target))
        assert status == 1
        assert "not replaced" in err
        assert target.read_bytes() == before


class TestStoreRefs:
    @pytest.fixture
    def ref(self, tmp_path: Path) -> str:
        sqlite = f"sqlite://{tmp_path}/s.db"
        run("copy", str(GOLDEN / "plans.jsonl"), sqlite)
        sid = ptree.load(GOLDEN / "plans.jsonl").header.id  # type: ignore[union-attr]
        return f"{sqlite}#{sid}"

    @pytest.mark.parametrize(
        "command",
        [["show"], ["show", "--json"], ["path"], ["export", "--format", "dot"], ["check"]],
    )
    def test_commands_read_a_stored_session(self, ref: str, command: list[str]) -> None:
        """Each command prints for URL#ID exactly what it prints for the file."""
        file = str(GOLDEN / "plans.jsonl")
        from_file = run(*command, file)
        from_store = run(*command, ref)
        assert from_store[:2] == (from_file[0], from_file[1].replace(file, ref))
        assert from_store[0] == 0

    def test_fork_from_a_store(self, ref: str, tmp_path: Path) -> None:
        out = tmp_path / "fork.jsonl"
        status, text, _err = run("fork", ref, "--at", "a3", "-o", str(out))
        assert status == 0, text
        forked = ptree.load(out)
        assert forked.ids()[-1] == "a3"
        assert forked.header is not None
        assert forked.header.parent_session == ref

    def test_sessions_lists_the_store(self, ref: str) -> None:
        url, sid = ref.split("#")
        status, out, err = run("sessions", url)
        assert status == 0
        assert out.startswith(f"{sid}  10 entries  ")
        assert out.rstrip().endswith("Parser plans")
        assert err == "1 session\n"

    def test_an_unknown_session_or_no_id(self, ref: str) -> None:
        url = ref.split("#")[0]
        status, _out, err = run("show", f"{url}#nope")
        assert status == 1
        assert "no session with id 'nope'" in err
        status, _out, err = run("show", url)
        assert status == 1
        assert "#SESSION_ID" in err
