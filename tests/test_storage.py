"""Tests for ptree.load and ptree.dump: Pi's JSON Lines session files."""

from __future__ import annotations

import errno
import json
import os
import stat
import warnings
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings

import ptree
from ptree import SessionFileError, SessionFileWarning, SessionHeader, SessionTree, dump, load
from ptree.pi.migrate import v1_id

from .strategies import trees

HEADER = {
    "type": "session",
    "version": 3,
    "id": "s1",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/w",
}
TS = "2026-01-01T00:00:00.000Z"


def msg(eid: str, parent: str | None, text: str = "x", role: str = "user") -> dict[str, Any]:
    """A v3 message entry line."""
    return {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": TS,
        "message": {"role": role, "content": text},
    }


def leaf(rid: str, target: str | None, parent: str | None = None) -> dict[str, Any]:
    """A harness-style leaf record."""
    return {"type": "leaf", "id": rid, "parentId": parent, "timestamp": TS, "targetId": target}


def write(path: Path, *lines: Any, end: str = "\n") -> Path:
    """Write lines (dicts become JSON, strings go as they are) to ``path``."""
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_bytes((text + end).encode("utf-8"))
    return path


def file_lines(path: Path) -> list[dict[str, Any]]:
    """The parsed lines of a file."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]


class TestLoad:
    def test_header_is_kept_with_the_tree(self, tmp_path: Path) -> None:
        """The header's fields, extra ones included, become the tree's header."""
        p = write(
            tmp_path / "s.jsonl",
            {**HEADER, "parentSession": "/old.jsonl", "x": [1]},
            msg("a", None),
        )
        tree = load(p)
        assert tree.header == SessionHeader(
            id="s1", timestamp=TS, cwd="/w", parent_session="/old.jsonl", extra={"x": [1]}
        )

    def test_cli_style_leaf_is_the_last_entry(self, tmp_path: Path) -> None:
        """Without leaf records, the last entry is the leaf, as in Pi's CLI."""
        p = write(tmp_path / "s.jsonl", HEADER, msg("a", None), msg("b", "a"), msg("c", "a"))
        tree = load(p)
        assert tree.leaf_id == "c"
        assert [e.id for e in tree.path()] == ["a", "c"]

    def test_harness_leaf_records_move_the_leaf_and_are_not_nodes(self, tmp_path: Path) -> None:
        """A leaf record sets the leaf to its target; the next entry hangs under the target."""
        p = write(
            tmp_path / "s.jsonl", HEADER, msg("a", None), msg("b", "a"), leaf("L1", "a", parent="b")
        )
        tree = load(p)
        assert tree.leaf_id == "a"
        assert "L1" not in tree
        assert tree.ids() == ("a", "b")

    def test_leaf_record_with_null_target(self, tmp_path: Path) -> None:
        """A leaf record with targetId null leaves the tree without a leaf."""
        p = write(tmp_path / "s.jsonl", HEADER, msg("a", None), leaf("L1", None, "a"))
        assert load(p).leaf_id is None

    def test_entry_after_a_leaf_record_sets_the_leaf(self, tmp_path: Path) -> None:
        """Lines replay in order: an entry after a leaf record is the leaf."""
        p = write(
            tmp_path / "s.jsonl",
            HEADER,
            msg("a", None),
            msg("b", "a"),
            leaf("L1", "a"),
            msg("c", "a"),
        )
        assert load(p).leaf_id == "c"

    def test_entry_under_a_leaf_record_hangs_under_its_target(self, tmp_path: Path) -> None:
        """Pi's CLI appends under the last line, maybe a leaf record: that means its target."""
        p = write(
            tmp_path / "s.jsonl",
            HEADER,
            msg("a", None),
            msg("b", "a"),
            leaf("L1", "a", parent="a"),
            msg("c", "L1"),
        )
        tree = load(p)
        assert tree["c"].parent_id == "a"
        assert [e.id for e in tree.path()] == ["a", "c"]

    def test_unknown_types_and_fields_survive(self, tmp_path: Path) -> None:
        """Unknown entry types and fields load, and dump writes the same JSON back."""
        odd = {
            "type": "future_kind",
            "id": "f",
            "parentId": "a",
            "timestamp": TS,
            "payload": {"k": [1, 2, {"z": None}]},
        }
        extra = {**msg("b", "f"), "newField": True}
        p = write(tmp_path / "s.jsonl", HEADER, msg("a", None), odd, extra)
        tree = load(p)
        assert tree["f"].type == "future_kind"
        out = dump(tree, tmp_path / "out.jsonl")
        assert file_lines(tmp_path / "out.jsonl")[1:] == file_lines(p)[1:]
        assert load(tmp_path / "out.jsonl") == out == tree

    def test_parents_after_children_are_fine(self, tmp_path: Path) -> None:
        """A parent further down the file is allowed, as Pi's readers allow it."""
        p = write(tmp_path / "s.jsonl", HEADER, msg("b", "a"), msg("a", None))
        tree = load(p)
        tree._check()
        assert tree.parent("b").id == "a"  # type: ignore[union-attr]

    def test_values_are_frozen(self, tmp_path: Path) -> None:
        """Loaded messages are FrozenDicts with FrozenLists inside, lists in lists too."""
        m = {"role": "user", "content": [{"type": "text", "text": "t"}], "m": [[1, [2]], 3]}
        p = write(tmp_path / "s.jsonl", HEADER, {**msg("a", None), "message": m})
        message = load(p).message("a")
        assert type(message) is ptree.FrozenDict
        assert type(message["content"]) is ptree.FrozenList
        assert type(message["m"][0]) is ptree.FrozenList
        assert type(message["m"][0][1]) is ptree.FrozenList
        assert message == m

    def test_blank_lines_and_crlf_are_tolerated(self, tmp_path: Path) -> None:
        """Blank lines are skipped silently (as Pi does); a \\r before \\n is fine."""
        p = tmp_path / "s.jsonl"
        p.write_bytes(
            (json.dumps(HEADER) + "\r\n\n  \n" + json.dumps(msg("a", None)) + "\r\n").encode()
        )
        assert load(p).ids() == ("a",)

    @pytest.mark.parametrize("strict", [True, False])
    def test_a_bom_is_refused(self, tmp_path: Path, strict: bool) -> None:
        """A UTF-8 byte-order mark before the header is refused in both modes, naming
        line 1, as Pi 1.6 refuses the file; the file is left as it was."""
        p = tmp_path / "s.jsonl"
        data = b"\xef\xbb\xbf" + (json.dumps(HEADER) + "\n").encode()
        p.write_bytes(data)
        with pytest.raises(SessionFileError, match=r"s\.jsonl:1: .*byte-order mark") as info:
            load(p, strict=strict)
        assert (info.value.line, p.read_bytes()) == (1, data)

    def test_unterminated_valid_last_line_is_an_entry(self, tmp_path: Path) -> None:
        """A complete last line without its newline is kept, without a warning."""
        p = write(tmp_path / "s.jsonl", HEADER, msg("a", None), end="")
        assert load(p).ids() == ("a",)

    def test_second_session_line_is_skipped_with_a_warning(self, tmp_path: Path) -> None:
        """A repeated header (an old Pi bug) is skipped, in both modes, with a warning."""
        p = write(tmp_path / "s.jsonl", HEADER, msg("a", None), HEADER, msg("b", "a"))
        with pytest.warns(SessionFileWarning, match=r":3: skipped a second session header"):
            tree = load(p)
        assert tree.ids() == ("a", "b")

    def test_reading_never_changes_the_file(self, tmp_path: Path) -> None:
        """load reads only: bytes and modification time are untouched, even for v1."""
        p = write(
            tmp_path / "v1.jsonl",
            {k: v for k, v in HEADER.items() if k != "version"},
            {"type": "message", "timestamp": TS, "message": {"role": "user", "content": "hi"}},
            '{"torn": ',
            end="",
        )
        before = p.read_bytes(), os.stat(p).st_mtime_ns
        with pytest.warns(SessionFileWarning):
            load(p)
        with pytest.warns(SessionFileWarning):
            load(p, strict=False)
        assert (p.read_bytes(), os.stat(p).st_mtime_ns) == before

    def test_missing_file_raises_oserror(self, tmp_path: Path) -> None:
        """A file that does not exist is a FileNotFoundError, not a session error
        (the CLI checks for it the same way)."""
        with pytest.raises(FileNotFoundError):
            load(tmp_path / "nope.jsonl")

    def test_a_directory_is_an_oserror(self, tmp_path: Path) -> None:
        """A directory is no file to read: IsADirectoryError, an OSError."""
        with pytest.raises(IsADirectoryError):
            load(tmp_path)

    @pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
    def test_an_unreadable_file_is_a_permission_error(self, tmp_path: Path) -> None:
        """A file the process may not read: PermissionError, an OSError."""
        p = write(tmp_path / "s.jsonl", HEADER)
        os.chmod(p, 0)
        with pytest.raises(PermissionError):
            load(p)

    @pytest.mark.parametrize("strict", [True, False])
    def test_reading_bad_files_never_changes_them(self, tmp_path: Path, strict: bool) -> None:
        """Neither a torn v3 file nor a v1 file nor a lenient load of bad lines is
        rewritten: bytes and modification time stay."""
        v1 = {k: v for k, v in HEADER.items() if k != "version"}
        files = [
            write(tmp_path / "torn.jsonl", HEADER, msg("a", None), '{"type":"mess', end=""),
            write(
                tmp_path / "v1.jsonl",
                v1,
                {"type": "message", "timestamp": TS, "message": {"role": "user", "content": "x"}},
            ),
            write(tmp_path / "crlf.jsonl", HEADER, msg("a", None), end="\r\n"),
        ]
        if not strict:
            files.append(write(tmp_path / "bad.jsonl", HEADER, "{bad", msg("b", "zz")))
        for p in files:
            os.utime(p, ns=(1_000_000_000, 1_000_000_000))
            before = p.read_bytes(), os.stat(p).st_mtime_ns, os.stat(p).st_size
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SessionFileWarning)
                load(p, strict=strict)
            assert (p.read_bytes(), os.stat(p).st_mtime_ns, os.stat(p).st_size) == before


