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
  conversation's current node).  The header gets a new session id, the
  conversation's creation time, and ``importedFrom`` (format, conversation id,
  title).
- Entry ids are the tool's node ids; entry timestamps are the messages' times
  (the conversation's time when a message has none).  Entries are written
  parents first, and the branch of the current node last, so that Pi's CLI, which
  takes the last entry as the leaf, opens the same branch as ChatGPT shows.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import EllipsisType
from typing import Any

import attrs

from ._entries import Entry, entry_from_json
from ._errors import SessionError
from ._header import SessionHeader
from ._tree import SessionTree

__all__ = [
    "ExportFormatError",
    "ImportedSession",
    "chatgpt_sessions",
    "import_chatgpt",
    "import_openwebui",
    "openwebui_sessions",
]


class ExportFormatError(SessionError, ValueError):
    """An export file that is not in the format it was read as.

    Attributes:
        path: the file (``None`` when the export was given as data).
        where: where in the export, such as ``conversations[3].mapping``.
        reason: what is wrong there.
    """

    def __init__(self, path: object, where: str, reason: str) -> None:
        self.path = path
        self.where = where
        self.reason = reason
        prefix = "" if path is None else f"{path}: "
        super().__init__(f"{prefix}{where}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.path, self.where, self.reason))


@attrs.frozen
class ImportedSession:
    """One imported conversation.

    Attributes:
        conversation_id: the conversation's id in the tool it came from.
        title: its title, if it had one.
        filename: a safe, unique (within one import) file name, ``<title>-<id>.jsonl``.
        tree: the conversation as a session tree, leaf at its current node.
    """

    conversation_id: str
    title: str | None
    filename: str
    tree: SessionTree


# ------------------------------------------------------------------ shared machinery


@attrs.define
class _Node:
    """A message node of an export, reduced to what the tree needs."""

    id: str
    parent: str | None
    children: Sequence[str]
    fields: dict[str, Any] | None  # the entry's JSON without id/parentId; None: no entry


def _iso(seconds: float) -> str:
    ms = round(seconds * 1000)
    secs, milli = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{milli:03d}Z"


def _seconds(value: Any) -> float | None:
    """A Unix time as seconds; values that are plainly milliseconds are scaled."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value / 1000 if value > 1e11 else float(value)


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _user(text: str, seconds: float) -> dict[str, Any]:
    return {
        "type": "message",
        "timestamp": _iso(seconds),
        "message": {"role": "user", "content": [_text_block(text)],
                    "timestamp": round(seconds * 1000)},
    }


_ZERO_USAGE = {
    "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def _assistant(blocks: list[dict[str, Any]], seconds: float, *, api: str, provider: str,
               model: str) -> dict[str, Any]:
    return {
        "type": "message",
        "timestamp": _iso(seconds),
        "message": {
            "role": "assistant", "content": blocks, "api": api, "provider": provider,
            "model": model, "usage": _ZERO_USAGE, "stopReason": "stop",
            "timestamp": round(seconds * 1000),
        },
    }


def _custom_message(kind: str, text: str, seconds: float, *, display: bool,
                    details: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "custom_message", "timestamp": _iso(seconds), "customType": kind,
        "content": [_text_block(text)], "display": display,
    }
    if details is not None:
        out["details"] = details
    return out


def _slug(text: str, limit: int) -> str:
    return re.sub(r"[\W_]+", "-", text.lower()).strip("-")[:limit].strip("-")


def _filename(title: str | None, conversation_id: str, taken: set[str]) -> str:
    parts = [p for p in (_slug(title or "", 48), _slug(conversation_id, 8)) if p]
    stem = "-".join(parts) or "conversation"
    name, n = f"{stem}.jsonl", 1
    while name in taken:
        n += 1
        name = f"{stem}-{n}.jsonl"
    taken.add(name)
    return name


def _build(
    nodes: dict[str, _Node],
    current: str | None,
    *,
    title: str | None,
    created: float,
    source: dict[str, Any],
    cwd: str,
) -> SessionTree:
    """The session tree of one conversation's nodes.  O(n), iterative."""
    parent = {nid: (n.parent if n.parent in nodes and n.parent != nid else None)
              for nid, n in nodes.items()}
    # Children in the order the parent lists them, then any it forgot, in node order.
    kids: dict[str | None, list[str]] = {}
    listed: set[tuple[str, str]] = set()
    for nid, node in nodes.items():
        for cid in node.children:
            if cid in nodes and parent[cid] == nid and (nid, cid) not in listed:
                listed.add((nid, cid))
                kids.setdefault(nid, []).append(cid)
    for nid in nodes:
        p = parent[nid]
        if p is None or (p, nid) not in listed:
            kids.setdefault(p, []).append(nid)

    # The current node's ancestors, and for each of them the child towards it.
    toward: dict[str | None, str] = {}
    seen: set[str] = set()
    node_id = current if current in nodes else None
    while node_id is not None and node_id not in seen:
        seen.add(node_id)
        toward[parent[node_id]] = node_id
        node_id = parent[node_id]

    name_id = None
    if title:
        name_id = "session-name"
        while name_id in nodes:
            name_id += "_"
    entries: list[Entry] = []
    if name_id is not None:
        entries.append(entry_from_json({"type": "session_info", "id": name_id,
                                        "parentId": None, "timestamp": _iso(created),
                                        "name": title}))
    anchor: dict[str, str | None] = {}  # nearest ancestor-or-self that gives an entry
    visited: set[str] = set()
    starts: list[str | None] = [None]
    pending = iter(nodes)
    while starts:
        top = starts.pop()
        # A depth-first walk; the child toward the current node is pushed first,
        # so its subtree comes last and the current node ends the file.
        stack: list[tuple[str, str | None]] = []
        if top is None:
            stack.extend((c, name_id) for c in _push_order(kids.get(None, []), toward.get(None)))
        else:
            stack.append((top, name_id))
        while stack:
            nid, above = stack.pop()
            if nid in visited:
                continue
            visited.add(nid)
            node = nodes[nid]
            if node.fields is not None:
                obj = dict(node.fields, id=nid, parentId=above)
                entries.append(entry_from_json(obj))
                anchor[nid] = nid
            else:
                anchor[nid] = above
            for cid in _push_order(kids.get(nid, []), toward.get(nid)):
                stack.append((cid, anchor[nid]))
        # Nodes no root reaches sit on a cycle: the first of them becomes a root.
        if len(visited) < len(nodes):
            for nid in pending:
                if nid not in visited:
                    starts.append(nid)
                    break

    header = SessionHeader(
        id=str(uuid.uuid4()), timestamp=_iso(created), cwd=cwd,
        extra={"importedFrom": source},
    )
    leaf: str | EllipsisType | None = ...
    if current in anchor:
        leaf = anchor[current] or name_id
    return SessionTree.from_entries(entries, leaf_id=leaf, header=header)


def _node_id(given: Any, key: str, taken: Mapping[str, Any]) -> str:
    """A node's id: the one it gives, else its key in the export; never one already taken.

    The key and the id agree in real exports.  When they do not, and two nodes give
    the same id, the second would silently replace the first: it keeps its key
    instead (made unique with ``_`` if even that is taken).
    """
    nid = given if isinstance(given, str) and given and given not in taken else key
    while nid in taken or not nid:
        nid += "_"
    return nid


def _push_order(children: list[str], last: str | None = None) -> list[str]:
    """Children in stack-push order: the one toward ``last`` first (popped last)."""
    rest = [c for c in reversed(children) if c != last]
    return ([last] if last is not None and last in children else []) + rest


def _load_json(source: str | os.PathLike[str] | Any) -> tuple[Any, object]:
    """The parsed export and the path it came from (``None`` for data)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            with path.open("rb") as f:
                return json.load(f), path
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ExportFormatError(path, "file", f"not JSON: {exc}") from None
    return source, None


def _need_mapping(value: Any, path: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ExportFormatError(path, where, f"expected an object, found {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(
        type(value), type(value).__name__)


def _list_of(data: Any, path: object, what: str,
             single: Callable[[Mapping[str, Any]], bool]) -> list[Any]:
    if isinstance(data, Mapping) and single(data):
        return [data]
    if not isinstance(data, list):
        raise ExportFormatError(path, what, f"expected a list of conversations, found "
                                            f"{_kind(data)}")
    return data


def _halves(on_progress: Callable[[int, int], None] | None
            ) -> Callable[[int, int], None] | None:
    """Reading is the first half of an import's progress, writing the second."""
    if on_progress is None:
        return None
    report = on_progress
    return lambda done, total: report(done, 2 * total)


def _write(sessions: Sequence[ImportedSession], out_dir: str | os.PathLike[str],
           on_progress: Callable[[int, int], None] | None) -> list[Path]:
    from ._storage import dump  # here: the storage module imports the package back

    folder = Path(out_dir)
    if folder.exists() and not folder.is_dir():
        # mkdir would say "File exists", which reads as if a session file clashed.
        raise NotADirectoryError(20, "not a folder", str(folder))
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    n = len(sessions)
    for i, session in enumerate(sessions):
        target = folder / session.filename
        dump(session.tree, target)
        written.append(target)
        if on_progress is not None:
            on_progress(n + i + 1, 2 * n)
    return written


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
    for key in ("text", "result"):
        if isinstance(content.get(key), str):
            pieces.append(content[key])
    if content.get("content_type") == "reasoning_recap" and isinstance(
            content.get("content"), str):
        thoughts.append(content["content"])
    for thought in content.get("thoughts") or ():
        if isinstance(thought, Mapping) and isinstance(thought.get("content"), str):
            thoughts.append(thought["content"])
    return "\n".join(p for p in pieces if p), thoughts


def _chatgpt_fields(message: Mapping[str, Any], default_time: float, default_model: str,
                    include_hidden: bool) -> dict[str, Any] | None:
    meta = message.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    author = message.get("author")
    author = author if isinstance(author, Mapping) else {}
    role = author.get("role")
    seconds = _seconds(message.get("create_time"))
    seconds = default_time if seconds is None else seconds
    text, thoughts = _chatgpt_content(message.get("content"))
    if meta.get("is_visually_hidden_from_conversation") is True:
        if not include_hidden:
            return None
        return {"type": "custom", "timestamp": _iso(seconds), "customType": "chatgpt.hidden",
                "data": {"role": role, "text": text}}
    if role == "user":
        return _user(text, seconds)
    if role == "assistant":
        blocks = [{"type": "thinking", "thinking": t} for t in thoughts]
        if text or not blocks:
            blocks.append(_text_block(text))
        model = meta.get("model_slug")
        return _assistant(blocks, seconds, api="chatgpt-export", provider="openai",
                          model=model if isinstance(model, str) and model else default_model)
    if role == "tool":
        if not text:
            return None
        name = author.get("name")
        return _custom_message("chatgpt.tool", text, seconds, display=True,
                               details={"name": name if isinstance(name, str) else None})
    if not text.strip():
        return None  # an empty system (or unknown-role) node says nothing
    return _custom_message(f"chatgpt.{role if isinstance(role, str) else 'system'}", text,
                           seconds, display=False)


def _chatgpt_conversation(conv: Mapping[str, Any], path: object, where: str, number: int,
                          cwd: str, include_hidden: bool) -> tuple[str, str | None, SessionTree]:
    mapping = _need_mapping(conv.get("mapping"), path, f"{where}.mapping")
    conv_id = conv.get("conversation_id") or conv.get("id")
    conv_id = conv_id if isinstance(conv_id, str) and conv_id else str(number)
    title = conv.get("title") if isinstance(conv.get("title"), str) else None
    created = _seconds(conv.get("create_time"))
    if created is None:
        times = [_seconds(n.get("message", {}).get("create_time"))
                 for n in mapping.values()
                 if isinstance(n, Mapping) and isinstance(n.get("message"), Mapping)]
        created = min((t for t in times if t is not None), default=0.0)
    default_model = conv.get("default_model_slug")
    default_model = default_model if isinstance(default_model, str) else "unknown"
    nodes: dict[str, _Node] = {}
    for key, raw in mapping.items():
        node = _need_mapping(raw, path, f"{where}.mapping[{key!r}]")
        nid = _node_id(node.get("id"), key, nodes)
        parent = node.get("parent")
        children = node.get("children")
        message = node.get("message")
        if message is not None and not isinstance(message, Mapping):
            raise ExportFormatError(path, f"{where}.mapping[{key!r}].message",
                                    f"expected an object or null, found {_kind(message)}")
        fields = None if message is None else _chatgpt_fields(
            message, created, default_model, include_hidden)
        nodes[nid] = _Node(
            nid,
            parent if isinstance(parent, str) else None,
            [c for c in children if isinstance(c, str)] if isinstance(children, list) else [],
            fields,
        )
    current = conv.get("current_node")
    source = {"format": "chatgpt", "conversationId": conv_id, "title": title}
    tree = _build(nodes, current if isinstance(current, str) else None, title=title,
                  created=created, source=source, cwd=cwd)
    return conv_id, title, tree


def chatgpt_sessions(
    export: str | os.PathLike[str] | Any,
    *,
    include_hidden: bool = False,
    cwd: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
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

    Raises:
        ExportFormatError: (a ``ValueError``) the file is not JSON or not a ChatGPT
            export; the error says where.
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
    data, path = _load_json(export)
    convs = _list_of(data, path, "conversations", lambda d: "mapping" in d)
    cwd = os.getcwd() if cwd is None else cwd
    taken: set[str] = set()
    out: list[ImportedSession] = []
    for i, raw in enumerate(convs):
        conv = _need_mapping(raw, path, f"conversations[{i}]")
        conv_id, title, tree = _chatgpt_conversation(conv, path, f"conversations[{i}]", i + 1,
                                                     cwd, include_hidden)
        out.append(ImportedSession(conv_id, title, _filename(title, conv_id, taken), tree))
        if on_progress is not None:
            on_progress(i + 1, len(convs))
    return out


def import_chatgpt(
    export: str | os.PathLike[str] | Any,
    out_dir: str | os.PathLike[str],
    *,
    include_hidden: bool = False,
    cwd: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[Path]:
    """Write one Pi session file per conversation of a ChatGPT export into ``out_dir``.

    The same conversion as :func:`chatgpt_sessions`; the folder is created if
    needed; files are named by :attr:`ImportedSession.filename`.  Every conversation
    is converted before the first file is written, so a bad export writes nothing.
    ``on_progress(done, total)`` counts conversions and then writes (``total`` is
    twice the number of conversations).  Returns the paths written, in the export's
    order.  Cost: O(total number of nodes).
    """
    sessions = chatgpt_sessions(export, include_hidden=include_hidden, cwd=cwd,
                                on_progress=_halves(on_progress))
    return _write(sessions, out_dir, on_progress)


# ------------------------------------------------------------------ Open WebUI


def _openwebui_fields(message: Mapping[str, Any], default_time: float) -> dict[str, Any] | None:
    role = message.get("role")
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    if isinstance(content, list):  # some versions keep OpenAI-style content parts
        text = "\n".join(p["text"] for p in content
                         if isinstance(p, Mapping) and isinstance(p.get("text"), str))
    seconds = _seconds(message.get("timestamp"))
    seconds = default_time if seconds is None else seconds
    if role == "user":
        return _user(text, seconds)
    if role == "assistant":
        model = message.get("model")
        return _assistant([_text_block(text)], seconds, api="openwebui-export",
                          provider="openwebui",
                          model=model if isinstance(model, str) and model else "unknown")
    if not text.strip():
        return None
    return _custom_message(f"openwebui.{role if isinstance(role, str) else 'system'}", text,
                           seconds, display=False)


def _openwebui_conversation(item: Mapping[str, Any], path: object, where: str,
                            number: int, cwd: str) -> tuple[str, str | None, SessionTree]:
    chat = _need_mapping(item.get("chat", item), path, f"{where}.chat")
    history = _need_mapping(chat.get("history"), path, f"{where}.chat.history")
    messages = _need_mapping(history.get("messages"), path, f"{where}.chat.history.messages")
    conv_id = item.get("id") or chat.get("id")
    conv_id = conv_id if isinstance(conv_id, str) and conv_id else str(number)
    title = item.get("title") or chat.get("title")
    title = title if isinstance(title, str) and title else None
    created = _seconds(item.get("created_at"))
    if created is None:
        created = _seconds(chat.get("timestamp"))
    if created is None:
        times = [_seconds(m.get("timestamp")) for m in messages.values()
                 if isinstance(m, Mapping)]
        created = min((t for t in times if t is not None), default=0.0)
    nodes: dict[str, _Node] = {}
    for key, raw in messages.items():
        message = _need_mapping(raw, path, f"{where}.chat.history.messages[{key!r}]")
        nid = _node_id(message.get("id"), key, nodes)
        parent = message.get("parentId")
        children = message.get("childrenIds")
        nodes[nid] = _Node(
            nid,
            parent if isinstance(parent, str) else None,
            [c for c in children if isinstance(c, str)] if isinstance(children, list) else [],
            _openwebui_fields(message, created),
        )
    current = history.get("currentId")
    source = {"format": "openwebui", "conversationId": conv_id, "title": title}
    tree = _build(nodes, current if isinstance(current, str) else None, title=title,
                  created=created, source=source, cwd=cwd)
    return conv_id, title, tree


def openwebui_sessions(
    export: str | os.PathLike[str] | Any,
    *,
    cwd: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[ImportedSession]:
    """Read an Open WebUI chat export: one session per chat.

    The export is a list of chats (``{"id", "title", "chat": {"history":
    {"messages": {id: {"parentId", "childrenIds", "role", "content",
    "timestamp", "model"?}}, "currentId"}}, "created_at"}``), or one chat.
    Every branch is kept; the leaf is ``currentId``.

    Cost: O(total number of messages).

    Raises:
        ExportFormatError: (a ``ValueError``) not JSON, or not an Open WebUI export.
        OSError: the file cannot be read.

    >>> chat = {"id": "c1", "title": "Hi", "created_at": 0, "chat": {"history": {
    ...     "currentId": "m2", "messages": {
    ...         "m1": {"id": "m1", "parentId": None, "childrenIds": ["m2"],
    ...                "role": "user", "content": "hello", "timestamp": 1},
    ...         "m2": {"id": "m2", "parentId": "m1", "childrenIds": [],
    ...                "role": "assistant", "content": "hi!", "timestamp": 2,
    ...                "model": "llama3"}}}}}
    >>> [s] = openwebui_sessions([chat], cwd="/")
    >>> s.filename, s.tree.leaf.message["model"], len(s.tree)
    ('hi-c1.jsonl', 'llama3', 3)
    """
    data, path = _load_json(export)
    chats = _list_of(data, path, "chats", lambda d: "chat" in d or "history" in d)
    cwd = os.getcwd() if cwd is None else cwd
    taken: set[str] = set()
    out: list[ImportedSession] = []
    for i, raw in enumerate(chats):
        item = _need_mapping(raw, path, f"chats[{i}]")
        conv_id, title, tree = _openwebui_conversation(item, path, f"chats[{i}]", i + 1, cwd)
        out.append(ImportedSession(conv_id, title, _filename(title, conv_id, taken), tree))
        if on_progress is not None:
            on_progress(i + 1, len(chats))
    return out


def import_openwebui(
    export: str | os.PathLike[str] | Any,
    out_dir: str | os.PathLike[str],
    *,
    cwd: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[Path]:
    """Write one Pi session file per chat of an Open WebUI export into ``out_dir``.

    The same conversion as :func:`openwebui_sessions`, and the same writing as
    :func:`import_chatgpt` (nothing written for a bad export; progress counts
    conversions, then writes).  Returns the paths written.
    Cost: O(total number of messages).
    """
    sessions = openwebui_sessions(export, cwd=cwd, on_progress=_halves(on_progress))
    return _write(sessions, out_dir, on_progress)
