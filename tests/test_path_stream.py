"""``ptree path`` on lazily loaded sessions: messages written from their raw bytes.

A message the Pi reader has not decoded yet, and that the context gives as stored, is
written from its JSON bytes (``ptree/cli/message_json.py``); everything else the old
way.  The reference is the old way itself, independent of the new code: the same
file read with the fast reader switched off (every message decoded at load by the
``json`` module and frozen, then written by ``json``), and golden files written by
the commit before this change.  The output must be the same, character for character.
"""

from __future__ import annotations

import io
import json
import tempfile
import warnings
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import ptree
from ptree import build_context, dump, load
from ptree.cli import main
from ptree.cli.message_json import compact, message_json, raw_message_json
from ptree.entries import SHAPE_ASSISTANT, SHAPE_NO_CONTENT, SHAPE_SYSTEM, message_shape
from ptree.pi import fast
from tests.helpers import HEADER, ROOT
from tests.helpers import message_line as line_of
from tests.strategies import trees

GOLDEN = ROOT / "tests" / "golden"


def session_text(messages: list[str], extra: dict[int, str] | None = None) -> str:
    """A session of these raw messages, each the child of the line before; ``extra``
    puts other raw lines (their id ``x<i>``) before message ``i``."""
    lines = [json.dumps(HEADER)]
    parent: str | None = None
    for i, message in enumerate(messages):
        if extra and i in extra:
            lines.append(extra[i].replace("PARENT", json.dumps(parent)))
            parent = f"x{i}"
        lines.append(line_of(f"m{i}", parent, message))
        parent = f"m{i}"
    return "".join(x + "\n" for x in lines)


def cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def ordinary(argv: list[str]) -> tuple[int, str, str]:
    """``cli(argv)`` the old way: the fast reader off, every message decoded at load
    (entries are then plain message entries, written as they were before)."""
    saved = fast.AVAILABLE
    fast.AVAILABLE = False
    try:
        return cli(argv)
    finally:
        fast.AVAILABLE = saved


def same_both_ways(path: Path, *options: str) -> str:
    argv = ["path", *options, str(path)]
    quick, old = cli(argv), ordinary(argv)
    assert quick == old, argv
    return quick[1]


def v3_copy(path: Path, folder: Path) -> Path:
    """The session as Pi writes it today (version 3: the fast reader's files)."""
    copy = folder / path.name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dump(load(path, strict=False), copy)
    return copy


# ------------------------------------------------------------ the encoder, by hand


class TestEscapes:
    def test_msgspec_escapes_every_code_point_as_json_does(self) -> None:
        """Every code point but the surrogates, in one string: msgspec writes the
        text json writes with ensure_ascii=False (the premise of the quick way)."""
        import msgspec

        text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
        assert msgspec.json.encode(text).decode() == json.dumps(text, ensure_ascii=False)

    def test_every_code_point_spelled_as_an_escape(self) -> None:
        """The same string spelled with \\uXXXX escapes (pairs above U+FFFF), read
        from the bytes: the text is json's, non-ASCII written as it is."""
        text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
        raw = json.dumps({"role": "user", "content": text})  # ASCII, all escaped
        assert raw.isascii()
        assert raw_message_json(raw.encode()) == compact({"role": "user", "content": text})


HOSTILE = [
    # (raw message, the line ptree path writes: by hand)
    ('{"role":"user","content":"a","content":"b"}', '{"role": "user", "content": "b"}'),
    ('{"content":"a","role":"user","content":"b"}', '{"content": "b", "role": "user"}'),
    (
        '{"role":"user","content":[1E16,-0.0,1.5e300,1.5E+300,-0,0,1e-7,0.000015,100]}',
        '{"role": "user", "content": [1e+16, -0.0, 1.5e+300, 1.5e+300, 0, 0, 1e-07, 1.5e-05, 100]}',
    ),
    (
        '{"role":"user","content":[1.0,1.50,10.0e-1,5e-324,1e-400,2.5E-3,123456789012345678901]}',
        '{"role": "user", "content": [1.0, 1.5, 1.0, 5e-324, 0.0, 0.0025, 123456789012345678901]}',
    ),
    (
        '{"role":"user","content":[%s]}' % ("9" * 299),
        '{"role": "user", "content": [%s]}' % ("9" * 299),
    ),
    (
        r'{"role":"user","content":"\u00e9\/\u001B\ud83d\ude00\u2028\u007f \b\f\n\r\t\"\\"}',
        '{"role": "user", "content": "é/\\u001b😀\u2028\x7f \\b\\f\\n\\r\\t\\"\\\\"}',
    ),
    (
        '{"role":"user","content":"é😀 \u202e ☃"}',
        '{"role": "user", "content": "é😀 \u202e ☃"}',
    ),
    (
        ' { "role" : "user" ,\t "content" : [ ] , "x" : { } , "y" : [ { } , [ ] ] } ',
        '{"role": "user", "content": [], "x": {}, "y": [{}, []]}',
    ),
    (
        r'{"role":"user","content":{"\u0041\"k\"":true,"é":null,"":false}}',
        '{"role": "user", "content": {"A\\"k\\"": true, "é": null, "": false}}',
    ),
    (
        '{"role":"user","content":' + "[" * 60 + "1" + "]" * 60 + "}",
        '{"role": "user", "content": ' + "[" * 60 + "1" + "]" * 60 + "}",
    ),
]


