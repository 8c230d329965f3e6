"""Short, human-readable text for messages and entries (demo, ``ptree show``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from .. import entries as kinds
from ..entries import Entry, MessageEntry
from ..pi.fast import LoadedMessage
from ..pi.readable import content_text, message_text

__all__ = ["content_text", "entry_preview", "message_role", "message_text", "one_line"]

try:
    import msgspec
except ImportError:  # pragma: no cover - msgspec is a dependency; a stripped install
    msgspec = None  # type: ignore[assignment]


# What a message may hold but a drawing must not pass on: C0 and C1 control
# characters (a terminal obeys them: ESC sequences recolour or clear the screen,
# and SVG, which is XML, refuses them), Unicode's bidirectional overrides and
# isolates (they reorder the rest of the line, as in "Trojan Source"), and lone
# surrogates, which JSON can spell but no encoding can write (printing one fails).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _usage_text(usage: Mapping[str, Any]) -> str:
    """``, 50000 tokens, $0.015`` from a usage object (each part only when it is a number)."""
    out = ""
    tokens = usage.get("totalTokens")
    if type(tokens) in (int, float):
        out += f", {tokens:g} tokens"
    cost = usage.get("cost")
    total = cost.get("total") if isinstance(cost, Mapping) else None
    if type(total) in (int, float):
        out += f", ${total:g}"
    return out


def one_line(text: str, width: int | None = None) -> str:
    """``text`` on one line and safe to print, in at most ``width`` characters.

    Runs of whitespace become one space, anything unprintable (see above) U+FFFD,
    and ``…`` ends a shortened text.  O(len(text)), but only O(width) for a long
    text that does not need all of it (most of them).

    >>> one_line("a\\n  b \\x1b[2J c", 8)
    'a b �[2…'
    """
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        # Nothing to change (printable: no whitespace but single spaces, nothing
        # the pattern above replaces): most ids and short previews.
        pass
    elif width is not None and len(text) > _enough(width):
        short = _shortened(text, width)
        if short is not None:
            return short
        text = _UNPRINTABLE.sub("\ufffd", " ".join(text.split()))
    else:
        text = _UNPRINTABLE.sub("\ufffd", " ".join(text.split()))
    if width is None or len(text) <= width:
        return text
    return text[: max(width - 1, 0)] + "…"


def _enough(width: int) -> int:
    """How much of a long text :func:`_shortened` reads for a line of ``width``."""
    return 4 * max(width, 0) + 64


def _shortened(start: str, width: int) -> str | None:
    """``one_line(text, width)`` from the ``start`` of a longer text, or ``None``
    when the start does not decide it (mostly whitespace).  O(width).

    With whitespace collapsed, the start of a text gives the start of the collapsed
    text (its last word may be cut short, that is all), and one character unprintable
    stays one U+FFFD: when that start is longer than ``width``, the text is shortened
    and the result is known.
    """
    head = " ".join(start[: _enough(width)].split())
    if len(head) <= width:
        return None
    return _UNPRINTABLE.sub("\ufffd", head[: max(width - 1, 0)]) + "…"


def _usage_preview(entry: kinds.Usage) -> str:
    text = f"usage [{entry.kind}]: {entry.provider}/{entry.model}{_usage_text(entry.usage)}"
    return f"{text} ({entry.note})" if entry.note else text


def _edit_preview(entry: kinds.ContextEdit) -> str:
    if entry.replacement is None:
        return f"context edit {entry.target_id}: (removed)"
    return f"context edit {entry.target_id}: {content_text(entry.replacement.get('content'))}"


# What an entry other than a message says in a preview, by its kind.
_PREVIEWS: dict[type[Entry], Callable[[Any], str]] = {
    kinds.ThinkingLevelChange: lambda e: f"thinking: {e.thinking_level}",
    kinds.ModelChange: lambda e: f"model: {e.provider}/{e.model_id}",
    kinds.ActiveToolsChange: lambda e: f"tools: {', '.join(e.active_tool_names)}",
    kinds.Compaction: lambda e: f"compaction: {e.summary}",
    kinds.BranchSummary: lambda e: f"branch summary: {e.summary}",
    kinds.CustomMessage: lambda e: f"custom message [{e.custom_type}]: {content_text(e.content)}",
    kinds.Custom: lambda e: f"custom [{e.custom_type}]",
    kinds.Label: lambda e: f"label {e.target_id}: {e.label or '(cleared)'}",
    kinds.SessionInfo: lambda e: f"session name: {e.name or '(cleared)'}",
    kinds.Usage: _usage_preview,
    kinds.ContextEdit: _edit_preview,
    kinds.UnknownEntry: lambda e: f"{e.type} (unknown kind)",
}


def entry_preview(entry: Entry, width: int = 80) -> str:
    """One line saying what an entry is: ``user: hello``, ``model: anthropic/…``.

    Cost: O(size of the entry's text), O(width) for a message still undecoded.

    Args:
        entry: any entry.
        width: the most characters of the preview.

    >>> from ptree import SessionTree
    >>> t = SessionTree().append({"role": "user", "content": "hello\\nthere"})
    >>> entry_preview(t.leaf)
    'user: hello there'
    """
    if isinstance(entry, MessageEntry):
        if isinstance(entry, LoadedMessage):
            source = LoadedMessage.undecoded(entry)  # None if decoded since
            quick = None if source is None else _loaded_preview(source, width)
            if quick is not None:
                return quick
        said = message_text(entry.message)
        stop = entry.message.get("stopReason")
        if not said and stop in ("aborted", "error"):
            # An empty reply says nothing; why it is empty is worth a glance.
            error = entry.message.get("errorMessage")
            said = f"({stop}{': ' + error if isinstance(error, str) and error else ''})"
        text = f"{entry.message.get('role')}: {said}"
    else:
        # The nearest class with a preview: a subclass previews as its kind does.
        kind = next((_PREVIEWS[c] for c in type(entry).__mro__ if c in _PREVIEWS), None)
        text = entry.type if kind is None else kind(entry)
    return one_line(text, width)


# ------------------------------------------------------- previews from the raw bytes
#
# ``ptree show`` previews every message of a session.  A message the Pi reader has
# not decoded yet (a LoadedMessage) is previewed from its JSON bytes: msgspec reads
# only the fields a preview needs, as plain values checked against the types below,
# skipping the rest in C (a tool call's arguments, a tool result's details), and
# nothing is frozen or kept.  Whatever the types below do not describe (a block that
# is no object, a name that is a number, a lone surrogate...) fails the decode, and
# the preview is made the ordinary way, from the decoded message: the text is the
# same either way (tests/test_show_stream.py compares both).

if msgspec is not None:

    class _Block(msgspec.Struct, gc=False):
        type: str | None = None
        text: str | None = None
        thinking: str | None = None
        name: str | None = "?"  # what .get("name", "?") gives when it is missing

    class _Said(msgspec.Struct, gc=False):
        role: str
        content: str | list[_Block] | None = None
        command: str | None = ""
        stopReason: str | None = None  # Pi's keys
        errorMessage: str | None = None

    class _Role(msgspec.Struct, gc=False):
        role: str

    _decode_said = msgspec.json.Decoder(_Said).decode
    _decode_role = msgspec.json.Decoder(_Role).decode
    _Failed: tuple[type[BaseException], ...] = (msgspec.MsgspecError,)


def _blocks_text(blocks: list[_Block], enough: int | None) -> tuple[str, bool]:
    """:func:`content_text` of decoded blocks, stopping once it has ``enough``
    characters; and whether it is the whole text."""
    parts: list[str] = []
    size = 0
    for block in blocks:
        kind = block.type
        part: str | None
        if kind == "text":
            part = block.text
        elif kind == "thinking":
            part = block.thinking
        elif kind == "toolCall":
            part = f"{block.name}(...)"
        elif kind == "image":
            part = "[image]"
        else:
            continue
        if not part:
            continue
        parts.append(part)
        size += len(part) + 1
        if enough is not None and size > enough:
            return " ".join(parts), False
    return " ".join(parts), True


def _loaded_preview(source: object, width: int) -> str | None:
    """What :func:`entry_preview` gives for a message of these JSON bytes, or
    ``None`` when they hold something the quick way does not handle.  O(len(source))
    in C, O(width) in Python."""
    if msgspec is None:  # pragma: no cover - msgspec is a dependency
        return None
    try:
        message = _decode_said(source)  # type: ignore[arg-type]
    except _Failed:
        return None
    if message.role == "bashExecution":
        return one_line(f"{message.role}: $ {message.command}", width)
    content = message.content
    if content is None:
        said, whole = "", True
    elif isinstance(content, str):
        said, whole = content, True
    else:
        said, whole = _blocks_text(content, _enough(width))
    if not said and message.stopReason in ("aborted", "error"):
        error = message.errorMessage
        said = f"({message.stopReason}{': ' + error if error else ''})"
    text = f"{message.role}: {said}"
    if whole:
        return one_line(text, width)
    short = _shortened(text, width)
    if short is None:  # the start was mostly whitespace: the whole text decides
        said, _ = _blocks_text(content, None)  # type: ignore[arg-type]
        short = one_line(f"{message.role}: {said}", width)
    return short


def message_role(entry: MessageEntry) -> str:
    """``str(entry.message.get("role"))``, read from the bytes of a message not
    decoded yet (the reader checked that it is a string).  O(len(message)) in C."""
    if isinstance(entry, LoadedMessage) and msgspec is not None:
        source = LoadedMessage.undecoded(entry)
        if source is not None:
            try:
                return _decode_role(source).role  # type: ignore[arg-type]
            except _Failed:  # pragma: no cover - the reader checked the role
                pass
    return str(entry.message.get("role"))
