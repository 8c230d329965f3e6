"""The reader's fast path: message lines checked whole at load, decoded on first read.

The reference everywhere is the ordinary reader (the fast path switched off), which
the rest of the suite tests against Pi itself: the fast path must give the same tree,
the same values and the same errors, line for line.
"""

from __future__ import annotations

import json
import pickle
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptree
from ptree import MessageEntry, SessionFileError, SessionTree, load, thaw
from ptree.entries import LazyMessageEntry
from ptree.pi import fast
from tests.helpers import HEADER, message_line


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def eager() -> Iterator[None]:
    """Switch the fast path off (the ordinary reader decodes every line)."""
    saved = fast.AVAILABLE
    fast.AVAILABLE = False
    try:
        yield
    finally:
        fast.AVAILABLE = saved


def load_both(path: Path, strict: bool = True) -> tuple[Any, Any]:
    """(fast result, ordinary result): (a tree or the error's text, the warnings)."""

    def one() -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                got: Any = load(path, strict=strict)
            except SessionFileError as exc:
                got = f"error: {exc}"
        return got, [str(w.message) for w in caught]

    first = one()
    saved = fast.AVAILABLE
    fast.AVAILABLE = False
    try:
        second = one()
    finally:
        fast.AVAILABLE = saved
    return first, second


