"""``ptree show`` on lazily loaded sessions: previews from raw bytes, output streamed.

A message the Pi reader has not decoded yet is previewed from its JSON bytes
(``ptree/cli/text.py``).  The reference is the existing behaviour: the preview of the
same message decoded the ordinary way (the entry materialized, or the whole file read
with the fast path switched off).  The quick way must give the same text, and the
drawing must be written while it is being made.
"""

from __future__ import annotations

import io
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from ptree import dump, load
from ptree.cli import main
from ptree.cli.main import _lines
from ptree.cli.render import render_dot, render_text, tree_to_json
from ptree.cli.text import entry_preview
from ptree.pi import fast
from tests.helpers import HEADER, PI_FIXTURES, ROOT
from tests.helpers import message_line as line_of


def session_file(path: Path, messages: list[str]) -> Path:
    """A session of these raw messages, each the child of the one before."""
    lines = [json.dumps(HEADER)]
    for i, message in enumerate(messages):
        lines.append(line_of(f"m{i}", None if i == 0 else f"m{i - 1}", message))
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return path


def lazy_and_decoded(raw: str) -> tuple[Any, Any]:
    """Two entries of one message line: one left undecoded, one decoded the
    ordinary way (the reader's own decoder, as when anything reads ``.message``)."""
    line = line_of("a", None, raw).encode()
    lazy, decoded = fast.message_line(line), fast.message_line(line)
    assert lazy is not None
    assert decoded is not None
    decoded.message  # noqa: B018 - the first read decodes it, the ordinary way
    return lazy, decoded


def cli(argv: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert main(argv, out=out, err=err) == 0, err.getvalue()
    return out.getvalue()


@pytest.fixture
def eager() -> Iterator[None]:
    """Switch the fast path off: every message decoded at load, previews the old way."""
    saved = fast.AVAILABLE
    fast.AVAILABLE = False
    try:
        yield
    finally:
        fast.AVAILABLE = saved


def sessions() -> list[Path]:
    found = sorted(PI_FIXTURES.glob("*.jsonl")) + sorted((ROOT / "tests/golden").glob("*.jsonl"))
    assert found, "no session files to compare on"
    return found


OPTIONS = [[], ["--ascii"], ["--fold", "3"], ["--color", "always"], ["--json"]]


def v3_copy(path: Path, folder: Path) -> Path:
    """The session as Pi writes it today (version 3: the fast reader's files)."""
    copy = folder / path.name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dump(load(path, strict=False), copy)
    return copy


class TestSameOutput:
    @pytest.mark.parametrize("path", sessions(), ids=lambda p: p.name)
    @pytest.mark.parametrize("as_pi_writes_it", [False, True], ids=["as-is", "v3"])
    def test_show_prints_what_the_eager_reader_prints(
        self, path: Path, as_pi_writes_it: bool, tmp_path: Path
    ) -> None:
        """``ptree show`` (each option) prints the same text whether the messages
        are previewed from their bytes or decoded first (the fast path off)."""
        if as_pi_writes_it:
            path = v3_copy(path, tmp_path)
        runs = [["show", "--lenient", *opts, str(path)] for opts in OPTIONS]
        quick = [cli(argv) for argv in runs]
        saved = fast.AVAILABLE
        fast.AVAILABLE = False
        try:
            ordinary = [cli(argv) for argv in runs]
        finally:
            fast.AVAILABLE = saved
        for argv, a, b in zip(runs, quick, ordinary, strict=True):
            assert a == b, argv

    @pytest.mark.parametrize("name", ["before-compaction.jsonl", "large-session.jsonl"])
    def test_real_sessions_are_drawn_without_decoding(
        self, name: str, pi_fixtures: Path, tmp_path: Path
    ) -> None:
        """On real Pi sessions the quick way is the one taken: drawing the tree
        (text, DOT, JSON) leaves every lazily loaded message undecoded."""
        tree = load(v3_copy(pi_fixtures / name, tmp_path))
        lazy = [e for e in tree.entries() if isinstance(e, fast.LoadedMessage)]
        assert len(lazy) > 10
        list(render_text(tree))
        list(render_dot(tree))
        tree_to_json(tree)
        assert all(type(e) is fast.LoadedMessage for e in lazy)


# Messages a preview reads in ways that matter: whitespace and control characters,
# blocks of every kind and of none, values of the wrong type, missing and null keys.
TEXT = st.text(
    alphabet=st.sampled_from(list('ab c\t\n\r\x0b\x1b\x00\x7f\x85\xa0\u2028\u202e\u3000é€😀\\"/'))
    | st.characters(),
    max_size=30,
)
LONG_TEXT = st.builds(lambda s, n: s * n, TEXT, st.integers(0, 40))


def json_containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=2) | st.dictionaries(TEXT, inner, max_size=2)


ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    json_containers,
    max_leaves=4,
)
BLOCK_TYPE = st.sampled_from(["text", "thinking", "toolCall", "image", "toolResult", ""])
BLOCK = st.fixed_dictionaries(
    {"type": BLOCK_TYPE | ANY_JSON},
    optional={
        "text": LONG_TEXT | ANY_JSON,
        "thinking": LONG_TEXT | ANY_JSON,
        "name": TEXT | ANY_JSON,
        "arguments": ANY_JSON,
    },
)
CONTENT = LONG_TEXT | st.lists(BLOCK | ANY_JSON, max_size=5) | ANY_JSON
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "toolResult", "bashExecution", "custom"])},
    optional={
        "content": CONTENT,
        "command": TEXT | ANY_JSON,
        "stopReason": st.sampled_from(["aborted", "error", "stop"]) | ANY_JSON,
        "errorMessage": TEXT | ANY_JSON,
    },
)

