"""The C line scanner (ptree/pi/_scan.c): checks message lines whole, in C.

The scanner must never take a line the ordinary reader would read differently: every
line it takes gives the same id, parent, timestamp and message as the ordinary reader,
and every line the ordinary reader refuses is left to it.  The reference is the
ordinary reader's own line parser (``ptree.pi.lines.parse_line`` on the UTF-8 text,
the path the rest of the suite tests against Pi), never the scanner.  Whole files are
also loaded three ways (C scanner, msgspec path, ordinary reader) and compared.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from ptree import SessionFileError, load
from ptree.entries import LazyMessageEntry, message_shape
from ptree.pi import fast
from ptree.pi.lines import parse_line

from .frozen_values import same_value
from .helpers import FIXTURES, HEADER, missing

if fast.SCANNER != "C":  # pragma: no cover - the extension is built by pip install
    missing("the C line scanner (ptree/pi/_scan.c) was not built here", module_level=True)

from ptree.pi import _scan

# fast.py's Python class, what a build without the extension makes (the C class is its
# subclass).
PYTHON_LOADED: type[fast.LoadedMessage] = fast.LoadedMessage.__base__  # type: ignore[assignment]


def scan_one(raw: bytes) -> tuple[str, str | None, str, Any, int] | int:
    """The scanner's item for a file that is this one line."""
    items, stop = _scan.scan(raw + b"\n", 0, 10)
    assert len(items) == 1
    assert stop == len(raw) + 1
    return items[0]


