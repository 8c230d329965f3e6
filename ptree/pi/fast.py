"""The reader's fast path for message lines: check the whole line, decode it later.

Most lines of a Pi session are plain message entries
(``{"type":"message","id","parentId","timestamp","message"}``).  For such a line the
reader needs at load time only the four envelope fields, and the certainty that the
line is one it would accept; the message itself is decoded the first time someone
reads it (:class:`~ptree.entries.LazyMessageEntry`).  :func:`message_line` gives that
certainty without building the message: msgspec parses and validates the whole line
as JSON in C (the message is kept as raw bytes), then the few things msgspec does not
check are checked here.  Whatever is unusual (another entry type, extra fields, a
number too large for a float, deep nesting, invalid UTF-8, an escaped lone surrogate,
bad JSON) returns ``None`` and goes the ordinary way, so every result and every error
is exactly what the ordinary reader gives.

Why msgspec (measured on a 90 MB session of real messages, benchmarks/README.md): its
envelope decode takes 0.09 s where ``json.loads`` of the lines takes 1.3 s.  Without
msgspec installed, :data:`AVAILABLE` is false and the reader decodes every line.
"""

from __future__ import annotations

from typing import Any, Literal

from ..entries import LazyMessageEntry
from ..frozen import FrozenDict
from .lines import parse_line

__all__ = ["AVAILABLE", "LoadedMessage", "json_depth", "message_line"]

try:
    import msgspec
except ImportError:  # pragma: no cover - msgspec is a dependency; a stripped install
    msgspec = None  # type: ignore[assignment]

AVAILABLE = msgspec is not None
"""Whether the fast path can run (msgspec imports)."""

FAST_DEPTH = 64
"""A line nested at most this deep is within any limit the ordinary reader enforces;
a deeper one goes the ordinary way."""

_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


def json_depth(raw: bytes) -> int:
    """How deep a valid JSON line nests.  O(len(raw)).

    Strings are cut out first: with escaped backslashes and then escaped quotes
    removed, the quotes left alternate between opening and closing a string, so the
    pieces of a split on them at even places are what lies outside strings.
    """
    plain = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = b"".join(plain.split(b'"')[::2]).translate(None, _NOT_BRACKETS)
    depth = most = 0
    for c in brackets:
        if c == 0x5B or c == 0x7B:  # [ {
            depth += 1
            if depth > most:
                most = depth
        else:
            depth -= 1
    return most


# A number the ordinary reader refuses reads as infinity: it has an exponent of three
# digits or more, or 309 digits.  One translate maps every digit to "0", "E" to "e"
# and "[" to "{", so that plain substring searches find the candidates (and count the
# brackets); a candidate (found inside a string too, say in a hex id) costs a full
# msgspec decode of that line, which refuses numbers out of range.
_TABLE = bytearray(range(256))
for _digit in b"123456789":
    _TABLE[_digit] = ord("0")
_TABLE[ord("E")] = ord("e")
_TABLE[ord("[")] = ord("{")
_CANON = bytes(_TABLE)
_EXP, _EXP_PLUS, _RUN = b"0e000", b"0e+000", b"0" * 300


class LoadedMessage(LazyMessageEntry):
    """A message entry read from a Pi file, its message decoded on first read."""

    __slots__ = ()

    @staticmethod
    def decode(source: Any) -> FrozenDict:
        """The frozen message of the raw JSON bytes :func:`message_line` checked."""
        return parse_line(bytes(source).decode("utf-8"))  # type: ignore[no-any-return]


if msgspec is not None:

    class _Envelope(msgspec.Struct, forbid_unknown_fields=True):
        type: Literal["message"]
        id: str
        parentId: str | None  # Pi's key
        timestamp: str
        message: msgspec.Raw

    class _Head(msgspec.Struct):
        role: str

    _decode_envelope = msgspec.json.Decoder(_Envelope).decode
    _decode_head = msgspec.json.Decoder(_Head).decode
    _decode_any = msgspec.json.Decoder().decode
    _Failed: tuple[type[BaseException], ...] = (msgspec.MsgspecError, RecursionError)


def message_line(raw: bytes, source: memoryview | None = None) -> LoadedMessage | None:
    """The entry of a plain message line, or ``None`` when the line needs the
    ordinary reader.  O(length of the line), all of it in C but the checks' glue.

    ``source``, the same bytes as a view into the file's buffer, is what the entry
    keeps (so it holds no copy of its own); by default ``raw`` itself.
    """
    canon = raw.translate(_CANON)
    try:
        env = _decode_envelope(raw if source is None else source)
        # Nesting: a line with few brackets cannot be deep; one with many is measured.
        if canon.count(b"{") > FAST_DEPTH and json_depth(raw) > FAST_DEPTH:
            return None
        _decode_head(env.message)
        if _EXP in canon or _EXP_PLUS in canon or _RUN in canon:
            _decode_any(raw)  # refuses a number out of range
    except _Failed:
        return None
    if not env.id:
        return None
    if not raw.isascii():
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return LoadedMessage.pending(env.id, env.parentId, env.timestamp, env.message)  # type: ignore[return-value]
