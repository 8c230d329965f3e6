"""The importer framework every reader of :mod:`ptree.formats` shares.

Strict JSON reading (:func:`read_json_lines`, :func:`read_json_document`), ids, the
one tree builder (the readers build plain :class:`Node` values, an entry's JSON and
where it came from, and :func:`assemble` turns them into a tree whose file form Pi
reads as ptree does), and the shape every importer has: ``read(src, *,
on_report=None, ...) -> ImportedSession`` and ``sessions(src, *, on_report=None,
...) -> Iterator[ImportedSession]``, written by :func:`write_sessions`.  Private to
the package, which exports :class:`ImportedSession` and :func:`write_sessions`.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import msgspec

from ..context import iso_to_ms
from ..entries import Entry, MessageEntry, entry_from_json
from ..errors import SessionError
from ..frozen import FrozenDict, freeze, frozen_dict_unchecked
from ..header import SessionHeader
from ..pi.errors import SessionFileError, SessionFileWarning
from ..pi.files import read_regular
from ..pi.lines import BATCH_KEY
from ..tree import SessionTree, TreeBuilder
from .errors import ImportFormatError

__all__ = [
    "EPOCH",
    "ZERO_USAGE",
    "Ids",
    "ImportedSession",
    "Node",
    "Report",
    "assemble",
    "call_arguments",
    "collector_paused",
    "entry_of",
    "filename",
    "imported",
    "imported_header",
    "kind",
    "load_document",
    "message_entry",
    "ms",
    "ms_of_text",
    "only",
    "parse_deep_json",
    "parse_json",
    "plain_message_entry",
    "push_order",
    "read_json_document",
    "read_json_lines",
    "reporter",
    "session_filename",
    "text_blocks",
    "text_of",
    "title_node",
    "tool_result",
    "write_sessions",
]

EPOCH = "1970-01-01T00:00:00.000Z"
EMPTY = FrozenDict()

#: Called with one line of text for each thing a reader left out or changed.
Report = Callable[[str], None]

ZERO_USAGE: dict[str, Any] = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 0,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value - value != 0.0:
        raise ValueError(f"the number {text} is out of range (it reads as infinity)")
    return value


_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)
# Strict JSON, about twice as fast as json: it refuses all that _DECODER refuses (NaN,
# numbers out of range, bad UTF-8, trailing text) and a few things _DECODER reads
# (a lone surrogate escape, very deep nesting): each refusal goes to _DECODER.
_FAST = msgspec.json.Decoder()


def parse_json(text: str) -> Any:
    """One JSON value; ``ValueError`` with a reason.  Deep nesting is an error, not a crash.

    Read by msgspec first (a tool call's arguments, mostly short: about 4x faster than
    the json module there); what it refuses goes to the careful reader.  O(len(text)).
    """
    try:
        return _FAST.decode(text)
    except (msgspec.DecodeError, RecursionError, UnicodeEncodeError):
        pass  # the careful path below says what is wrong (or reads what msgspec refuses)
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise ValueError("nested too deeply to read") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at column {exc.colno})") from None


_TOKEN = re.compile(
    r'[ \t\n\r]*(?:(?P<punct>[{}\[\],:])|(?P<string>"(?:[^"\\\x00-\x1f]|\\.)*")'
    r"|(?P<number>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"
    r"|(?P<word>true|false|null))"
)
_WORDS: dict[str, Any] = {"true": True, "false": False, "null": None}


def _string(token: str, at: int) -> str:
    try:
        value: str = json.loads(token)
    except ValueError as exc:
        raise ValueError(f"not JSON (a bad string at character {at}: {exc})") from None
    return value


def parse_deep_json(text: str) -> Any:
    """A JSON document of any depth, parsed with an explicit stack (no recursion).

    The fallback for documents the C decoder refuses as too deep, such as a
    LibreChat export of a long conversation, which nests every reply inside the
    message before it.  Strings and numbers are decoded by :mod:`json` one token at
    a time.  Several times slower than :func:`json.loads`; O(length).

    Raises:
        ValueError: not JSON, with the character position.

    >>> parse_deep_json('{"a": [1, 2.5, "x", null, {"b": true}]}')
    {'a': [1, 2.5, 'x', None, {'b': True}]}
    """
    # States: what may come next.
    value, value_or_close, key, key_or_close, colon, after = range(6)
    stack: list[list[Any]] = []  # [container, pending key]
    state = value
    root: Any = None
    pos = 0
    while True:
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip(" \t\n\r") == "" and state == after and not stack:
                return root
            raise ValueError(f"not JSON (unexpected text at character {pos + 1})")
        at = m.start(m.lastindex or 0) + 1
        pos = m.end()
        punct, string, number, word = m.group("punct", "string", "number", "word")
        item: Any
        if state in (value, value_or_close):
            if punct == "{":
                stack.append([{}, None])
                state = key_or_close
                continue
            if punct == "[":
                stack.append([[], None])
                state = value_or_close
                continue
            if punct == "]" and state == value_or_close:
                item = stack.pop()[0]
            elif string is not None:
                item = _string(string, at)
            elif number is not None:
                item = _finite(number) if any(c in number for c in ".eE") else int(number)
            elif word is not None:
                item = _WORDS[word]
            else:
                raise ValueError(f"not JSON (a value expected at character {at})")
        elif state in (key, key_or_close):
            if string is not None:
                stack[-1][1] = _string(string, at)
                state = colon
                continue
            if punct == "}" and state == key_or_close:
                item = stack.pop()[0]
            else:
                raise ValueError(f"not JSON (a key expected at character {at})")
        elif state == colon:
            if punct != ":":
                raise ValueError(f"not JSON (':' expected at character {at})")
            state = value
            continue
        else:  # after a value
            if not stack:
                raise ValueError(f"not JSON (extra data at character {at})")
            top = stack[-1][0]
            if punct == ",":
                state = key if isinstance(top, dict) else value
                continue
            if punct == ("}" if isinstance(top, dict) else "]"):
                item = stack.pop()[0]
            else:
                raise ValueError(f"not JSON (',' or a closing bracket expected at character {at})")
        if not stack:
            root = item
        elif isinstance(stack[-1][0], list):
            stack[-1][0].append(item)
        else:
            stack[-1][0][stack[-1][1]] = item
        state = after


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for the whole of an import, as :func:`ptree.load`
    pauses it: an import makes hundreds of thousands of objects, none of them garbage, and
    each collection of the older generations would walk them all again (measured on a
    LibreChat export of 20,000 messages: a third of the import's time or more)."""
    if not gc.isenabled():
        yield  # the caller's pause holds
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def kind(value: object) -> str:
    """How a JSON value is named in error messages."""
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