def reference(raw: bytes) -> tuple[str, str | None, str, Any] | None:
    """What the ordinary reader makes of the line when it is a plain message line
    (exactly type, id, parentId, timestamp, message with a string role), else None."""
    try:
        value = parse_line(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(value, dict) or set(value) != {
        "type",
        "id",
        "parentId",
        "timestamp",
        "message",
    }:
        return None
    eid, pid, ts, msg = value["id"], value["parentId"], value["timestamp"], value["message"]
    if value["type"] != "message" or type(eid) is not str or not eid:
        return None
    if not (pid is None or type(pid) is str) or type(ts) is not str:
        return None
    if not isinstance(msg, dict) or type(msg.get("role")) is not str:
        return None
    return eid, pid, ts, msg


def check_line(raw: bytes) -> bool:
    """Assert the scanner's item for ``raw`` agrees with the reference; whether the
    scanner took the line."""
    item = scan_one(raw)
    if isinstance(item, int):
        assert item == 0
        return False
    expected = reference(raw)
    assert expected is not None, f"the scanner took a line the reader refuses: {raw!r}"
    eid, pid, ts, span, shape = item
    assert (eid, pid, ts) == expected[:3]
    assert parse_line(str(span, "utf-8")) == expected[3]
    # The shape a context walk reads instead of the message: the decoded message's.
    assert shape == message_shape(expected[3]), raw
    assert bytes(span) == bytes(memoryview(span))
    assert len(span) == len(bytes(span))
    return True


def line(message: str, *, entry_id: str = "a1", parent: str | None = None) -> bytes:
    return (
        f'{{"type":"message","id":"{entry_id}","parentId":{json.dumps(parent)},'
        f'"timestamp":"2026-01-01T00:00:00.000Z","message":{message}}}'
    ).encode()


# Lines that differ from a plain message line in one way each.  (taken?) says whether
# the scanner must take it: True where the reader reads a plain message line and the
# line is written the plain way; False where the reader refuses it or reads something
# else; None where either is right (the scanner may leave an unusual spelling to the
# reader).
CASES: dict[str, tuple[bytes, bool | None]] = {
    "plain": (line('{"role":"user","content":"hi"}'), True),
    "nested content": (line('{"role":"user","content":[{"type":"text","text":"x"}]}'), True),
    "every JSON kind": (
        line('{"role":"u","a":[true,false,null,0,-0,1.5,-2e-5,3E+8,"s",{},[]]}'),
        True,
    ),
    "blanks inside": (line('{ "role" : "u" , "c" : [ 1 , { } ] }'), True),
    "role not first": (line('{"content":"x","role":"assistant"}'), True),
    "escapes in text": (line(r'{"role":"u","c":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud800"}'), True),
    # An escaped role is left to the reader: the shape must know a "system" role.
    "escaped role value": (line(r'{"role":"\u0073ystem","content":"x"}'), None),
    "system message": (line('{"role":"system","content":"x"}'), True),
    "assistant message": (line('{"role":"assistant","content":[]}'), True),
    "assistant message without content": (line('{"role":"assistant"}'), True),
    "system message without content": (line('{"role":"system"}'), True),
    "content null": (line('{"role":"user","content":null}'), True),
    "content null, then given": (line('{"role":"user","content":null,"content":[]}'), True),
    "content given, then null": (line('{"role":"user","content":"x","content" : null}'), True),
    "content false": (line('{"role":"user","content":false}'), True),
    "non-ASCII": (line('{"role":"u","c":"h\u00e9llo \u2192 \u4e16 \U0001f600"}'), True),
    "largest double": (line('{"role":"u","n":1.7976931348623157e308}'), True),
    "tiny double": (line('{"role":"u","n":1e-400}'), True),
    "huge integer": (line('{"role":"u","n":' + "9" * 400 + "}"), None),
    "number out of range": (line('{"role":"u","n":1e400}'), False),
    "number out of range, negative": (line('{"role":"u","n":-2.5E+309}'), False),
    "just past the largest double": (line('{"role":"u","n":1.7976931348623159e308}'), False),
    # The scanner reads a number as a double only when its integer digits plus its
    # exponent pass 308; on both sides of that line:
    "digits plus exponent 308": (line('{"role":"u","n":9.99e307}'), True),
    "digits plus exponent 309, finite": (line('{"role":"u","n":1e308}'), True),
    "digits plus exponent 309, infinite": (line('{"role":"u","n":99e307}'), False),
    "negative, digits plus exponent 309": (line('{"role":"u","n":-1.5e308}'), True),
    "zero with a huge exponent": (line('{"role":"u","n":0.0e999}'), True),
    "exponent with leading zeros": (line('{"role":"u","n":1e000000000000000000000308}'), True),
    "exponent of many digits": (line('{"role":"u","n":1e' + "9" * 30 + "}"), False),
    "huge negative exponent": (line('{"role":"u","n":5E-99999999}'), True),
    "320 digits and a fraction": (line('{"role":"u","n":' + "9" * 320 + ".5}"), False),
    "leading zero": (line('{"role":"u","n":01}'), False),
    "bare fraction": (line('{"role":"u","n":.5}'), False),
    "dangling point": (line('{"role":"u","n":1.}'), False),
    "dangling exponent": (line('{"role":"u","n":1e}'), False),
    "plus sign": (line('{"role":"u","n":+1}'), False),
    "NaN": (line('{"role":"u","n":NaN}'), False),
    "Infinity": (line('{"role":"u","n":-Infinity}'), False),
    "bad literal": (line('{"role":"u","n":tru}'), False),
    "no role": (line('{"content":"x"}'), False),
    "empty message": (line("{}"), False),
    "role a number": (line('{"role":5}'), False),
    "role twice, last no string": (line('{"role":"u","role":null}'), False),
    "role twice, both strings": (line('{"role":"u","role":"v"}'), None),
    "role spelled with an escape": (line(r'{"\u0072ole":"u"}'), None),
    "message an array": (line('[{"role":"u"}]'), False),
    "message a string": (line('"user"'), False),
    "raw control character": (line('{"role":"u","c":"a\x01b"}'), False),
    "raw tab in a string": (line('{"role":"u","c":"a\tb"}'), False),
    "raw DEL (fine)": (line('{"role":"u","c":"a\x7fb"}'), True),
    "bad escape": (line(r'{"role":"u","c":"\x"}'), False),
    "short unicode escape": (line(r'{"role":"u","c":"\u12"}'), False),
    "unclosed string": (line('{"role":"u","c":"abc}'), False),
    "trailing comma": (line('{"role":"u","c":[1,]}'), False),
    "missing colon": (line('{"role":"u","c" 1}'), False),
    "extra envelope key": (line('{"role":"u"}')[:-1] + b',"x":1}', False),
    "extra data after": (line('{"role":"u"}') + b"x", False),
    "blank after": (line('{"role":"u"}') + b" ", None),
    "blank before": (b" " + line('{"role":"u"}'), None),
    "carriage return after": (line('{"role":"u"}') + b"\r", None),
    "empty id": (line('{"role":"u"}', entry_id=""), False),
    "escaped id": (line('{"role":"u"}', entry_id=r"a\u0031"), None),
    "parent given": (line('{"role":"u"}', parent="p0"), True),
    "duplicate id key": (
        b'{"type":"message","id":"a","id":"b","parentId":null,"timestamp":"t",'
        b'"message":{"role":"u"}}',
        None,
    ),
    "keys in another order": (
        b'{"message":{"role":"u"},"timestamp":"t","parentId":null,"id":"a","type":"message"}',
        True,
    ),
    "no parentId": (b'{"type":"message","id":"a","timestamp":"t","message":{"role":"u"}}', False),
    "timestamp a number": (
        b'{"type":"message","id":"a","parentId":null,"timestamp":5,"message":{"role":"u"}}',
        False,
    ),
    "another type": (
        b'{"type":"custom","id":"a","parentId":null,"timestamp":"t","message":{"role":"u"}}',
        False,
    ),
    "nested 62 deep (line 64)": (line('{"role":"u","c":' + "[" * 62 + "]" * 62 + "}"), True),
    "nested 63 deep (line 65)": (line('{"role":"u","c":' + "[" * 63 + "]" * 63 + "}"), False),
    "nested 600 deep": (line('{"role":"u","c":' + "[" * 600 + "]" * 600 + "}"), False),
    "unbalanced": (line('{"role":"u","c":[[]}'), False),
    "empty line": (b"", False),
    "not JSON": (b"hello", False),
}

UTF8 = {
    "two bytes": (b"\xc3\xa9", True),
    "three bytes": (b"\xe2\x82\xac", True),
    "four bytes": (b"\xf0\x9f\x98\x80", True),
    "highest code point": (b"\xf4\x8f\xbf\xbf", True),
    "past the highest": (b"\xf4\x90\x80\x80", False),
    "F5": (b"\xf5\x80\x80\x80", False),
    "overlong two": (b"\xc0\x80", False),
    "overlong C1": (b"\xc1\xbf", False),
    "overlong three": (b"\xe0\x80\x80", False),
    "overlong four": (b"\xf0\x80\x80\x80", False),
    "encoded surrogate": (b"\xed\xa0\x80", False),
    "last before surrogates": (b"\xed\x9f\xbf", True),
    "lone continuation": (b"\x80", False),
    "cut short": (b"\xe2\x82", False),
    "cut short at the quote": (b"\xc3", False),
    "latin-1 byte": (b"\xe9t\xe9", False),
    "FF": (b"\xff", False),
}


class TestLines:
    @pytest.mark.parametrize("name", sorted(CASES))
    def test_case(self, name: str) -> None:
        """Each unusual line: taken exactly when it should be, with the reader's values."""
        raw, taken = CASES[name]
        got = check_line(raw)
        if taken is not None:
            assert got is taken

    @pytest.mark.parametrize("name", sorted(UTF8))
    def test_utf8(self, name: str) -> None:
        """UTF-8 as Python's strict decoder has it, inside a string."""
        raw_text, valid = UTF8[name]
        raw = line('{"role":"u","c":"<>"}').replace(b"<>", raw_text)
        assert check_line(raw) is valid
        assert (reference(raw) is not None) is valid

    def test_several_lines_and_chunks(self) -> None:
        """Lines are cut at newlines; a call reads at most ``limit`` lines and says
        where the next starts; a parent id naming the line before is that line's id
        object, a timestamp equal to the line before's is its string."""
        lines = [
            line('{"role":"u"}', entry_id=f"m{i}", parent=f"m{i - 1}" if i else None)
            for i in range(5)
        ]
        lines[2] = b"not json"
        data = b"\n".join(lines) + b"\n"
        first, stop = _scan.scan(data, 0, 3)
        rest, end = _scan.scan(data, stop, 10)
        assert end == len(data)
        items = first + rest
        assert len(items) == 5
        assert items[2] == data.index(b"not json")
        assert stop == data.index(lines[3])
        tuples = [i for i in items if type(i) is tuple]
        assert [t[0] for t in tuples] == ["m0", "m1", "m3", "m4"]
        assert tuples[1][1] is tuples[0][0]  # m1's parent is m0's id object
        assert tuples[3][1] is tuples[2][0]
        assert tuples[0][2] is tuples[1][2]  # the same timestamp
        assert tuples[2][1] == "m2"  # the line before was no message line
        assert tuples[2][1] is not tuples[1][0]

    def test_bad_arguments(self) -> None:
        """Only bytes (a span points into them); offsets within the data."""
        with pytest.raises(TypeError):
            _scan.scan(bytearray(b"x"), 0, 1)  # type: ignore[call-overload]
        with pytest.raises(ValueError, match="out of range"):
            _scan.scan(b"x", 5, 1)
        with pytest.raises(ValueError, match="out of range"):
            _scan.scan(b"x", 0, -1)

    def test_entries_made_in_c_are_what_pending_makes(self) -> None:
        """With ``entries``, each item is the entry LazyMessageEntry.pending makes of
        the values the scanner gives otherwise: the same class, every slot the same."""
        assert fast.ENTRIES_IN_C
        lines = [
            line('{"role":"user","content":"hi"}', entry_id="m0"),
            line('{"role":"assistant"}', entry_id="m1", parent="m0"),
            b"not json",
            line('{"role":"system","content":[]}', entry_id="m3", parent="zz"),
        ]
        data = b"\n".join(lines) + b"\n"
        made, stop = _scan.scan(data, 0, 10, True)
        values, same_stop = _scan.scan(data, 0, 10)
        assert stop == same_stop == len(data)
        assert made[2] == values[2] == data.index(b"not json")
        names = {n for k in fast.LoadedMessage.__mro__ for n in getattr(k, "__slots__", ())}
        assert {"id", "parent_id", "timestamp", "extra", "_source", "_shape"} <= names
        for entry, value in zip(made[:2] + made[3:], values[:2] + values[3:], strict=True):
            assert type(value) is tuple
            expected = fast.LoadedMessage.pending(*value)
            assert type(entry) is type(expected) is fast.LoadedMessage
            # The C entry keeps the file's bytes and the message's place in them; its
            # source, made when asked for, is the same bytes as the Span given.
            assert entry.undecoded() is not None
            assert bytes(entry.undecoded()) == bytes(value[3])  # type: ignore[call-overload]
            for name in sorted(names - {"_source"}):  # (reading message decodes it)
                got: Any = getattr(entry, name, "<unset>")
                want: Any = getattr(expected, name, "<unset>")
                assert got == want, name
                assert type(got) is type(want), name
            assert entry.undecoded() is None
            assert entry == expected
            assert entry.message == expected.message
        assert made[1].parent_id is made[0].id  # one string for both

    def test_loaded_entries_in_c(self) -> None:
        """The C class: a subclass of the Python one that the collector does not know
        (no GC header), its message found from the file's bytes and one word (no Span
        kept), read and compared as the Python class's entries."""
        cls = fast.LoadedMessage
        assert cls.__base__ is PYTHON_LOADED
        assert cls.__name__ == "LoadedMessage"
        data = line('{"role":"user","content":"hi"}', entry_id="m0") + b"\n"
        (entry,), _ = _scan.scan(data, 0, 1, True)
        values: Any = _scan.scan(data, 0, 1)[0][0]
        python = PYTHON_LOADED.pending(*values)
        assert type(entry) is cls
        assert not gc.is_tracked(entry)
        assert not cls.__flags__ & (1 << 14)  # Py_TPFLAGS_HAVE_GC
        # No GC header (16 B); the _source slot holds the message's place in the
        # file's bytes, not a Span: one reference to the bytes for all entries.
        assert sys.getsizeof(entry) == sys.getsizeof(python) - 16
        held = sys.getrefcount(data)
        (again,), _ = _scan.scan(data, 0, 1, True)
        assert sys.getrefcount(data) == held
        del again
        assert gc.get_referents(entry) == []  # not the collector's
        assert type(entry.undecoded()) is _scan.Span
        assert entry == python
        assert hash(entry) == hash(python)
        assert entry.message == {"role": "user", "content": "hi"}
        assert entry.undecoded() is None
        with pytest.raises(TypeError):  # not a base: no subclass adds a field
            type("Sub", (cls,), {"__slots__": ()})

    def test_a_message_past_128_kib_keeps_a_span(self) -> None:
        """A message longer than a packed span holds (128 KiB) keeps a Span instead:
        the same entry, its source the same bytes."""
        for size in (1 << 17, (1 << 17) - 30):  # the message: 28 bytes more than its x's
            text = '{"role":"user","content":"' + "x" * size + '"}'
            data = line(text, entry_id="m0") + b"\n"
            (entry,), _ = _scan.scan(data, 0, 1, True)
            source = entry.undecoded()
            assert (source is entry.undecoded()) is (size == 1 << 17)  # kept, or made
            assert bytes(source) == text.encode()
            assert entry.message["content"] == "x" * size

    def test_the_files_bytes_go_with_their_last_entry(self) -> None:
        """Entries made in C hold one reference to the file's bytes between them,
        let go when the last of them is freed or decoded (or when none was made)."""
        data = b"".join(line('{"role":"u"}', entry_id=f"m{i}") + b"\n" for i in range(3))
        base = sys.getrefcount(data)
        made, _ = _scan.scan(data, 0, 3, True)
        assert sys.getrefcount(data) == base + 1
        made[0].message  # noqa: B018 - decoded: its source is let go
        del made[1]
        assert sys.getrefcount(data) == base + 1
        del made[1]
        assert sys.getrefcount(data) == base
        other = b"other line\n"
        held = sys.getrefcount(other)
        _scan.scan(other, 0, 1, True)
        assert sys.getrefcount(other) == held

    def test_a_long_chain_of_c_entries_is_freed_without_recursion(self) -> None:
        """Dropping the last reference to the leaf of 300,000 C entries whose ancestors
        nobody else holds frees them all, in a loop (a recursion that deep would
        crash the interpreter)."""
        from ptree.entries import _link

        n = 300_000
        lines = [line('{"role":"u"}', entry_id="m0")]
        lines += [line('{"role":"u"}', entry_id=f"m{i}", parent=f"m{i - 1}") for i in range(1, n)]
        made, _ = _scan.scan(b"\n".join(lines) + b"\n", 0, n, True)
        parent = None
        for seq, entry in enumerate(made):
            _link(entry, parent, seq)
            parent = entry
        probe = made[0].id
        before = sys.getrefcount(probe)
        del made[:], entry
        assert sys.getrefcount(probe) == before  # m0 still held by the chain
        del parent  # the leaf, and with it the whole chain
        # m0's id was held by m0 and by m1's parent_id: now only by ``probe`` (and the
        # call's argument)
        assert sys.getrefcount(probe) == before - 2 == 2

    def test_in_order_runs(self) -> None:
        """in_order gives the parents of the run from ``start``: at most ``limit``,
        ending before a record of another kind, an id already taken or repeated, or a
        parent not added yet."""
        lines = [line('{"role":"u"}', entry_id="m0")]
        lines += [line('{"role":"u"}', entry_id=f"m{i}", parent=f"m{i - 1}") for i in range(1, 6)]
        lines += [b"other", line('{"role":"u"}', entry_id="m2", parent="m0")]
        lines += [line('{"role":"u"}', entry_id="m9", parent="m8")]
        made, _ = _scan.scan(b"\n".join(lines) + b"\n", 0, 20, True)
        first = _scan.in_order(made, 0, 4, {}, {})
        assert first == [None, made[0], made[1], made[2]]
        by_id = {e.id: e for e in made[:4]}
        assert _scan.in_order(made, 4, 100, by_id, {}) == [made[3], made[4]]  # then "other"
        assert _scan.in_order(made, 6, 100, {}, {}) == []  # not an entry
        assert _scan.in_order(made, 7, 100, by_id, {}) == []  # m2 is taken
        assert _scan.in_order(made, 7, 100, {"m0": made[0]}, {}) == [made[0]]
        assert _scan.in_order(made, 7, 100, {"m0": made[0]}, {"m2": None}) == []  # a leaf's id
        assert _scan.in_order(made, 8, 100, by_id, {}) == []  # its parent m8: none
        assert _scan.in_order(made, 0, 100, {}, {}) == [None, *made[:5]]  # stops at "other"
        assert _scan.in_order(made, 99, 100, {}, {}) == []

    def test_entries_needs_the_slots(self) -> None:
        """The class and slots scan makes entries of are checked when they are given."""
        with pytest.raises(TypeError):
            _scan.entries(fast.LoadedMessage, (), None)
        with pytest.raises(TypeError):
            _scan.entries(fast.LoadedMessage, (property(),) * 6, None)
        with pytest.raises(TypeError):  # a slot of another class
            _scan.entries(int, (LazyMessageEntry.__dict__["_source"],) * 6, None)

    def test_span_keeps_its_bytes_alive(self) -> None:
        """A span holds the bytes it points into: they outlive every other reference."""
        data = line('{"role":"u","c":"' + "x" * 1000 + '"}') + b"\n"
        item = _scan.scan(bytes(bytearray(data)), 0, 1)[0][0]
        span = item[3]  # type: ignore[index]
        assert bytes(span) == b'{"role":"u","c":"' + b"x" * 1000 + b'"}'
        assert str(span, "utf-8").startswith('{"role"')


# Bytes that break JSON in interesting ways, spliced into plain lines at random places.
SPICE = [
    b'"',
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b" ",
    b"\t",
    b"\r",
    b"\x00",
    b"\x1f",
    b"\x7f",
    b"\x80",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"e400",
    b"E+309",
    b"1e400",
    b"-",
    b"0",
    b".",
    b"\\u",
    b"\\ud800",
    b'"role":',
    b'"role":5,',
    b"null",
    b"true",
    b'"id":"x",',
    b"9" * 120,
]


def message_values() -> st.SearchStrategy[Any]:
    def containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)

    return st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        containers,
        max_leaves=12,
    )


