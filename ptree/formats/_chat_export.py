"""What the ChatGPT and Open WebUI importers share beyond the framework: both tools keep
a conversation as a tree of message nodes, each listing its children, with a current
node (see :mod:`ptree.formats.chatgpt` for what becomes what), and both export a list
of conversations.  The tree itself is built by :func:`._common.assemble`.  Private to
:mod:`ptree.formats`.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from ..tree import SessionTree
from ._common import (
    ZERO_USAGE,
    ImportedSession,
    Node,
    Report,
    assemble,
    filename,
    imported_header,
    kind,
    load_document,
    reporter,
)
from .errors import ImportFormatError


@attrs.frozen
class Conversation:
    """One conversation of an export, as a format reads it, for :func:`conversation_tree`.

    Attributes:
        id: its id (its number in the export when it has none).
        title: its title, if any.
        created: its time, Unix seconds.
        nodes: its message nodes, ``{key: node}``; ``where`` names them in errors.
        links: the names of a node's parent and children fields.
        fields: ``fields(node, where)`` gives a node's entry JSON (``None``: no entry;
            a list: a chain of entries, the node's children below the last, such as
            an answer split at its tool calls and their results).
        current: the node the tool shows (the leaf), as the export gives it.
    """

    id: str
    title: str | None
    created: float
    nodes: Mapping[str, Any]
    where: str
    links: tuple[str, str]
    fields: Callable[[Mapping[str, Any], str], dict[str, Any] | list[dict[str, Any]] | None]
    current: object


#: What reads one conversation: (conversation, path, where, number, report) to its
#: description.
Convert = Callable[[Mapping[str, Any], object, str, int, Report], Conversation]


def iso(seconds: float) -> str:
    """The ISO time Pi writes (milliseconds, ``Z``) of a Unix time in seconds."""
    ms = round(seconds * 1000)
    secs, milli = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{milli:03d}Z"


def to_seconds(value: Any) -> float | None:
    """A Unix time as seconds; values that are plainly milliseconds are scaled."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value / 1000 if value > 1e11 else float(value)


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def user(text: str, seconds: float) -> dict[str, Any]:
    return {
        "type": "message",
        "timestamp": iso(seconds),
        "message": {
            "role": "user",
            "content": [text_block(text)],
            "timestamp": round(seconds * 1000),
        },
    }


def assistant(
    blocks: list[dict[str, Any]], seconds: float, *, api: str, provider: str, model: str
) -> dict[str, Any]:
    return {
        "type": "message",
        "timestamp": iso(seconds),
        "message": {
            "role": "assistant",
            "content": blocks,
            "api": api,
            "provider": provider,
            "model": model,
            "usage": ZERO_USAGE,
            "stopReason": "stop",
            "timestamp": round(seconds * 1000),
        },
    }


def custom_message(
    kind: str, text: str, seconds: float, *, display: bool, details: Any = None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "custom_message",
        "timestamp": iso(seconds),
        "customType": kind,
        "content": [text_block(text)],
        "display": display,
    }
    if details is not None:
        out["details"] = details
    return out


def node_id(given: Any, key: str, taken: Mapping[str, Any]) -> str:
    """A node's id: the one it gives, else its key in the export; never one already taken.

    The key and the id agree in real exports.  When they do not, and two nodes give
    the same id, the second would silently replace the first: it keeps its key
    instead (made unique with ``_`` if even that is taken).
    """
    nid = given if isinstance(given, str) and given and given not in taken else key
    while nid in taken or not nid:
        nid += "_"
    return nid