class TestHostileMessages:
    @pytest.mark.parametrize(("raw", "expected"), HOSTILE)
    def test_from_the_bytes(self, raw: str, expected: str) -> None:
        """Duplicate keys (the last wins, in the first one's place), numbers of every
        spelling (as Python's float repr, ints of any size, -0 as 0), escapes, raw
        non-ASCII, whitespace, deep nesting: the text written by hand."""
        assert raw_message_json(raw.encode()) == expected

    @pytest.mark.parametrize(("raw", "expected"), HOSTILE)
    def test_the_old_way_agrees(self, raw: str, expected: str) -> None:
        """The same lines the old way (decoded by the reader, written by json) and
        through ``ptree path`` both ways: the hand-written text is right, and the fast
        reader took the line (else the comparison would prove nothing)."""
        line = line_of("a", None, raw).encode()
        entry = fast.message_line(line)
        assert type(entry) is fast.LoadedMessage
        assert compact(entry.message) == expected
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "s.jsonl"
            path.write_text(session_text([raw]), encoding="utf-8")
            text = same_both_ways(path)
        assert f"\n    {expected}\n" in text

    def test_more_distinct_numbers_than_texts_kept(self) -> None:
        """10,000 distinct numbers (the texts of 4,096 are kept between messages),
        written twice: each is written as json writes it after reading it."""
        numbers = [f"{i}.{i % 7}e{i % 40 - 20}" for i in range(10_000)]
        raw = '{"role":"user","content":[' + ",".join(numbers) + "]}"
        expected = compact(json.loads(raw))
        assert "[0.0, 1.1e-19, 2.2e-18, 3.3e-17," in expected  # respelled, not copied
        assert raw_message_json(raw.encode()) == expected
        assert raw_message_json(raw.encode()) == expected

    def test_a_lone_surrogate_goes_the_old_way(self) -> None:
        """msgspec refuses an escaped lone surrogate, which json reads: no quick text
        (the reader sends such a line the ordinary way anyway)."""
        assert raw_message_json(rb'{"role":"user","content":"\ud800"}') is None
        assert (
            fast.message_line(line_of("a", None, r'{"role":"user","content":"\ud800"}').encode())
            is None
        )

    def test_lone_surrogates_in_a_loaded_file(self, tmp_path: Path) -> None:
        """The C scanner takes escaped lone surrogates (json reads them): the writer
        then reads the decoded message, and the output is json's (the surrogate
        itself, which stdout writes as \\ud800).  A role with an escape is left to the
        ordinary reader, which gives the entry its shape."""
        path = tmp_path / "s.jsonl"
        raws = [r'{"role":"user","content":"\ud800"}', r'{"role":"\udc00","content":null}']
        path.write_text(session_text(raws), encoding="utf-8")
        first, second = load(path).entries()
        assert isinstance(second, ptree.MessageEntry)
        assert (second.message["role"], second.shape) == ("\udc00", SHAPE_NO_CONTENT)
        assert message_json(first) == '{"role": "user", "content": "\ud800"}'  # type: ignore[arg-type]
        assert same_both_ways(path).count("\ud800") == 1

    def test_message_json_falls_back_to_the_message(self) -> None:
        """An item that is a message, or an entry already decoded, is written by json."""
        tree = ptree.SessionTree().append({"role": "user", "content": [1.5, "é"]})
        assert isinstance(tree.leaf, ptree.MessageEntry)
        assert message_json(tree.leaf) == '{"role": "user", "content": [1.5, "é"]}'
        assert message_json({"role": "x", "n": 1e16}) == '{"role": "x", "n": 1e+16}'


# ------------------------------------------------------------ the shape