@st.composite
def mangled_lines(draw: st.DrawFn) -> bytes:
    message = {"role": draw(st.sampled_from(["user", "assistant", "toolResult"]))}
    message["content"] = draw(message_values())
    text = json.dumps(message, ensure_ascii=draw(st.booleans()), separators=(",", ":"))
    raw = line(text, parent=draw(st.none() | st.just("p")))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(raw)))
        how = draw(st.sampled_from(["insert", "delete", "replace"]))
        piece = draw(st.sampled_from(SPICE) | st.binary(min_size=1, max_size=3))
        if how == "insert":
            raw = raw[:at] + piece + raw[at:]
        elif how == "delete":
            raw = raw[:at] + raw[at + len(piece) :]
        else:
            raw = raw[:at] + piece + raw[at + len(piece) :]
    return raw.replace(b"\n", b" ")


# Pieces of a string's text for the block-wise skip of plain bytes (16 bytes at a
# time): runs of plain bytes of every length around a block, and each kind of byte
# that stops a block (escapes, control characters, UTF-8 of each length, bad UTF-8, a
# stray quote), so that stops fall on every position of a block and at its edges.
STRING_PIECES = [
    b'\\"',
    b"\\\\",
    b"\\n",
    b"\\/",
    b"\\u00e9",
    b"\\uD83D\\ude00",
    b"\\u12",
    b"\\x",
    b"\\",
    b'"',
    b"\x00",
    b"\x1f",
    b"\t",
    b"\x7f",
    b"\xc3\xa9",
    b"\xe2\x82\xac",
    b"\xf0\x9f\x98\x80",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\xff",
]


