"""Tests for ptree.SessionWriter: the append-only writer of live sessions."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptree
from ptree import (
    CommitError,
    SessionFileError,
    SessionFileWarning,
    SessionHeader,
    SessionLockedError,
    SessionTree,
    SessionWriter,
    dump,
    load,
)
from ptree.pi import SessionWriteError

from .strategies import appends

TS = "2026-01-01T00:00:00.000Z"
HEADER = SessionHeader(id="s1", timestamp=TS, cwd="/w")


def lines_of(path: Path) -> list[dict[str, Any]]:
    """The parsed lines of a file."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]


def user(text: str) -> dict[str, Any]:
    """A user message."""
    return {"role": "user", "content": text}


class TestOpen:
    def test_new_file_gets_a_header(self, tmp_path: Path) -> None:
        """Opening a new path writes the header; the committed value is an empty tree."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p, header=HEADER) as w:
            assert w.value == SessionTree(header=HEADER)
        assert lines_of(p) == [HEADER.to_json()]

    def test_empty_existing_file_gets_a_header(self, tmp_path: Path) -> None:
        """An empty file (created, never written) is started like a new one."""
        p = tmp_path / "s.jsonl"
        p.touch()
        with SessionWriter(p) as w:
            assert len(w.value) == 0
        assert lines_of(p)[0]["type"] == "session"

    def test_existing_file_is_loaded(self, tmp_path: Path) -> None:
        """The committed value of an existing file is what load gives."""
        p = tmp_path / "s.jsonl"
        saved = dump(SessionTree(header=HEADER).append(user("a")), p)
        with SessionWriter(p) as w:
            assert w.value == saved == load(p)

    def test_old_version_is_refused(self, tmp_path: Path) -> None:
        """A v1 file is not appended to (formats would mix): a clear error, file untouched."""
        p = tmp_path / "v1.jsonl"
        p.write_text('{"type":"session","id":"x","timestamp":"t","cwd":"/"}\n')
        before = p.read_bytes()
        with pytest.raises(SessionFileError, match=r"version 1 file.*convert"):
            SessionWriter(p)
        assert p.read_bytes() == before

    def test_newer_version_is_refused(self, tmp_path: Path) -> None:
        """A file of a later version than 3 is neither read (its lines may mean
        something else) nor appended to.  The file stays as it was."""
        p = tmp_path / "v4.jsonl"
        p.write_text('{"type":"session","version":4,"id":"x","timestamp":"t","cwd":"/"}\n')
        before = p.read_bytes()
        with pytest.raises(SessionFileError, match=r"version 4 is newer"):
            load(p)
        with pytest.raises(SessionFileError, match=r"version 4 is newer"):
            SessionWriter(p)
        assert p.read_bytes() == before

    def test_bad_file_is_refused_and_untouched(self, tmp_path: Path) -> None:
        """A file that does not load strictly is not opened, and not changed."""
        p = tmp_path / "bad.jsonl"
        p.write_text("not json\n")
        with pytest.raises(SessionFileError):
            SessionWriter(p)
        assert p.read_text() == "not json\n"


class TestCommit:
    def test_appends_only_new_entries(self, tmp_path: Path) -> None:
        """Each commit adds exactly the new entries' lines."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p, header=HEADER) as w:
            t1 = w.commit(w.value.append(user("a"), timestamp=TS))
            size = p.stat().st_size
            t2 = w.commit(t1.append(user("b"), timestamp=TS).append(user("c"), timestamp=TS))
        assert [line["id"] for line in lines_of(p)[1:]] == ["e1", "e2", "e3"]
        assert p.read_bytes()[:size] == p.read_bytes()[:size]  # prefix kept
        assert load(p) == t2

    def test_nothing_changed_writes_nothing(self, tmp_path: Path) -> None:
        """Committing the committed value again writes no byte."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p) as w:
            t = w.commit(w.value.append(user("a")))
            size = p.stat().st_size
            assert w.commit(t) is t
        assert p.stat().st_size == size

    def test_leaf_move_without_append_is_a_leaf_record(self, tmp_path: Path) -> None:
        """A move alone appends one leaf record, which reopening honours."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p) as w:
            t = w.commit(w.value.append(user("a")).append(user("b")))
            moved = w.commit(t.move_to("e1"))
        last = lines_of(p)[-1]
        assert (last["type"], last["targetId"], last["parentId"]) == ("leaf", "e1", "e1")
        again = load(p)
        assert again == moved
        assert again.leaf_id == "e1"

    def test_move_then_append_needs_no_leaf_record(self, tmp_path: Path) -> None:
        """A move followed by an append in one commit is saved by the entry alone."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p) as w:
            t = w.commit(w.value.append(user("a")).append(user("b")))
            w.commit(t.move_to("e1").append(user("c")))
        assert [line["type"] for line in lines_of(p)] == ["session"] + ["message"] * 3

    def test_append_after_a_leaf_record_hangs_under_the_target(self, tmp_path: Path) -> None:
        """After a leaf record, new entries name the real target as parent."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p) as w:
            t = w.commit(w.value.append(user("a")).append(user("b")).move_to("e1"))
            t = w.commit(t.append(user("c")))
        assert lines_of(p)[-1]["parentId"] == "e1"
        assert load(p) == t

    def test_move_to_none_is_saved(self, tmp_path: Path) -> None:
        """A move above the roots is a leaf record with a null target."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p) as w:
            t = w.commit(w.value.append(user("a")).move_to(None))
        assert load(p) == t
        assert load(p).leaf_id is None

    def test_labels_survive_reopening(self, tmp_path: Path) -> None:
        """Labels and the session name come back after reopening."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p) as w:
            t = w.value.append(user("a")).append_label("e1", "start")
            t = w.commit(t.append_session_info("demo").move_to("e1"))
        with SessionWriter(p) as w:
            assert w.value == t
            assert w.value.labels() == {"e1": "start"}
            assert w.value.session_name == "demo"

    def test_header_less_tree_takes_the_files_header(self, tmp_path: Path) -> None:
        """A tree without a header commits under the file's header."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p, header=HEADER) as w:
            t = w.commit(SessionTree().append(user("a")))
        assert t.header == HEADER
        assert load(p) == t

    def test_a_tree_that_did_not_grow_is_refused(self, tmp_path: Path) -> None:
        """A value that is not a later version of the committed one: CommitError, no write."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p) as w:
            w.commit(w.value.append(user("a")).append(user("b")))
            size = p.stat().st_size
            other = SessionTree(header=w.value.header).append(user("x"))
            with pytest.raises(CommitError, match=r"did not grow.*dump") as info:
                w.commit(other)
            assert isinstance(info.value, ValueError)
        assert p.stat().st_size == size

    def test_another_header_is_refused(self, tmp_path: Path) -> None:
        """The header of an appended file cannot change."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p) as w:
            t = w.value.append(user("a")).with_header(HEADER)
            with pytest.raises(CommitError, match="another header"):
                w.commit(t)

    def test_an_id_taken_by_a_leaf_record_is_refused(self, tmp_path: Path) -> None:
        """A new entry may not reuse a leaf record's id: the file would hold it twice."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p) as w:
            t = w.commit(w.value.append(user("a")).append(user("b")).move_to("e1"))
            taken = lines_of(p)[-1]["id"]
            with pytest.raises(CommitError, match="leaf record"):
                w.commit(t.append(user("c"), id=taken))

    def test_leaf_record_ids_are_numbered_and_never_reused(self, tmp_path: Path) -> None:
        """Leaf records get leaf-1, leaf-2, ... (deterministic), skipping ids that entries
        hold, and a reopened writer goes on after the file's records."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p) as w:
            t = w.commit(w.value.append(user("a")).append(user("b"), id="leaf-2"))
            t = w.commit(t.move_to("e1"))
            t = w.commit(t.move_to("leaf-2").append(user("c")).move_to("e1"))
        with SessionWriter(p) as w:
            t = w.commit(w.value.move_to(None))
        ids = [line["id"] for line in lines_of(p)[1:] if line["type"] == "leaf"]
        assert ids == ["leaf-1", "leaf-3", "leaf-4"]
        assert load(p) == t

    def test_closed_writer_refuses(self, tmp_path: Path) -> None:
        """Commits after close raise; closing twice is fine."""
        w = SessionWriter(tmp_path / "s.jsonl")
        w.close()
        w.close()
        assert w.closed
        with pytest.raises(ValueError, match="closed"):
            w.commit(w.value.append(user("a")))

    def test_a_failed_write_leaves_nothing_and_the_writer_goes_on(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A write the disk refuses: SessionWriteError naming the file, its bytes
        truncated away (the file as before), the committed value kept; once the fault
        is gone the same writer commits again."""
        p = tmp_path / "s.jsonl"
        w = SessionWriter(p)
        t = w.commit(w.value.append(user("a")))
        before = p.read_bytes()

        def broken(fd: int) -> None:
            raise OSError(28, "no space left")

        monkeypatch.setattr(os, "fsync", broken)
        with pytest.raises(SessionWriteError, match="disk is full: the commit was not made"):
            w.commit(t.append(user("b")).append(user("c")))
        assert w.value is t
        assert p.read_bytes() == before
        monkeypatch.undo()
        t2 = w.commit(t.append(user("d")))
        w.close()
        assert ptree.load(p) == t2
        assert [m["content"] for m in t2.current_path()] == ["a", "d"]

    def test_a_writer_whose_truncation_failed_refuses_commits(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """If even taking the failed commit back fails, later commits are refused."""
        p = tmp_path / "s.jsonl"
        w = SessionWriter(p)
        t = w.commit(w.value.append(user("a")))

        def broken(*args: object) -> None:
            raise OSError(5, "I/O error")

        monkeypatch.setattr(os, "fsync", broken)
        monkeypatch.setattr(os, "ftruncate", broken)
        with pytest.raises(OSError, match="I/O error"):
            w.commit(t.append(user("b")))
        monkeypatch.undo()
        with pytest.raises(ValueError, match="earlier write failed"):
            w.commit(t.append(user("c")))
        w.close()


class TestDurability:
    def test_fsync_false_syncs_on_sync_and_close(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With fsync=False, commits are written but flushed only by sync() and close()."""
        calls: list[int] = []
        real = os.fsync
        p = tmp_path / "s.jsonl"
        w = SessionWriter(p, fsync=False)

        def counting(fd: int) -> None:
            calls.append(fd)
            real(fd)

        monkeypatch.setattr(os, "fsync", counting)
        t = w.commit(w.value.append(user("a")))
        w.commit(t.append(user("b")))
        assert calls == []
        assert len(load(p)) == 2  # written, though not yet flushed to the disk
        w.sync()
        assert len(calls) == 1
        w.close()
        assert len(calls) == 1  # nothing left to flush

    def test_fsync_true_syncs_each_commit(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The default flushes every commit to the disk before returning."""
        calls: list[int] = []
        real = os.fsync
        w = SessionWriter(tmp_path / "s.jsonl")

        def counting(fd: int) -> None:
            calls.append(fd)
            real(fd)

        monkeypatch.setattr(os, "fsync", counting)
        t = w.commit(w.value.append(user("a")))
        w.commit(t.append(user("b")))
        assert len(calls) == 2
        w.close()


class TestLock:
    def test_second_writer_gets_a_clear_error(self, tmp_path: Path) -> None:
        """Two writers on one file: the second is refused (no interleaved lines)."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p):
            with pytest.raises(SessionLockedError, match="locked") as info:
                SessionWriter(p)
            assert isinstance(info.value, BlockingIOError)
            assert isinstance(info.value, SessionFileError)
            assert info.value.path == str(p)
        with SessionWriter(p):  # released on close
            pass

    def test_lock_holds_across_processes(self, tmp_path: Path) -> None:
        """Another process cannot open a writer on a locked file."""
        import subprocess
        import sys

        p = tmp_path / "s.jsonl"
        code = (
            "import sys, ptree\ntry:\n    ptree.SessionWriter(sys.argv[1])\n"
            "except ptree.SessionLockedError:\n    sys.exit(7)\n"
        )
        with SessionWriter(p):
            done = subprocess.run([sys.executable, "-c", code, str(p)], check=False)
        assert done.returncode == 7

    def test_dump_refuses_a_locked_file(self, tmp_path: Path) -> None:
        """dump would swap the file under a writer: refused while the writer holds it."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p) as w, pytest.raises(SessionLockedError):
            dump(w.value, p, overwrite=True)


class TestTornTail:
    def test_next_commit_starts_on_a_fresh_line(self, tmp_path: Path) -> None:
        """After a torn tail, the writer writes a newline first, never gluing onto it."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p) as w:
            w.commit(w.value.append(user("a")))
        with p.open("ab") as f:
            f.write(b'{"type":"message","id":"to')
        torn = p.read_bytes()
        with pytest.warns(SessionFileWarning, match="torn"), SessionWriter(p) as w:
            t = w.commit(w.value.append(user("b")))
        data = p.read_bytes()
        assert data.startswith(torn)  # the user's bytes are never rewritten
        assert data[len(torn) : len(torn) + 1] == b"\n"
        with pytest.warns(SessionFileWarning, match="torn"):
            again = load(p, strict=True)
        assert again == t

    def test_a_tail_torn_inside_a_character_reopens(self, tmp_path: Path) -> None:
        """A crash in the middle of a multi-byte character leaves bytes that are not
        UTF-8; the writer still reopens the file and goes on on a fresh line."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p) as w:
            w.commit(w.value.append(user("a")))
        with p.open("ab") as f:
            f.write('{"type":"message","id":"to","content":"\u00e9'.encode()[:-1])
        with pytest.warns(SessionFileWarning, match="torn"), SessionWriter(p) as w:
            t = w.commit(w.value.append(user("b")))
        with pytest.warns(SessionFileWarning, match="torn"):
            assert load(p) == t

    def test_unterminated_complete_line_is_kept(self, tmp_path: Path) -> None:
        """A last entry without its newline stays an entry; the next commit adds one."""
        p = tmp_path / "s.jsonl"
        with SessionWriter(p) as w:
            w.commit(w.value.append(user("a")))
        p.write_bytes(p.read_bytes().rstrip(b"\n"))
        with SessionWriter(p) as w:
            t = w.commit(w.value.append(user("b")))
        assert load(p) == t


class TestCreate:
    def test_create_writes_the_whole_tree(self, tmp_path: Path) -> None:
        """create writes a tree to a new file and keeps it open for commits."""
        tree = SessionTree().append(user("a")).append(user("b")).move_to("e1")
        p = tmp_path / "s.jsonl"
        with SessionWriter.create(p, tree) as w:
            t = w.commit(w.value.append(user("c")))
        assert load(p) == t
        assert t.header is not None

    def test_create_never_overwrites(self, tmp_path: Path) -> None:
        """An existing file is never replaced by create."""
        p = tmp_path / "s.jsonl"
        p.write_text("precious")
        with pytest.raises(FileExistsError):
            SessionWriter.create(p, SessionTree())
        assert p.read_text() == "precious"
        assert sorted(os.listdir(tmp_path)) == ["s.jsonl"]

    def test_create_converts_an_old_file(self, tmp_path: Path, pi_fixtures: Path) -> None:
        """A v1 file becomes a v3 file that the writer appends to."""
        old = load(pi_fixtures / "large-session.jsonl")
        p = tmp_path / "v3.jsonl"
        with SessionWriter.create(p, old) as w:
            t = w.commit(w.value.append(user("more")))
        assert load(p) == t
        assert ptree.build_context(load(p)).messages[-1]["content"] == "more"


@st.composite
def commit_plans(draw: st.DrawFn) -> list[SessionTree]:
    """Successive values of one tree: appends of every kind and leaf moves."""
    tree = SessionTree(header=HEADER)
    values = []
    for _ in range(draw(st.integers(1, 8))):
        for _ in range(draw(st.integers(0, 3))):
            if tree and draw(st.integers(0, 3)) == 0:
                tree = tree.move_to(draw(st.sampled_from((None, *tree.ids()))))
            else:
                tree = draw(appends(tree))
        values.append(tree)
    return values


class TestRoundTrip:
    @settings(max_examples=100)
    @given(values=commit_plans(), reopen_at=st.integers(1, 8))
    def test_random_commits_reload_equal(self, values: list[SessionTree], reopen_at: int) -> None:
        """After random commits (and a reopen midway), the file loads as the last value."""
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "s.jsonl"
            w = SessionWriter(p, header=HEADER, fsync=False)
            previous = committed = w.value
            try:
                for i, value in enumerate(values):
                    if i == reopen_at:
                        w.close()
                        w = SessionWriter(p, fsync=False)
                        assert w.value == committed
                    # The same changes, replayed on the writer's own lineage (a reopened
                    # writer's value is a fresh, equal tree).
                    committed = w.commit(_rebase(w.value, previous, value))
                    previous = value
                    assert committed == value
                    assert load(p) == committed
            finally:
                w.close()
            again = load(p)
        again._check()
        assert again == values[-1]
        assert again.labels() == values[-1].labels()


def _rebase(base: SessionTree, old: SessionTree, new: SessionTree) -> SessionTree:
    """``new``'s additions over ``old``, replayed on ``base`` (a reloaded copy of ``old``)."""
    added = new.added_since(old)
    assert added is not None
    tree = base
    for entry in added:
        tree = tree.insert(entry.evolve())
    return tree.move_to(new.leaf_id)