class TestShape:
    @pytest.mark.parametrize(
        ("raw", "shape"),
        [
            ('{"role":"user","content":"x"}', 0),
            ('{"role":"user"}', SHAPE_NO_CONTENT),
            ('{"role":"user","content":null}', SHAPE_NO_CONTENT),
            ('{"role":"user", "content" :  null }', SHAPE_NO_CONTENT),
            ('{"role":"user","content":null,"content":"x"}', 0),
            ('{"role":"user","content":"x","content":null}', SHAPE_NO_CONTENT),
            ('{"role":"system","content":[]}', SHAPE_SYSTEM),
            ('{"role":"assistant"}', SHAPE_ASSISTANT | SHAPE_NO_CONTENT),
            ('{"role":"user","content":false}', 0),
            ('{"role":"user","content":""}', 0),
            ('{"role":"user","content":"null"}', 0),
        ],
    )
    def test_shape_from_the_bytes(self, raw: str, shape: int) -> None:
        """The msgspec path gives a loaded message the shape of its decoded message
        (duplicate keys: the last wins, as json has it), without decoding it."""
        lazy = fast.message_line(line_of("a", None, raw).encode())
        assert type(lazy) is fast.LoadedMessage
        assert lazy.shape == shape
        assert lazy.undecoded() is not None
        assert message_shape(lazy.message) == shape


# ------------------------------------------------------------ whole sessions


