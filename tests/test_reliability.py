"""Reliability: what ptree accepts it can write and read back; deep, hostile or odd
input costs a typed error, never a RecursionError, a lost file or quadratic time.

One test class per defect of issue 16; each test failed before its fix.
"""

from __future__ import annotations

import copy
import json
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptree
from ptree import SessionTree, SessionWriter, TooDeepError, freeze
from ptree.frozen import MAX_DEPTH
from ptree.pi import dump, load

# ---------------------------------------------------------------------------- helpers


def nested(depth: int, shape: list[bool] | None = None, leaf: Any = "x") -> Any:
    """A plain JSON value ``depth`` containers deep; ``shape[i]`` picks dict or list."""
    value = leaf
    for i in range(depth):
        as_dict = shape[i % len(shape)] if shape else i % 2 == 0
        value = {"k": value, "n": i} if as_dict else [value, i]
    return value


def on_a_deep_stack(fn: Callable[[], Any], frames: int = 250) -> Any:
    """Call ``fn`` from ``frames`` Python frames further down than the caller: an
    application's own stack, which every operation must leave room for."""

    def down(n: int) -> Any:
        return fn() if n == 0 else down(n - 1)

    return down(frames)


def message(depth: int, shape: list[bool] | None = None) -> dict[str, Any]:
    """A user message whose whole value nests ``depth`` levels (the message is 1)."""
    return {"role": "user", "content": nested(depth - 1, shape)}


# ---------------------------------------------------------------------------- 1 and 2


class TestOneNestingLimit:
    """Defects 1 and 2: one limit, MAX_DEPTH, and every operation works up to it."""

    @settings(max_examples=40)
    @given(
        depth=st.integers(1, 3 * MAX_DEPTH),
        shape=st.lists(st.booleans(), min_size=1, max_size=5),
    )
    def test_any_depth_works_everywhere_or_is_refused_at_append(
        self, tmp_path_factory: pytest.TempPathFactory, depth: int, shape: list[bool]
    ) -> None:
        """A message either is refused by append with TooDeepError, or survives
        pickle, ==, repr, hash, copy, dump, load and a SessionWriter, from a deep stack."""
        msg = message(depth, shape)
        if depth > MAX_DEPTH:
            with pytest.raises(TooDeepError) as info:
                SessionTree().append(msg)
            assert isinstance(info.value, ValueError)
            assert info.value.where.startswith("message[")
            return
        tree = SessionTree().append(msg).append({"role": "assistant", "content": "ok"})
        folder = tmp_path_factory.mktemp("deep")

        def everything() -> None:
            again = pickle.loads(pickle.dumps(tree))
            assert again == tree
            assert (again != tree) is False
            first = tree["e1"]
            assert isinstance(first, ptree.MessageEntry)
            for value in (tree, first, first.message):
                assert repr(value)
            assert hash(again) == hash(tree)
            assert copy.deepcopy(tree) == tree
            saved = dump(tree, folder / "s.jsonl")
            loaded = load(folder / "s.jsonl")
            assert loaded == saved
            assert loaded.current_path()[0] == msg
            with SessionWriter(folder / "w.jsonl") as w:
                w.commit(w.value.append(msg))
            assert load(folder / "w.jsonl").leaf.message == msg  # type: ignore[union-attr]

        on_a_deep_stack(everything)

    def test_building_with_frozen_values_cannot_pass_the_limit(self) -> None:
        """freeze([v]) again and again stops at MAX_DEPTH (it reached 3,000 before)."""
        value = freeze([])
        built = 1
        refused: TooDeepError | None = None
        for _ in range(3_000):
            try:
                value = freeze([value])
            except TooDeepError as exc:
                refused = exc
                break
            built += 1
        assert refused is not None
        assert built == MAX_DEPTH
        with pytest.raises(TooDeepError):
            SessionTree().append({"role": "user", "content": value})

    @pytest.mark.parametrize("depth", [MAX_DEPTH + 2, MAX_DEPTH + 3, 500, 1_000, 100_000])
    def test_load_refuses_a_line_deeper_than_any_value_with_its_line(
        self, tmp_path: Path, depth: int
    ) -> None:
        """A line deeper than LINE_DEPTH (strict: error naming the line; lenient:
        skipped with a warning), never a RecursionError."""
        path = tmp_path / "deep.jsonl"
        good = SessionTree().append({"role": "user", "content": "hi"})
        dump(good, path)
        record = {
            "type": "message",
            "id": "deep",
            "parentId": "e1",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": "[" * (depth - 2) + "]" * (depth - 2)},
        }
        line = json.dumps(record).replace(
            json.dumps("[" * (depth - 2) + "]" * (depth - 2)), "[" * (depth - 2) + "]" * (depth - 2)
        )
        with path.open("a") as f:
            f.write(line + "\n")
        with pytest.raises(ptree.SessionFileError) as info:
            load(path)
        assert info.value.line == 3
        assert "nested deeper than" in info.value.reason
        with pytest.warns(ptree.SessionFileWarning, match=":3: skipped: nested deeper"):
            assert len(load(path, strict=False)) == 1

    def test_load_takes_the_deepest_line_ptree_writes(self, tmp_path: Path) -> None:
        """An entry whose message is MAX_DEPTH deep: its line is one deeper, and reads."""
        tree = SessionTree().append(message(MAX_DEPTH))
        path = tmp_path / "s.jsonl"
        dump(tree, path)
        assert load(path) == tree.with_header(load(path).header)

    @pytest.mark.parametrize("kind", ["usage", "context_edit"])
    def test_pi_16_kinds_keep_the_limit(self, tmp_path: Path, kind: str) -> None:
        """Pi 1.6's usage and context_edit entries (issue 12): a value MAX_DEPTH deep is
        written and read back, one level deeper is refused when made, naming the field."""

        def make(depth: int) -> ptree.Entry:
            if kind == "usage":
                return ptree.Usage(
                    id="u", parent_id="r", timestamp=TS, kind="k", provider="p", model="m",
                    usage={"input": 1, "deep": nested(depth - 1)},
                )  # fmt: skip
            return ptree.ContextEdit(
                id="u", parent_id="r", timestamp=TS, target_id="r",
                replacement={"content": [nested(depth - 2)]},
            )  # fmt: skip

        root = SessionTree().append({"role": "user", "content": "r"}, id="r")
        tree = root.insert(make(MAX_DEPTH))
        saved = dump(tree, tmp_path / "s.jsonl")
        assert load(tmp_path / "s.jsonl") == saved
        with pytest.raises(TooDeepError) as caught:
            make(MAX_DEPTH + 1)
        assert caught.value.where.startswith("usage" if kind == "usage" else "replacement")

    @pytest.mark.parametrize("source", ["chatgpt", "openwebui"])
    def test_importers_refuse_deep_json_with_a_typed_error(
        self, tmp_path: Path, source: str
    ) -> None:
        """A deeply nested export is read without recursion and refused with an
        ImportFormatError naming the place (one line in the CLI), not a 34-line
        RecursionError traceback."""
        from ptree.formats import IMPORTERS, ImportFormatError

        export = tmp_path / "export.json"
        export.write_text("[" * 100_000 + "]" * 100_000)
        with pytest.raises(ImportFormatError, match=r"\[0\]: expected an object, found a list"):
            list(IMPORTERS[source].sessions(export))


