"""The text a person reads in a Pi message or entry: one owner for ``ptree show``'s
previews, the demo, and what the stores' search indexes.

Text blocks give their text, thinking blocks their thinking, a tool call its name, an
image ``[image]``: never JSON keys, ids, arguments or base64 data.

Imports: the core only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..entries import BranchSummary, Compaction, CustomMessage, Entry, MessageEntry, SessionInfo

__all__ = ["content_text", "entry_text", "message_text"]


def content_text(content: Any) -> str:
    """The text of a message ``content``: a string, or the text of its blocks.

    Text blocks give their text, thinking blocks their thinking, tool calls
    ``name(...)``, images ``[image]``.  O(size of the content).

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
    """The readable text of a message (its content, or a bash command).

    O(size of the message's content) (see :func:`content_text`).

    Args:
        message: a Pi message (a mapping with a ``role``).

    >>> message_text({"role": "bashExecution", "command": "ls", "output": "a.txt"})
    '$ ls'
    """
    if message.get("role") == "bashExecution":
        return f"$ {message.get('command', '')}"
    return content_text(message.get("content"))


def entry_text(entry: Entry) -> tuple[str, str] | None:
    """What a person reads in an entry, with what says it: ``(role, text)``, or
    ``None`` for an entry that holds no text to read (a model change, a label...).

    Messages give their role and :func:`message_text` (a shell command's output too);
    compactions and branch summaries their summary; custom messages their content;
    ``session_info`` entries the session's name.  O(size of the entry).

    >>> from ptree import SessionTree
    >>> t = SessionTree().append({"role": "user", "content": "hello"}).append_session_info("n")
    >>> [entry_text(e) for e in t.entries()]
    [('user', 'hello'), ('session_info', 'n')]
    """
    if isinstance(entry, MessageEntry):
        message = entry.message
        text = message_text(message)
        output = message.get("output")
        if message.get("role") == "bashExecution" and isinstance(output, str):
            text = f"{text}\n{output}"
        return str(message.get("role")), text
    if isinstance(entry, (Compaction, BranchSummary)):
        return entry.type, entry.summary
    if isinstance(entry, CustomMessage):
        return entry.type, content_text(entry.content)
    if isinstance(entry, SessionInfo):
        return (entry.type, entry.name) if entry.name else None
    return None