@st.composite
def string_texts(draw: st.DrawFn) -> bytes:
    pieces = []
    for _ in range(draw(st.integers(0, 6))):
        pieces.append(b"a" * draw(st.integers(0, 40)))
        if draw(st.integers(0, 3)):
            pieces.append(draw(st.sampled_from(STRING_PIECES)))
    return b"".join(pieces)


class TestProperties:
    @settings(max_examples=int(os.environ.get("PTREE_SCANNER_EXAMPLES", "1500")), deadline=None)
    @given(string_texts(), st.booleans(), st.sampled_from([b"", b"x" * 7, b"x" * 16]))
    def test_strings_block_by_block(self, text: bytes, last: bool, pad: bytes) -> None:
        """A string of plain runs and stops at every place of a block: taken exactly
        when the reader reads it, with the reader's value (the string last in the
        line or not; as a key too)."""
        values = b'{"role":"u","' + pad + b'":"' + text + b'"' + (b"}" if last else b',"n":1}')
        keys = b'{"role":"u","c":{"' + pad + text + b'":1}}'
        for message in (values, keys):
            raw = line("{}").replace(b'"message":{}', b'"message":' + message)
            taken = check_line(raw)
            assert taken is (reference(raw) is not None)
            event("taken" if taken else "left to the reader")

    @settings(max_examples=int(os.environ.get("PTREE_SCANNER_EXAMPLES", "1500")), deadline=None)
    @given(mangled_lines())
    @example(line('{"role":"u","c":"\\\\"}'))
    @example(line('{"role":"u","c":"\\\\\\""}'))
    def test_never_takes_what_the_reader_reads_otherwise(self, raw: bytes) -> None:
        """Plain lines with bytes spliced in: whatever the scanner takes, the reader
        reads as that same plain message line."""
        event("taken" if check_line(raw) else "left to the reader")

    @settings(max_examples=300, deadline=None)
    @given(message_values(), st.booleans())
    def test_takes_every_plain_line(self, content: Any, ascii_only: bool) -> None:
        """A plain message line as Pi writes it (compact JSON) is always taken."""
        text = json.dumps({"role": "user", "content": content}, ensure_ascii=ascii_only)
        assert check_line(line(text))


