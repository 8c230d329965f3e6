"""JavaScript's string and JSON rules, as pi-ai applies them: trim, UTF-16, JSON.stringify.

pi-ai runs on JavaScript strings (UTF-16 code units), so lengths, slices, the id hash and
the ``[^a-zA-Z0-9_-]`` replacement all count code units; a character outside the Basic
Multilingual Plane is two of them.  Every function here is iterative (inputs are
untrusted and may nest deeply).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ..context import js_number
from ..names import js_trim

__all__ = [
    "MISSING",
    "drop_missing",
    "is_blank",
    "js_json",
    "ordered_keys",
    "plain",
    "sanitize_surrogates",
    "short_hash",
    "template",
    "utf16_len",
    "utf16_slice",
    "word_chars",
]


class _Missing:
    """JavaScript's ``undefined`` in a body: the key is left out when written."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""A field pi-ai copies from a message that lacks it: left out of the body."""


def drop_missing(value: Any) -> Any:
    """Remove :data:`MISSING` fields from a built body, in place (in a list: ``None``).

    Iterative.  Cost: O(size of the value).
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for k in [k for k, v in item.items() if v is MISSING]:
                del item[k]
            stack.extend(v for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            for i, v in enumerate(item):
                if v is MISSING:
                    item[i] = None
                elif isinstance(v, dict | list):
                    stack.append(v)
    return value


def template(value: Any) -> str:
    """``${value}`` in a JavaScript template string (``undefined`` for :data:`MISSING`)."""
    if value is MISSING:
        return "undefined"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return _scalar(value)
    if isinstance(value, Mapping):
        return "[object Object]"
    if isinstance(value, list | tuple):
        return ",".join("" if v is None else template(v) for v in value)
    return str(value)


def is_blank(text: Any) -> bool:
    """Whether ``text`` is missing or JavaScript's ``trim()`` leaves nothing of it."""
    return not text or not js_trim(str(text))


