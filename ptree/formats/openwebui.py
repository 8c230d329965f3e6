"""Open WebUI exports (``chat-export-*.json``): every branch kept; what becomes what is
described in :mod:`ptree.formats.chatgpt`, which reads the same kind of tree.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ._chat_export import (
    Conversation,
    assistant,
    custom_message,
    export_sessions,
    need_mapping,
    text_block,
    to_seconds,
    user,
)
from ._common import ImportedSession, Report, only

__all__ = ["FORMAT", "read", "sessions"]

FORMAT = "openwebui"


# ------------------------------------------------------------------ Open WebUI


_REASONING = re.compile(
    r"<details\b[^>]*\btype=\"reasoning\"[^>]*>(.*?)(?:</details>|\Z)", re.DOTALL
)
_SUMMARY = re.compile(r"^\s*<summary>.*?</summary>", re.DOTALL)
_KEPT = (
    ("sources", "sources"),
    ("citations", "citations"),
    ("statusHistory", "statusHistory"),
    ("error", "error"),
    ("usage", "usage"),
    ("done", "done"),
)


def _unquote(block: str) -> str:
    """The reasoning inside a ``<details type="reasoning">`` block: its summary line
    dropped and the ``> `` quoting Open WebUI adds to every line removed."""
    body = _SUMMARY.sub("", block, count=1).strip("\n")
    lines = []
    for line in body.split("\n"):
        if line.startswith("> "):
            line = line[2:]
        elif line.startswith(">"):
            line = line[1:]
        lines.append(line)
    return "\n".join(lines).strip()


def _answer_blocks(text: str, output: Any) -> list[dict[str, Any]]:
    """An answer's Pi blocks: reasoning as thinking, the rest as text.

    A structured ``output`` (newer versions: ``reasoning`` and ``message`` items) is
    read when present; otherwise the ``<details type="reasoning">`` blocks are cut out
    of the text.  Cost: O(length of the text).
    """
    blocks: list[dict[str, Any]] = []
    if isinstance(output, list) and output:
        for item in output:
            if not isinstance(item, Mapping):
                continue
            parts = [
                p.get("text")
                for key in ("summary", "content")
                for p in (item.get(key) or ())
                if isinstance(p, Mapping)
            ]
            joined = "\n".join(t for t in parts if isinstance(t, str))
            if item.get("type") == "reasoning":
                blocks.append({"type": "thinking", "thinking": joined})
            elif item.get("type") == "message" and joined:
                blocks.append(text_block(joined))
        if blocks:
            return blocks
    at = 0
    for found in _REASONING.finditer(text):
        before = text[at : found.start()].strip()
        if before:
            blocks.append(text_block(before))
        blocks.append({"type": "thinking", "thinking": _unquote(found.group(1))})
        at = found.end()
    rest = text[at:].strip() if blocks else text
    if rest or not blocks:
        blocks.append(text_block(rest))
    return blocks


def _openwebui_fields(message: Mapping[str, Any], default_time: float) -> dict[str, Any] | None:
    role = message.get("role")
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    if isinstance(content, list):  # some versions keep OpenAI-style content parts
        text = "\n".join(
            p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)
        )
    seconds = to_seconds(message.get("timestamp"))
    seconds = default_time if seconds is None else seconds
    if role == "user":
        return user(text, seconds)
    if role == "assistant":
        model = message.get("model")
        fields = assistant(
            _answer_blocks(text, message.get("output")),
            seconds,
            api="openwebui-export",
            provider="openwebui",
            model=model if isinstance(model, str) and model else "unknown",
        )
        kept = {
            name: message[key]
            for key, name in _KEPT
            if key in message and message[key] not in (None, [], {})
        }
        if kept:
            fields["openwebui"] = kept
        if message.get("done") is False:
            fields["message"] = {**fields["message"], "stopReason": "aborted"}
        elif message.get("error"):
            fields["message"] = {
                **fields["message"],
                "stopReason": "error",
                "errorMessage": str(message["error"])[:2000],
            }
        return fields
    if not text.strip():
        return None
    return custom_message(
        f"openwebui.{role if isinstance(role, str) else 'system'}", text, seconds, display=False
    )


def _openwebui_conversation(
    item: Mapping[str, Any], path: object, where: str, number: int
) -> Conversation:
    chat = need_mapping(item.get("chat", item), path, f"{where}.chat")
    history = need_mapping(chat.get("history"), path, f"{where}.chat.history")
    messages = need_mapping(history.get("messages"), path, f"{where}.chat.history.messages")
    conv_id = item.get("id") or chat.get("id")
    conv_id = conv_id if isinstance(conv_id, str) and conv_id else str(number)
    title = item.get("title") or chat.get("title")
    title = title if isinstance(title, str) and title else None
    created = to_seconds(item.get("created_at"))
    if created is None:
        created = to_seconds(chat.get("timestamp"))
    if created is None:
        times = [
            to_seconds(m.get("timestamp")) for m in messages.values() if isinstance(m, Mapping)
        ]
        created = min((t for t in times if t is not None), default=0.0)
    return Conversation(
        conv_id,
        title,
        created,
        messages,
        f"{where}.chat.history.messages",
        ("parentId", "childrenIds"),
        lambda message, _: _openwebui_fields(message, created),
        history.get("currentId"),
    )


def sessions(
    src: str | os.PathLike[str] | Any,
    *,
    on_report: Report | None = None,
    strict: bool = False,
    cwd: str | None = None,
) -> Iterator[ImportedSession]:
    """Read an Open WebUI chat export: one session per chat.

    The export is a list of chats (``{"id", "title", "chat": {"history":
    {"messages": {id: {"parentId", "childrenIds", "role", "content",
    "timestamp", "model"?}}, "currentId"}}, "created_at"}``), or one chat.
    Every branch is kept; the leaf is ``currentId``.  The file is read and parsed
    before this returns; each chat is converted as the iterator reaches it.

    Cost: O(total number of messages).

    Args:
        src: the export's path, or its parsed JSON.
        on_report: called with one line for each chat skipped, and each part of a
            message kept only as text (default: a
            :class:`~ptree.pi.SessionFileWarning`).
        strict: a broken chat stops the import (by default it is skipped and
            reported, unless no chat can be read).
        cwd: the working directory written in each header (default: this one).

    Raises:
        ImportFormatError: (a ``ValueError``) not JSON, or not an Open WebUI export.
        OSError: the file cannot be read.

    >>> chat = {"id": "c1", "title": "Hi", "created_at": 0, "chat": {"history": {
    ...     "currentId": "m2", "messages": {
    ...         "m1": {"id": "m1", "parentId": None, "childrenIds": ["m2"],
    ...                "role": "user", "content": "hello", "timestamp": 1},
    ...         "m2": {"id": "m2", "parentId": "m1", "childrenIds": [],
    ...                "role": "assistant", "content": "hi!", "timestamp": 2,
    ...                "model": "llama3"}}}}}
    >>> [s] = sessions([chat], cwd="/")
    >>> s.filename, s.tree.leaf.message["model"], len(s.tree)
    ('hi-c1.jsonl', 'llama3', 3)
    """
    return export_sessions(
        FORMAT,
        src,
        listed="chats",
        single=lambda d: "chat" in d or "history" in d,
        convert=_openwebui_conversation,
        on_report=on_report,
        strict=strict,
        cwd=cwd,
    )


def read(src: str | os.PathLike[str] | Any, **options: Any) -> ImportedSession:
    """The one chat of an export: :func:`sessions` (strict), which takes the same options.

    Raises:
        ImportFormatError: as :func:`sessions`, or the export holds no chat or several.
    """
    return only(sessions(src, strict=True, **options), src)
