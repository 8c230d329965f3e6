"""Bring branching histories from other tools into ptree: ChatGPT and Open WebUI.

Both tools keep a conversation as a tree of messages, as ptree does: editing a
message or regenerating an answer adds a sibling, and the conversation remembers
which node it shows (its *current node*).  An import keeps every branch and makes
that current node the leaf, so each conversation becomes one Pi session file.

What becomes what (both formats):

- ``user`` → a Pi user message, ``{"role": "user", "content": [text block],
  "timestamp": ms}``.
- ``assistant`` → a Pi assistant message with ``provider`` (``"openai"`` for ChatGPT,
  ``"openwebui"`` for Open WebUI), ``model`` (the model the tool recorded, else
  ``"unknown"``), ``api`` ``"chatgpt-export"`` / ``"openwebui-export"`` (so that Pi
  treats the message as coming from another API), zero ``usage`` and
  ``stopReason`` ``"stop"``.  ChatGPT's reasoning (``thoughts``) becomes thinking
  blocks; a tool call an assistant wrote (``code``) stays assistant text.
- ``tool`` (ChatGPT's browsing, code and other tool outputs) → a
  ``custom_message`` of type ``chatgpt.tool`` with the tool's name in ``details``:
  it reaches the model as user text, as the output reached ChatGPT's model.
- ``system`` with text → a ``custom_message`` of type ``chatgpt.system`` /
  ``openwebui.system`` with ``display: false``.
- A node without a message (ChatGPT's empty root), a system node without text,
  and a node ChatGPT hides from the conversation
  (``metadata.is_visually_hidden_from_conversation``) give no entry: their
  children hang under the nearest ancestor that gave one.  With
  ``include_hidden=True`` a hidden node is kept as a ``custom`` entry of type
  ``chatgpt.hidden`` (never sent to a model) holding its role and text.
- The leaf: the current node; when it gives no entry (hidden, or a system node
  without text), its nearest ancestor that does.  When the conversation names no
  current node, or one it does not have, the leaf is reached from the root through
  each node's last child: the newest edit or regeneration at every step.
- A parent that is missing makes its child a root; a cycle of parents is broken
  by making its first node a root.  Two nodes giving the same id are both kept
  (the second under its key in the export).
- The conversation's title becomes the session's name: a ``session_info`` entry
  that is the single root above the whole conversation (so the leaf stays the
  conversation's current node).  The header gets a session id, the
  conversation's creation time, and ``importedFrom`` (format, conversation id,
  title).  The session id is a UUID derived from the conversation (its id and
  time), so the same export always gives the same files.
- ChatGPT: an answer that was cut short (``status`` ``in_progress`` or
  ``finished_partial_completion``, or ``finish_details`` ``interrupted``) has
  ``stopReason`` ``"aborted"``; its status, ``finish_details``, ``citations`` and
  ``content_references`` are kept in the entry's ``chatgpt`` field.  The custom
  instructions of a ``user_editable_context`` node (hidden) are its text.  A
  conversation that cannot be read (``mapping: null``) is skipped with a warning.
- Open WebUI: reasoning (``<details type="reasoning">`` blocks in the text, or
  ``reasoning`` items of a structured ``output``) becomes thinking blocks, not
  answer text; a tool call (a ``<details type="tool_calls">`` block with its
  ``name`` and ``result`` attributes, or a ``function_call`` item with its output)
  is a toolCall block and a ``toolResult`` message after it, the answer's text after
  the call a further assistant message (ids ``<id>#2``, ``#3`` …), its other
  attributes (``files`` …) in the result's ``details``; a block without them stays
  in the text, reported; an answer not ``done`` has ``stopReason`` ``"aborted"``; its
  ``sources``, ``citations``, ``statusHistory``, ``error`` and ``usage`` are kept
  in the entry's ``openwebui`` field.
- Entry ids are the tool's node ids; entry timestamps are the messages' times
  (the conversation's time when a message has none).  Entries are written
  parents first, and the branch of the current node last, so that Pi's CLI, which
  takes the last entry as the leaf, opens the same branch as ChatGPT shows.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from ._chat_export import (
    Conversation,
    ExportFormat,
    assistant,
    custom_message,
    iso,
    need_mapping,
    text_block,
    to_seconds,
    user,
)
from ._common import ImportedSession, Report, kind, only
from .errors import ImportFormatError

__all__ = ["FORMAT", "read", "sessions"]

FORMAT = "chatgpt"


# ------------------------------------------------------------------ ChatGPT


def _chatgpt_content(content: Any) -> tuple[str, list[str]]:
    """(text, thinking texts) of a ChatGPT ``content`` object."""
    if not isinstance(content, Mapping):
        return "", []
    pieces: list[str] = []
    thoughts: list[str] = []
    parts = content.get("parts")
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, Mapping):
                if isinstance(part.get("text"), str):
                    pieces.append(part["text"])
                elif "image" in str(part.get("content_type", "")):
                    pieces.append("[image]")
    # user_editable_context (custom instructions) keeps its text in two fields.
    for key in ("text", "result", "user_profile", "user_instructions"):
        if isinstance(content.get(key), str):
            pieces.append(content[key])
    if content.get("content_type") == "reasoning_recap" and isinstance(content.get("content"), str):
        thoughts.append(content["content"])
    for thought in content.get("thoughts") or ():
        if isinstance(thought, Mapping) and isinstance(thought.get("content"), str):
            thoughts.append(thought["content"])
    return "\n".join(p for p in pieces if p), thoughts


def _interrupted(message: Mapping[str, Any], meta: Mapping[str, Any]) -> bool:
    """Whether the answer was cut short (stopped by the user, or never finished)."""
    finish = meta.get("finish_details")
    if isinstance(finish, Mapping) and finish.get("type") == "interrupted":
        return True
    return message.get("status") in ("in_progress", "finished_partial_completion")


def _kept_metadata(message: Mapping[str, Any], meta: Mapping[str, Any]) -> dict[str, Any]:
    """What ChatGPT recorded about an answer that Pi has no field for: its status,
    how it finished, and its citations (kept on the entry, never sent to a model)."""
    kept: dict[str, Any] = {}
    status = message.get("status")
    if isinstance(status, str) and status != "finished_successfully":
        kept["status"] = status
    for key, name in (
        ("finish_details", "finishDetails"),
        ("citations", "citations"),
        ("content_references", "contentReferences"),
    ):
        value = meta.get(key)
        if value:
            kept[name] = value
    return kept


def _chatgpt_fields(
    message: Mapping[str, Any], default_time: float, default_model: str, include_hidden: bool
) -> dict[str, Any] | None:
    meta = message.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    author = message.get("author")
    author = author if isinstance(author, Mapping) else {}
    role = author.get("role")
    seconds = to_seconds(message.get("create_time"))
    seconds = default_time if seconds is None else seconds
    text, thoughts = _chatgpt_content(message.get("content"))
    if meta.get("is_visually_hidden_from_conversation") is True:
        if not include_hidden:
            return None
        return {
            "type": "custom",
            "timestamp": iso(seconds),
            "customType": "chatgpt.hidden",
            "data": {"role": role, "text": text},
        }
    if role == "user":
        return user(text, seconds)
    if role == "assistant":
        blocks = [{"type": "thinking", "thinking": t} for t in thoughts]
        if text or not blocks:
            blocks.append(text_block(text))
        model = meta.get("model_slug")
        fields = assistant(
            blocks,
            seconds,
            api="chatgpt-export",
            provider="openai",
            model=model if isinstance(model, str) and model else default_model,
        )
        kept = _kept_metadata(message, meta)
        if kept:
            fields["chatgpt"] = kept
        if _interrupted(message, meta):
            fields["message"] = {**fields["message"], "stopReason": "aborted"}
        return fields
    if role == "tool":
        if not text:
            return None
        name = author.get("name")
        return custom_message(
            "chatgpt.tool",
            text,
            seconds,
            display=True,
            details={"name": name if isinstance(name, str) else None},
        )
    if not text.strip():
        return None  # an empty system (or unknown-role) node says nothing
    return custom_message(
        f"chatgpt.{role if isinstance(role, str) else 'system'}", text, seconds, display=False
    )


def _chatgpt_conversation(
    conv: Mapping[str, Any], path: object, where: str, number: int, include_hidden: bool
) -> Conversation:
    mapping = need_mapping(conv.get("mapping"), path, f"{where}.mapping")
    conv_id = conv.get("conversation_id") or conv.get("id")
    conv_id = conv_id if isinstance(conv_id, str) and conv_id else str(number)
    title = conv.get("title") if isinstance(conv.get("title"), str) else None
    created = to_seconds(conv.get("create_time"))
    if created is None:
        times = [
            to_seconds(n.get("message", {}).get("create_time"))
            for n in mapping.values()
            if isinstance(n, Mapping) and isinstance(n.get("message"), Mapping)
        ]
        created = min((t for t in times if t is not None), default=0.0)
    default_model = conv.get("default_model_slug")
    default_model = default_model if isinstance(default_model, str) else "unknown"

    def fields(node: Mapping[str, Any], at: str) -> dict[str, Any] | None:
        message = node.get("message")
        if message is None:
            return None
        if not isinstance(message, Mapping):
            raise ImportFormatError(
                path,
                None,
                f"expected an object or null, found {kind(message)}",
                where=f"{at}.message",
            )
        return _chatgpt_fields(message, created, default_model, include_hidden)

    return Conversation(
        conv_id,
        title,
        created,
        mapping,
        f"{where}.mapping",
        ("parent", "children"),
        fields,
        conv.get("current_node"),
    )


def sessions(
    src: str | os.PathLike[str] | Any,
    *,
    on_report: Report | None = None,
    include_hidden: bool = False,
    strict: bool = False,
    cwd: str | None = None,
) -> Iterator[ImportedSession]:
    """Read a ChatGPT export (``conversations.json``): one session per conversation.

    Every branch is kept (edits and regenerations are siblings); the leaf is the
    conversation's ``current_node``.  See the module documentation for how each
    kind of node is converted, and what happens to hidden nodes and empty roots.
    The file is read and parsed before this returns; each conversation is
    converted as the iterator reaches it.

    Cost: O(total number of nodes).

    Args:
        src: the path of ``conversations.json``, or its parsed JSON (a list of
            conversations, or one conversation).
        on_report: called with one line naming each skipped conversation and why
            (default: a :class:`~ptree.pi.SessionFileWarning`).
        include_hidden: keep hidden nodes as ``custom`` entries instead of leaving
            them out.
        strict: a broken conversation (``mapping: null``, a node that is not an
            object, …) stops the import.  By default it is skipped (and reported),
            and the rest are read: real exports contain such conversations.
        cwd: the working directory written in each header (default: this one).

    Raises:
        ImportFormatError: (a ``ValueError``) the file is not JSON or not a ChatGPT
            export, or (with ``strict``, or when no conversation can be read) a
            conversation is broken; the error says where.
        OSError: the file cannot be read.

    >>> conv = {"title": "Hi", "create_time": 0, "current_node": "b", "mapping": {
    ...     "r": {"id": "r", "message": None, "parent": None, "children": ["a"]},
    ...     "a": {"id": "a", "parent": "r", "children": ["b"], "message": {
    ...         "author": {"role": "user"}, "content": {"parts": ["hello"]}}},
    ...     "b": {"id": "b", "parent": "a", "children": [], "message": {
    ...         "author": {"role": "assistant"}, "content": {"parts": ["hi!"]}}}}}
    >>> [s] = sessions([conv], cwd="/")
    >>> s.filename, s.tree.session_name, s.tree.leaf_id, [e.id for e in s.tree.path()]
    ('hi-1.jsonl', 'Hi', 'b', ['session-name', 'a', 'b'])
    """

    def convert(
        conv: Mapping[str, Any], path: object, where: str, n: int, _: Report
    ) -> Conversation:
        return _chatgpt_conversation(conv, path, where, n, include_hidden)

    found = ExportFormat(FORMAT, "conversations", lambda d: "mapping" in d, convert)
    return found.sessions(src, on_report=on_report, strict=strict, cwd=cwd)


def read(src: str | os.PathLike[str] | Any, **options: Any) -> ImportedSession:
    """The one conversation of an export: :func:`sessions` (strict), which takes the same options.

    Cost: O(total number of nodes), as :func:`sessions`: every conversation of the export is
    converted (to tell one from several).

    Args:
        src: the export's path, or its parsed JSON (as :func:`sessions` takes it).
        **options: the keyword options of :func:`sessions` other than ``strict``.

    Raises:
        ImportFormatError: as :func:`sessions`, or the export holds no conversation or several.
        OSError: the file cannot be read.
    """
    return only(sessions(src, strict=True, **options), src)