def read_source(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a source file, which must be a regular file.

    A FIFO would make the import wait for a writer forever, a device like
    ``/dev/zero`` would fill the memory: anything but a regular file is refused
    before a byte is read (as :func:`ptree.load` refuses it).  O(size of the file).

    Raises:
        ImportFormatError: not a regular file (naming what it is).
        IsADirectoryError: a folder.
        OSError: it cannot be opened or read.
    """
    try:
        data, _ = read_regular(path)
    except SessionFileError as exc:
        raise ImportFormatError(path, None, exc.reason) from None
    return data


def read_json_lines(path: str | os.PathLike[str]) -> list[tuple[int, dict[str, Any]]]:
    """Every record of a JSON Lines file with its 1-based line number; blank lines skipped.

    Strict: a line that is not UTF-8, not JSON or not an object raises.  A last line
    without its newline that is not JSON is reported as torn (a file still being
    written).  Cost: O(size of the file).

    Raises:
        ImportFormatError: naming the file and the line (or not a regular file).
        OSError: the file cannot be read.
    """
    data = read_source(path)
    pieces = data.split(b"\n")
    unterminated = len(pieces) - 1  # index of the piece after the last newline
    out: list[tuple[int, dict[str, Any]]] = []
    for i, raw in enumerate(pieces):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if i == 0 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        try:
            value = _FAST.decode(raw)
        except (msgspec.DecodeError, RecursionError):
            pass  # the careful path below says what is wrong (or reads what msgspec refuses)
        else:
            if isinstance(value, dict):
                out.append((i + 1, value))
                continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if i == unterminated:
                raise ImportFormatError(
                    path, i + 1, "torn last line (cut off in the middle of a character)"
                ) from None
            raise ImportFormatError(
                path, i + 1, f"not UTF-8 (bad byte at column {exc.start + 1})"
            ) from None
        try:
            value = parse_json(text)
        except ValueError as exc:
            if i == unterminated:
                raise ImportFormatError(
                    path, i + 1, f"torn last line (cut off mid-record: {exc})"
                ) from None
            raise ImportFormatError(path, i + 1, str(exc)) from None
        if not isinstance(value, dict):
            raise ImportFormatError(path, i + 1, f"expected a JSON object, found {kind(value)}")
        out.append((i + 1, value))
    return out


def read_json_document(path: str | os.PathLike[str]) -> Any:
    """A whole-file JSON document (an export).

    Raises:
        ImportFormatError: not UTF-8 or not JSON (with the line of the error), or not
            a regular file.
        OSError: the file cannot be read.
    """
    data = read_source(path)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return _FAST.decode(data)
    except (msgspec.DecodeError, RecursionError):
        pass  # the careful path below says what is wrong (or reads what msgspec refuses)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ImportFormatError(path, line, "not UTF-8") from None
    try:
        return _DECODER.decode(text)
    except RecursionError:
        pass  # deeper than the C decoder goes: parse it with an explicit stack
    except json.JSONDecodeError as exc:
        raise ImportFormatError(
            path, exc.lineno, f"not JSON ({exc.msg} at column {exc.colno})"
        ) from None
    except ValueError as exc:
        raise ImportFormatError(path, None, str(exc)) from None
    try:
        return parse_deep_json(text)
    except ValueError as exc:
        raise ImportFormatError(path, None, str(exc)) from None


def ms(timestamp: object) -> int:
    """Unix milliseconds of an ISO time; 0 when it is not one.

    Records written in one second share their time: each text is converted once
    (a cache keyed by the text, as the result depends on nothing else).
    """
    return _ms(timestamp) if isinstance(timestamp, str) else 0


@functools.lru_cache(maxsize=4096)
def _ms(timestamp: str) -> int:
    value = iso_to_ms(timestamp)
    return 0 if value is None else value


ms_of_text = _ms
""":func:`ms` of a string, through the same cache: for a reader in C, which checks the
type itself."""


def text_blocks(text: str) -> list[dict[str, Any]]:
    """One Pi text block."""
    return [{"type": "text", "text": text}]


def text_of(content: object) -> str:
    """The text of a string or of a list of text blocks (others skipped), joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


def call_arguments(args: object) -> dict[str, Any]:
    """A tool call's arguments as a Pi toolCall block holds them: an object as it is,
    a JSON text of an object parsed, anything else (a text that is not one included)
    as ``{"input": args}``.  O(len(args)).

    >>> call_arguments('{"a": 1}'), call_arguments("ls -l"), call_arguments([1])
    ({'a': 1}, {'input': 'ls -l'}, {'input': [1]})
    """
    if isinstance(args, str):
        try:
            parsed = parse_json(args)
        except ValueError:
            parsed = None
        return parsed if isinstance(parsed, dict) else {"input": args}
    return args if isinstance(args, dict) else {"input": args}


def tool_result(
    call_id: str, name: str, content: list[dict[str, Any]], is_error: bool, timestamp: int
) -> dict[str, Any]:
    """A Pi ``toolResult`` message, its fields in the order Pi writes them.  O(1)."""
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": content,
        "isError": is_error,
        "timestamp": timestamp,
    }