# Messages as Pi writes them (every field of the type Pi gives it): all of them
# must be previewed from their bytes.
NAME = TEXT | st.none()
PI_BLOCK = st.fixed_dictionaries(
    {"type": BLOCK_TYPE | st.none()},
    optional={"text": LONG_TEXT | st.none(), "thinking": LONG_TEXT, "name": NAME, "id": TEXT},
)
PI_MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "toolResult", "bashExecution"])},
    optional={
        "content": LONG_TEXT | st.lists(PI_BLOCK, max_size=5) | st.none(),
        "command": NAME,
        "stopReason": st.sampled_from(["aborted", "error", "stop"]) | st.none(),
        "errorMessage": NAME,
        "usage": ANY_JSON,
    },
)


class TestSamePreview:
    @settings(max_examples=300, deadline=None)
    @given(PI_MESSAGE, st.booleans(), st.sampled_from([1, 2, 20, 80, 300]))
    def test_generated_pi_messages_from_the_bytes(
        self, message: dict[str, Any], ascii_: bool, width: int
    ) -> None:
        """A generated message of Pi's shape previews from its bytes (it stays
        undecoded) to the text it gives decoded."""
        raw = json.dumps(message, ensure_ascii=ascii_)
        if any("\ud800" <= c <= "\udfff" for c in raw):
            raw = json.dumps(message)  # a lone surrogate is written as an escape
        line = line_of("a", None, raw).encode()
        assume(fast.message_line(line) is not None)  # the fast reader takes it
        lazy, decoded = lazy_and_decoded(raw)
        assert entry_preview(lazy, width) == entry_preview(decoded, width)
        assert type(lazy) is fast.LoadedMessage

    @settings(max_examples=300, deadline=None)
    @given(MESSAGE, st.booleans(), st.sampled_from([1, 2, 20, 80, 300]))
    def test_generated_messages(self, message: dict[str, Any], ascii_: bool, width: int) -> None:
        """A generated message previews the same from its bytes as decoded."""
        raw = json.dumps(message, ensure_ascii=ascii_)
        if any("\ud800" <= c <= "\udfff" for c in raw):
            raw = json.dumps(message)  # a lone surrogate is written as an escape
        line = line_of("a", None, raw).encode()
        assume(fast.message_line(line) is not None)  # the fast reader takes it
        lazy, decoded = lazy_and_decoded(raw)
        assert entry_preview(lazy, width) == entry_preview(decoded, width)
        # Whether the bytes were enough (the entry still undecoded) or not.
        event("from the bytes" if fast.LoadedMessage.undecoded(lazy) is not None else "decoded")

    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ('{"role":"user","content":"a","content":"b"}', "user: b"),
            (
                '{"role":"x","role":"user","content":[{"type":"text","text":"a","text":"b"}]}',
                "user: b",
            ),
            (
                '{"role":"user","content":[{"type":"toolCall"},{"type":"toolCall","name":null}]}',
                "user: ?(...) None(...)",
            ),
            ('{"role":"user","content":[{"type":"toolCall","name":7}]}', "user: 7(...)"),
            ('{"role":"user","content":[1,"x",{"type":"text","text":"t"},[]]}', "user: t"),
            ('{"role":"user","content":{"type":"text","text":"t"}}', "user:"),
            (
                '{"role":"assistant","content":[],"stopReason":"error","errorMessage":"boom"}',
                "assistant: (error: boom)",
            ),
            (
                '{"role":"assistant","content":"","stopReason":"aborted","errorMessage":3}',
                "assistant: (aborted)",
            ),
            ('{"role":"bashExecution","command":null}', "bashExecution: $ None"),
            ('{"role":"bashExecution"}', "bashExecution: $"),
            (
                '{"role":"user","content":"\\u001b[2J\\u202eevil\\n\\nline"}',
                "user: \ufffd[2J\ufffdevil line",
            ),
            ('{"role":"user","content":"\\ud83d\\ude00 ok"}', "user: \U0001f600 ok"),
            (
                '{"role":"user","content":[{"type":"image"},{"type":"thinking","thinking":"hm"}]}',
                "user: [image] hm",
            ),
        ],
    )
    def test_hostile_messages(self, raw: str, expected: str) -> None:
        """Duplicate keys (the last wins), wrong types, escapes: written by hand."""
        lazy, decoded = lazy_and_decoded(raw)
        assert entry_preview(lazy, 80) == expected
        assert entry_preview(decoded, 80) == expected

    @pytest.mark.parametrize("width", [1, 8, 30, 80])
    def test_long_texts_cut_anywhere(self, width: int) -> None:
        """Long texts of every shape: whitespace runs before the words, a long first
        block, escapes and wide characters around the place where reading stops."""
        pieces = [" " * 500 + "word " * 100, "x" * 2000, "é😀\\n\\t" * 300, "\\n" * 700 + "end"]
        for piece in pieces:
            for raw in (
                json.dumps({"role": "user", "content": piece}),
                json.dumps({"role": "user", "content": [{"type": "text", "text": piece}] * 3}),
                json.dumps({"role": "u", "content": [{"type": "toolCall", "name": piece}]}),
            ):
                lazy, decoded = lazy_and_decoded(raw)
                assert entry_preview(lazy, width) == entry_preview(decoded, width)