class TestSameOutput:
    def test_golden_plans(self) -> None:
        """The context of plans.jsonl, byte for byte as the commit before this change
        wrote it (tests/golden/path_plans.json)."""
        status, out, _ = cli(["path", str(GOLDEN / "plans.jsonl")])
        assert status == 0
        assert out == (GOLDEN / "path_plans.json").read_text(encoding="utf-8")

    def test_golden_hostile(self, tmp_path: Path) -> None:
        """A session of the hostile messages above, with a compaction, a branch
        summary, a custom message and a contentless message between them, byte for
        byte as the commit before this change wrote it (path_hostile.json)."""
        path = tmp_path / "hostile.jsonl"
        path.write_text(hostile_session(), encoding="utf-8")
        status, out, _ = cli(["path", str(path)])
        assert status == 0
        assert out == (GOLDEN / "path_hostile.json").read_text(encoding="utf-8")
        assert same_both_ways(path) == out

    @pytest.mark.parametrize("name", ["before-compaction.jsonl", "large-session.jsonl"])
    def test_real_sessions(self, name: str, pi_fixtures: Path, tmp_path: Path) -> None:
        """Pi's own recordings, as they are and as Pi writes them today (v3, the fast
        reader's files), at the leaf and at several entries, with --provider too."""
        copy = v3_copy(pi_fixtures / name, tmp_path)
        for path in (pi_fixtures / name, copy):
            same_both_ways(path)
            same_both_ways(path, "--provider")
        ids = load(copy).ids()
        for leaf in ids[:: max(1, len(ids) // 7)]:
            same_both_ways(copy, "--leaf", leaf)

    def test_real_session_written_without_decoding(self, pi_fixtures: Path, tmp_path: Path) -> None:
        """On a real session the quick way is the one taken: after the sources are
        found and every line written, the loaded messages are still undecoded, but
        for the few the context reads (the latest assistant message, for its model)."""
        tree = load(v3_copy(pi_fixtures / "before-compaction.jsonl", tmp_path))
        sources = build_context(tree).messages.sources()
        lines = [message_json(s) for s in sources]
        entries = [s for s in sources if isinstance(s, ptree.MessageEntry)]
        assert len(entries) > 400
        assert (
            sum(not isinstance(e, fast.LoadedMessage) or e.undecoded() is None for e in entries)
            <= 1
        )
        assert lines == [compact(m) for m in build_context(tree).messages]


def hostile_session() -> str:
    compaction = (
        '{"type":"compaction","id":"x3","parentId":PARENT,"timestamp":"2026-01-01T00:00:00Z",'
        '"summary":"s\\u00e9 1e16","firstKeptEntryId":"m1","tokensBefore":1E3}'
    )
    summary = (
        '{"type":"branch_summary","id":"x5","parentId":PARENT,"timestamp":"2026-01-01T00:00:01Z",'
        '"fromId":"m0","summary":"\\ud83d\\ude00"}'
    )
    custom = (
        '{"type":"custom_message","id":"x7","parentId":PARENT,"timestamp":"2026-01-01T00:00:02Z",'
        '"customType":"n","content":[{"type":"text","text":"1.50"}],"display":false,'
        '"details":{"v":-0.0,"w":1e-7}}'
    )
    messages = [raw for raw, _ in HOSTILE]
    messages.insert(6, '{"role":"assistant","content":null,"provider":"p","model":"m"}')
    messages.append(
        '{"role":"toolResult","toolCallId":"c","content":[{"type":"text","text":"ok"}]}'
    )
    return session_text(messages, {3: compaction, 5: summary, 7: custom})


# ------------------------------------------------------------ generated sessions

# Strings that are hard to write: escapes, controls, quotes, non-ASCII of every width.
TEXT = st.text(
    alphabet=st.sampled_from(list('ab \t\n\r\x0b\x1b\x00\x7f\x85\u2028\u202eé€😀\\"/'))
    | st.characters(),
    max_size=12,
)
NUMBER_TEXT = st.builds(
    lambda sign, whole, frac, exp: f"{sign}{whole}{frac}{exp}",
    st.sampled_from(["", "-"]),
    st.sampled_from(["0", "1", "9", "10", "123456789012345678901234567890", "9007199254740993"])
    | st.integers(0, 10**20).map(str),
    st.sampled_from(["", ".0", ".5", ".50", ".000015", ".1234567890123456789"]),
    st.sampled_from(["", "e16", "E16", "e+16", "e-7", "E-07", "e300", "e-400", "e+0", "e308"]),
)


def spelled(draw: st.DrawFn, value: Any) -> str:
    """``value`` as JSON text, spelled in one of the many ways JSON allows: blanks
    (within the line) around tokens, characters escaped or not (\\u in either case, pairs above
    U+FFFF), ``\\/``.  Numbers and escaped surrogates are drawn as text (:class:`_Token`)."""
    blank = draw(st.sampled_from(["", "", " ", "\t", " \t  "]))  # a line ends at \n
    if isinstance(value, dict):
        inner = ",".join(
            f"{blank}{spelled(draw, k)}{blank}:{blank}{spelled(draw, v)}{blank}"
            for k, v in value.items()
        )
        return "{" + (inner or blank) + "}"
    if isinstance(value, list):
        return "[" + (",".join(f"{blank}{spelled(draw, v)}{blank}" for v in value) or blank) + "]"
    if isinstance(value, str):
        return '"' + "".join(spelled_char(draw, c) for c in value) + '"'
    if isinstance(value, _Token):
        return value.text
    return json.dumps(value)


def spelled_char(draw: st.DrawFn, c: str) -> str:
    short = {
        '"': '\\"',
        "\\": "\\\\",
        "\b": "\\b",
        "\f": "\\f",
        "\n": "\\n",
        "\r": "\\r",
        "\t": "\\t",
    }
    way = draw(st.integers(0, 3))
    if c in short and way < 2:
        return short[c]
    if c == "/" and way == 0:
        return "\\/"
    lone = "\ud800" <= c <= "\udfff"  # no encoding writes one: only escaped
    if way == 3 or c in short or ord(c) < 0x20 or lone:
        units = f"{ord(c):04x}" if lone else c.encode("utf-16-be").hex()
        hexes = [units[i : i + 4] for i in range(0, len(units), 4)]
        upper = draw(st.booleans())
        return "".join("\\u" + (h.upper() if upper else h) for h in hexes)
    return c


class _Token:
    """A value spelled as this raw JSON text."""

    def __init__(self, text: str) -> None:
        self.text = text


def json_containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3)


ANY_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False).map(lambda f: _Token(repr(f)))
    | NUMBER_TEXT.map(_Token)
    | st.sampled_from([r'"\ud800"', r'"a\uDC00b"', r'"\ud83d\ude00"', r'"\uD83D\uDE00"']).map(
        _Token
    )
    | TEXT,
    json_containers,
    max_leaves=6,
)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "toolResult", "system", "custom", "x"])},
    optional={
        "content": st.none() | TEXT | st.lists(ANY_JSON, max_size=3) | ANY_JSON,
        "provider": TEXT,
        "model": TEXT,
        "details": ANY_JSON,
        "deep": st.integers(1, 63).map(lambda n: [[]] if n == 1 else _deep(n)),
    },
)


def _deep(n: int) -> Any:
    value: Any = []
    for _ in range(n - 1):
        value = [value]
    return value


@st.composite
def raw_sessions(draw: st.DrawFn) -> str:
    """A chain of spelled messages, sometimes with a compaction or a branch summary."""
    messages = [spelled(draw, m) for m in draw(st.lists(MESSAGE, min_size=1, max_size=6))]
    extra: dict[int, str] = {}
    if draw(st.booleans()):
        at = draw(st.integers(0, len(messages) - 1))
        kept = draw(st.sampled_from([f"m{i}" for i in range(len(messages))] + ["none"]))
        extra[at] = (
            f'{{"type":"compaction","id":"x{at}","parentId":PARENT,"timestamp":"2026-01-01T00:00:00Z",'
            f'"summary":"s","firstKeptEntryId":"{kept}","tokensBefore":5}}'
        )
    return session_text(messages, extra)