class TestStrictErrors:
    """Every problem is a SessionFileError naming the file and the 1-based line."""

    @pytest.mark.parametrize(
        ("lines", "line", "match"),
        [
            ([HEADER, "{not json"], 2, "malformed JSON"),
            ([HEADER, "[1, 2]"], 2, "not a JSON object"),
            ([HEADER, '"text"'], 2, "not a JSON object"),
            ([HEADER, msg("a", None), '{"a": NaN}'], 3, "NaN"),
            ([HEADER, '{"a": -Infinity}'], 2, "Infinity"),
            # Python reads these as infinity, which no JSON value is (nor the frozen
            # layer's): an error on the line, not a tree that cannot be dumped.
            (
                [
                    HEADER,
                    '{"type":"message","id":"a","parentId":null,"timestamp":"t",'
                    '"message":{"role":"user","content":"x","n":1e400}}',
                ],
                2,
                "1e400 is out of range",
            ),
            (
                [
                    HEADER,
                    '{"type":"custom","id":"a","parentId":null,"timestamp":"t",'
                    '"customType":"c","data":[-2.5E+999]}',
                ],
                2,
                "out of range",
            ),
            ([json.dumps(HEADER)[:-1] + ', "x": 1e999}'], 1, "out of range"),
            ([HEADER, msg("a", None), leaf("L", "a", "a"), msg("L", "a")], 4, "duplicate id 'L'"),
            ([HEADER, msg("a", None), leaf("L", "b", "a"), msg("b", "a")], 3, "unknown entry 'b'"),
            ([HEADER, '{"a": 1} {"b": 2}'], 2, "extra data"),
            (
                [
                    HEADER,
                    {
                        "type": "message",
                        "parentId": None,
                        "timestamp": TS,
                        "message": {"role": "user"},
                    },
                ],
                2,
                "id",
            ),
            ([HEADER, {**msg("a", None), "id": ""}], 2, "id"),
            ([HEADER, msg("a", None), {**msg("a", None), "x": 1}], 3, "duplicate id 'a'"),
            ([HEADER, msg("a", None), msg("b", "zz")], 3, "parent 'zz'"),
            ([HEADER, msg("a", "b"), msg("b", "a")], 2, "cycle"),
            ([HEADER, msg("a", "a")], 2, "cycle"),
            ([HEADER, msg("a", None), leaf("L", "nope")], 3, "unknown entry 'nope'"),
            ([HEADER, msg("a", None), leaf("a", "a")], 3, "duplicate id 'a'"),
            ([HEADER, msg("a", None), {"type": "leaf", "targetId": "a"}], 3, "id"),
            ([HEADER, {**msg("a", None), "message": {"content": "no role"}}], 2, "role"),
            ([HEADER, {**msg("a", None), "timestamp": 5}], 2, "timestamp"),
            (
                [HEADER, {"type": "label", "id": "l", "parentId": None, "timestamp": TS}],
                2,
                "targetId",
            ),
            (["[" * 100_000 + "]" * 100_000], 1, "no session header"),
            ([HEADER, "[" * 100_000 + "]" * 100_000], 2, "nested deeper than 101 levels"),
            ([msg("a", None)], 1, "no session header"),
            (["{broken"], 1, "no session header"),
            ([{**HEADER, "id": 7}], 1, "invalid session header"),
            ([{**HEADER, "version": "3"}], 1, "invalid session header"),
        ],
    )
    def test_error_names_file_and_line(
        self, tmp_path: Path, lines: list[Any], line: int, match: str
    ) -> None:
        """The error is a SessionFileError and ValueError carrying path and line."""
        p = write(tmp_path / "bad.jsonl", *lines)
        with pytest.raises(SessionFileError, match=match) as info:
            load(p)
        assert isinstance(info.value, ValueError)
        assert info.value.path == str(p)
        assert info.value.line == line
        assert str(info.value).startswith(f"{p}:{line}: ")

    def test_error_names_the_entry(self, tmp_path: Path) -> None:
        """Where an entry is concerned, its id is on the error."""
        p = write(tmp_path / "bad.jsonl", HEADER, msg("a", None), msg("b", "zz"))
        with pytest.raises(SessionFileError) as info:
            load(p)
        assert info.value.entry_id == "b"

    def test_empty_file(self, tmp_path: Path) -> None:
        """An empty file has no header: an error for the whole file (no line)."""
        p = tmp_path / "empty.jsonl"
        p.write_bytes(b"")
        with pytest.raises(SessionFileError, match="no session header") as info:
            load(p)
        assert info.value.line is None

    def test_not_utf8(self, tmp_path: Path) -> None:
        """Bytes that are not UTF-8 are an error on their line."""
        p = tmp_path / "bad.jsonl"
        p.write_bytes(json.dumps(HEADER).encode() + b'\n{"x": "\xff"}\n')
        with pytest.raises(SessionFileError, match="UTF-8") as info:
            load(p)
        assert info.value.line == 2

    def test_errors_pickle(self, tmp_path: Path) -> None:
        """A SessionFileError survives pickling with its facts."""
        import pickle

        p = write(tmp_path / "bad.jsonl", HEADER, "{x")
        with pytest.raises(SessionFileError) as info:
            load(p)
        again = pickle.loads(pickle.dumps(info.value))
        assert (again.path, again.line, str(again)) == (str(p), 2, str(info.value))