# ---------------------------------------------------------------------- whole files


@pytest.fixture
def paths() -> Iterator[None]:
    saved = fast.SCANNER, fast.AVAILABLE
    yield
    fast.SCANNER, fast.AVAILABLE = saved


def load_three(path: Path, strict: bool = True) -> list[Any]:
    """The file loaded with the C scanner, the msgspec path and the ordinary reader:
    (tree or error text, warnings, the messages) for each."""
    out = []
    saved = fast.SCANNER, fast.AVAILABLE, fast.ENTRIES_IN_C, fast.LoadedMessage
    try:
        for scanner, available in (("C", True), ("msgspec", True), ("none", False)):
            fast.SCANNER, fast.AVAILABLE = scanner, available  # type: ignore[assignment]
            # The msgspec path as a build without the extension runs it: entries
            # made and added one by one in Python, of the Python class.
            fast.ENTRIES_IN_C = scanner == "C"
            fast.LoadedMessage = saved[3] if scanner == "C" else PYTHON_LOADED  # type: ignore[misc]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    got: Any = load(path, strict=strict)
                    messages = [getattr(e, "message", None) for e in got.entries()]
                except SessionFileError as exc:
                    got, messages = f"error: {exc}", None
            out.append((got, [str(w.message) for w in caught], messages))
    finally:
        fast.SCANNER, fast.AVAILABLE, fast.ENTRIES_IN_C, fast.LoadedMessage = saved  # type: ignore[misc]
    return out