class Ids:
    """Hands out unique entry ids, deterministically: a taken id gets ``~2``, ``~3``, …"""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def claim(self, wanted: str) -> str:
        """``wanted`` if free, else the first free ``wanted~n``.  O(1) amortised."""
        if wanted and wanted not in self.taken:
            self.taken.add(wanted)
            return wanted
        n = 2
        while f"{wanted}~{n}" in self.taken:
            n += 1
        got = f"{wanted}~{n}"
        self.taken.add(got)
        return got


class Node:
    """An entry-to-be: its id, parent, JSON fields and the source place it came from.

    ``fields`` is the entry's JSON without ``id`` and ``parentId``; ``None`` for a node
    of the source that gives no entry (a hidden ChatGPT node, an empty root): its
    children then hang under its nearest ancestor that gives one.
    """

    __slots__ = ("fields", "gives_entry", "id", "line", "parent", "path", "record_id", "where")

    def __init__(
        self,
        node_id: str,
        fields: dict[str, Any] | None,
        path: object,
        line: int | None,
        record_id: object = None,
        *,
        parent: str | None = None,
        where: str | None = None,
    ) -> None:
        self.id = node_id
        self.parent = parent
        self.fields = {} if fields is None else fields  # type, timestamp, the kind's own
        self.gives_entry = fields is not None
        self.path = path
        self.line = line
        self.record_id = record_id
        self.where = where

    @property
    def is_message(self) -> bool:
        """Whether the entry takes part in the model's context as a message."""
        return self.fields.get("type") in (
            "message",
            "custom_message",
            "compaction",
        )

    def error(self, reason: str) -> ImportFormatError:
        """An :class:`ImportFormatError` naming where this node came from."""
        return ImportFormatError(
            self.path, self.line, reason, where=self.where, record_id=self.record_id
        )