class TestStreamed:
    @pytest.fixture
    def slow_previews(self, tmp_path: Path) -> Any:
        """A session of 2,000 messages whose previews decode them (a content the
        quick way does not read): how many are decoded shows how far drawing got."""
        raw = '{"role":"user","content":{"note":"no text here"}}'
        tree = load(session_file(tmp_path / "s.jsonl", [raw] * 2000))
        assert sum(type(e) is fast.LoadedMessage for e in tree.entries()) == 2000
        return tree

    @staticmethod
    def decoded(tree: Any) -> int:
        return sum(fast.LoadedMessage.undecoded(e) is None for e in tree.entries())

    def test_lines_come_before_the_drawing_is_done(self, slow_previews: Any) -> None:
        """render_text makes a line when asked for it: after three lines, about
        three messages have been previewed, not 2,000."""
        lines = render_text(slow_previews)
        first = [next(lines) for _ in range(3)]
        assert first[0].startswith("* m0 user:")
        assert self.decoded(slow_previews) <= 3

    def test_show_writes_while_drawing(self, slow_previews: Any) -> None:
        """What ``ptree show`` writes reaches its output in pieces while the rest is
        still to be drawn: at the first write, most messages are not previewed yet."""

        class Sink(io.StringIO):
            at_first_write: int | None = None

            def write(self, text: str) -> int:
                if self.at_first_write is None:
                    self.at_first_write = TestStreamed.decoded(slow_previews)
                return super().write(text)

        sink = Sink()
        _lines(sink, render_text(slow_previews))
        assert sink.at_first_write is not None
        assert sink.at_first_write <= 300
        assert self.decoded(slow_previews) == 2000
        assert sink.getvalue() == "".join(x + "\n" for x in render_text(slow_previews))