def test_recursion_limit_is_the_default() -> None:
    """The tests above assume Python's default limit, as users run."""
    assert sys.getrecursionlimit() == 1000


# ---------------------------------------------------------------------------- shared


HEADER = {
    "type": "session",
    "version": 3,
    "id": "s1",
    "timestamp": "2026-01-05T09:00:00.000Z",
    "cwd": "/w",
}
TS = "2026-01-05T09:00:01.000Z"


def record(eid: str, parent: str | None, role: str = "user", text: str = "hi") -> dict[str, Any]:
    return {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": TS,
        "message": {"role": role, "content": text},
    }


def write_lines(path: Path, *records: Any, header: Any = HEADER, end: str = "\n") -> Path:
    lines = [json.dumps(header), *(r if isinstance(r, str) else json.dumps(r) for r in records)]
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


def cli(*argv: str | Path) -> tuple[int, str, str]:
    """Run the ``ptree`` command in this process: (status, stdout, stderr)."""
    import io

    from ptree.cli import main

    out, err = io.StringIO(), io.StringIO()
    status = main([str(a) for a in argv], out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def round_trips_or_is_refused(load_it: Callable[[], SessionTree], folder: Path) -> None:
    """What load accepts, dump writes and load reads back equal."""
    try:
        tree = load_it()
    except ptree.SessionFileError:
        return
    saved = dump(tree, folder / "again.jsonl")
    assert load(folder / "again.jsonl") == saved


# ---------------------------------------------------------------------------- 3


_KIND_FIELDS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "message": lambda d: {"message": d(st.sampled_from([{"role": "user", "content": "x"}]))},
    "label": lambda d: {"target_id": "r", "label": d(st.none() | st.text(max_size=3))},
    "session_info": lambda d: {"name": d(st.none() | st.text(max_size=3))},
    "custom": lambda d: {"custom_type": "k", "data": d(st.none() | st.integers())},
    "model_change": lambda d: {"provider": "p", "model_id": "m"},
    # Pi 1.6's kinds (issue 12): an optional note, a required replacement that may be null.
    "usage": lambda d: {
        "kind": "cache_warm",
        "provider": "p",
        "model": "m",
        "usage": {"input": d(st.integers(0, 9))},
        "note": d(st.none() | st.text(max_size=3)),
    },
    "context_edit": lambda d: {
        "target_id": "r",
        "replacement": d(st.none() | st.just({"content": "short"})),
    },
    "unknown": lambda d: {
        "entry_type": d(
            st.sampled_from(["leaf", "session", "message", "label", "custom", "future"])
            | st.text(max_size=4)
        )
    },
}
_EXTRA_KEYS = st.sampled_from(
    [
        *("type", "id", "parentId", "timestamp", "message", "label", "name", "customType"),
        *("data", "targetId", "provider", "modelId", "payload"),
        *("note", "usage", "replacement", "kind"),
    ]
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner),
    max_leaves=4,
)