def title_node(ids: Ids, name: str, timestamp: str, path: object) -> Node:
    """The session's name as a ``session_info`` node (id ``session-name``), which a reader
    puts first so that it is the first root.  O(1)."""
    return Node(
        ids.claim("session-name"),
        {"type": "session_info", "timestamp": timestamp, "name": name},
        path,
        None,
    )


def push_order(children: Sequence[str], last: str | None) -> Sequence[str]:
    """Children in stack-push order (popped in file order), the one toward ``last``
    popped last: the order :func:`assemble` writes siblings in.  O(len(children))."""
    if len(children) < 2:
        return children  # a chain: most nodes of a session
    rest = [c for c in reversed(children) if c != last]
    return ([last] if last is not None and last in children else []) + rest


# The keys of a message node's fields that are not extra ones (an ``id`` or ``parentId``
# there is replaced by the node's own).
_MESSAGE_KEYS = frozenset({"type", "timestamp", "message", "id", "parentId"})


def message_entry(node_id: str, fields: dict[str, Any], parent: str | None) -> Entry | None:
    """The message entry of a node (``node_id`` and ``fields``) under ``parent``, made
    without attrs' validators, or ``None`` when its fields are anything but a plain
    message entry's (:func:`entry_from_json` then says what is wrong).

    How :func:`assemble` makes every plain message entry, and a reader that builds
    its tree itself (LibreChat's) makes its own.  The fields are frozen in one step
    (the message and the extra fields an importer keeps, together), and exactly what
    :func:`entry_from_json` would check is checked first
    (:meth:`MessageEntry.unchecked`'s contract, as the Pi reader checks it): a
    ``message`` type, a non-empty string id, a string timestamp, a message with a
    string role, extra fields that are JSON and none of them the reserved
    :data:`~ptree.pi.lines.BATCH_KEY` (``type`` and ``message`` are taken, an ``id``
    or ``parentId`` is the node's).  O(size of the fields).
    """
    if (
        fields.get("type") != "message"
        or BATCH_KEY in fields
        or type(node_id) is not str
        or not node_id
        or type(fields.get("timestamp")) is not str
    ):
        return None
    try:
        frozen = freeze(fields)
    except ValueError:
        return None  # not JSON, or too deep
    message = frozen.get("message")
    if type(message) is not FrozenDict or type(message.get("role")) is not str:
        return None
    extra = EMPTY
    if len(frozen) > 3:
        rest = {k: v for k, v in frozen.items() if k not in _MESSAGE_KEYS}
        if rest:
            extra = frozen_dict_unchecked(rest)
    return MessageEntry.unchecked(node_id, parent, frozen["timestamp"], message, extra)