def need_mapping(value: Any, path: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ImportFormatError(path, None, f"expected an object, found {kind(value)}", where=where)
    return value


def conversation_tree(fmt: str, conv: Conversation, path: object, cwd: str) -> SessionTree:
    """The session tree of one conversation.

    Siblings come in the order their parent lists them, then any it forgot, in node
    order; the title is a ``session_info`` root above the whole conversation; the
    current node is the leaf.  The header's id is a UUID derived from the
    conversation, so the same export gives the same bytes.  O(n), iterative.

    Raises:
        ImportFormatError: a node that is not an object (or that ``conv.fields``
            refuses).
    """
    parent_key, children_key = conv.links
    by_id: dict[str, Node] = {}
    children: dict[str, list[str]] = {}
    chains: dict[str, list[dict[str, Any]]] = {}
    for key, raw in conv.nodes.items():
        at = f"{conv.where}[{key!r}]"
        item = need_mapping(raw, path, at)
        nid = node_id(item.get("id"), key, by_id)
        parent = item.get(parent_key)
        listed = item.get(children_key)
        made = conv.fields(item, at)
        if isinstance(made, list):
            chains[nid] = made[1:]
            made = made[0] if made else None
        by_id[nid] = Node(
            nid,
            made,
            path,
            None,
            nid,
            parent=parent if isinstance(parent, str) else None,
            where=at,
        )
        children[nid] = (
            [c for c in listed if isinstance(c, str)] if isinstance(listed, list) else []
        )
    nodes = list(by_id.values())
    rank: dict[str, int] = {}
    for n in nodes:
        for i, cid in enumerate(children.get(n.id, ())):
            child = by_id.get(cid)
            if child is not None and cid != n.id and child.parent == n.id and cid not in rank:
                rank[cid] = i
    ordered = sorted(
        nodes, key=lambda n: (0, rank[n.id]) if n.id in rank else (1, 0)
    )  # stable: the unlisted keep node order
    # A chain's entries follow its node (ids <id>#2, #3 …); its children hang below the last.
    tail: dict[str, str] = {}
    for nid, more in chains.items():
        head = by_id[nid]
        for k, fields in enumerate(more, 2):
            wanted = f"{nid}#{k}"
            while wanted in by_id or wanted in conv.nodes:
                wanted += "_"
            link = Node(wanted, fields, path, None, nid, parent=head.id, where=head.where)
            by_id[wanted] = head = link
            ordered.append(link)
        tail[nid] = head.id
    for node in nodes:
        if node.parent in tail:
            node.parent = tail[node.parent]
    title, created = conv.title, conv.created
    source = {"format": fmt, "conversationId": conv.id, "title": title}
    above = None
    if title:
        name_id = "session-name"
        while name_id in by_id:
            name_id += "_"
        above = Node(
            name_id, {"type": "session_info", "timestamp": iso(created), "name": title}, None, None
        )
    # A UUID derived from the conversation: the same export gives the same bytes.
    session_id = str(
        uuid.uuid5(
            uuid.NAMESPACE_URL,
            "ptree-import:"
            + json.dumps([source.get("format"), source.get("conversationId"), created]),
        )
    )
    header = imported_header(session_id, iso(created), cwd, source)
    leaf = conv.current if isinstance(conv.current, str) else None
    leaf = tail.get(leaf, leaf) if leaf is not None else None
    return assemble(ordered, leaf, header, above=above, break_cycles=True)


@attrs.frozen
class ExportFormat:
    """A format whose exports list conversations (ChatGPT, Open WebUI): how to find
    them and read each.

    Attributes:
        name: the importer's name.
        listed: what the list is called in errors (``conversations``, ``chats``).
        single: whether a document is one conversation rather than a list.
        convert: what reads one conversation.
    """

    name: str
    listed: str
    single: Callable[[Mapping[str, Any]], bool]
    convert: Convert

    def sessions(
        self,
        source: str | os.PathLike[str] | Any,
        *,
        on_report: Report | None,
        strict: bool,
        cwd: str | None,
    ) -> Iterator[ImportedSession]:
        """See :func:`export_sessions`."""
        return export_sessions(self, source, on_report=on_report, strict=strict, cwd=cwd)


def export_sessions(
    fmt: ExportFormat,
    source: str | os.PathLike[str] | Any,
    *,
    on_report: Report | None,
    strict: bool,
    cwd: str | None,
) -> Iterator[ImportedSession]:
    """One session per conversation of an export, converted as the iterator is read.

    The document is read (and checked to be a list of conversations, or one) before
    this returns.  A conversation that cannot be read is skipped and reported (named
    by its place, title and id), unless ``strict``; when none can be read, the
    first one's error is raised: most likely the file is not this format at all.

    Raises:
        ImportFormatError: not JSON, not a list of conversations; later, while
            iterating, a broken conversation (``strict``) or no readable one.
    """
    listed, single, convert = fmt.listed, fmt.single, fmt.convert
    data, path = load_document(source)
    if isinstance(data, Mapping) and single(data):
        convs: list[Any] = [data]
    elif isinstance(data, list):
        convs = data
    else:
        raise ImportFormatError(
            path, None, f"expected a list of conversations, found {kind(data)}", where=listed
        )
    report = reporter(on_report, path, stacklevel=4)
    cwd = os.getcwd() if cwd is None else cwd

    def each() -> Iterator[ImportedSession]:
        taken: set[str] = set()
        skipped: list[tuple[Any, str, ImportFormatError]] = []
        made = 0
        for i, raw in enumerate(convs):
            where = f"{listed}[{i}]"
            try:
                conv = convert(need_mapping(raw, path, where), path, where, i + 1, report)
                tree = conversation_tree(fmt.name, conv, path, cwd)
            except ImportFormatError as exc:
                if strict:
                    raise
                skipped.append((raw, where, exc))
                continue
            made += 1
            name = filename(conv.title, conv.id, taken)
            yield ImportedSession(fmt.name, conv.id, conv.title, name, tree)
        if skipped and not made:
            raise skipped[0][2]  # nothing readable: most likely not this format at all
        for raw, where, problem in skipped:
            report(_skipped(raw, where, problem))

    return each()


def _skipped(raw: Any, where: str, exc: ImportFormatError) -> str:
    name = ""
    if isinstance(raw, Mapping):
        title = raw.get("title")
        conv_id = raw.get("conversation_id") or raw.get("id")
        name = " ".join(f"{v!r}" for v in (title, conv_id) if isinstance(v, str) and v)
    place = exc.where or where
    return f"skipped {where}{' ' + name if name else ''}: {place}: {exc.reason}"