class TestRoundTrip:
    """Defect 3: what ptree accepts (in memory, or from a file) it writes and reads back."""

    @settings(max_examples=150)
    @given(data=st.data())
    def test_every_tree_ptree_accepts_writes_and_reads_back(
        self, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
    ) -> None:
        """Entries of any kind with any extra fields, unknown entries of any type, any
        ids and leaf: refused at construction, or identical after dump and load."""
        draw = data.draw
        tree = SessionTree().append({"role": "user", "content": "r"}, id="r")
        for i in range(draw(st.integers(1, 4))):
            kind = draw(st.sampled_from(sorted(_KIND_FIELDS)))
            cls = ptree.UnknownEntry if kind == "unknown" else ptree.entries.ENTRY_TYPES[kind]
            extra = draw(st.dictionaries(_EXTRA_KEYS, _JSON, max_size=3))
            try:
                entry = cls(
                    id=draw(st.sampled_from([f"x{i}", "leaf-1", "e7"])),
                    parent_id=draw(st.sampled_from([None, tree.leaf_id])),
                    timestamp=draw(st.sampled_from(["t", TS])),
                    extra=extra or None,
                    **_KIND_FIELDS[kind](draw),
                )
                tree = tree.insert(entry)
            except (ptree.InvalidEntryError, ptree.DuplicateEntryError):
                continue
        if draw(st.booleans()):
            tree = tree.move_to(draw(st.sampled_from([None, *tree.ids()])))
        path = tmp_path_factory.mktemp("rt") / "s.jsonl"
        saved = dump(tree, path)
        again = load(path)  # strict: not a warning either
        assert again == saved
        for a, b in zip(saved.entries(), again.entries(), strict=True):
            # (A loaded message stays a lazy MessageEntry once read: compare kinds.)
            assert (a.type, a, a.extra) == (b.type, b, b.extra)

    @pytest.mark.parametrize(
        ("entry_type", "extra"),
        [
            ("leaf", {"targetId": "r"}),
            ("leaf", {}),
            ("session", {"version": 3}),
            ("session", {}),
            ("message", {"message": "not a mapping"}),
            ("label", {}),
            ("model_change", {"provider": 1}),
            ("custom", {}),
        ],
    )
    def test_unknown_entries_with_a_reserved_type_are_refused(
        self, tmp_path: Path, entry_type: str, extra: dict[str, Any]
    ) -> None:
        """An UnknownEntry whose type ptree reads as something else (a leaf move, a
        header, a known kind) cannot round-trip: it is refused when made."""

        def build() -> SessionTree:
            entry = ptree.UnknownEntry(
                id="u", parent_id="r", timestamp=TS, entry_type=entry_type, extra=extra or None
            )
            return SessionTree().append({"role": "user", "content": "r"}, id="r").insert(entry)

        try:
            tree = build()
        except ptree.InvalidEntryError as exc:
            refused: ptree.InvalidEntryError | None = exc
        else:
            refused = None
        if refused is not None:
            assert refused.field == "type"
            return
        saved = dump(tree, tmp_path / "s.jsonl")
        assert load(tmp_path / "s.jsonl") == saved

    def test_a_field_the_lenient_loader_sets_aside_round_trips(self, tmp_path: Path) -> None:
        """Issue 12 keeps (leniently) an entry whose optional field has the wrong type,
        the value set aside in extra; issue 16 refuses a hand-made entry whose extra
        shadows its fields.  Both hold: the kept entry writes its line back as it was,
        reads back the same (leniently; a strict load refuses both files alike), and
        evolves; the same entry made by hand is still refused."""
        bad = {**record("b", "a"), "type": "session_info", "name": ["not", "a", "name"]}
        del bad["message"]
        path = write_lines(tmp_path / "s.jsonl", record("a", None), bad)
        with pytest.warns(ptree.SessionFileWarning, match="set aside"):
            tree = load(path, strict=False)
        kept = tree["b"]
        assert isinstance(kept, ptree.SessionInfo)
        assert (kept.name, dict(kept.extra)) == (None, {"name": ["not", "a", "name"]})
        saved = dump(tree, tmp_path / "again.jsonl")
        line = (tmp_path / "again.jsonl").read_text().splitlines()[2]
        assert json.loads(line) == bad
        with pytest.warns(ptree.SessionFileWarning, match="set aside"):
            again = load(tmp_path / "again.jsonl", strict=False)
        assert again == saved
        assert again["b"].extra == kept.extra
        for p in (path, tmp_path / "again.jsonl"):
            with pytest.raises(ptree.SessionFileError, match=":3:"):
                load(p)
        assert kept.evolve(timestamp="t").extra == kept.extra
        with pytest.raises(ptree.InvalidEntryError, match="not an extra one"):
            kept.evolve(name="x")
        with pytest.raises(ptree.InvalidEntryError, match="not an extra one"):
            ptree.SessionInfo(id="b", parent_id="a", timestamp=TS, extra={"name": ["x"]})

    def test_a_version_1_leaf_line_is_refused_or_round_trips(self, tmp_path: Path) -> None:
        """A v1 file has no ids for a leaf record to name: strict load refuses the
        line; lenient load skips it; either way what loads writes and reads back."""
        path = write_lines(
            tmp_path / "v1.jsonl",
            {"type": "message", "timestamp": TS, "message": {"role": "user", "content": "a"}},
            {"type": "leaf", "timestamp": TS, "targetId": None},
            header={"type": "session", "id": "s1", "timestamp": TS, "cwd": "/w"},
        )
        round_trips_or_is_refused(lambda: load(path), tmp_path)
        with pytest.warns(ptree.SessionFileWarning):
            round_trips_or_is_refused(lambda: load(path, strict=False), tmp_path)

    def test_create_is_all_or_nothing(self, tmp_path: Path) -> None:
        """SessionWriter.create of a lenient load of that v1 file: a whole file that
        reopens equal, or an error and no file (it left a half-done file before)."""
        path = write_lines(
            tmp_path / "v1.jsonl",
            {"type": "message", "timestamp": TS, "message": {"role": "user", "content": "a"}},
            {"type": "leaf", "timestamp": TS, "targetId": None},
            header={"type": "session", "id": "s1", "timestamp": TS, "cwd": "/w"},
        )
        with pytest.warns(ptree.SessionFileWarning):
            tree = load(path, strict=False)
        new = tmp_path / "new.jsonl"
        try:
            writer = SessionWriter.create(new, tree)
        except (ptree.SessionError, ValueError):
            assert not new.exists()
            return
        with writer:
            assert load(new) == writer.value


