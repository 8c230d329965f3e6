"""JavaScript's rules that Pi and pi-ai rely on, written once for every layer.

Pi and pi-ai run on JavaScript, so a few of their results follow JavaScript's rules rather
than Python's: the text of a value in a template literal (``${x}``), ``String.prototype
.trim``, how a number is written, ``JSON.stringify``, truthiness, and string lengths in
UTF-16 code units.  This module is the one owner of those rules: the context
(``bashExecution`` text, summaries), session names, the provider bodies, the importers and
the framework integrations all call it, so they cannot drift apart.

Values are JSON values as ptree holds them (``dict``/``Mapping``, ``list``/``tuple``,
``str``, ``int``, ``float``, ``bool``, ``None``) plus :data:`UNDEFINED` for a field that
is missing.  A JSON integer is a double to JavaScript: one beyond 2**53 stands for the
nearest double, and one too large for any double (a 401-digit ``exitCode``) for
``Infinity``.  Every function is iterative: inputs are untrusted and may nest deeply.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "UNDEFINED",
    "number",
    "ordered_keys",
    "stringify",
    "template",
    "trim",
    "truthy",
    "utf16_len",
    "utf16_slice",
]


class _Undefined:
    """JavaScript's ``undefined``: a field that is missing."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __reduce__(self) -> str:
        return "UNDEFINED"


UNDEFINED: Any = _Undefined()
"""JavaScript's ``undefined`` (a missing field): ``${}`` writes ``undefined``."""

_EXACT = 2**53  # integers up to this size are exact doubles


