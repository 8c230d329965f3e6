"""What the ChatGPT and Open WebUI importers share: both tools keep a conversation as a
tree of message nodes with a current node (see :mod:`ptree.formats.chatgpt` for what
becomes what); this module builds one session tree from such nodes and writes the
results.  Private to :mod:`ptree.formats`.
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

from ..entries import Entry, entry_from_json
from ..header import SessionHeader
from ..pi import dump
from ..pi.files import read_regular
from ..tree import SessionTree
from ._common import ZERO_USAGE
from .errors import ExportFormatError


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
class Node:
    """A message node of an export, reduced to what the tree needs."""

    id: str
    parent: str | None
    children: Sequence[str]
    fields: dict[str, Any] | None  # the entry's JSON without id/parentId; None: no entry


def iso(seconds: float) -> str:
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


def slug(text: str, limit: int) -> str:
    return re.sub(r"[\W_]+", "-", text.lower()).strip("-")[:limit].strip("-")


def filename(title: str | None, conversation_id: str, taken: set[str]) -> str:
    parts = [p for p in (slug(title or "", 48), slug(conversation_id, 8)) if p]
    stem = "-".join(parts) or "conversation"
    name, n = f"{stem}.jsonl", 1
    while name in taken:
        n += 1
        name = f"{stem}-{n}.jsonl"
    taken.add(name)
    return name


def build(
    nodes: dict[str, Node],
    current: str | None,
    *,
    title: str | None,
    created: float,
    source: dict[str, Any],
    cwd: str,
) -> SessionTree:
    """The session tree of one conversation's nodes.  O(n), iterative."""
    parent = {
        nid: (n.parent if n.parent in nodes and n.parent != nid else None)
        for nid, n in nodes.items()
    }
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

    if current not in nodes:
        # No current node: the newest edit or regeneration at every step, from the last
        # root; it may end on a node that gives no entry (a hidden one), whose nearest
        # ancestor that gives one is then the leaf.
        at = kids.get(None, [None])[-1]
        walked: set[str] = set()
        while at is not None and at not in walked and kids.get(at):
            walked.add(at)
            at = kids[at][-1]
        current = at
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
        entries.append(
            entry_from_json(
                {
                    "type": "session_info",
                    "id": name_id,
                    "parentId": None,
                    "timestamp": iso(created),
                    "name": title,
                }
            )
        )
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
            stack.extend((c, name_id) for c in push_order(kids.get(None, []), toward.get(None)))
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
            for cid in push_order(kids.get(nid, []), toward.get(nid)):
                stack.append((cid, anchor[nid]))
        # Nodes no root reaches sit on a cycle: the first of them becomes a root.
        if len(visited) < len(nodes):
            for nid in pending:
                if nid not in visited:
                    starts.append(nid)
                    break

    # A UUID derived from the conversation: the same export gives the same bytes.
    header = SessionHeader(
        id=str(
            uuid.uuid5(
                uuid.NAMESPACE_URL,
                "ptree-import:"
                + json.dumps([source.get("format"), source.get("conversationId"), created]),
            )
        ),
        timestamp=iso(created),
        cwd=cwd,
        extra={"importedFrom": source},
    )
    leaf: str | EllipsisType | None = ...
    if current in anchor:
        leaf = anchor[current] or name_id
        # Pi's CLI takes the last entry as the leaf (and misreads a leaf record).  When
        # the current node gives no entry (hidden), the leaf is its nearest ancestor
        # that does, which may have other branches below it: they go before it, so
        # that it is last.  Both readers accept a child before its parent.
        if leaf is not None and leaf != current and entries[-1].id != leaf:
            where = next(i for i, e in enumerate(entries) if e.id == leaf)
            entries.append(entries.pop(where))
    return SessionTree.from_entries(entries, leaf_id=leaf, header=header)


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


def push_order(children: list[str], last: str | None = None) -> list[str]:
    """Children in stack-push order: the one toward ``last`` first (popped last)."""
    rest = [c for c in reversed(children) if c != last]
    return ([last] if last is not None and last in children else []) + rest


def load_json(source: str | os.PathLike[str] | Any) -> tuple[Any, object]:
    """The parsed export and the path it came from (``None`` for data)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        data, _ = read_regular(path)  # a FIFO or a device is refused, not waited on
        try:
            return json.loads(data), path
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ExportFormatError(path, "file", f"not JSON: {exc}") from None
        except RecursionError:
            # json's parser recurses: nesting deeper than the stack allows is refused
            # here; a value too deep to store is refused (TooDeepError) when made.
            raise ExportFormatError(path, "file", "nested too deeply to read") from None
    return source, None


def need_mapping(value: Any, path: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ExportFormatError(path, where, f"expected an object, found {kind(value)}")
    return value


def kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def list_of(
    data: Any, path: object, what: str, single: Callable[[Mapping[str, Any]], bool]
) -> list[Any]:
    if isinstance(data, Mapping) and single(data):
        return [data]
    if not isinstance(data, list):
        raise ExportFormatError(path, what, f"expected a list of conversations, found {kind(data)}")
    return data


def halves(on_progress: Callable[[int, int], None] | None) -> Callable[[int, int], None] | None:
    """Reading is the first half of an import's progress, writing the second."""
    if on_progress is None:
        return None
    report = on_progress
    return lambda done, total: report(done, 2 * total)


def write(
    sessions: Sequence[ImportedSession],
    out_dir: str | os.PathLike[str],
    on_progress: Callable[[int, int], None] | None,
    *,
    force: bool = False,
) -> list[Path]:
    """Write each session into ``out_dir``; nothing is written if any file exists
    (unless ``force``)."""

    folder = Path(out_dir)
    if folder.exists() and not folder.is_dir():
        # mkdir would say "File exists", which reads as if a session file clashed.
        raise NotADirectoryError(20, "not a folder", str(folder))
    if not force:
        clash = [s.filename for s in sessions if os.path.lexists(folder / s.filename)]
        if clash:
            raise FileExistsError(
                17,
                f"{len(clash)} of the files to write exist already "
                f"(first: {clash[0]}); nothing written (force to overwrite)",
                str(folder / clash[0]),
            )
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    n = len(sessions)
    for i, session in enumerate(sessions):
        target = folder / session.filename
        dump(session.tree, target, overwrite=force)
        written.append(target)
        if on_progress is not None:
            on_progress(n + i + 1, 2 * n)
    return written