class TestLenient:
    def test_bad_lines_are_skipped_with_one_warning_each(self, tmp_path: Path) -> None:
        """Each skipped line gives exactly one SessionFileWarning naming its line."""
        p = write(
            tmp_path / "s.jsonl",
            HEADER,
            msg("a", None),
            "{bad",
            "[1]",
            msg("a", None),
            msg("b", "a"),
            leaf("L", "nope"),
        )
        with pytest.warns(SessionFileWarning) as record:
            tree = load(p, strict=False)
        assert tree.ids() == ("a", "b")
        assert tree.leaf_id == "b"
        lines = sorted(str(w.message).split(":")[1] for w in record)
        assert lines == ["3", "4", "5", "7"]

    def test_warnings_carry_the_facts_as_attributes(self, tmp_path: Path) -> None:
        """Each warning has path, line, reason (what is wrong) and entry_id attributes,
        and its text is still FILE:LINE: what was done."""
        p = write(
            tmp_path / "s.jsonl",
            HEADER,
            msg("a", None),
            "{bad",
            {**msg("a", None), "x": 1},
            msg("b", "zz"),
            HEADER,
            '{"type": "mess',
            end="",
        )
        with pytest.warns(SessionFileWarning) as record:
            load(p, strict=False)
        warned = [w.message for w in record]
        assert all(isinstance(w, SessionFileWarning) for w in warned)
        got = [
            (w.path, w.line, w.reason, w.entry_id)
            for w in warned
            if isinstance(w, SessionFileWarning)
        ]
        assert sorted(got, key=lambda g: g[1] or 0) == [
            (
                str(p),
                3,
                "malformed JSON (Expecting property name enclosed in double quotes at column 2)",
                None,
            ),
            (str(p), 4, "duplicate id 'a' (first on line 2)", "a"),
            (str(p), 5, "its parent 'zz' does not exist", "b"),
            (str(p), 6, "a second session header", None),
            (str(p), 7, "a torn last line (a write that did not finish)", None),
        ]
        texts = sorted(str(w.message) for w in record)
        assert (
            texts[0] == f"{p}:3: skipped: malformed JSON (Expecting property name "
            "enclosed in double quotes at column 2)"
        )
        assert f"{p}:5: entry 'b': its parent 'zz' does not exist: made a root" in texts

    def test_warning_attributes_survive_pickling(self) -> None:
        """A SessionFileWarning pickles with its text and its attributes."""
        import pickle

        w = SessionFileWarning("f:2: skipped: x", path="f", line=2, reason="x", entry_id="a")
        again = pickle.loads(pickle.dumps(w))
        assert (str(again), again.path, again.line, again.reason, again.entry_id) == (
            "f:2: skipped: x",
            "f",
            2,
            "x",
            "a",
        )
        assert isinstance(again, UserWarning)
        assert SessionFileWarning("plain").reason == "plain"

    def test_missing_parent_makes_a_root(self, tmp_path: Path) -> None:
        """An entry whose parent is missing becomes a root, with a warning."""
        p = write(tmp_path / "s.jsonl", HEADER, msg("a", None), msg("b", "zz"))
        with pytest.warns(SessionFileWarning, match=r":3: entry 'b'.*made a root"):
            tree = load(p, strict=False)
        assert tree["b"].parent_id is None
        tree._check()

    def test_cycle_is_broken(self, tmp_path: Path) -> None:
        """A cycle is broken (one entry becomes a root) and reported, never a hang."""
        p = write(tmp_path / "s.jsonl", HEADER, msg("a", "b"), msg("b", "a"))
        with pytest.warns(SessionFileWarning, match="cycle"):
            tree = load(p, strict=False)
        tree._check()
        assert len(tree.roots()) == 1

    def test_skipped_parent_makes_its_children_roots(self, tmp_path: Path) -> None:
        """A child of a skipped entry is repaired too, and every repair is reported."""
        p = write(tmp_path / "s.jsonl", HEADER, {**msg("a", None), "timestamp": 1}, msg("b", "a"))
        with pytest.warns(SessionFileWarning) as record:
            tree = load(p, strict=False)
        assert tree.ids() == ("b",)
        assert len(record) == 2

    def test_header_is_still_required(self, tmp_path: Path) -> None:
        """Without a header the file is not a session: an error even when lenient."""
        p = write(tmp_path / "s.jsonl", msg("a", None))
        with pytest.raises(SessionFileError, match="no session header"):
            load(p, strict=False)