def plain_message_entry(
    node_id: str, parent: str | None, timestamp: str, message: dict[str, Any], extra: dict[str, Any]
) -> Entry | None:
    """The message entry a reader's own plain values make: ``message`` (a role a
    string) and the ``extra`` fields frozen together in one step; ``None`` when they
    are not JSON or nest too deep (:func:`entry_of` of the node then says why).

    For a reader that builds its tree itself and knows by construction what
    :func:`message_entry` checks (the id a non-empty string, ``type`` and ``message``
    its own, the timestamp a string, the role a string, no ``id``, ``parentId`` or
    :data:`~ptree.pi.lines.BATCH_KEY` among the extra fields): the same entry,
    without the fields dict and its checks.  O(size of the values).
    """
    try:
        frozen_message, frozen_extra = freeze((message, extra))
    except ValueError:
        return None  # not JSON, or too deep
    return MessageEntry.unchecked(node_id, parent, timestamp, frozen_message, frozen_extra)


def entry_of(node: Node, parent: str | None) -> Entry:
    """``node`` as an entry under ``parent``: :func:`message_entry`, else the checked
    :func:`entry_from_json`.  O(size of its fields).

    Raises:
        ImportFormatError: fields Pi's format cannot hold (naming the node).
    """
    entry = message_entry(node.id, node.fields, parent)
    if entry is not None:
        return entry
    try:
        return entry_from_json({**node.fields, "id": node.id, "parentId": parent})
    except RecursionError:
        raise node.error("nested too deeply to store") from None
    except (SessionError, ValueError, TypeError) as exc:
        raise node.error(f"cannot be stored: {exc}") from None