class TestGenerated:
    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(raw_sessions())
    def test_spelled_sessions(self, text: str) -> None:
        """Generated messages spelled every way JSON allows (numbers like 1e16, -0.0,
        1.5e300 or 300-digit integers, escapes, non-ASCII, blanks, deep nesting,
        missing and null contents, system messages, a compaction): ``ptree path``
        prints the same as the old way, status and errors included."""
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "s.jsonl"
            path.write_text(text, encoding="utf-8")
            argv = ["path", str(path)]
            quick, old = cli(argv), ordinary(argv)
            assert quick == old
            if quick[0] == 0:
                lazy = sum(type(e) is fast.LoadedMessage for e in load(path).entries())
                event(f"{'some' if lazy else 'no'} lines on the fast path")
            else:
                event("a file the reader refuses")

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(raw_sessions())
    def test_each_message_from_its_bytes(self, text: str) -> None:
        """Line by line: each generated message the fast reader takes is written
        from its bytes as json writes it decoded."""
        for line in text.splitlines()[1:]:
            entry = fast.message_line(line.encode())
            if entry is None:
                continue
            source = fast.LoadedMessage.undecoded(entry)
            assert source is not None
            raw = bytes(cast(bytes, source))  # msgspec.Raw: a buffer
            assert raw_message_json(raw) == compact(entry.message)

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(trees(max_steps=25, pi16=True), st.data())
    def test_generated_trees(self, tree: ptree.SessionTree, data: st.DataObject) -> None:
        """Trees of every entry kind (compactions with checkpoints, summaries, custom
        and system messages, contentless messages, context edits, branches), written
        to a file: ``ptree path`` at the leaf and at a drawn entry prints the same as
        the old way."""
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "s.jsonl"
            dump(tree, path)
            same_both_ways(path)
            if tree:
                leaf = data.draw(st.sampled_from(tree.ids()))
                same_both_ways(path, "--leaf", leaf)


class TestSources:
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(trees(max_steps=25, pi16=True), st.sampled_from(["1.6", "0.73.1"]), st.data())
    def test_sources_make_the_context(
        self, tree: ptree.SessionTree, pi: Any, data: st.DataObject
    ) -> None:
        """On a lazily loaded file (shapes from the bytes): the context equals the
        one build_context gives on the same file decoded at load, and among its
        sources an entry stands only for its own stored message, unchanged."""
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "s.jsonl"
            dump(tree, path)
            lazy = load(path)
            saved = fast.AVAILABLE
            fast.AVAILABLE = False
            try:
                eager = load(path)
            finally:
                fast.AVAILABLE = saved
        leaf = data.draw(st.sampled_from([None, *eager.ids()]))
        expected = build_context(eager, leaf, pi=pi)
        context = build_context(lazy, leaf, pi=pi)
        sources = context.messages.sources()
        assert context == expected
        assert len(sources) == len(expected.messages)
        for source, message in zip(sources, expected.messages, strict=True):
            if isinstance(source, ptree.MessageEntry):
                stored = eager[source.id]
                assert isinstance(stored, ptree.MessageEntry)
                assert stored.message == message


# ------------------------------------------------------------ streamed


class TestStreamed:
    def test_lines_are_written_while_they_are_made(self, tmp_path: Path) -> None:
        """``ptree path`` of 2,000 messages writes its first lines before most
        messages are made into text (and the whole output is the old way's)."""
        from ptree.cli.main import _json, _state_json

        raw = '{"role":"user","content":"hello"}'
        path = tmp_path / "s.jsonl"
        path.write_text(session_text([raw] * 2000), encoding="utf-8")
        context = build_context(load(path))
        made = 0

        def counted(item: Any) -> str:
            nonlocal made
            made += 1
            return message_json(item)

        class Sink(io.StringIO):
            at_first_write: int | None = None

            def write(self, text: str) -> int:
                if self.at_first_write is None:
                    self.at_first_write = made
                return super().write(text)

        sink = Sink()
        messages = context.messages.sources()
        _json(sink, {**_state_json(context), "messages": messages}, "messages", counted)
        assert sink.at_first_write is not None
        assert sink.at_first_write <= 300
        assert made == 2000
        assert sink.getvalue() == ordinary(["path", str(path)])[1]