class TestTornTail:
    @pytest.mark.parametrize("strict", [True, False])
    def test_torn_last_line_is_recovered_with_a_warning(self, tmp_path: Path, strict: bool) -> None:
        """No newline at the end and not JSON: skipped in both modes, with a warning."""
        whole = json.dumps(msg("b", "a"))
        p = write(tmp_path / "s.jsonl", HEADER, msg("a", None), whole[:17], end="")
        with pytest.warns(SessionFileWarning, match=":3: recovered a torn last line"):
            tree = load(p, strict=strict)
        assert tree.ids() == ("a",)

    @pytest.mark.parametrize("strict", [True, False])
    def test_recovered_torn_line_inside_the_file(self, tmp_path: Path, strict: bool) -> None:
        """A cut-short line followed by later writes (a writer's recovery) is skipped
        with a warning in both modes, so the file stays loadable after a crash."""
        p = write(tmp_path / "s.jsonl", HEADER, msg("a", None), '{"type": "mess', msg("b", "a"))
        with pytest.warns(SessionFileWarning, match=":3: skipped a torn line"):
            tree = load(p, strict=strict)
        assert tree.ids() == ("a", "b")

    @pytest.mark.parametrize("strict", [True, False])
    @pytest.mark.parametrize("cut", [1, 2, 3])
    def test_a_line_torn_inside_a_character_is_recovered(
        self, tmp_path: Path, strict: bool, cut: int
    ) -> None:
        """A crash can cut a line in the middle of a multi-byte UTF-8 character (an
        emoji here): the bytes are not UTF-8, yet it is a torn line like any other,
        at the end and inside the file (a writer's recovery after it)."""
        line = json.dumps(msg("b", "a", "h\u00e9 \U0001f600!"), ensure_ascii=False).encode()
        torn = line[: line.index(b"\xf0") + cut]
        p = tmp_path / "s.jsonl"
        p.write_bytes(
            json.dumps(HEADER).encode() + b"\n" + json.dumps(msg("a", None)).encode() + b"\n" + torn
        )
        with pytest.warns(SessionFileWarning, match=":3: recovered a torn last line"):
            assert load(p, strict=strict).ids() == ("a",)
        p.write_bytes(p.read_bytes() + b"\n" + line + b"\n")
        with pytest.warns(SessionFileWarning, match=":3: skipped a torn line"):
            assert load(p, strict=strict).ids() == ("a", "b")

    def test_a_complete_line_with_a_cut_character_after_it_is_an_error(
        self, tmp_path: Path
    ) -> None:
        """Half a character after a whole JSON object is no torn line: an error."""
        p = tmp_path / "s.jsonl"
        p.write_bytes(
            json.dumps(HEADER).encode()
            + b"\n"
            + json.dumps(msg("a", None)).encode()
            + b"\xf0\x9f\n"
        )
        with pytest.raises(SessionFileError, match=":2: not UTF-8"):
            load(p)

    def test_other_bad_line_inside_the_file_is_an_error(self, tmp_path: Path) -> None:
        """A bad line that is no cut-short JSON is an ordinary error in strict mode."""
        p = write(tmp_path / "s.jsonl", HEADER, msg("a", None), '{"type": mess', msg("b", "a"))
        with pytest.raises(SessionFileError, match=":3: malformed"):
            load(p)