def _units(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def _from_units(data: bytes) -> str:
    return data.decode("utf-16-le", "surrogatepass")


def utf16_len(text: str) -> int:
    """JavaScript's ``text.length``: the number of UTF-16 code units.

    >>> utf16_len("a😀")
    3
    """
    n = len(text)
    if text.isascii():
        return n
    return n + sum(1 for ch in text if ord(ch) > 0xFFFF)


def utf16_slice(text: str, end: int) -> str:
    """JavaScript's ``text.slice(0, end)`` (which may cut a surrogate pair in two)."""
    if text.isascii():
        return text[:end]
    return _from_units(_units(text)[: 2 * end])


_NOT_WORD = re.compile(r"[^A-Za-z0-9_-]")


def word_chars(text: str) -> str:
    """``text.replace(/[^a-zA-Z0-9_-]/g, "_")``: one ``_`` per UTF-16 code unit replaced.

    >>> word_chars("a|b😀")
    'a_b__'
    """
    return _NOT_WORD.sub(lambda m: "__" if ord(m.group()) > 0xFFFF else "_", text)


def sanitize_surrogates(text: str) -> str:
    """Remove unpaired UTF-16 surrogates (pi-ai's ``sanitizeSurrogates``).

    A pair written as two code points (``"\\ud83d\\ude00"``) is one character in
    JavaScript and is kept (joined).

    >>> sanitize_surrogates("a\\ud83db\\ud83d\\ude00")
    'ab😀'
    """
    if text.isascii():
        return text
    if not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        return text
    joined = _from_units(_units(text))  # pairs written as two code points become one
    return "".join(ch for ch in joined if not 0xD800 <= ord(ch) <= 0xDFFF)


_M32 = 0xFFFFFFFF


def _to36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if n == 0:
        return "0"
    out = []
    while n:
        n, r = divmod(n, 36)
        out.append(digits[r])
    return "".join(reversed(out))


def short_hash(text: str) -> str:
    """pi-ai's ``shortHash``: a cyrb53-like hash of the UTF-16 code units, in base 36.

    >>> short_hash("")
    'k4n83c7h0j2b'
    """
    h1 = 0xDEADBEEF
    h2 = 0x41C6CE57
    data = _units(text)
    for i in range(0, len(data), 2):
        ch = data[i] | (data[i + 1] << 8)
        h1 = ((h1 ^ ch) * 2654435761) & _M32
        h2 = ((h2 ^ ch) * 1597334677) & _M32
    h1 = (((h1 ^ (h1 >> 16)) * 2246822507) & _M32) ^ (((h2 ^ (h2 >> 13)) * 3266489909) & _M32)
    h2 = (((h2 ^ (h2 >> 16)) * 2246822507) & _M32) ^ (((h1 ^ (h1 >> 13)) * 3266489909) & _M32)
    return _to36(h2) + _to36(h1)


_LEAVES = frozenset((str, int, float, bool, type(None)))


def _container(value: Any) -> int:
    """0: a leaf, 1: a mapping, 2: a list or tuple.  Exact types first: it is hot."""
    kind = type(value)
    if kind in _LEAVES:
        return 0
    if isinstance(value, dict | Mapping):
        return 1
    if isinstance(value, list | tuple):
        return 2
    return 0


def plain(value: Any) -> Any:
    """A deep copy of a JSON-like value as plain ``dict``/``list`` (tuples become lists).

    Iterative, so any depth works.  Cost: O(size of the value).
    """
    if not _container(value):
        return value
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while stack:
        parent, key, item = stack.pop()
        if _container(item) == 1:
            new: Any = {}
            parent[key] = new
            for k, v in item.items():
                if _container(v):
                    new[k] = None
                    stack.append((new, k, v))
                else:
                    new[k] = v
        else:
            new = [None] * len(item)
            parent[key] = new
            for i, v in enumerate(item):
                if _container(v):
                    stack.append((new, i, v))
                else:
                    new[i] = v
    return root[0]


_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    return _ESCAPES.get(ch) or f"\\u{ord(ch):04x}"


def _js_string(text: str) -> str:
    if not text.isascii() and any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        text = _from_units(_units(text))  # a pair written as two code points is one character
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


class _Lit:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_CLOSE_OBJECT = _Lit("}")
_CLOSE_ARRAY = _Lit("]")
_OPEN_ARRAY = _Lit("[")
_COMMA = _Lit(",")


def _array_index(key: str) -> int | None:
    # An array index is the canonical decimal form of an integer below 2**32 - 1.
    if key.isascii() and key.isdigit() and (key == "0" or key[0] != "0"):
        n = int(key)
        if n < 0xFFFFFFFF:
            return n
    return None


def ordered_keys(obj: Mapping[str, Any]) -> list[str]:
    """An object's keys in JavaScript's order: array indices ascending, then insertion."""
    keys = list(obj)
    indices = [(n, k) for k in keys if (n := _array_index(k)) is not None]
    if not indices:
        return keys
    indices.sort()
    return [k for _, k in indices] + [k for k in keys if _array_index(k) is None]


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, int):
        if -(2**53) <= value <= 2**53:
            return str(value)
        try:
            value = float(value)
        except OverflowError:
            return "null"
    if isinstance(value, float):
        return js_number(value) if math.isfinite(value) else "null"
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def js_json(value: Any) -> str:
    """``JSON.stringify(value)`` as V8 writes it.

    No spaces; object keys in insertion order except that array-index keys come first in
    ascending order; numbers in JavaScript's shortest form; non-ASCII kept; control
    characters and unpaired surrogates escaped.  Iterative.  Cost: O(size of the value).

    >>> js_json({"b": 1.0, "10": [1e21, 1e-7, 0.1], "2": "é\\n"})
    '{"2":"é\\\\n","10":[1e+21,1e-7,0.1],"b":1}'
    """
    out: list[str] = []
    # the stack holds values still to write and literal text (_Lit)
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Lit):
            out.append(item.text)
        elif isinstance(item, Mapping):
            keys = ordered_keys(item)
            if not keys:
                out.append("{}")
                continue
            parts: list[Any] = [_CLOSE_OBJECT]
            for i in range(len(keys) - 1, -1, -1):
                k = keys[i]
                parts.append(item[k])
                parts.append(_Lit(("," if i else "{") + _js_string(str(k)) + ":"))
            stack.extend(parts)
        elif isinstance(item, list | tuple):
            if not item:
                out.append("[]")
                continue
            parts = [_CLOSE_ARRAY]
            for i in range(len(item) - 1, -1, -1):
                parts.append(item[i])
                parts.append(_COMMA if i else _OPEN_ARRAY)
            stack.extend(parts)
        else:
            out.append(_scalar(item))
    return "".join(out)