def _double(value: int) -> float:
    """The double JavaScript reads for an integer's digits (``JSON.parse``).  O(digits)."""
    try:
        return float(value)  # rounds to nearest, ties to even, as JavaScript does
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def number(value: float) -> str:
    """JavaScript's ``Number.prototype.toString`` of a number (ECMA-262).

    What ``${n}`` shows and what ``JSON.stringify`` writes for a finite number: the
    shortest digits that read back as the same double, laid out as JavaScript does.
    Not finite: ``Infinity``, ``-Infinity``, ``NaN``.  O(digits).

    Args:
        value: the number, a ``float`` (or an ``int`` small enough to be a double).

    >>> number(1e21), number(123456789012345680000.0), number(1e-7), number(-0.5)
    ('1e+21', '123456789012345680000', '1e-7', '-0.5')
    >>> number(-0.0), number(float("inf")), number(float("nan"))
    ('0', 'Infinity', 'NaN')
    """
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    # repr gives the shortest digits that read back as the same double, as JavaScript
    # does; only where the decimal point or the exponent goes differs.
    mantissa, _, exp = repr(abs(value)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    point = len(whole) + int(exp or 0) - (len(whole + frac) - len((whole + frac).lstrip("0")))
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= point <= 21:
        text = digits + "0" * (point - k)
    elif 0 < point <= 21:
        text = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        text = "0." + "0" * -point + digits
    else:
        e = point - 1
        text = digits[0] + ("." + digits[1:] if k > 1 else "") + ("e+" if e > 0 else "e-")
        text += str(abs(e))
    return "-" + text if value < 0 else text


def _primitive_text(value: Any) -> str | None:
    """``String(value)`` of ``null``, a boolean or a number (an integer as the double
    JavaScript reads), or ``None`` for any other value.  O(digits)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value) if -_EXACT <= value <= _EXACT else number(_double(value))
    if isinstance(value, float):
        return number(value)
    return None


def _leaf_text(value: Any) -> str:
    """``${value}`` of anything but a string or an array."""
    if value is UNDEFINED:
        return "undefined"
    text = _primitive_text(value)
    if text is not None:
        return text
    if isinstance(value, Mapping):
        return "[object Object]"
    if isinstance(value, str):
        return value
    return str(value)


def template(value: Any) -> str:
    """The text of ``value`` in a JavaScript template literal: ``${value}``.

    Strings as they are; ``null``, ``undefined`` (:data:`UNDEFINED`), ``true``,
    ``false``; numbers as :func:`number` writes them (an integer as the double JavaScript
    reads, so ``Infinity`` beyond the largest one); an object ``[object Object]``; an
    array its items' texts joined by commas, ``null`` and ``undefined`` items as nothing
    (``Array.prototype.join``, nested arrays alike).  Iterative.  O(size of the value).

    >>> template(None), template(UNDEFINED), template(2**60), template(10**400)
    ('null', 'undefined', '1152921504606847000', 'Infinity')
    >>> template({"a": 1}), template([1, None, [2.5, [True]], {}])
    ('[object Object]', '1,,2.5,true,[object Object]')
    """
    if type(value) is str:
        return value
    if not isinstance(value, list | tuple):
        return _leaf_text(value)
    parts: list[str] = []
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        items, i = stack.pop()
        if i == len(items):
            continue
        if i:
            parts.append(",")
        stack.append((items, i + 1))
        item = items[i]
        if type(item) is str:
            parts.append(item)
        elif isinstance(item, list | tuple):
            stack.append((item, 0))
        elif item is not None and item is not UNDEFINED:
            parts.append(_leaf_text(item))
    return "".join(parts)


def truthy(value: Any) -> bool:
    """JavaScript's truthiness of a JSON value (``[]``, ``{}`` and ``"0"`` are true).

    Cost: O(1) (a container is true without looking inside).

    Args:
        value: a JSON value, or :data:`UNDEFINED` (false).

    >>> [truthy(v) for v in ("", 0, float("nan"), None, UNDEFINED, [], "0")]
    [False, False, False, False, False, True, True]
    """
    if value is None or value is False or value is UNDEFINED:
        return False
    if type(value) is str:
        return value != ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    return True


# ECMA-262 WhiteSpace and LineTerminator: what String.prototype.trim removes.
_JS_SPACE = (
    "\t\n\u000b\u000c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def trim(text: str) -> str:
    """``text.trim()``: without leading and trailing JavaScript white space.  O(n).

    JavaScript's white space is not Python's: the byte-order mark U+FEFF is white space
    to JavaScript, U+001C..U+001F and U+0085 are white space to Python only.

    >>> trim("\\ufeff name \\u3000"), trim(" \\u001c "), " \\u001c ".strip()
    ('name', '\\x1c', '')
    """
    return text.strip(_JS_SPACE)


def _units(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def _from_units(data: bytes) -> str:
    return data.decode("utf-16-le", "surrogatepass")


def utf16_len(text: str) -> int:
    """``text.length``: the number of UTF-16 code units.  O(n).

    >>> utf16_len("a😀")
    3
    """
    n = len(text)
    if text.isascii():
        return n
    return n + sum(1 for ch in text if ord(ch) > 0xFFFF)


def utf16_slice(text: str, end: int) -> str:
    """``text.slice(0, end)``, which may cut a surrogate pair in two.  O(n).

    >>> utf16_slice("a😀b", 2) == "a\\ud83d"
    True
    """
    if text.isascii():
        return text[:end]
    return _from_units(_units(text)[: 2 * end])


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
    """An object's keys in JavaScript's order: array indices ascending, then insertion.

    Cost: O(k) for k keys none of which is an array index (each key's length is read),
    O(k log k) when some are (they are sorted).

    Args:
        obj: the object, a mapping with string keys.

    >>> ordered_keys({"b": 0, "10": 0, "2": 0, "01": 0})
    ['2', '10', 'b', '01']
    """
    keys = list(obj)
    indices = [(n, k) for k in keys if (n := _array_index(k)) is not None]
    if not indices:
        return keys
    indices.sort()
    return [k for _, k in indices] + [k for k in keys if _array_index(k) is None]


_NOT_FINITE = frozenset(("NaN", "Infinity", "-Infinity"))


def _scalar(value: Any) -> str:
    """``JSON.stringify`` of a value that is no object or array: a string quoted, a
    number that is not finite as ``null``, the rest as ``${value}`` writes it."""
    if isinstance(value, str):
        return _js_string(value)
    text = _primitive_text(value)
    if text is None:
        raise TypeError(f"{type(value).__name__} is not JSON-serialisable")
    return "null" if text in _NOT_FINITE else text


def stringify(value: Any) -> str:
    """``JSON.stringify(value)`` as V8 writes it.

    No spaces; object keys in insertion order except that array-index keys come first in
    ascending order; numbers in JavaScript's shortest form (one that is not finite, or an
    integer too large for a double, as ``null``); non-ASCII kept; control characters and
    unpaired surrogates escaped.  Iterative.  O(size of the value).

    Raises:
        TypeError: a value that is not JSON (:data:`UNDEFINED` included).

    >>> stringify({"b": 1.0, "10": [1e21, 1e-7, 0.1], "2": "é\\n", "n": 10**400})
    '{"2":"é\\\\n","10":[1e+21,1e-7,0.1],"b":1,"n":null}'
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