class TestIsTorn:
    def test_every_prefix_of_a_line_is_torn(self) -> None:
        """Each proper prefix of a JSON object line counts as torn; the whole line not."""
        line = json.dumps(
            {"id": 'a"b', "m": {"t": [1, -2.5e3, True, None, "\u00e9\n"]}, "z": [], "y": {}},
            ensure_ascii=False,
        )
        assert all(ptree.pi.is_torn(line[:k]) for k in range(1, len(line)))
        assert all(
            ptree.pi.is_torn(json.dumps(line)[:k]) is False for k in range(1, 3)
        )  # a string at top level is no object
        assert not ptree.pi.is_torn(line)

    @pytest.mark.parametrize(
        "text",
        [
            "",
            "[1,",
            '{"a":1}{',
            '{"a":tx',
            '{"a":1,}',
            '{"a" 1',
            r'{"a":"\q',
            r'{"a":"\u00zz',
            "nope",
            '{"a":"\x01',
        ],
    )
    def test_other_text_is_not_torn(self, text: str) -> None:
        """Text that no continuation could make a JSON object is not torn."""
        assert not ptree.pi.is_torn(text)


class TestMigration:
    V1_HEADER: ClassVar[dict[str, Any]] = {
        "type": "session",
        "id": "old",
        "timestamp": TS,
        "cwd": "/w",
        "provider": "anthropic",
        "modelId": "m",
        "thinkingLevel": "off",
        "branchedFrom": "/x.jsonl",
    }

    def v1_message(self, text: str, role: str = "user") -> dict[str, Any]:
        return {"type": "message", "timestamp": TS, "message": {"role": role, "content": text}}

    def test_v1_gets_line_ids_and_a_chain(self, tmp_path: Path) -> None:
        """v1 entries get ids from their line numbers and each hangs under the one before."""
        p = write(
            tmp_path / "v1.jsonl",
            self.V1_HEADER,
            self.v1_message("a"),
            self.v1_message("b", "assistant"),
            self.v1_message("c"),
        )
        tree = load(p)
        assert tree.ids() == (v1_id(2), v1_id(3), v1_id(4))
        assert [e.parent_id for e in tree.entries()] == [None, v1_id(2), v1_id(3)]
        assert tree.leaf_id == v1_id(4)
        assert load(p) == tree  # deterministic

    def test_v1_header_fields_are_kept(self, tmp_path: Path) -> None:
        """The header keeps version 1 and its extra fields; dump writes version 3."""
        p = write(tmp_path / "v1.jsonl", self.V1_HEADER, self.v1_message("a"))
        tree = load(p)
        assert tree.header is not None
        assert tree.header.version == 1
        assert dict(tree.header.extra) == {
            "provider": "anthropic",
            "modelId": "m",
            "thinkingLevel": "off",
            "branchedFrom": "/x.jsonl",
        }
        saved = dump(tree, tmp_path / "v3.jsonl")
        head = file_lines(tmp_path / "v3.jsonl")[0]
        assert head["version"] == 3
        assert head["branchedFrom"] == "/x.jsonl"
        assert load(tmp_path / "v3.jsonl") == saved

    def test_v1_compaction_index_becomes_an_id(self, tmp_path: Path) -> None:
        """firstKeptEntryIndex (header = 0) becomes firstKeptEntryId and is dropped."""
        comp = {
            "type": "compaction",
            "timestamp": TS,
            "summary": "s",
            "firstKeptEntryIndex": 2,
            "tokensBefore": 10,
        }
        p = write(
            tmp_path / "v1.jsonl",
            self.V1_HEADER,
            self.v1_message("a"),
            self.v1_message("b"),
            comp,
            self.v1_message("c"),
        )
        c = load(p)[v1_id(4)]
        assert isinstance(c, ptree.Compaction)
        assert c.first_kept_entry_id == v1_id(3)
        assert "firstKeptEntryIndex" not in c.to_json()

    def test_v1_compaction_index_out_of_range_keeps_nothing(self, tmp_path: Path) -> None:
        """An index naming no entry makes the compaction keep nothing before itself."""
        comp = {
            "type": "compaction",
            "timestamp": TS,
            "summary": "s",
            "firstKeptEntryIndex": 0,
            "tokensBefore": 10,
        }
        p = write(tmp_path / "v1.jsonl", self.V1_HEADER, self.v1_message("a"), comp)
        tree = load(p)
        c = tree[v1_id(3)]
        assert isinstance(c, ptree.Compaction)
        assert c.first_kept_entry_id == v1_id(3)
        context = ptree.build_context(tree)
        assert [m["role"] for m in context.messages] == ["compactionSummary"]

    def test_v2_hook_message_becomes_custom(self, tmp_path: Path) -> None:
        """v2 → v3: role hookMessage becomes custom; other fields stay."""
        hook = {
            "type": "message",
            "id": "a",
            "parentId": None,
            "timestamp": TS,
            "message": {"role": "hookMessage", "customType": "x", "content": "c", "display": True},
        }
        p = write(tmp_path / "v2.jsonl", {**HEADER, "version": 2}, hook, msg("b", "a"))
        tree = load(p)
        assert tree.message("a")["role"] == "custom"
        assert tree.message("a")["customType"] == "x"
        assert tree.header.version == 2  # type: ignore[union-attr]

    def test_v2_leaf_records_work(self, tmp_path: Path) -> None:
        """Version 2 files have ids, so leaf records mean leaf moves there too."""
        p = write(
            tmp_path / "v2.jsonl",
            {**HEADER, "version": 2},
            msg("a", None),
            msg("b", "a"),
            leaf("L", "a"),
        )
        assert load(p).leaf_id == "a"