def assemble(
    nodes: Iterable[Node],
    leaf_id: str | None,
    header: SessionHeader,
    *,
    above: Node | None = None,
    break_cycles: bool = False,
) -> SessionTree:
    """The tree of ``nodes``, written parents first with the leaf's branch last.

    The one tree builder of every importer.  A node whose ``parent`` names no node
    (or itself) is a root; siblings keep the order of ``nodes``.  Nodes without
    ``fields`` give no entry, and their children hang under the nearest ancestor
    that gives one.  ``above`` (a title's ``session_info``) becomes the single root
    above every other.  The leaf is ``leaf_id`` (its nearest ancestor that gives an
    entry, when it gives none); when it names no node, the leaf is reached from the
    last root through each node's last child (the newest edit at every step).  The
    leaf becomes the last entry, as Pi's CLI takes the last entry as the leaf
    (should the leaf have children in a malformed source, they come before it: both
    readers allow a parent after its child).  Iterative; O(n): the entries are made
    and linked parents first (:class:`~ptree.TreeBuilder`), message entries without
    attrs' validators after the same checks (about a third of the time of
    :func:`entry_from_json` and :meth:`SessionTree.from_entries`).

    Args:
        nodes: the entries-to-be, with their ``parent`` set, in source order.
        leaf_id: the node the session continues from.
        header: the session header.
        above: a node to put above every root (its own ``parent`` is ignored).
        break_cycles: parent links forming a cycle make the cycle's first node a
            root (the source keeps a tree only by convention); otherwise they are
            an error.

    Raises:
        ImportFormatError: parent links that form a cycle (naming a record on it,
            unless ``break_cycles``), or an entry Pi's format cannot hold.
    """
    items = list(nodes)
    by_id = {n.id: n for n in items}
    kids: dict[str | None, list[str]] = {}
    for n in items:
        parent = n.parent
        if parent is not None and (parent == n.id or parent not in by_id):
            n.parent = parent = None
        siblings = kids.get(parent)
        if siblings is None:
            kids[parent] = [n.id]
        else:
            siblings.append(n.id)
    if leaf_id not in by_id:
        # No leaf named: the newest edit or regeneration at every step, from the last root.
        at = kids.get(None, [None])[-1]
        walked: set[str] = set()
        while at is not None and at not in walked and kids.get(at):
            walked.add(at)
            at = kids[at][-1]
        leaf_id = at
    toward: dict[str | None, str] = {}
    seen: set[str] = set()
    at = leaf_id
    while at is not None and at not in seen:
        seen.add(at)
        toward[by_id[at].parent] = at
        at = by_id[at].parent

    top = None if above is None else above.id
    order: list[tuple[Node, str | None]] = [] if above is None else [(above, None)]
    anchor: dict[str, str | None] = {}  # nearest ancestor-or-self that gives an entry
    visited: set[str] = set()
    stack: list[tuple[str, str | None]] = [
        (c, top) for c in push_order(kids.get(None, []), toward.get(None))
    ]
    pending = iter(items)
    push = stack.append
    while True:
        while stack:
            nid, parent = stack.pop()
            if nid in visited:
                continue
            visited.add(nid)
            node = by_id[nid]
            if node.gives_entry:
                order.append((node, parent))
                here: str | None = nid
            else:
                here = parent
            anchor[nid] = here
            children = kids.get(nid)
            if children is None:
                continue
            if len(children) == 1:  # a chain: most nodes of a session
                push((children[0], here))
            else:
                stack.extend((c, here) for c in push_order(children, toward.get(nid)))
        if len(visited) == len(items):
            break
        # Nodes no root reaches sit on a cycle (or below one).
        first = next(n for n in pending if n.id not in visited)
        if not break_cycles:
            raise first.error("parent links form a cycle")
        stack.append((first.id, top))

    leaf = anchor.get(leaf_id) if leaf_id is not None else None
    leaf = top if leaf is None else leaf
    if leaf is not None and order[-1][0].id != leaf:
        at_leaf = next(i for i, (n, _) in enumerate(order) if n.id == leaf)
        order.append(order.pop(at_leaf))
        if any(parent == leaf for _, parent in order):
            # Its children now come before it: the one case that is not parents first.
            return SessionTree.from_entries(
                [entry_of(n, parent) for n, parent in order], leaf_id=leaf, header=header
            )
    if above is not None and above.id in by_id:
        # The title's id is a node's too: from_entries says so.
        return SessionTree.from_entries(
            [entry_of(n, parent) for n, parent in order], leaf_id=leaf, header=header
        )
    # Parents first, every id once (each node is visited once): what TreeBuilder needs.
    builder = TreeBuilder()
    index = builder.index
    add = builder.add
    for n, parent in order:
        add(entry_of(n, parent), None if parent is None else index[parent])
    return builder.finish(None if leaf is None else index[leaf], header=header)


def imported_header(
    session_id: str, timestamp: str, cwd: str, imported_from: Mapping[str, Any]
) -> SessionHeader:
    """A version-3 header naming where the session came from."""
    return SessionHeader(
        id=session_id, timestamp=timestamp, cwd=cwd, extra={"importedFrom": dict(imported_from)}
    )


# ------------------------------------------------------------------ the importer shape


@attrs.frozen
class ImportedSession:
    """One imported conversation or session: what every importer gives.

    Attributes:
        format: the importer's name (``"chatgpt"``, ``"openwebui"``, ``"librechat"``,
            ``"claude-code"``, ``"codex"``).
        source_id: the conversation's (or session's) id in the tool it came from.
        title: its title, if it had one.
        filename: a safe file name for it, unique within one import
            (``<title>-<id>.jsonl``, or ``<source name>.pi.jsonl`` for a session file).
        tree: the conversation as a session tree, its leaf where the tool would
            continue.
    """

    format: str
    source_id: str
    title: str | None
    filename: str
    tree: SessionTree


def reporter(on_report: Report | None, path: object, stacklevel: int = 3) -> Report:
    """``on_report``, or (when ``None``) a :class:`~ptree.pi.SessionFileWarning` per line.

    What an importer leaves out or changes is never silent: a caller that passes no
    callback gets warnings naming the file.
    """
    if on_report is not None:
        return on_report

    def warn(text: str) -> None:
        warnings.warn(
            SessionFileWarning(text if path is None else f"{path}: {text}", path=path, reason=text),
            stacklevel=stacklevel,
        )

    return warn


