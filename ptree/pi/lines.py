"""Pi's JSON Lines, one line at a time: the frozen-while-parsing decoder, torn-line
detection, the compact encoder, and ``leaf`` records (what they are: :mod:`ptree.pi.reader`).
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable
from typing import Any

from ..frozen import (
    MAX_DEPTH,
    FrozenDict,
    FrozenList,
    frozen_dict_unchecked,
    frozen_list_unchecked,
)

__all__ = [
    "BATCH_KEY",
    "LEAF_TYPE",
    "LINE_DEPTH",
    "StrPath",
    "containers_made",
    "deeper_than",
    "encode_line",
    "is_torn",
    "leaf_record",
    "new_leaf_id",
    "parse_line",
    "scan_once",
]

StrPath = str | os.PathLike[str]

LEAF_TYPE = "leaf"
"""The ``type`` of a leaf record."""

BATCH_KEY = "ptreeBatch"
"""The field that marks the lines of one multi-line commit: ``[k, n]``, line ``k`` of
``n`` (see :mod:`ptree.pi.writer`).  Never part of an entry: the reader takes it off,
and drops a commit whose lines are not all there (a process killed mid-write)."""


# ---------------------------------------------------------------------------- parsing

# Every container the decoder makes is counted (a few percent of a load at most):
# a line with at most LINE_DEPTH containers cannot nest deeper than that, so only
# the rare line with more is walked to measure its depth.  Shared by threads, so a
# count may include another thread's containers: too many, never too few.
_containers = itertools.count()
containers_made: Callable[[], int] = _containers.__next__
"""Call before and after a parse: the difference, less one, bounds the containers the
parse made (from above)."""


def _freeze_lists(value: list[Any]) -> FrozenList:
    # Dicts inside are frozen already (the hook runs bottom-up); lists in lists are not.
    containers_made()
    for item in value:
        if type(item) is list:
            return frozen_list_unchecked(
                [_freeze_lists(x) if type(x) is list else x for x in value]
            )
    return frozen_list_unchecked(value)


def _hook(obj: dict[str, Any]) -> FrozenDict:
    # Freezing while parsing, bottom-up, costs far less than a second walk afterwards.
    containers_made()
    for value in obj.values():
        if type(value) is list:
            return frozen_dict_unchecked(
                {k: _freeze_lists(v) if type(v) is list else v for k, v in obj.items()}
            )
    return frozen_dict_unchecked(obj)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str, _float: Callable[[str], float] = float) -> float:
    # Python reads 1e400 as infinity, which is no JSON value: the frozen layer and
    # dump refuse it, so a file holding one must fail here, on its line.  Called
    # only for numbers with a fraction or exponent (ints never come here): a few
    # percent of a load's time on real sessions.
    value = _float(text)
    if value - value != 0.0:
        raise ValueError(f"{text} is out of range for a JSON number (it reads as infinity)")
    return value


_DECODER = json.JSONDecoder(object_hook=_hook, parse_constant=_no_constant, parse_float=_finite)
scan_once: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
"""The decoder's raw scanner, ``(text, start) -> (value, end)``: the reader's fast path.
Raises ``StopIteration`` or ``ValueError`` without a usable message; :func:`parse_line`
gives the reason."""


LINE_DEPTH = MAX_DEPTH + 1
"""How deeply a line may nest: an entry's values (at most :data:`~ptree.frozen.MAX_DEPTH`
levels, as everywhere in ptree) one level inside the line's object.  So every line
ptree writes reads back, and a line it reads holds nothing ptree could not store."""

TOO_DEEP = f"nested deeper than {LINE_DEPTH} levels (an entry's values may nest {MAX_DEPTH})"
"""The reason given for a line that nests too deeply."""


def deeper_than(value: Any, limit: int = LINE_DEPTH) -> bool:
    """Whether a parsed JSON ``value`` nests more than ``limit`` levels.

    Iterative; O(number of containers in ``value``), and the reader calls it only for
    a line that made more than ``limit`` containers.

    >>> deeper_than({"a": [[1]]}, 3), deeper_than({"a": [[1]]}, 2), deeper_than("x", 0)
    (False, True, False)
    """
    if not isinstance(value, (dict, list, tuple)):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, level = stack.pop()
        if level > limit:
            return True
        for item in v.values() if isinstance(v, dict) else v:
            if isinstance(item, (dict, list, tuple)):
                stack.append((item, level + 1))
    return False


def parse_line(text: str) -> Any:
    """One line's JSON value, frozen.  Raises ``ValueError`` with a reason.

    A line nested deeper than :data:`LINE_DEPTH` is refused, as is one too deep for
    the parser (which needs the recursion limit: a ``RecursionError`` never escapes).
    Cost: O(len(text)); a line that made more than :data:`LINE_DEPTH` containers is
    walked once more to measure its depth (O(containers)).

    Args:
        text: one line of a file (white space around the value, its ``\\n`` too, is fine).

    Raises:
        ValueError: malformed JSON (with the column), a number that reads as infinity,
            ``NaN``/``Infinity``, extra data after the value, or nesting too deep.

    >>> parse_line('{"a": [1, null]}')["a"][1] is None
    True
    """
    before = containers_made()
    try:
        try:
            value, end = scan_once(text, 0)
        except StopIteration:
            value = _DECODER.decode(text)  # leading blanks, or a proper error message
            end = len(text)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON ({exc.msg} at column {exc.colno})") from None
    if end != len(text) and not text[end:].isspace():
        raise ValueError(f"malformed JSON (extra data at column {end + 1})")
    if containers_made() - before > LINE_DEPTH + 1 and deeper_than(value):
        raise ValueError(TOO_DEEP)
    return value


_WS = " \t\r\n"
_ESCAPES = '"\\/bfnrt'
_HEX = "0123456789abcdefABCDEF"
_NUMBER = "0123456789+-.eE"
_CLOSER = {"{": "}", "[": "]"}
_MAY_CLOSE = ("value_or_close", "key_or_close", "after")  # states where a container may end
_AFTER_STRING = {
    "value": "after",
    "value_or_close": "after",
    "key": "colon",
    "key_or_close": "colon",
}


def is_torn(text: str) -> bool:
    """Whether ``text`` is a proper prefix of a JSON object: a line cut short.

    A crash in the middle of a write leaves the start of a line and nothing more; that
    is what this recognises (any other bad line is not a prefix of valid JSON).
    Iterative and O(len(text)).

    >>> is_torn('{"type":"message","id":"a'), is_torn('{"a": 1}'), is_torn('{"a" 1')
    (True, False, False)
    """
    n = len(text)
    i = 0
    while i < n and text[i] in _WS:
        i += 1
    if i == n or text[i] != "{":
        return False
    stack: list[str] = []
    state = "value"  # what comes next: value, key, key_or_close, colon, value_or_close, after
    while True:
        while i < n and text[i] in _WS:
            i += 1
        if i == n:
            return bool(stack)  # cut short inside an object or array
        c = text[i]
        if stack and c == _CLOSER[stack[-1]] and state in _MAY_CLOSE:
            stack.pop()
            state = "after"
            i += 1
        elif c == '"' and state in _AFTER_STRING:  # a key, or a string value
            i = _skip_string(text, i + 1)
            if i < 0:
                return i == -1
            state = _AFTER_STRING[state]
        elif state == "after":
            if not stack or c != ",":
                return False  # (no stack: a whole value and then more, not a cut-short line)
            state = "key" if stack[-1] == "{" else "value"
            i += 1
        elif state == "colon":
            if c != ":":
                return False
            state = "value"
            i += 1
        elif state == "key" or state == "key_or_close":
            return False  # a key is a string
        elif c in "{[":
            stack.append(c)
            state = "key_or_close" if c == "{" else "value_or_close"
            i += 1
        elif c in "-0123456789":
            while i < n and text[i] in _NUMBER:
                i += 1
            state = "after"
        elif c in "tfn":
            word = "true" if c == "t" else "false" if c == "f" else "null"
            part = text[i : i + len(word)]
            if not word.startswith(part):
                return False
            i += len(part)
            state = "after"
        else:
            return False


def _skip_string(text: str, i: int) -> int:
    """The index after the string's closing quote; -1 if cut short, -2 if invalid."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            return i + 1
        if c == "\\":
            if i + 1 == n:
                return -1
            e = text[i + 1]
            if e == "u":
                digits = text[i + 2 : i + 6]
                if any(d not in _HEX for d in digits):
                    return -2
                if len(digits) < 4:
                    return -1
                i += 6
                continue
            if e not in _ESCAPES:
                return -2
            i += 2
            continue
        if c < " ":
            return -2
        i += 1
    return -1


