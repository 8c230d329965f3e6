"""Short, human-readable text for messages and entries (demo, ``ptree show``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..entries import (
    ActiveToolsChange,
    BranchSummary,
    Compaction,
    ContextEdit,
    Custom,
    CustomMessage,
    Entry,
    Label,
    MessageEntry,
    ModelChange,
    SessionInfo,
    ThinkingLevelChange,
    UnknownEntry,
    Usage,
)

__all__ = ["content_text", "entry_preview", "message_text", "one_line"]


def content_text(content: Any) -> str:
    """The text of a message ``content``: a string, or the text of its blocks.

    Text blocks give their text, thinking blocks their thinking, tool calls
    ``name(...)``, images ``[image]``.

    >>> content_text([{"type": "text", "text": "a"}, {"type": "toolCall", "name": "read"}])
    'a read(...)'
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, (list, tuple)):
        return ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            parts.append(block["thinking"])
        elif kind == "toolCall":
            parts.append(f"{block.get('name', '?')}(...)")
        elif kind == "image":
            parts.append("[image]")
    return " ".join(p for p in parts if p)


def message_text(message: Mapping[str, Any]) -> str:
    """The readable text of a message (its content, or a bash command and output)."""
    if message.get("role") == "bashExecution":
        return f"$ {message.get('command', '')}"
    return content_text(message.get("content"))


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
    and ``…`` ends a shortened text.  O(len(text)).

    >>> one_line("a\\n  b \\x1b[2J c", 8)
    'a b �[2…'
    """
    text = _UNPRINTABLE.sub("\ufffd", " ".join(text.split()))
    if width is None or len(text) <= width:
        return text
    return text[: max(width - 1, 0)] + "…"


def entry_preview(entry: Entry, width: int = 80) -> str:
    """One line saying what an entry is: ``user: hello``, ``model: anthropic/…``.

    >>> from ptree import SessionTree
    >>> t = SessionTree().append({"role": "user", "content": "hello\\nthere"})
    >>> entry_preview(t.leaf)
    'user: hello there'
    """
    if isinstance(entry, MessageEntry):
        said = message_text(entry.message)
        stop = entry.message.get("stopReason")
        if not said and stop in ("aborted", "error"):
            # An empty reply says nothing; why it is empty is worth a glance.
            error = entry.message.get("errorMessage")
            said = f"({stop}{': ' + error if isinstance(error, str) and error else ''})"
        text = f"{entry.message.get('role')}: {said}"
    elif isinstance(entry, ThinkingLevelChange):
        text = f"thinking: {entry.thinking_level}"
    elif isinstance(entry, ModelChange):
        text = f"model: {entry.provider}/{entry.model_id}"
    elif isinstance(entry, ActiveToolsChange):
        text = f"tools: {', '.join(entry.active_tool_names)}"
    elif isinstance(entry, Compaction):
        text = f"compaction: {entry.summary}"
    elif isinstance(entry, BranchSummary):
        text = f"branch summary: {entry.summary}"
    elif isinstance(entry, CustomMessage):
        text = f"custom message [{entry.custom_type}]: {content_text(entry.content)}"
    elif isinstance(entry, Custom):
        text = f"custom [{entry.custom_type}]"
    elif isinstance(entry, Label):
        text = f"label {entry.target_id}: {entry.label or '(cleared)'}"
    elif isinstance(entry, SessionInfo):
        text = f"session name: {entry.name or '(cleared)'}"
    elif isinstance(entry, Usage):
        text = f"usage [{entry.kind}]: {entry.provider}/{entry.model}{_usage_text(entry.usage)}"
        if entry.note:
            text += f" ({entry.note})"
    elif isinstance(entry, ContextEdit):
        if entry.replacement is None:
            text = f"context edit {entry.target_id}: (removed)"
        else:
            new = content_text(entry.replacement.get("content"))
            text = f"context edit {entry.target_id}: {new}"
    elif isinstance(entry, UnknownEntry):
        text = f"{entry.type} (unknown kind)"
    else:  # pragma: no cover - every kind is listed above
        text = entry.type
    return one_line(text, width)
