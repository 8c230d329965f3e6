"""pi-ai's own string helpers, on top of JavaScript's rules (:mod:`ptree.js`, their owner).

pi-ai runs on JavaScript strings (UTF-16 code units), so the id hash and the
``[^a-zA-Z0-9_-]`` replacement count code units; a character outside the Basic
Multilingual Plane is two of them.  Every function here is iterative (inputs are
untrusted and may nest deeply).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..js import UNDEFINED, trim

__all__ = [
    "MISSING",
    "drop_missing",
    "is_blank",
    "plain",
    "sanitize_surrogates",
    "short_hash",
    "word_chars",
]


MISSING: Any = UNDEFINED
"""A field pi-ai copies from a message that lacks it (JavaScript's ``undefined``): left
out of the body by :func:`drop_missing`."""


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


def is_blank(text: Any) -> bool:
    """Whether ``text`` is missing or JavaScript's ``trim()`` leaves nothing of it."""
    return not text or not trim(str(text))


def _units(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def _from_units(data: bytes) -> str:
    return data.decode("utf-16-le", "surrogatepass")


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