# ---------------------------------------------------------------------------- writing

ENCODE_COMPACT = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
).encode
_ENCODE_ASCII = json.JSONEncoder(
    ensure_ascii=True, separators=(",", ":"), allow_nan=False, check_circular=False
).encode


def encode_line(obj: Any) -> bytes:
    """One JSON line, compact like Pi's ``JSON.stringify``, UTF-8, ending in ``\\n``.

    Cost: O(size of ``obj``) (encoded twice in the rare case of a lone surrogate).

    Args:
        obj: a JSON value (an entry's or a record's fields), frozen or not.

    Raises:
        ValueError: a float that is ``NaN`` or infinite (no JSON value).
        TypeError: a value of a type JSON has not.

    >>> encode_line({"a": [1, None], "b": "x"})
    b'{"a":[1,null],"b":"x"}\\n'
    """
    text = ENCODE_COMPACT(obj)
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (from a \\ud800 escape) has no UTF-8 form: escape it again.
        return (_ENCODE_ASCII(obj) + "\n").encode("ascii")


def leaf_record(record_id: str, target: str | None, timestamp: str) -> dict[str, Any]:
    """A ``leaf`` record that moves the leaf to ``target`` (see the module doc).  O(1).

    Args:
        record_id: the record's own id (:func:`new_leaf_id` makes one).
        target: the id of the entry that becomes the leaf, or ``None`` for no leaf
            (before the first entry).
        timestamp: the record's ISO-8601 time.

    >>> leaf_record("leaf-1", "e2", "2026-01-01T00:00:00.000Z")["targetId"]
    'e2'
    """
    return {
        "type": LEAF_TYPE,
        "id": record_id,
        "parentId": target,
        "timestamp": timestamp,
        "targetId": target,
    }


def new_leaf_id(taken: Callable[[str], bool], first: int = 1) -> str:
    """An id for a leaf record: ``leaf-<n>``, the first ``n >= first`` not ``taken``.

    Deterministic, so that two dumps of one tree (with one clock) give the same bytes.
    ``taken`` must cover every id of the file (entries and leaf records).  Such an id
    cannot be one Pi makes (8 hex digits or a UUID) nor one of ptree's default ids
    (``e<n>``); an entry given one later on by hand is refused by the writer
    (:class:`~ptree.CommitError`).  O(number of taken ``leaf-<n>`` ids from ``first``).

    >>> new_leaf_id({"leaf-1", "e1"}.__contains__)
    'leaf-2'
    """
    n = first
    while taken(f"leaf-{n}"):
        n += 1
    return f"leaf-{n}"