# ---------------------------------------------------------------------------- 4


def gpt_export(path: Path, text: str = "hi") -> Path:
    """A one-conversation ChatGPT export."""
    path.write_text(
        json.dumps(
            [
                {
                    "id": "c1",
                    "title": "Sums",
                    "create_time": 1.0,
                    "current_node": "m",
                    "mapping": {
                        "m": {
                            "id": "m",
                            "parent": None,
                            "children": [],
                            "message": {
                                "id": "m",
                                "author": {"role": "user"},
                                "create_time": 1.0,
                                "content": {"content_type": "text", "parts": [text]},
                            },
                        }
                    },
                }
            ]
        )
    )
    return path


class TestNeverOverwrite:
    """Defect 4: no command replaces a file without --force, or writes through a link."""

    def test_import_refuses_existing_files_unless_forced(self, tmp_path: Path) -> None:
        """A second import into the same folder writes nothing and exits 1."""
        export = gpt_export(tmp_path / "conversations.json")
        status, out, _ = cli("import", "chatgpt", export, "-o", tmp_path / "out")
        assert status == 0
        [written] = [Path(p) for p in out.split()]
        before = written.read_bytes()
        gpt_export(export, "changed")
        status, out, err = cli("import", "chatgpt", export, "-o", tmp_path / "out")
        assert (status, out) == (1, "")
        assert "exist" in err
        assert "nothing written" in err
        assert written.read_bytes() == before
        status, _, _ = cli("import", "chatgpt", export, "-o", tmp_path / "out", "--force")
        assert status == 0
        assert "changed" in written.read_text()

    def test_export_refuses_an_existing_file_unless_forced(self, tmp_path: Path) -> None:
        """export -o over a file: exit 1, the file untouched; --force replaces it."""
        session = write_lines(tmp_path / "s.jsonl", record("a", None))
        target = tmp_path / "tree.dot"
        target.write_text("mine")
        status, _, err = cli("export", session, "--format", "dot", "-o", target)
        assert status == 1
        assert "exists" in err
        assert target.read_text() == "mine"
        assert cli("export", session, "--format", "dot", "-o", target, "--force")[0] == 0
        assert target.read_text().startswith("digraph")

    @pytest.mark.parametrize(
        ("command", "start"),
        [
            ("dot", "digraph"),
            ("mermaid", "flowchart"),
            ("html", "<!"),
            ("markdown", "#"),
            ("jsonl", "{"),
            ("fork", "{"),
        ],
    )
    def test_links_are_never_followed(self, tmp_path: Path, command: str, start: str) -> None:
        """A link at the output (to a file, or dangling): refused without --force (the
        target untouched, a dangling one not created); with --force the link itself is
        replaced by the new file and its target is untouched.  Every export format
        (issue 19's html, markdown and jsonl too) and fork."""
        session = write_lines(tmp_path / "s.jsonl", record("a", None))
        victim = tmp_path / "victim.txt"
        victim.write_text("precious")
        argv: list[str | Path] = (
            ["fork", session, "--at", "a"]
            if command == "fork"
            else ["export", session, "--format", command]
        )
        link = tmp_path / "out"
        link.symlink_to(victim)
        dangling = tmp_path / "dangling"
        dangling.symlink_to(tmp_path / "nowhere")
        for target in (link, dangling):
            status, _, err = cli(*argv, "-o", target)
            assert status == 1, err
            assert "exists" in err
        assert victim.read_text() == "precious"
        assert not (tmp_path / "nowhere").exists()
        assert cli(*argv, "-o", link, "--force")[0] == 0
        assert not link.is_symlink()
        assert victim.read_text() == "precious"
        assert link.read_text().lstrip().startswith(start)