class TestLazyEntries:
    def test_plain_message_lines_load_undecoded(self, tmp_path: Path) -> None:
        """A plain message line gives a lazy entry until its message is read."""
        p = write(
            tmp_path / "s.jsonl",
            [json.dumps(HEADER), message_line("a", None, '{"role":"user","content":"hi"}')],
        )
        entry = load(p)["a"]
        assert isinstance(entry, LazyMessageEntry)
        assert isinstance(entry, MessageEntry)
        assert entry.undecoded() is not None
        message = entry.message
        assert message == {"role": "user", "content": "hi"}
        # Decoded once: the message is kept, the source dropped, the class unchanged.
        assert entry.undecoded() is None
        assert entry.message is message
        assert type(entry) is fast.LoadedMessage

    def test_lazy_and_plain_entries_compare_either_way(self, tmp_path: Path) -> None:
        """``==``, ``!=`` and ``hash`` treat a lazy entry as the plain entry it stands
        for, whichever side it is on, decoded or not; an entry of another message or
        another kind is unequal."""
        t = SessionTree().append({"role": "user", "content": "q"}, id="a")
        p = tmp_path / "s.jsonl"
        ptree.dump(t, p)
        plain = t["a"]
        for decode_first in (False, True):
            lazy = load(p)["a"]
            assert isinstance(lazy, LazyMessageEntry)
            if decode_first:
                lazy.message  # noqa: B018
            assert lazy == plain
            assert plain == lazy
            assert (lazy != plain, plain != lazy) == (False, False)
            assert hash(lazy) == hash(plain)
            assert lazy == load(p)["a"]
        other = SessionTree().append({"role": "user", "content": "r"}, id="a")["a"]
        assert load(p)["a"] != other
        assert other != load(p)["a"]
        assert load(p)["a"] != t.append_label("a", "x").leaf
        assert type(pickle.loads(pickle.dumps(load(p)["a"]))) is MessageEntry

    def test_lazy_entries_equal_the_entries_written(self, tmp_path: Path) -> None:
        """Equality, hashing, repr, pickling and evolve see the decoded message."""
        t = SessionTree().append({"role": "user", "content": "q"})
        t = t.append({"role": "assistant", "content": [{"type": "text", "text": "a"}]})
        p = tmp_path / "s.jsonl"
        saved = ptree.dump(t, p)

        def same(e: Any) -> Any:
            return e

        def pickled(e: Any) -> Any:
            return pickle.loads(pickle.dumps(e))

        def evolved(e: Any) -> Any:
            return e.evolve()

        for make in (same, pickled, evolved):
            loaded = load(p)
            for original, got in zip(t.entries(), loaded.entries(), strict=True):
                assert make(got) == original
                assert hash(make(got)) == hash(original)
        loaded = load(p)
        assert [repr(e) for e in loaded.entries()] == [repr(e) for e in t.entries()]
        assert load(p) == saved

    def test_threads_are_handed_one_value(self, tmp_path: Path) -> None:
        """Many threads reading one undecoded message at once all get the same object."""
        lines = [json.dumps(HEADER)]
        lines += [
            message_line(f"m{i}", None if i == 0 else f"m{i - 1}", '{"role":"user","n":[1,2]}')
            for i in range(200)
        ]
        tree = load(write(tmp_path / "s.jsonl", lines))
        entries = tree.entries()
        got: list[list[object]] = [[] for _ in range(8)]
        barrier = threading.Barrier(8)

        def reader(k: int) -> None:
            barrier.wait()
            got[k].extend(e.message for e in entries if isinstance(e, MessageEntry))

        threads = [threading.Thread(target=reader, args=(k,)) for k in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for k in range(1, 8):
            assert all(a is b for a, b in zip(got[0], got[k], strict=True))
        assert all(e.undecoded() is None for e in entries if isinstance(e, LazyMessageEntry))

    def test_context_of_an_undecoded_tree(self, tmp_path: Path) -> None:
        """build_context on fresh lazy entries sees every message and the model."""
        lines = [
            json.dumps(HEADER),
            message_line("a", None, '{"role":"user","content":"q"}'),
            message_line("b", "a", '{"role":"assistant","content":[],"provider":"p","model":"m"}'),
        ]
        ctx = ptree.build_context(load(write(tmp_path / "s.jsonl", lines)))
        assert [m["role"] for m in ctx.messages] == ["user", "assistant"]
        assert ctx.model == ptree.context.ModelRef("p", "m")


# Lines the fast path must hand to the ordinary reader, each with what it does there.
UNUSUAL = {
    "number out of range": '{"role":"user","n":1e400}',
    "number out of range, plus sign": '{"role":"user","n":-2.5E+309}',
    "300 digits with a fraction": '{"role":"user","n":' + "9" * 320 + ".5}",
    "a huge integer (fine)": '{"role":"user","n":' + "9" * 400 + "}",
    "exponent-like text in a string (fine)": '{"role":"user","content":"sha 5e123 1E999"}',
    "NaN": '{"role":"user","n":NaN}',
    "no role": '{"content":"x"}',
    "a role that is no string": '{"role":5}',
    "a role given twice, last not a string": '{"role":"user","role":null}',
    "not an object": '"user"',
    "lone surrogate escape (fine)": '{"role":"user","content":"\\ud800"}',
    "nested 80 deep": '{"role":"user","c":' + "[" * 80 + "]" * 80 + "}",
    "nested 600 deep": '{"role":"user","c":' + "[" * 600 + "]" * 600 + "}",
    "non-ASCII (fine)": '{"role":"user","content":"héllo → 世界"}',
}


class TestSameAsTheOrdinaryReader:
    @pytest.mark.parametrize("name", sorted(UNUSUAL))
    def test_unusual_message_lines(self, tmp_path: Path, name: str) -> None:
        """Whatever the line, the fast path gives the ordinary reader's tree or error."""
        lines = [json.dumps(HEADER), message_line("a", None, UNUSUAL[name])]
        p = write(tmp_path / "s.jsonl", lines)
        for strict in (True, False):
            first, second = load_both(p, strict)
            assert first == second
            tree = first[0]
            if not isinstance(tree, str) and "a" in tree:  # loaded: as json reads it
                assert thaw(tree["a"].message) == json.loads(UNUSUAL[name])

    @pytest.mark.parametrize(
        "line",
        [
            '{"type":"message","id":"","parentId":null,"timestamp":"t","message":{"role":"u"}}',
            '{"type":"message","id":"a","parentId":null,"timestamp":5,"message":{"role":"u"}}',
            '{"type":"message","id":"a","timestamp":"t","message":{"role":"u"}}',
            '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"u"},'
            '"x":1}',
            '{"type":"message","id":"a","id":"b","parentId":null,"timestamp":"t",'
            '"message":{"role":"u"}}',
            ' {"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"u"}}\r',
        ],
    )
    def test_unusual_envelopes(self, tmp_path: Path, line: str) -> None:
        """Envelope oddities (empty id, wrong types, missing or extra keys, duplicate
        keys, blanks around the line) come out as the ordinary reader has them."""
        p = write(tmp_path / "s.jsonl", [json.dumps(HEADER), line])
        fast_result, ordinary_result = load_both(p)
        assert fast_result == ordinary_result

    def test_invalid_utf8_in_a_message(self, tmp_path: Path) -> None:
        """Bytes that are not UTF-8 inside a message: the same error, same line."""
        p = tmp_path / "s.jsonl"
        good = message_line("a", None, '{"role":"user","content":"ok"}').encode()
        bad = message_line("b", "a", '{"role":"user","content":"\xff"}').encode("latin-1")
        p.write_bytes(json.dumps(HEADER).encode() + b"\n" + good + b"\n" + bad + b"\n")
        first, second = load_both(p)
        assert first == second
        assert isinstance(first[0], str)
        assert ":3:" in first[0]

    @settings(max_examples=60, deadline=None)
    @given(
        st.lists(
            st.recursive(
                st.none()
                | st.booleans()
                | st.integers()
                | st.floats(allow_nan=False, allow_infinity=False)
                | st.text(),
                lambda inner: (
                    st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=3)
                ),
                max_leaves=20,
            ),
            min_size=1,
            max_size=8,
        )
    )
    def test_random_messages_load_as_the_ordinary_reader_loads_them(
        self, contents: list[Any]
    ) -> None:
        """Generated messages (any JSON content) give equal trees both ways."""
        import tempfile

        lines = [json.dumps(HEADER)]
        for i, c in enumerate(contents):
            message = json.dumps({"role": "user", "content": c}, ensure_ascii=i % 2 == 0)
            lines.append(message_line(f"m{i}", None if i == 0 else f"m{i - 1}", message))
        with tempfile.TemporaryDirectory() as d:
            first, second = load_both(write(Path(d) / "s.jsonl", lines))
        assert first == second
        tree_a, tree_b = first[0], second[0]
        assert [e.message for e in tree_a.entries()] == [e.message for e in tree_b.entries()]


def reference_depth(raw: bytes) -> int:
    """Nesting depth of JSON text, one character at a time (strings skipped)."""
    depth = most = 0
    in_string = escaped = False
    for c in raw.decode("utf-8"):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            most = max(most, depth)
        elif c in "]}":
            depth -= 1
    return most


class TestJsonDepth:
    @settings(max_examples=200, deadline=None)
    @given(
        st.recursive(
            st.none() | st.integers() | st.text(alphabet='[]{}"\\ab\n\u2028'),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(alphabet='[]{}"\\ab', max_size=4), inner, max_size=3)
            ),
            max_leaves=30,
        ),
        st.booleans(),
    )
    def test_depth_of_any_json(self, value: Any, ascii_only: bool) -> None:
        """json_depth agrees with a character-by-character count, brackets in strings,
        escaped quotes and escaped backslashes included."""
        raw = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")
        assert fast.json_depth(raw) == reference_depth(raw)