class TestFiles:
    @pytest.mark.parametrize("name", sorted(p.name for p in (FIXTURES / "pi").glob("*.jsonl")))
    def test_real_sessions(self, name: str) -> None:
        """Pi's own files: the same tree three ways, and every plain message line of
        them taken by the scanner (else it would not be a fast path)."""
        path = FIXTURES / "pi" / name
        first, second, third = load_three(path)
        assert first == second == third
        data = path.read_bytes()
        start = data.index(b"\n") + 1
        items: list[Any] = []
        while start < len(data):
            chunk, start = _scan.scan(data, start, 1000)
            items += chunk
        lines = data[data.index(b"\n") + 1 :].splitlines()
        assert len(items) == len(lines)
        for raw, item in zip(lines, items, strict=True):
            plain = reference(raw) is not None and b"\\" not in raw.split(b'"message"')[0]
            assert (type(item) is tuple) is plain, raw[:200]

    @settings(max_examples=60, deadline=None)
    @given(st.lists(mangled_lines(), min_size=1, max_size=6), st.booleans(), st.booleans())
    def test_mangled_files(self, lines: list[bytes], strict: bool, torn: bool) -> None:
        """Files of mangled lines (ids chained, the last line perhaps without its
        newline): the same tree or error and warnings three ways."""
        import tempfile

        body = [json.dumps(HEADER).encode()]
        for i, raw in enumerate(lines):
            body.append(raw.replace(b'"id":"a1"', f'"id":"m{i}"'.encode(), 1))
        data = b"\n".join(body) + (b"" if torn else b"\n")
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "s.jsonl"
            path.write_bytes(data)
            first, second, third = load_three(path, strict)
        assert first == second == third

    @settings(max_examples=80, deadline=None)
    @given(
        st.lists(
            st.tuples(
                st.sampled_from(["message", "message", "message", "leaf", "model_change"]),
                st.sampled_from(["a", "b", "c", "d", "e1"]),
                st.none() | st.sampled_from(["a", "b", "c", "d", "e1", "x"]),
                st.booleans(),
            ),
            min_size=1,
            max_size=10,
        ),
        st.booleans(),
    )
    def test_runs_in_order_and_not(
        self, rows: list[tuple[str, str, str | None, bool]], strict: bool
    ) -> None:
        """Files whose ids repeat (exact copies too), whose parents come later or
        never, with leaf records and other entries among the messages: the reader's
        runs of scanned entries added in order give the same tree, error and warnings
        as the general path (three ways)."""
        import tempfile

        body = [json.dumps(HEADER).encode()]
        for kind, eid, parent, again in rows:
            if kind == "message":
                raw = line('{"role":"user","content":"x"}', entry_id=eid, parent=parent)
            elif kind == "leaf":
                raw = json.dumps(
                    {
                        "type": "leaf",
                        "id": eid,
                        "parentId": parent,
                        "timestamp": "t",
                        "targetId": parent,
                    }
                ).encode()
            else:
                raw = json.dumps(
                    {
                        "type": kind,
                        "id": eid,
                        "parentId": parent,
                        "timestamp": "t",
                        "provider": "p",
                        "modelId": "m",
                    }
                ).encode()
            body += [raw, raw] if again else [raw]
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "s.jsonl"
            path.write_bytes(b"\n".join(body) + b"\n")
            first, second, third = load_three(path, strict)
        assert first == second == third

    def test_threads_read_one_value(self, tmp_path: Path) -> None:
        """Entries made by the scanner, read from many threads at once: one value
        each, the same object in every thread."""
        lines = [json.dumps(HEADER)] + [
            line(
                json.dumps({"role": "user", "content": [{"type": "text", "text": f"m{i}"}]}),
                entry_id=f"m{i}",
                parent=f"m{i - 1}" if i else None,
            ).decode()
            for i in range(300)
        ]
        path = tmp_path / "s.jsonl"
        path.write_text("\n".join(lines) + "\n")
        tree = load(path)
        entries = list(tree.entries())
        assert all(type(e) is fast.LoadedMessage for e in entries)
        seen: list[list[Any]] = []
        barrier = threading.Barrier(8)

        def read() -> None:
            barrier.wait()
            seen.append([e.message for e in entries])  # type: ignore[union-attr]

        threads = [threading.Thread(target=read) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(seen) == 8
        for got in seen:
            assert all(a is b for a, b in zip(got, seen[0], strict=True))
        assert [m["content"][0]["text"] for m in seen[0]] == [f"m{i}" for i in range(300)]


# ------------------------------------------------------------------------ decoding


def json_values() -> st.SearchStrategy[Any]:
    def containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)

    scalars = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(10**40), max_value=10**40)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text()
        | st.sampled_from(["\ud800", "\udfff", "\ud83d\ude00", "\x00\x1f\x7f", "é世😀"])
    )
    return st.recursive(scalars, containers, max_leaves=25)