class TestPiFixtures:
    """The real Pi files load, and their context is what Pi computes (README numbers)."""

    @pytest.mark.parametrize(
        ("name", "count", "first_role", "model", "thinking"),
        [
            (
                "before-compaction.jsonl",
                446,
                "compactionSummary",
                ("anthropic", "claude-opus-4-5"),
                "off",
            ),
            ("large-session.jsonl", 914, "user", ("anthropic", "claude-sonnet-4-5"), "off"),
        ],
    )
    def test_context_matches_pi(
        self,
        pi_fixtures: Path,
        name: str,
        count: int,
        first_role: str,
        model: tuple[str, str],
        thinking: str,
    ) -> None:
        """Migrated v1 files give Pi's context: count, first role, model, thinking level."""
        tree = load(pi_fixtures / name)
        tree._check()
        assert tree.header is not None
        assert tree.header.version == 1
        context = ptree.build_context(tree)
        assert len(context.messages) == count
        assert context.messages[0]["role"] == first_role
        assert context.model is not None
        assert tuple(context.model) == model
        assert context.thinking_level == thinking

    def test_fixture_round_trips(self, pi_fixtures: Path, tmp_path: Path) -> None:
        """A migrated fixture dumps to v3 and loads back equal, with the same context."""
        tree = load(pi_fixtures / "before-compaction.jsonl")
        saved = dump(tree, tmp_path / "v3.jsonl")
        again = load(tmp_path / "v3.jsonl")
        assert again == saved
        assert ptree.build_context(again) == ptree.build_context(tree)


