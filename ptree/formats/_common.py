"""What every reader of :mod:`ptree.formats` shares: strict JSON reading, ids, tree assembly.

Private to the package: the readers build plain :class:`Node` values (an entry's JSON
and where it came from) and :func:`assemble` turns them into a tree whose file form Pi
reads as ptree does.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..context import iso_to_ms
from ..entries import Entry, entry_from_json
from ..errors import SessionError
from ..header import SessionHeader
from ..pi.errors import SessionFileError
from ..pi.files import read_regular
from ..tree import SessionTree
from .errors import ImportFormatError

__all__ = [
    "EPOCH",
    "ZERO_USAGE",
    "Ids",
    "Node",
    "Report",
    "assemble",
    "kind",
    "ms",
    "parse_deep_json",
    "parse_json",
    "read_json_document",
    "read_json_lines",
    "text_blocks",
    "text_of",
]

EPOCH = "1970-01-01T00:00:00.000Z"

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


def parse_json(text: str) -> Any:
    """One JSON value; ``ValueError`` with a reason.  Deep nesting is an error, not a crash."""
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
    """Unix milliseconds of an ISO time; 0 when it is not one."""
    value = iso_to_ms(timestamp) if isinstance(timestamp, str) else None
    return 0 if value is None else value


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
    """An entry-to-be: its id, parent, JSON fields and the source place it came from."""

    __slots__ = ("fields", "id", "line", "parent", "path", "record_id")

    def __init__(
        self,
        node_id: str,
        fields: dict[str, Any],
        path: object,
        line: int | None,
        record_id: object = None,
    ) -> None:
        self.id = node_id
        self.parent: str | None = None
        self.fields = fields  # type, timestamp and the kind's own fields
        self.path = path
        self.line = line
        self.record_id = record_id

    @property
    def is_message(self) -> bool:
        """Whether the entry takes part in the model's context as a message."""
        return self.fields.get("type") in ("message", "custom_message", "compaction")


def _push_order(children: Sequence[str], last: str | None) -> list[str]:
    """Children in stack-push order (popped in file order), the one toward ``last`` last."""
    rest = [c for c in reversed(children) if c != last]
    return ([last] if last is not None and last in children else []) + rest


def assemble(nodes: Iterable[Node], leaf_id: str | None, header: SessionHeader) -> SessionTree:
    """The tree of ``nodes``, written parents first with the leaf's branch last.

    Every node's ``parent`` must name a node (or be ``None``); the leaf becomes the
    last entry, as Pi's CLI takes the last entry as the leaf (should the leaf have
    children in a malformed source, they come before it: both readers allow a
    parent after its child).  Iterative; O(n).

    Raises:
        ImportFormatError: parent links that form a cycle (naming a record on it),
            or an entry Pi's format cannot hold.
    """
    items = list(nodes)
    by_id = {n.id: n for n in items}
    kids: dict[str | None, list[str]] = {}
    for n in items:
        if n.parent is not None and n.parent not in by_id:
            n.parent = None
        kids.setdefault(n.parent, []).append(n.id)
    toward: dict[str | None, str] = {}
    seen: set[str] = set()
    at = leaf_id
    while at is not None and at not in seen:
        seen.add(at)
        toward[by_id[at].parent] = at
        at = by_id[at].parent
    order: list[Node] = []
    visited: set[str] = set()
    stack = _push_order(kids.get(None, []), toward.get(None))
    while stack:
        nid = stack.pop()
        if nid in visited:
            continue
        visited.add(nid)
        order.append(by_id[nid])
        stack.extend(_push_order(kids.get(nid, []), toward.get(nid)))
    if len(order) < len(items):
        bad = next(n for n in items if n.id not in visited)
        raise ImportFormatError(
            bad.path, bad.line, "parent links form a cycle", record_id=bad.record_id
        )
    if leaf_id is not None and order[-1].id != leaf_id:
        leaf = by_id[leaf_id]
        order.remove(leaf)
        order.append(leaf)
    entries: list[Entry] = []
    for n in order:
        try:
            entries.append(entry_from_json({**n.fields, "id": n.id, "parentId": n.parent}))
        except RecursionError:
            raise ImportFormatError(
                n.path, n.line, "nested too deeply to store", record_id=n.record_id
            ) from None
        except (SessionError, ValueError, TypeError) as exc:
            raise ImportFormatError(
                n.path, n.line, f"cannot be stored: {exc}", record_id=n.record_id
            ) from None
    return SessionTree.from_entries(entries, leaf_id=leaf_id, header=header)


def imported_header(
    session_id: str, timestamp: str, cwd: str, imported_from: Mapping[str, Any]
) -> SessionHeader:
    """A version-3 header naming where the session came from."""
    return SessionHeader(
        id=session_id, timestamp=timestamp, cwd=cwd, extra={"importedFrom": dict(imported_from)}
    )