@st.composite
def json_texts(draw: st.DrawFn) -> str:
    """JSON text of an object, written in any of the ways JSON allows:
    ASCII-only or not, blanks between tokens, characters written as \\u escapes
    (surrogate pairs included), ``\\/``, exponents and their signs."""
    value = {"v": draw(json_values())}  # a message is an object
    blank = draw(st.sampled_from(["", " ", "\t", " \r\n "]))
    ascii_only = draw(st.booleans())
    separators = ("," + blank, ":" + blank)
    text = json.dumps(value, ensure_ascii=ascii_only, separators=separators)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate is no UTF-8: a file has it escaped
        text = json.dumps(value, ensure_ascii=True, separators=separators)
    if draw(st.booleans()):
        text = text.replace("/", "\\/")
    if draw(st.booleans()):  # an escaped letter: q (in no literal) as \u0071
        text = text.replace("q", "\\u0071")
    return blank + text + blank


class TestDecode:
    @settings(max_examples=int(os.environ.get("PTREE_SCANNER_EXAMPLES", "1500")), deadline=None)
    @given(json_texts())
    @example('{"s":"\\ud83d\\ude00\\ud800\\udc00\\udc00\\ud800x\\ud800\\u0041"}')
    @example('{"n":[0,-0,-0.0,1E5,1e-7,2.5e+3,123456789012345678901234567890]}')
    @example('{"k":1,"k":2,"j":{"k":[]}}')
    def test_same_value_as_the_ordinary_reader(self, text: str) -> None:
        """The C decoder gives exactly what parse_line gives: values, types, key
        order, float signs, lone and paired surrogates."""
        assert same_value(_scan.decode(text.encode("utf-8")), parse_line(text))

    @pytest.mark.parametrize(
        "text",
        [
            b"",
            b"{",
            b'{"a":}',
            b"[1,]",
            b"[1e400]",
            b"[" + b"9" * 120 + b"]",
            b"{} x",
            b"[" * 70 + b"]" * 70,
            b'["\xff"]',
            b"nul",
            b'{"a":1}{"b":2}',
        ],
    )
    def test_refuses_what_the_scanner_would(self, text: bytes) -> None:
        """Anything but one value the scanner takes: ValueError (the reader then
        decodes the ordinary way), never a wrong value."""
        with pytest.raises(ValueError, match="not one JSON value"):
            _scan.decode(text)

    def test_deep_within_the_limit(self) -> None:
        """63 levels (the most a message holds inside its line) decode, iteratively."""
        text = '{"a":' + "[" * 62 + "1" + "]" * 62 + "}"
        assert same_value(_scan.decode(text.encode()), parse_line(text))

    def test_decoded_values_are_left_to_reference_counting(self) -> None:
        """Containers that hold only strings, numbers and containers like themselves
        cannot be in a cycle: they are untracked, as CPython untracks its own such
        dicts and tuples; a dict changed against its promise is tracked again."""
        import gc

        value = _scan.decode(b'{"a":[1,{"b":"c"}],"d":{},"e":[]}')
        assert not any(gc.is_tracked(v) for v in (value, value["a"], value["a"][1], value["d"]))
        assert same_value(value, parse_line('{"a":[1,{"b":"c"}],"d":{},"e":[]}'))
        cycle: list[Any] = []
        dict.__setitem__(value["d"], "x", cycle)
        assert gc.is_tracked(value["d"])
