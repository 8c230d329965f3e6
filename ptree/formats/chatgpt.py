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
  answer text; an answer not ``done`` has ``stopReason`` ``"aborted"``; its
  ``sources``, ``citations``, ``statusHistory``, ``error`` and ``usage`` are kept
  in the entry's ``openwebui`` field.
- Entry ids are the tool's node ids; entry timestamps are the messages' times
  (the conversation's time when a message has none).  Entries are written
  parents first, and the branch of the current node last, so that Pi's CLI, which
  takes the last entry as the leaf, opens the same branch as ChatGPT shows.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..pi import SessionFileWarning
from ..tree import SessionTree
from ._chat_export import (
    ImportedSession,
    Node,
    assistant,
    build,
    custom_message,
    filename,
    halves,
    iso,
    kind,
    list_of,
    load_json,
    need_mapping,
    node_id,
    text_block,
    to_seconds,
    user,
    write,
)
from .errors import ExportFormatError

__all__ = ["chatgpt_sessions", "import_chatgpt"]


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
    conv: Mapping[str, Any], path: object, where: str, number: int, cwd: str, include_hidden: bool
) -> tuple[str, str | None, SessionTree]:
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
    nodes: dict[str, Node] = {}
    for key, raw in mapping.items():
        node = need_mapping(raw, path, f"{where}.mapping[{key!r}]")
        nid = node_id(node.get("id"), key, nodes)
        parent = node.get("parent")
        children = node.get("children")
        message = node.get("message")
        if message is not None and not isinstance(message, Mapping):
            raise ExportFormatError(
                path,
                f"{where}.mapping[{key!r}].message",
                f"expected an object or null, found {kind(message)}",
            )
        fields = (
            None
            if message is None
            else _chatgpt_fields(message, created, default_model, include_hidden)
        )
        nodes[nid] = Node(
            nid,
            parent if isinstance(parent, str) else None,
            [c for c in children if isinstance(c, str)] if isinstance(children, list) else [],
            fields,
        )
    current = conv.get("current_node")
    source = {"format": "chatgpt", "conversationId": conv_id, "title": title}
    tree = build(
        nodes,
        current if isinstance(current, str) else None,
        title=title,
        created=created,
        source=source,
        cwd=cwd,
    )
    return conv_id, title, tree


def chatgpt_sessions(
    export: str | os.PathLike[str] | Any,
    *,
    include_hidden: bool = False,
    cwd: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    strict: bool = False,
    on_skip: Callable[[str], None] | None = None,
) -> list[ImportedSession]:
    """Read a ChatGPT export (``conversations.json``): one session per conversation.

    Every branch is kept (edits and regenerations are siblings); the leaf is the
    conversation's ``current_node``.  See the module documentation for how each
    kind of node is converted, and what happens to hidden nodes and empty roots.

    Cost: O(total number of nodes).

    Args:
        export: the path of ``conversations.json``, or its parsed JSON (a list of
            conversations, or one conversation).
        include_hidden: keep hidden nodes as ``custom`` entries instead of leaving
            them out.
        cwd: the working directory written in each header (default: this one).
        on_progress: called as ``on_progress(done, total)`` after each conversation.
        strict: a broken conversation (``mapping: null``, a node that is not an
            object, …) stops the import.  By default it is skipped, and the rest
            are read: real exports contain such conversations.
        on_skip: called with one line naming each skipped conversation and why
            (default: a :class:`~ptree.SessionFileWarning`).

    Raises:
        ExportFormatError: (a ``ValueError``) the file is not JSON or not a ChatGPT
            export, or (with ``strict``, or when no conversation can be read) a
            conversation is broken; the error says where.
        OSError: the file cannot be read.

    >>> conv = {"title": "Hi", "create_time": 0, "current_node": "b", "mapping": {
    ...     "r": {"id": "r", "message": None, "parent": None, "children": ["a"]},
    ...     "a": {"id": "a", "parent": "r", "children": ["b"], "message": {
    ...         "author": {"role": "user"}, "content": {"parts": ["hello"]}}},
    ...     "b": {"id": "b", "parent": "a", "children": [], "message": {
    ...         "author": {"role": "assistant"}, "content": {"parts": ["hi!"]}}}}}
    >>> [s] = chatgpt_sessions([conv], cwd="/")
    >>> s.filename, s.tree.session_name, s.tree.leaf_id, [e.id for e in s.tree.path()]
    ('hi-1.jsonl', 'Hi', 'b', ['session-name', 'a', 'b'])
    """
    data, path = load_json(export)
    convs = list_of(data, path, "conversations", lambda d: "mapping" in d)
    cwd = os.getcwd() if cwd is None else cwd
    taken: set[str] = set()
    out: list[ImportedSession] = []
    first_error: ExportFormatError | None = None
    skipped: list[tuple[Any, int, ExportFormatError]] = []
    for i, raw in enumerate(convs):
        try:
            conv = need_mapping(raw, path, f"conversations[{i}]")
            conv_id, title, tree = _chatgpt_conversation(
                conv, path, f"conversations[{i}]", i + 1, cwd, include_hidden
            )
        except ExportFormatError as exc:
            if strict:
                raise
            first_error = first_error or exc
            skipped.append((raw, i, exc))
        else:
            out.append(ImportedSession(conv_id, title, filename(title, conv_id, taken), tree))
        if on_progress is not None:
            on_progress(i + 1, len(convs))
    if first_error is not None and not out:
        raise first_error  # nothing readable: most likely not a ChatGPT export at all
    for raw, i, problem in skipped:
        _skipped(raw, i, problem, path, on_skip)
    return out


def _skipped(
    raw: Any, i: int, exc: ExportFormatError, path: object, on_skip: Callable[[str], None] | None
) -> None:
    name = ""
    if isinstance(raw, Mapping):
        title = raw.get("title")
        conv_id = raw.get("conversation_id") or raw.get("id")
        name = " ".join(f"{v!r}" for v in (title, conv_id) if isinstance(v, str) and v)
    text = f"skipped conversations[{i}]{' ' + name if name else ''}: {exc.where}: {exc.reason}"
    if on_skip is not None:
        on_skip(text)
    else:
        warnings.warn(
            SessionFileWarning(
                text if path is None else f"{path}: {text}", path=path, reason=exc.reason
            ),
            stacklevel=3,
        )


def import_chatgpt(
    export: str | os.PathLike[str] | Any,
    out_dir: str | os.PathLike[str],
    *,
    include_hidden: bool = False,
    cwd: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    strict: bool = False,
    on_skip: Callable[[str], None] | None = None,
    force: bool = False,
) -> list[Path]:
    """Write one Pi session file per conversation of a ChatGPT export into ``out_dir``.

    The same conversion as :func:`chatgpt_sessions`; the folder is created if
    needed; files are named by :attr:`ImportedSession.filename`.  Every conversation
    is converted before the first file is written, so a bad export writes nothing.
    ``on_progress(done, total)`` counts conversions and then writes (``total`` is
    twice the number of conversations).  Returns the paths written, in the export's
    order.  A file that exists already is never replaced unless ``force`` (then
    nothing is written: :class:`FileExistsError`).  ``strict`` and ``on_skip`` as in
    :func:`chatgpt_sessions`.  Cost: O(total number of nodes).
    """
    sessions = chatgpt_sessions(
        export,
        include_hidden=include_hidden,
        cwd=cwd,
        on_progress=halves(on_progress),
        strict=strict,
        on_skip=on_skip,
    )
    return write(sessions, out_dir, on_progress, force=force)