def imported(fmt: str, path: Path, tree: SessionTree) -> ImportedSession:
    """The session a session file gives (one file, one session): its header's id, its
    name as the title, ``<source name>.pi.jsonl`` as the file name."""
    assert tree.header is not None  # every importer writes one
    source_id = tree.header.id
    return ImportedSession(
        fmt, source_id, tree.session_name, session_filename(path, source_id), tree
    )


def only(sessions: Iterable[ImportedSession], src: object) -> ImportedSession:
    """The one session of an export (``read`` of a multi-conversation format).

    Raises:
        ImportFormatError: the export holds no conversation, or several.
    """
    got = list(sessions)
    if len(got) != 1:
        raise ImportFormatError(
            src if isinstance(src, (str, os.PathLike)) else None,
            None,
            f"holds {len(got)} conversations, not one; read them with sessions()",
        )
    return got[0]


def slug(text: str, limit: int) -> str:
    """Lower-case words joined by ``-``, at most ``limit`` characters."""
    return re.sub(r"[\W_]+", "-", text.lower()).strip("-")[:limit].strip("-")


def filename(title: str | None, source_id: str, taken: set[str]) -> str:
    """``<title>-<id>.jsonl``, made unique among ``taken`` (which it joins)."""
    parts = [p for p in (slug(title or "", 48), slug(source_id, 8)) if p]
    stem = "-".join(parts) or "conversation"
    name, n = f"{stem}.jsonl", 1
    while name in taken:
        n += 1
        name = f"{stem}-{n}.jsonl"
    taken.add(name)
    return name


def session_filename(path: str | os.PathLike[str] | None, source_id: str) -> str:
    """The file name of a session read from one file: ``<source name>.pi.jsonl``."""
    stem = Path(path).stem if path is not None else slug(source_id, 48) or "session"
    return f"{stem}.pi.jsonl"


def load_document(source: str | os.PathLike[str] | Any) -> tuple[Any, Path | None]:
    """A JSON export and the path it came from: read and parsed from a path, or given
    as data (then the path is ``None``).  See :func:`read_json_document`."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        return read_json_document(path), path
    return source, None


def write_sessions(
    sessions: Iterable[ImportedSession],
    out_dir: str | os.PathLike[str],
    *,
    force: bool = False,
) -> list[Path]:
    """Write each session into ``out_dir`` as ``<filename>``; the paths, in order.

    Every session is converted before the first file is written (an iterator is
    read to its end first), so a bad export writes nothing; the folder is created if
    needed.  No file is replaced unless ``force``: when any exists, nothing is
    written.  Cost: O(total size of the sessions).

    Args:
        sessions: the sessions an importer read.
        out_dir: the folder to write into.
        force: replace files that exist.

    Raises:
        FileExistsError: a file to write exists (and not ``force``); nothing written.
        NotADirectoryError: ``out_dir`` is a file.
        ImportFormatError: from the importer, before anything is written.

    >>> import tempfile
    >>> s = ImportedSession("chatgpt", "c1", None, "c1.jsonl", SessionTree())
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in write_sessions([s], d)]
    ['c1.jsonl']
    """
    from ..pi import dump  # the writer of Pi files

    items = list(sessions)
    folder = Path(out_dir)
    if folder.exists() and not folder.is_dir():
        # mkdir would say "File exists", which reads as if a session file clashed.
        raise NotADirectoryError(20, "not a folder", str(folder))
    if not force:
        clash = [s.filename for s in items if os.path.lexists(folder / s.filename)]
        if clash:
            raise FileExistsError(
                17,
                f"{len(clash)} of the files to write exist already "
                f"(first: {clash[0]}); nothing written (force to overwrite)",
                str(folder / clash[0]),
            )
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for session in items:
        target = folder / session.filename
        dump(session.tree, target, overwrite=force)
        written.append(target)
    return written
