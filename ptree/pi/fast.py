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

Where the C scanner is built (:data:`SCANNER` ``"C"``, ``ptree/pi/_scan.c``), it does
the same checks a few thousand lines per call, makes the entries itself
(:data:`ENTRIES_IN_C`), and finds the runs of them the reader can add in file order
(:func:`in_order_parents`): a load of the 90 MB session takes a quarter of the CPU
time it takes on the msgspec path (benchmarks/README.md, "Big sessions").
"""

from __future__ import annotations

from collections.abc import Callable
from types import MemberDescriptorType
from typing import TYPE_CHECKING, Any, Literal, cast

from ..entries import EMPTY, LazyMessageEntry, message_shape
from ..frozen import FrozenDict, FrozenList
from .lines import parse_line

__all__ = [
    "AVAILABLE",
    "SCANNER",
    "LoadedMessage",
    "in_order_parents",
    "json_depth",
    "line_scanner",
    "message_line",
]

try:
    import msgspec
except ImportError:  # pragma: no cover - msgspec is a dependency; a stripped install
    msgspec = None  # type: ignore[assignment]

try:
    from . import _scan
except ImportError:  # pragma: no cover - built where a C compiler is found (setup.py)
    _scan = None  # type: ignore[assignment]

if _scan is not None:
    _scan.setup(FrozenDict, FrozenList)

AVAILABLE = msgspec is not None
"""Whether the fast path can run (msgspec imports)."""

SCANNER: Literal["C", "msgspec", "none"] = (
    "C" if _scan is not None else "msgspec" if msgspec is not None else "none"
)
"""Which fast path reads message lines: ``"C"`` (the line scanner, ``ptree/pi/_scan.c``,
built at install where a C compiler is found), else ``"msgspec"`` (one line at a
time, :func:`message_line`), else ``"none"`` (every line decoded)."""

FAST_DEPTH = 64
"""A line nested at most this deep is within any limit the ordinary reader enforces;
a deeper one goes the ordinary way."""

_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_PAIRS = bytes(range(256)).replace(b"[", b"{").replace(b"]", b"}")


def json_depth(raw: bytes, limit: int | None = None) -> int:
    """How deep a valid JSON line nests; past ``limit``, ``limit + 1``.
    O(len(raw)), or O(len(raw) * limit) with a limit.

    Strings are cut out first: with escaped backslashes and then escaped quotes
    removed, the quotes left alternate between opening and closing a string, so the
    pieces of a split on them at even places are what lies outside strings.  With a
    limit, the innermost pairs of the brackets left are taken away, all at once, at
    most ``limit + 1`` times (in C): each round takes one level off.

    Args:
        raw: a valid JSON line.
        limit: the depth past which counting stops; ``None``: none.
    """
    plain = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = b"".join(plain.split(b'"')[::2]).translate(_PAIRS, _NOT_BRACKETS)
    if limit is not None:
        rounds = 0
        while brackets and rounds <= limit:
            brackets = brackets.replace(b"{}", b"")
            rounds += 1
        return rounds
    depth = most = 0
    for c in brackets:
        if c == 0x7B:  # {
            depth += 1
            if depth > most:
                most = depth
        else:
            depth -= 1
    return most


# A number the ordinary reader refuses reads as infinity: it has an exponent of three
# digits or more, or 309 digits.  One translate maps every digit and "+" to "0", "E"
# to "e" and "[" to "{", so that plain substring searches find the candidates (and
# count the brackets).  A candidate is a real number only where a number can stand:
# after ``:``, ``,``, ``[`` or a blank (a sign and digits before it), and before one
# of ``,]}`` or a blank; a digit string of a hex id or of code in a text is not.  A
# real candidate costs a full msgspec decode of its line, which refuses numbers out
# of range.
_TABLE = bytearray(range(256))
for _digit in b"123456789+":
    _TABLE[_digit] = ord("0")
_TABLE[ord("E")] = ord("e")
_TABLE[ord("[")] = ord("{")
_CANON = bytes(_TABLE)
_EXP, _RUN = b"0e000", b"0" * 300
_BEFORE = frozenset(b":,[ \t\r\n")
_AFTER = frozenset(b",]} \t\r\n")
_MANTISSA = frozenset(b"0123456789.")


def _number_at(raw: bytes, at: int) -> bool:
    """Whether the exponent candidate whose ``e`` is at ``at`` can be a JSON number
    token (not digits inside a string).  O(length of the number)."""
    start = at - 1
    while start >= 0 and raw[start] in _MANTISSA:
        start -= 1
    if start >= 0 and raw[start] == 0x2D:  # -
        start -= 1
    if start >= 0 and raw[start] not in _BEFORE:
        return False
    end = at + 1
    size = len(raw)
    if end < size and raw[end] in b"+-":
        end += 1
    while end < size and 0x30 <= raw[end] <= 0x39:
        end += 1
    return end == size or raw[end] in _AFTER


class LoadedMessage(LazyMessageEntry):
    """A message entry read from a Pi file, its message decoded on first read.

    Its source is the message's JSON text, checked by the reader: a ``msgspec.Raw``
    (:func:`message_line`) or a ``Span`` of the file's bytes (the C scanner), both
    read like ``bytes``.
    """

    __slots__ = ()

    @staticmethod
    def decode(source: Any) -> FrozenDict:
        """The frozen message of the raw JSON bytes the reader checked: decoded in C
        where the extension is built (what it does not take, the ordinary way).

        Cost: O(len(source)); the entry calls it once, on the first read of its
        message.

        Args:
            source: the message's JSON text, as bytes or a bytes-like ``msgspec.Raw``
                or ``Span``; the reader has checked that it parses.
        """
        if _scan is not None:
            try:
                return _scan.decode(source)  # type: ignore[no-any-return]
            except ValueError:
                pass
        return parse_line(str(source, "utf-8"))  # type: ignore[no-any-return]


if _scan is not None and not TYPE_CHECKING:
    # The same class in C, a subclass of the one above (ptree/pi/_scan.c's LoadedType):
    # its _source slot holds the message's place in the file's bytes, not a Span (48 B
    # an entry), and it is not the garbage collector's (no GC header, 16 B: its
    # instances can never be on a reference cycle).  Everything else is inherited.
    LoadedMessage = _scan.loaded_type(LoadedMessage)

# The slots LazyMessageEntry.pending sets, in the order of the values the C scanner
# gives for them (its tuple's, with ``extra`` always EMPTY): the scanner makes the
# entries itself, as pending makes them (tests/test_scanner.py compares the two).
_PENDING_SLOTS = ("id", "parent_id", "timestamp", "extra", "_source", "_shape")


def _slot(cls: type, name: str) -> Any:
    """The member descriptor of ``cls``'s slot ``name`` (in the class or a base; the C
    class reads ``_source`` through a getter of its own).  O(bases)."""
    return next(
        k.__dict__[name]
        for k in cls.__mro__
        if isinstance(k.__dict__.get(name), MemberDescriptorType)
    )


def _entries_in_c() -> bool:
    """Set up the C scanner to make the entries itself; whether it does.  O(1)."""
    if _scan is None:
        return False
    try:
        _scan.entries(LoadedMessage, tuple(_slot(LoadedMessage, n) for n in _PENDING_SLOTS), EMPTY)
    except (TypeError, StopIteration):  # pragma: no cover - slots that are not plain
        return False
    return True


ENTRIES_IN_C = _entries_in_c()
"""Whether the C scanner makes the entries (else each is made by
:meth:`LoadedMessage.pending` from the scanner's values)."""


def in_order_parents(
    records: list[Any], start: int, by_id: dict[str, Any], taken: dict[str, Any]
) -> list[Any]:
    """The parents (``None`` for a root) of the run of loaded entries from
    ``records[start]`` that can be added in file order: each id new (not in ``by_id``
    or ``taken``, nor earlier in the run), each parent in ``by_id`` or earlier in the
    run; at most :data:`CHUNK` of them (the run's index of ids is transient memory).
    The run ends at anything else, which the reader takes the general way; an empty
    list where the scanner does not make the entries.  O(length of the run), in C.

    Args:
        records: the records of the file, in order.
        start: where the run starts.
        by_id: the entries added so far, by id.
        taken: other ids no entry may reuse (the ``leaf`` records').
    """
    if not ENTRIES_IN_C:
        return []
    return _scan.in_order(records, start, CHUNK, by_id, taken)


CHUNK = 4096
"""Lines the C scanner checks per call: few enough that its list of results stays
small next to the entries it stands for."""


class LineScanner:
    """The C scanner over the lines of one file's bytes (see :func:`line_scanner`)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def scan(self, start: int) -> tuple[list[LoadedMessage | int], int]:
        """The next :data:`CHUNK` lines from offset ``start`` (a line's start) and the
        offset after them.  A plain message line (one the ordinary reader would read
        as exactly ``type``, ``id``, ``parentId``, ``timestamp`` and a ``message``
        with a string role, without error) gives its entry; any other line gives its
        start offset, for the ordinary reader.  O(bytes of the lines), in C but for
        one constructor call per entry where the scanner does not make them
        (:data:`ENTRIES_IN_C`).
        """
        if ENTRIES_IN_C:
            return _scan.scan(self.data, start, CHUNK, True)
        items, stop = _scan.scan(self.data, start, CHUNK)
        pending = cast("Callable[..., LoadedMessage]", LoadedMessage.pending)
        return [item if isinstance(item, int) else pending(*item) for item in items], stop


def line_scanner(data: bytes) -> LineScanner | None:
    """The C scanner over ``data`` (a whole file after its header), or ``None``
    where the extension was not built.  O(1).

    Args:
        data: the file's bytes after its header line.
    """
    return LineScanner(data) if SCANNER == "C" else None


if msgspec is not None:

    class _Envelope(msgspec.Struct, forbid_unknown_fields=True):
        type: Literal["message"]
        id: str
        parentId: str | None  # Pi's key
        timestamp: str
        message: msgspec.Raw

    _NULL = msgspec.Raw(b"null")

    class _Head(msgspec.Struct, gc=False):
        role: str
        content: msgspec.Raw = _NULL  # skipped in C: only absent or null counts

    _decode_envelope = msgspec.json.Decoder(_Envelope).decode
    _decode_head = msgspec.json.Decoder(_Head).decode
    _decode_any = msgspec.json.Decoder().decode
    _Failed: tuple[type[BaseException], ...] = (msgspec.MsgspecError, RecursionError)


def message_line(raw: bytes, source: memoryview | None = None) -> LoadedMessage | None:
    """The entry of a plain message line, or ``None`` when the line needs the
    ordinary reader.  O(length of the line), nearly all of it in C.

    ``source``, the same bytes as a view into the file's buffer, is what the entry
    keeps (so it holds no copy of its own); by default ``raw`` itself.

    Args:
        raw: the line's bytes, without its newline.
        source: the same bytes as a view into the file's buffer; ``raw`` when ``None``.
    """
    try:
        env = _decode_envelope(raw if source is None else source)
    except _Failed:
        return None
    if not env.id:
        return None
    try:
        head = _decode_head(env.message)  # a string role
    except _Failed:
        return None
    canon = raw.translate(_CANON)
    # Nesting: a line with few brackets cannot be deep; one with many is measured.
    if canon.count(b"{") > FAST_DEPTH and json_depth(raw, FAST_DEPTH) > FAST_DEPTH:
        return None
    at = canon.find(_EXP)
    while at >= 0:
        if _number_at(raw, at + 1):
            break
        at = canon.find(_EXP, at + 1)
    if at >= 0 or _RUN in canon:
        try:
            _decode_any(raw)  # refuses a number out of range
        except _Failed:
            return None
    if not raw.isascii():
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    content = None if head.content == _NULL else True  # duplicate keys: the last
    shape = message_shape({"role": head.role, "content": content})
    loaded = LoadedMessage.pending(env.id, env.parentId, env.timestamp, env.message, shape)
    return cast(LoadedMessage, loaded)