class TestDump:
    def test_writes_a_complete_v3_file(self, tmp_path: Path) -> None:
        """Header line first, one line per entry, compact JSON, newline at the end."""
        tree = SessionTree().append({"role": "user", "content": "hé"}, timestamp=TS)
        tree = tree.with_header(SessionHeader(id="s", timestamp=TS, cwd="/w"))
        p = tmp_path / "s.jsonl"
        assert dump(tree, p) == tree  # the same value, now knowing its file
        raw = p.read_bytes()
        assert raw.endswith(b"\n")
        assert raw.decode("utf-8").splitlines() == [
            '{"type":"session","version":3,"id":"s","timestamp":"' + TS + '","cwd":"/w"}',
            '{"type":"message","id":"e1","parentId":null,"timestamp":"' + TS + '",'
            '"message":{"role":"user","content":"hé"}}',
        ]

    def test_tree_without_header_gets_one(self, tmp_path: Path) -> None:
        """A header-less tree is written with a new header; dump returns the tree as written."""
        tree = SessionTree().append({"role": "user", "content": "x"})
        saved = dump(tree, tmp_path / "s.jsonl")
        assert saved.header is not None
        assert saved.header.cwd == os.getcwd()
        assert load(tmp_path / "s.jsonl") == saved
        assert tree.header is None

    def test_moved_leaf_is_written_as_a_leaf_record(self, tmp_path: Path) -> None:
        """A leaf that is not the last entry is saved by a final leaf record."""
        tree = SessionTree().append({"role": "user", "content": "a"})
        tree = tree.append({"role": "assistant", "content": "b"}).move_to("e1")
        saved = dump(tree, tmp_path / "s.jsonl")
        last = file_lines(tmp_path / "s.jsonl")[-1]
        assert (last["type"], last["targetId"], last["parentId"]) == ("leaf", "e1", "e1")
        assert load(tmp_path / "s.jsonl").leaf_id == "e1" == saved.leaf_id

    def test_two_dumps_of_one_tree_are_the_same_bytes(self, tmp_path: Path) -> None:
        """With a fixed clock, dumping a tree whose leaf moved twice gives equal files:
        the leaf record's id is derived, not random, and avoids the entries' ids."""
        tree = SessionTree(header=SessionHeader(id="s", timestamp=TS, cwd="/w"), clock=lambda: TS)
        tree = tree.append({"role": "user", "content": "a"}, id="leaf-1")
        tree = tree.append({"role": "user", "content": "b"}).move_to("leaf-1")
        dump(tree, tmp_path / "one.jsonl")
        dump(tree, tmp_path / "two.jsonl")
        assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()
        last = file_lines(tmp_path / "one.jsonl")[-1]
        assert (last["type"], last["id"], last["targetId"]) == ("leaf", "leaf-2", "leaf-1")
        assert load(tmp_path / "one.jsonl") == tree

    def test_replaces_atomically_and_keeps_the_mode(self, tmp_path: Path) -> None:
        """An existing file is replaced whole, its permissions kept, no temp file left."""
        p = tmp_path / "s.jsonl"
        dump(SessionTree().append({"role": "user", "content": "1"}), p)
        os.chmod(p, 0o600)
        dump(SessionTree().append({"role": "user", "content": "2"}), p, overwrite=True)
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o600
        assert load(p).current_path()[0]["content"] == "2"
        assert sorted(os.listdir(tmp_path)) == ["s.jsonl"]

    def test_failure_leaves_the_old_file(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A write that fails (here: the flush to disk) leaves the old file and no temp."""
        p = tmp_path / "s.jsonl"
        dump(SessionTree().append({"role": "user", "content": "keep"}), p)
        before = p.read_bytes()

        def broken_fsync(fd: int) -> None:
            raise OSError(5, "disk on fire")

        monkeypatch.setattr(os, "fsync", broken_fsync)
        with pytest.raises(OSError, match="disk on fire"):
            dump(SessionTree().append({"role": "user", "content": "new"}), p, overwrite=True)
        assert p.read_bytes() == before
        assert sorted(os.listdir(tmp_path)) == ["s.jsonl"]

    def test_a_tree_that_cannot_be_written_leaves_the_old_file(self, tmp_path: Path) -> None:
        """A value JSON has no form for (an infinity forced into a FrozenDict behind
        its back) fails before the file is touched: the old file stays, no temp file."""
        p = tmp_path / "s.jsonl"
        dump(SessionTree().append({"role": "user", "content": "keep"}), p)
        before = p.read_bytes()
        smuggled = ptree.FrozenDict({"role": "user"})
        dict.__setitem__(smuggled, "content", float("inf"))
        bad = SessionTree().append(smuggled)
        with pytest.raises(ValueError, match="JSON"):
            dump(bad, p, overwrite=True)
        assert p.read_bytes() == before
        assert sorted(os.listdir(tmp_path)) == ["s.jsonl"]

    def test_a_missing_directory_is_an_oserror_and_creates_nothing(self, tmp_path: Path) -> None:
        """Writing into a directory that does not exist: an OSError (ENOENT) naming the
        file, never the temporary one."""
        target = tmp_path / "nowhere" / "s.jsonl"
        with pytest.raises(OSError, match=r"nowhere/s\.jsonl: ") as caught:
            dump(SessionTree(), target)
        assert caught.value.errno == errno.ENOENT
        assert ".tmp" not in str(caught.value)
        assert os.listdir(tmp_path) == []

    def test_a_directory_in_the_way_is_left_alone(self, tmp_path: Path) -> None:
        """A path that is a directory is neither replaced nor littered."""
        (tmp_path / "d").mkdir()
        with pytest.raises(FileExistsError):
            dump(SessionTree(), tmp_path / "d")
        with pytest.raises(OSError, match="Is a directory") as caught:
            dump(SessionTree(), tmp_path / "d", overwrite=True)
        assert caught.value.errno == errno.EISDIR
        assert (tmp_path / "d").is_dir()
        assert os.listdir(tmp_path) == ["d"]
        assert sorted(os.listdir(tmp_path)) == ["d"]

    def test_lone_surrogates_are_escaped(self, tmp_path: Path) -> None:
        """A string with a lone surrogate (from a \\ud800 escape) still writes and reads."""
        p = write(
            tmp_path / "s.jsonl",
            HEADER,
            '{"type":"message","id":"a","parentId":null,'
            '"timestamp":"t","message":{"role":"user","content":"\\ud800"}}',
        )
        tree = load(p)
        dump(tree, tmp_path / "out.jsonl")
        assert load(tmp_path / "out.jsonl") == tree


class TestRoundTrip:
    @settings(max_examples=150)
    @given(tree=trees())
    def test_dump_then_load_is_equal(self, tree: SessionTree) -> None:
        """Random trees of every kind, leaf anywhere: load(dump(t)) == t, same JSON."""
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "s.jsonl"
            saved = dump(tree, p)
            again = load(p)
        again._check()
        assert again == saved
        assert again.leaf_id == tree.leaf_id
        assert again.labels() == tree.labels()
        assert again.session_name == tree.session_name
        assert [e.to_json() for e in again.entries()] == [e.to_json() for e in tree.entries()]