# ---------------------------------------------------------------------------- 5


def python_calls(fn: Callable[[], Any]) -> int:
    """How many Python and C functions ``fn`` calls: a cost in a unit that does not
    depend on the machine or its load (the same input gives the same count)."""
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def hostile_file(path: Path, n: int) -> Path:
    """``n`` entries: a clean chain, then half of them self-parents and 2-cycles."""
    records: list[Any] = [record("r", None)]
    for i in range(1, n // 2):
        records.append(record(f"c{i}", records[-1]["id"]))
    for i in range(n // 4):
        records.append(record(f"s{i}", f"s{i}"))  # its own parent
        records.append(record(f"x{i}", f"y{i}"))
        records.append(record(f"y{i}", f"x{i}"))  # a cycle of two
    return write_lines(path, *records)


class TestHostileCost:
    """Defects 5 and 6: a hostile file costs linear time and output."""

    def test_lenient_load_of_cycles_and_self_parents_is_linear(self, tmp_path: Path) -> None:
        """Twice the entries, about twice the work (was quadratic: a list.index per
        repaired entry).  Counted in function calls, not seconds."""
        import warnings

        costs = []
        for n in (1_000, 2_000):
            path = hostile_file(tmp_path / f"h{n}.jsonl", n)

            def read(path: Path = path) -> None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    load(path, strict=False)

            costs.append(python_calls(read))
        assert costs[1] / costs[0] < 2.5, costs

    @pytest.mark.parametrize("main_line_first", [False, True])
    def test_show_output_is_linear_on_a_comb(self, tmp_path: Path, main_line_first: bool) -> None:
        """A main line whose every entry has a side branch: the drawing's size per
        entry stays bounded (it was 6 KB per entry at 8,000 entries)."""
        sizes = []
        for n in (1_000, 2_000):
            records: list[Any] = [record("m0", None)]
            for i in range(1, n // 2):
                side = record(f"s{i}", f"m{i - 1}")
                main = record(f"m{i}", f"m{i - 1}")
                records += [main, side] if main_line_first else [side, main]
            path = write_lines(tmp_path / f"comb{n}.jsonl", *records)
            status, out, _ = cli("show", path)
            assert status == 0
            sizes.append(len(out.encode()))
            assert len(out.encode()) / n < 200
        assert sizes[1] / sizes[0] < 2.2, sizes


# ---------------------------------------------------------------------------- 7

# What must never reach a terminal from a file: ESC, BEL, CR, a C1 control (CSI),
# bidi override and isolate.
EVIL = "\x1b]0;pwned\x07\x1b[2J\r\x9b31m\u202e\u2066"


def assert_clean(*texts: str) -> None:
    """No control character (but newlines) and no bidi control in any text."""
    import re

    bad = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
    for text in texts:
        found = bad.search(text)
        assert found is None, (found, text)


class TestNoTerminalEscapes:
    """Defect 7: text output neutralises control and bidi characters from the file."""

    def evil_file(self, tmp_path: Path) -> Path:
        return write_lines(
            tmp_path / "evil.jsonl",
            record("a" + EVIL, None, role="user"),
            record("b" + EVIL, "a" + EVIL, role="assist" + EVIL, text="x" + EVIL),
            {
                "type": "session_info",
                "id": "n" + EVIL,
                "parentId": "b" + EVIL,
                "timestamp": TS,
                "name": "name" + EVIL,
            },
        )

    @pytest.mark.parametrize("lenient", [False, True])
    def test_show_and_check(self, tmp_path: Path, lenient: bool) -> None:
        """show (the summary's leaf id and name) and check's summary line."""
        path = self.evil_file(tmp_path)
        status, out, err = cli("show", path, *(["--lenient"] if lenient else []))
        assert status == 0
        assert_clean(out, err)
        status, out, err = cli("check", path)
        assert status == 0
        assert_clean(out, err)

    def test_fork_lines_and_errors(self, tmp_path: Path) -> None:
        """fork's "wrote … leaf" line and the --before error (the role)."""
        path = self.evil_file(tmp_path)
        status, out, err = cli("fork", path, "--at", "n" + EVIL, "-o", tmp_path / "f.jsonl")
        assert status == 0, err
        assert "leaf n" in out
        assert_clean(out, err)
        status, out, err = cli(
            "fork", path, "--at", "b" + EVIL, "--before", "-o", tmp_path / "g.jsonl"
        )
        assert status == 1
        assert "--before needs a user message" in err
        assert_clean(out, err)

    def test_strict_load_errors(self, tmp_path: Path) -> None:
        """A cycle's ids in the error of a strict load, and a lenient load's warnings."""
        path = write_lines(
            tmp_path / "cycle.jsonl",
            record("x" + EVIL, "y" + EVIL),
            record("y" + EVIL, "x" + EVIL),
        )
        commands: list[list[str | Path]] = [
            ["show", path],
            ["path", path],
            ["show", path, "--lenient"],
        ]
        for argv in commands:
            status, out, err = cli(*argv)
            assert "cycle" in err
            assert_clean(err, out if argv[0] == "show" else "")
        status, out, err = cli("check", path)
        assert status == 1
        assert_clean(out, err)


# ---------------------------------------------------------------------------- 8


class TestCheckAgreesWithLoad:
    """Defect 8: check exits 0 exactly when a strict load accepts the file."""

    @pytest.mark.parametrize("where", ["last", "middle"])
    def test_torn_lines(self, tmp_path: Path, where: str) -> None:
        """A torn line (last, or in the middle with later writes after it)."""
        torn = '{"type":"message","id":"t","parentId":"a","timest'
        if where == "last":
            path = write_lines(tmp_path / "s.jsonl", record("a", None), torn, end="")
        else:
            path = write_lines(tmp_path / "s.jsonl", record("a", None), torn, record("b", "a"))
        with pytest.warns(ptree.SessionFileWarning, match="torn"):
            load(path)  # strict load accepts it
        status, out, err = cli("check", path)
        assert status == 0
        assert out.startswith(f"{path}: ok")
        assert "warning" in err
        assert "torn" in err

    def test_an_exact_duplicate_line(self, tmp_path: Path) -> None:
        """Pi 0.73.1 could write a line twice (issue 12): a strict load skips the copy
        with a warning, so check warns and exits 0 too."""
        path = write_lines(tmp_path / "s.jsonl", record("a", None), record("a", None))
        with pytest.warns(ptree.SessionFileWarning, match="duplicate"):
            assert len(load(path)) == 1
        status, out, err = cli("check", path)
        assert status == 0, err
        assert out.startswith(f"{path}: ok")
        assert "warning" in err
        assert "duplicate" in err


# ---------------------------------------------------------------------------- 9


class TestFutureVersions:
    """Defect 9: a version newer than 3 is refused, never read or written as 3."""

    @pytest.mark.parametrize("version", [4, 999])
    def test_refused_everywhere(self, tmp_path: Path, version: int) -> None:
        """load (both modes), check and SessionWriter refuse it, naming the version."""
        path = write_lines(
            tmp_path / "s.jsonl", record("a", None), header={**HEADER, "version": version}
        )
        before = path.read_bytes()
        for strict in (True, False):
            with pytest.raises(ptree.UnsupportedVersionError) as info:
                load(path, strict=strict)
            assert info.value.version == version
            assert isinstance(info.value, ValueError)
            assert info.value.line == 1
        with pytest.raises(ptree.UnsupportedVersionError):
            SessionWriter(path)
        status, out, _ = cli("check", path)
        assert status == 1
        assert f"version {version}" in out
        assert path.read_bytes() == before


# ---------------------------------------------------------------------------- 10


class TestDumpOverwrite:
    """Defect 10: dump replaces a file only when told to, and never one that changed
    since the tree was read from it."""

    def test_an_existing_file_needs_overwrite(self, tmp_path: Path) -> None:
        """FileExistsError, the file untouched; overwrite=True replaces it."""
        path = tmp_path / "s.jsonl"
        path.write_text("mine")
        tree = SessionTree().append({"role": "user", "content": "a"})
        with pytest.raises(FileExistsError):
            dump(tree, path)
        assert path.read_text() == "mine"
        saved = dump(tree, path, overwrite=True)
        assert load(path) == saved

    def test_commits_made_since_the_load_are_not_dropped(self, tmp_path: Path) -> None:
        """Load, let a SessionWriter commit, then dump the old tree over the file:
        SessionChangedError, and the committed entries are still in the file."""
        path = tmp_path / "s.jsonl"
        dump(SessionTree().append({"role": "user", "content": "a"}), path)
        mine = load(path)
        with SessionWriter(path) as w:
            committed = w.commit(w.value.append({"role": "assistant", "content": "b"}))
        with pytest.raises(ptree.SessionChangedError) as info:
            dump(mine.append({"role": "user", "content": "c"}), path, overwrite=True)
        assert isinstance(info.value, ValueError)
        assert load(path) == committed
        # The writer's own value knows the file as it left it: it may replace it.
        dump(committed.append({"role": "user", "content": "d"}), path, overwrite=True)
        assert len(load(path)) == 3

    def test_the_refusal_names_the_file_and_how_to_replace_it(self, tmp_path: Path) -> None:
        """Issue 27 item 4: the message names ``s.jsonl`` alone (before: a temporary
        file ``.s.jsonl.p_sr3xkk.tmp -> s.jsonl``) and says overwrite=True replaces it."""
        path = tmp_path / "s.jsonl"
        path.write_text("mine")
        with pytest.raises(FileExistsError) as info:
            dump(SessionTree().append({"role": "user", "content": "a"}), path)
        assert str(info.value) == (
            f"{path}: a file exists here; overwrite=True replaces it "
            "(ptree's command line: --force)"
        )
        assert (info.value.filename, info.value.filename2) == (str(path), None)
        assert isinstance(info.value, ptree.SessionExistsError)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]

    @pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy", "rebuilt"])
    def test_a_copied_tree_cannot_drop_another_writers_entry(
        self, tmp_path: Path, how: str
    ) -> None:
        """Issue 23: ``t2 = pickle.loads(pickle.dumps(t))`` is ``== t``, and behaves as
        ``t``: it cannot overwrite an entry another writer appended since the load
        (before, the pickled copy could: the file's state was kept by ``id(header)``)."""
        import copy
        import pickle

        path = tmp_path / "s.jsonl"
        dump(SessionTree().append({"role": "user", "content": "a"}), path)
        t = load(path)
        if how == "pickle":
            t2 = pickle.loads(pickle.dumps(t))
        elif how == "copy":
            t2 = copy.copy(t)
        elif how == "deepcopy":
            t2 = copy.deepcopy(t)
        else:
            t2 = SessionTree.from_entries(t.entries(), header=t.header)
        assert t2 == t
        with SessionWriter(path) as w:
            committed = w.commit(w.value.append({"role": "assistant", "content": "b"}))
        for tree in (t, t2):
            with pytest.raises(ptree.SessionChangedError):
                dump(tree.append({"role": "user", "content": "c"}), path, overwrite=True)
        assert load(path) == committed

    def test_a_dumped_tree_may_be_dumped_again(self, tmp_path: Path) -> None:
        """Load, change, dump; change again, dump again: the file is what it wrote."""
        path = tmp_path / "s.jsonl"
        dump(SessionTree().append({"role": "user", "content": "a"}), path)
        tree = dump(load(path).append({"role": "user", "content": "b"}), path, overwrite=True)
        tree = dump(tree.append({"role": "user", "content": "c"}), path, overwrite=True)
        assert load(path) == tree


# ---------------------------------------------------------------------------- FIFOs


class TestOnlyRegularFiles:
    """Also found: a FIFO made load and the CLI wait forever, /dev/zero read without end."""

    def test_load_refuses_a_fifo_at_once(self, tmp_path: Path) -> None:
        """A FIFO (no writer) is refused, not waited on; a folder is an OSError."""
        import os
        import threading

        fifo = tmp_path / "pipe.jsonl"
        os.mkfifo(fifo)
        outcome: list[BaseException | None] = []

        def read() -> None:
            try:
                load(fifo)
            except BaseException as exc:
                outcome.append(exc)
            else:  # pragma: no cover - the defect
                outcome.append(None)

        thread = threading.Thread(target=read, daemon=True)
        thread.start()
        thread.join(timeout=20)  # returns at once; 20 s only bounds a hang
        if thread.is_alive():  # pragma: no cover - the defect: unblock the reader
            with open(fifo, "wb"):
                pass
            thread.join()
            raise AssertionError("load(FIFO) waited for a writer")
        [exc] = outcome
        assert isinstance(exc, ptree.SessionFileError), exc
        assert "FIFO" in str(exc)
        with pytest.raises(IsADirectoryError):
            load(tmp_path)
        with pytest.raises(ptree.SessionFileError, match="regular file"):
            SessionWriter(fifo)

    @pytest.mark.parametrize("command", ["show", "check"])
    def test_the_cli_refuses_devices_in_one_line(self, command: str) -> None:
        """ptree show /dev/zero: one line and exit 1, not a MemoryError traceback
        (show says it on stderr; check lists it as the file's problem on stdout)."""
        import subprocess

        done = subprocess.run(
            [sys.executable, "-m", "ptree", command, "/dev/zero"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 1
        assert "Traceback" not in done.stderr
        said = done.stderr if command == "show" else done.stdout
        assert said.count("\n") == 1
        assert "/dev/zero: a character device, not a regular file" in said

    @pytest.mark.parametrize("fmt", ["claude-code", "codex", "librechat"])
    def test_session_importers_refuse_fifos_and_devices(self, tmp_path: Path, fmt: str) -> None:
        """ptree import claude-code|codex|librechat of a FIFO (no writer) or /dev/zero:
        one line and exit 1 at once, in a child process so that a hang is a timeout
        and not a stuck test run; nothing written."""
        import os
        import subprocess

        fifo = tmp_path / "pipe.jsonl"
        os.mkfifo(fifo)
        for source, kind in (
            (fifo, "a FIFO (named pipe)"),
            (Path("/dev/zero"), "a character device"),
        ):
            out = tmp_path / f"out-{fmt}.jsonl"
            done = subprocess.run(
                [sys.executable, "-m", "ptree", "import", fmt, str(source), "-o", str(out)],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert done.returncode == 1, done.stderr
            assert "Traceback" not in done.stderr
            assert done.stderr.count("\n") == 1, done.stderr
            assert f"{source}: {kind}, not a regular file" in done.stderr
            assert not out.exists()

    def test_a_jsonl_store_skips_a_fifo_in_its_directory(self, tmp_path: Path) -> None:
        """A FIFO named like a session file in a jsonl:// store's directory is not a
        session: listing the store does not wait on it (a child process, so a hang
        is a timeout)."""
        import os
        import subprocess

        d = tmp_path / "d"
        d.mkdir()
        dump(SessionTree().append({"role": "user", "content": "hi"}), d / "real.jsonl")
        os.mkfifo(d / "pipe.jsonl")
        code = (
            "import sys; from ptree import stores\n"
            "with stores.open(sys.argv[1]) as s: print(len(s.sessions()))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, f"jsonl://{d}"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (done.returncode, done.stdout) == (0, "1\n"), done.stderr


# ---------------------------------------------------------------------------- 11


class TestAtomicCommits:
    """Defect 11: a multi-entry commit is all or nothing when the process is killed."""

    TRIALS = 300

    def test_a_killed_commit_is_whole_or_absent(self, tmp_path: Path) -> None:
        """300 times: a forked writer commits 8-entry batches (0.5 MB each, so a
        write reaches the file in parts) until SIGKILL at a random moment.  The file
        must hold every batch whole or not at all (before: 7 of 8, 3 of 8...)."""
        import os
        import random
        import signal
        import time
        import warnings

        rng = random.Random(16)
        body = "x\u00e9" * 20_000
        batch = [freeze({"role": "user", "content": f"{i}{body}"}) for i in range(8)]
        cut_short = 0  # kills that landed inside a write: the test's power
        for trial in range(self.TRIALS):
            path = tmp_path / f"k{trial}.jsonl"
            ready, started = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child, killed by the parent
                try:
                    os.close(ready)
                    w = SessionWriter(path, fsync=False)
                    tree = w.value
                    os.write(started, b"!")
                    j = 0
                    while True:
                        for i, msg in enumerate(batch):
                            tree = tree.append(msg, id=f"b{j}-{i}")
                        tree = w.commit(tree)
                        j += 1
                finally:
                    os._exit(0)
            os.close(started)
            os.read(ready, 1)
            os.close(ready)
            time.sleep(rng.uniform(0, 0.01))
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                tree = load(path)  # strict
            cut_short += bool(caught)
            counts: dict[str, int] = {}
            for eid in tree.ids():
                counts[eid.split("-")[0]] = counts.get(eid.split("-")[0], 0) + 1
            assert set(counts.values()) <= {8}, (trial, counts)
            path.unlink()
        assert cut_short > 0  # some kills did cut a commit short

    def test_new_ids_never_repeat_those_of_an_unfinished_commit(self, tmp_path: Path) -> None:
        """Until a writer removes an unfinished commit, a tree loaded from the file gives
        new entries ids past its lines' (Pi reads those lines, and would see an id
        twice); the next writer removes the commit, so Pi and ptree read the same."""
        import warnings

        path = tmp_path / "s.jsonl"
        with SessionWriter(path) as w:
            w.commit(w.value.append({"role": "user", "content": "kept"}))  # e1
        # What a process killed in the middle of a 3-entry commit leaves: 2 of 3 lines.
        unfinished = [
            {
                "type": "message",
                "id": f"e{k}",
                "parentId": f"e{k - 1}",
                "timestamp": "2026-01-01T00:00:00.000Z",
                "message": {"role": "user", "content": f"lost {k}"},
                "ptreeBatch": [k - 1, 3],
            }
            for k in (2, 3)
        ]
        with path.open("a", encoding="utf-8") as f:
            f.writelines(json.dumps(line) + "\n" for line in unfinished)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loaded = load(path)
        assert loaded.ids() == ("e1",)
        assert loaded.append({"role": "user", "content": "next"}).leaf_id == "e4"
        with pytest.warns(ptree.SessionFileWarning, match="removed the last"):
            w = SessionWriter(path)
        with w:
            assert w.value.ids() == ("e1",)
            w.commit(w.value.append({"role": "user", "content": "after"}))
        ids = [json.loads(line).get("id") for line in path.read_text().splitlines()[1:]]
        assert len(ids) == len(set(ids)) == 2, ids
