"""Session files on disk: :func:`load` and :func:`dump`, in Pi's JSON Lines format.

A session file is JSON Lines, UTF-8, one object per line: the header
(``"type": "session"``), then one entry per line (see ``docs/pi-session-format.md``
in the shared folder).  ptree reads versions 1, 2 and 3 (old versions are migrated in
memory, :mod:`ptree._migrate`) and writes version 3.  **Reading never modifies,
truncates or rewrites a file.**

Where the leaf is.  Pi's CLI takes the last entry of the file as the leaf; Pi's agent
harness appends ``leaf`` records (``{"type":"leaf","id","parentId","timestamp",
"targetId"}``) when the leaf moves without an append.  ptree reads both: lines are
replayed in order, an entry makes itself the leaf, a ``leaf`` record makes its
``targetId`` the leaf, and a ``leaf`` record is never a node of the tree.

ptree writes a ``leaf`` record only when the leaf is not the last entry written, and
gives it ``parentId`` = ``targetId`` (the harness writes the previous leaf there).  That
one choice keeps both readers right:

- ptree (and the harness) read the record as a leaf move to ``targetId``;
- Pi's CLI (0.73.1) reads it as an ordinary entry of an unknown type: it becomes the
  CLI's leaf (the last line), its path runs through its parent, which is the target,
  and an unknown type adds nothing to ``buildSessionContext`` (no message, no state).
  So the CLI shows the same context as ptree.  It does show the record as an extra
  node under the target in its tree view, and when the CLI appends after it, the new
  entry's ``parentId`` names the record: ptree reads such an entry as a child of the
  record's target, which is the same path.

Bad input (strict, the default): every problem raises :class:`~ptree.SessionFileError`
naming the file and the 1-based line.  Lenient (``strict=False``): bad lines are
skipped, a missing parent makes a root, and each is reported with a
:class:`~ptree.SessionFileWarning`.  A torn last line (a crash while writing: no
newline at the end and not valid JSON) is recovered in both modes, with a warning.
Blank lines are skipped, as Pi does; a second ``session`` line (an old Pi bug wrote
them) is skipped with a warning.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import gc
import json
import os
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from ._entries import Entry, MessageEntry, entry_from_json
from ._errors import (
    CycleError,
    InvalidEntryError,
    InvalidMessageError,
    SessionFileError,
    SessionFileWarning,
    UnknownEntryError,
)
from ._frozen import FrozenDict, FrozenList, _frozen_dict, _frozen_list
from ._header import CURRENT_VERSION, SessionHeader
from ._migrate import migrate_record, record_lines
from ._store import Store
from ._tree import (
    _DEFAULT_CONFIG,
    SessionTree,
    _counter_of,
    _set_depth,
    _set_parent,
    _set_seq,
)

__all__ = ["SessionLockedError", "dump", "is_torn", "load"]

StrPath = str | os.PathLike[str]

LEAF_TYPE = "leaf"
"""The ``type`` of a leaf record."""


class SessionLockedError(SessionFileError, BlockingIOError):
    """Another writer holds the file: two writers on one file would interleave lines.

    Both a :class:`~ptree.SessionFileError` (so a ``ValueError``) and a
    ``BlockingIOError``, whichever a caller prefers to catch.

    Attributes:
        path: the file.
    """

    def __init__(self, path: object, reason: str | None = None) -> None:
        SessionFileError.__init__(
            self, path, None,
            reason or "another SessionWriter holds this file (it is locked); "
            "close that writer first, or write to another file",
        )
        self.errno = errno.EWOULDBLOCK

    def __reduce__(self) -> tuple[object, ...]:
        return (SessionLockedError, (self.path, self.reason))


# ---------------------------------------------------------------------------- parsing

def _freeze_lists(value: list[Any]) -> FrozenList:
    # Dicts inside are frozen already (the hook runs bottom-up); lists in lists are not.
    for item in value:
        if type(item) is list:
            return _frozen_list([_freeze_lists(x) if type(x) is list else x for x in value])
    return _frozen_list(value)


def _hook(obj: dict[str, Any]) -> FrozenDict:
    # Freezing while parsing, bottom-up, costs far less than a second walk afterwards.
    for value in obj.values():
        if type(value) is list:
            return _frozen_dict(
                {k: _freeze_lists(v) if type(v) is list else v for k, v in obj.items()}
            )
    return _frozen_dict(obj)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str, _float: Callable[[str], float] = float) -> float:
    # Python reads 1e400 as infinity, which is no JSON value: the frozen layer and
    # dump refuse it, so a file holding one must fail here, on its line.  Called
    # only for numbers with a fraction or exponent (ints never come here): a few
    # percent of a load's time on real sessions.
    value = _float(text)
    if value - value != 0.0:
        raise ValueError(f"{text} is out of range for a JSON number (it reads as infinity)")
    return value


_DECODER = json.JSONDecoder(object_hook=_hook, parse_constant=_no_constant,
                            parse_float=_finite)
_scan: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]


def _parse(text: str) -> Any:
    """One line's JSON value, frozen.  Raises ``ValueError`` with a reason."""
    try:
        try:
            value, end = _scan(text, 0)
        except StopIteration:
            value = _DECODER.decode(text)  # leading blanks, or a proper error message
            end = len(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON ({exc.msg} at column {exc.colno})") from None
    if end != len(text) and not text[end:].isspace():
        raise ValueError(f"malformed JSON (extra data at column {end + 1})")
    return value


_WS = " \t\r\n"
_ESCAPES = '"\\/bfnrt'
_HEX = "0123456789abcdefABCDEF"
_NUMBER = "0123456789+-.eE"


def is_torn(text: str) -> bool:
    """Whether ``text`` is a proper prefix of a JSON object: a line cut short.

    A crash in the middle of a write leaves the start of a line and nothing more; that
    is what this recognises (any other bad line is not a prefix of valid JSON).
    Iterative and O(len(text)).

    >>> is_torn('{"type":"message","id":"a'), is_torn('{"a": 1}'), is_torn('{"a" 1')
    (True, False, False)
    """
    n = len(text)
    i = 0
    while i < n and text[i] in _WS:
        i += 1
    if i == n or text[i] != "{":
        return False
    stack: list[str] = []
    state = "value"  # what comes next: value, key, key_or_close, colon, value_or_close, after
    while True:
        while i < n and text[i] in _WS:
            i += 1
        if i == n:
            return bool(stack)  # cut short inside an object or array
        c = text[i]
        if state in ("value", "value_or_close"):
            if c == "]" and state == "value_or_close":
                stack.pop()
                state = "after"
                i += 1
            elif c in "{[":
                stack.append(c)
                state = "key_or_close" if c == "{" else "value_or_close"
                i += 1
            elif c == '"':
                i = _skip_string(text, i + 1)
                if i < 0:
                    return i == -1
                state = "after"
            elif c in "-0123456789":
                while i < n and text[i] in _NUMBER:
                    i += 1
                state = "after"
            elif c in "tfn":
                word = "true" if c == "t" else "false" if c == "f" else "null"
                part = text[i:i + len(word)]
                if not word.startswith(part):
                    return False
                i += len(part)
                state = "after"
            else:
                return False
        elif state in ("key", "key_or_close"):
            if c == "}" and state == "key_or_close":
                stack.pop()
                state = "after"
                i += 1
            elif c == '"':
                i = _skip_string(text, i + 1)
                if i < 0:
                    return i == -1
                state = "colon"
            else:
                return False
        elif state == "colon":
            if c != ":":
                return False
            state = "value"
            i += 1
        else:  # after a value
            if not stack:
                return False  # a whole value and then more: not a cut-short line
            if c == ",":
                state = "key" if stack[-1] == "{" else "value"
            elif c == ("}" if stack[-1] == "{" else "]"):
                stack.pop()
            else:
                return False
            i += 1


def _skip_string(text: str, i: int) -> int:
    """The index after the string's closing quote; -1 if cut short, -2 if invalid."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            return i + 1
        if c == "\\":
            if i + 1 == n:
                return -1
            e = text[i + 1]
            if e == "u":
                digits = text[i + 2:i + 6]
                if any(d not in _HEX for d in digits):
                    return -2
                if len(digits) < 4:
                    return -1
                i += 6
                continue
            if e not in _ESCAPES:
                return -2
            i += 2
            continue
        if c < " ":
            return -2
        i += 1
    return -1


# Slot setters: a fast path makes message entries without attrs' validators, after
# checking exactly what entry_from_json would check.
_set_id = Entry.__dict__["id"].__set__
_set_parent_id = Entry.__dict__["parent_id"].__set__
_set_timestamp = Entry.__dict__["timestamp"].__set__
_set_extra = Entry.__dict__["extra"].__set__
_set_message = MessageEntry.__dict__["message"].__set__
_EMPTY = FrozenDict()
_NEW = object.__new__


@attrs.define
class FileState:
    """What a read found: the tree, and the facts a writer needs to append safely.

    Attributes:
        tree: the session as loaded.
        version: the version the header states (1 when it states none).
        ends_clean: the file ends with a newline (or is empty): the next line can
            start right away.  ``False`` after a torn or unterminated last line.
        leaf_ids: the ids of the file's ``leaf`` records (never tree entries, but
            taken: a new entry must not reuse one).
        size: the number of bytes read.
    """

    tree: SessionTree
    version: int
    ends_clean: bool
    leaf_ids: set[str]
    size: int


class _Reader:
    """One read of one file; collects the entries and reports or raises problems."""

    def __init__(self, path: str, strict: bool) -> None:
        self.path = path
        self.strict = strict

    def fail(self, line: int | None, reason: str, entry_id: object = None) -> None:
        """Raise in strict mode; warn that the line was skipped in lenient mode."""
        if self.strict:
            raise SessionFileError(self.path, line, reason, entry_id=entry_id)
        self.warn(line, f"skipped: {reason}", reason, entry_id)

    def warn(self, line: int | None, text: str, reason: str, entry_id: object = None) -> None:
        """Warn ``FILE:LINE: text``; ``reason`` (what is wrong) and the rest as attributes."""
        where = self.path if line is None else f"{self.path}:{line}"
        warnings.warn(
            SessionFileWarning(f"{where}: {text}", path=self.path, line=line, reason=reason,
                               entry_id=entry_id),
            stacklevel=4,
        )

    def lines(self, data: bytes) -> list[str | None]:
        """The file's lines as text; ``None`` for a line that is not UTF-8.

        A line that is UTF-8 but for a character cut short at its very end (a crash
        in the middle of writing a multi-byte character) has its text before that
        character in :attr:`cut`, to be judged as a torn line.
        """
        self.cut: dict[int, str] = {}
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            out: list[str | None] = []
            for raw in data.split(b"\n"):
                try:
                    out.append(raw.decode("utf-8"))
                except UnicodeDecodeError as exc:
                    if exc.end == len(raw) and exc.reason == "unexpected end of data":
                        # The first error is at the end, so all before it is text.
                        self.cut[len(out)] = raw[:exc.start].decode("utf-8")
                    out.append(None)
        else:
            out = text.split("\n")  # type: ignore[assignment]
        first = out[0]
        if first is not None and first.startswith("\ufeff"):
            out[0] = first[1:]
        return out

    def read(self, data: bytes) -> FileState:
        path = self.path
        lines = self.lines(data)
        ends_clean = lines[-1] == ""
        if ends_clean:
            lines.pop()
        last = len(lines) - 1

        # Parse every line.  ``parsed`` holds the line numbers of all records that are
        # JSON (header first): a version 1 ``firstKeptEntryIndex`` counts them.
        records: list[FrozenDict] = []
        rec_lines: list[int] = []
        parsed: list[int] = []
        header: SessionHeader | None = None
        scan = _scan
        for i, text in enumerate(lines):
            if not text:
                if text is None:
                    if header is None:
                        raise SessionFileError(path, i + 1, "no session header: not UTF-8")
                    cut = self.cut.get(i)
                    if cut is not None and is_torn(cut):
                        self.torn(i + 1, i == last and not ends_clean)
                    else:
                        self.fail(i + 1, "not UTF-8 text")
                continue
            lineno = i + 1
            try:
                value, end = scan(text, 0)
            except (StopIteration, ValueError, RecursionError):
                end = -1
            if end != len(text):
                try:
                    value = _parse(text)
                except ValueError as exc:
                    if text.isspace():
                        continue
                    if header is None:
                        raise SessionFileError(
                            path, lineno, f"no session header: {exc}"
                        ) from None
                    if i == last and not ends_clean:
                        self.torn(lineno, True)
                        continue
                    if is_torn(text):
                        self.torn(lineno, False)
                        continue
                    self.fail(lineno, str(exc))
                    continue
            if header is None:
                header = self.header(lineno, value)
                parsed.append(lineno)
                continue
            parsed.append(lineno)
            if type(value) is not FrozenDict:
                self.fail(lineno, f"not a JSON object but {_kind(value)}")
                continue
            records.append(value)
            rec_lines.append(lineno)
        if header is None:
            raise SessionFileError(path, None, "empty file: no session header")
        tree, leaf_ids = self.build(header, records, rec_lines, record_lines(parsed))
        return FileState(tree, header.version, ends_clean, leaf_ids, len(data))

    def torn(self, lineno: int, last: bool) -> None:
        """Report a line that a crash cut short, skipped in both modes."""
        if last:
            self.warn(lineno, "recovered a torn last line (a write that did not finish): "
                      "ignored it", "a torn last line (a write that did not finish)")
        else:
            # A crash cut this line short and a later write began afresh on the next
            # line: the same recovery, found later.
            self.warn(lineno, "skipped a torn line (a write that did not finish, "
                      "followed by later writes)",
                      "a torn line (a write that did not finish, followed by later writes)")

    def header(self, lineno: int, value: Any) -> SessionHeader:
        if type(value) is not FrozenDict or value.get("type") != "session":
            raise SessionFileError(
                self.path, lineno, "no session header: the first line must be "
                '{"type":"session",...}'
            )
        try:
            return SessionHeader.from_json(value)
        except (InvalidEntryError, InvalidMessageError) as exc:
            raise SessionFileError(self.path, lineno, f"invalid session header: {exc}") from None

    def build(
        self,
        header: SessionHeader,
        records: list[FrozenDict],
        rec_lines: list[int],
        record_line: Callable[[int], int | None],
    ) -> tuple[SessionTree, set[str]]:
        version = header.version
        entries: list[Entry] = []
        by_id: dict[str, Entry] = {}
        line_of: dict[str, int] = {}
        leaf_target: dict[str, str | None] = {}
        leaf: str | None = None
        prev: str | None = None
        leaf_records = version >= 2  # a v1 file has no ids for a record to target
        # Entries are linked as they come (parents before children, as every writer
        # does it): one pass, no second index.  Anything unusual (a parent further
        # down, a missing one, a cycle) leaves it to SessionTree.from_entries.
        store = Store()
        add = store.add
        in_order = True
        max_seq = 0
        message_fast = version >= 3
        for rec, lineno in zip(records, rec_lines, strict=True):
            kind = rec.get("type")
            entry: Entry | None = None
            eid: str
            pid: str | None
            if kind == "message" and message_fast and len(rec) == 5:
                eid = rec.get("id")  # type: ignore[assignment]
                pid = rec.get("parentId", _EMPTY)
                ts = rec.get("timestamp")
                msg = rec.get("message")
                if (
                    type(eid) is str
                    and eid
                    and (pid is None or type(pid) is str)
                    and type(ts) is str
                    and type(msg) is FrozenDict
                    and type(msg.get("role")) is str
                ):
                    entry = _NEW(MessageEntry)
                    _set_id(entry, eid)
                    _set_parent_id(entry, pid)
                    _set_timestamp(entry, ts)
                    _set_extra(entry, _EMPTY)
                    _set_message(entry, msg)
            if entry is None:
                if kind == "session":
                    self.warn(lineno, "skipped a second session header",
                              "a second session header")
                    continue
                if version < 3:
                    rec = migrate_record(rec, version, lineno, prev, record_line)
                if kind == LEAF_TYPE and leaf_records:
                    target = self.leaf_record(rec, lineno, by_id, leaf_target)
                    if target is not _SKIP:
                        leaf = target  # type: ignore[assignment]
                    continue
                try:
                    entry = entry_from_json(rec)
                except (InvalidEntryError, InvalidMessageError) as exc:
                    bad = rec.get("id")
                    self.fail(lineno, str(exc), bad if type(bad) is str else None)
                    continue
                eid = entry.id
                pid = entry.parent_id
            if eid in by_id or eid in leaf_target:
                first = line_of.get(eid)
                self.fail(lineno, f"duplicate id {eid!r}" +
                          (f" (first on line {first})" if first else ""), eid)
                continue
            if in_order:
                if pid is None:
                    _set_parent(entry, None)
                    _set_depth(entry, 0)
                else:
                    parent = by_id.get(pid)
                    if parent is None:
                        in_order = False
                    else:
                        _set_parent(entry, parent)
                        _set_depth(entry, parent._depth + 1)
                if in_order:
                    _set_seq(entry, len(entries))
                    add(entry)
                    if eid[0] == "e":
                        k = _counter_of(eid)
                        if k > max_seq:
                            max_seq = k
            by_id[eid] = entry
            line_of[eid] = lineno
            leaf = prev = eid
            entries.append(entry)
        if in_order and not leaf_target:
            leaf_entry = None if leaf is None else by_id[leaf]
            tree = SessionTree._new(store, len(entries), leaf_entry, max_seq, header,
                                    _DEFAULT_CONFIG)
        else:
            if leaf_target:
                entries = [_through_leaf_records(e, leaf_target) for e in entries]
            tree = self.link(entries, leaf, header, line_of)
        return tree, set(leaf_target)

    def leaf_record(
        self,
        rec: FrozenDict,
        lineno: int,
        by_id: dict[str, Entry],
        leaf_target: dict[str, str | None],
    ) -> object:
        """Check a ``leaf`` record and note it; its target, or ``_SKIP``."""
        rid = rec.get("id")
        if type(rid) is not str or not rid:
            self.fail(lineno, "a leaf record needs a non-empty string id")
            return _SKIP
        if rid in by_id or rid in leaf_target:
            self.fail(lineno, f"duplicate id {rid!r}", rid)
            return _SKIP
        target = rec.get("targetId", _SKIP)
        if target is not None and type(target) is not str:
            self.fail(lineno, "a leaf record needs a targetId (an id, or null)", rid)
            return _SKIP
        if target is not None and target not in by_id:
            self.fail(lineno, f"the leaf record names an unknown entry {target!r}", rid)
            return _SKIP
        leaf_target[rid] = target
        return target

    def link(
        self,
        entries: list[Entry],
        leaf: str | None,
        header: SessionHeader,
        line_of: dict[str, int],
    ) -> SessionTree:
        path = self.path
        if self.strict:
            try:
                return SessionTree.from_entries(entries, leaf_id=leaf, header=header)
            except CycleError as exc:
                first = min(exc.entry_ids, key=lambda i: line_of.get(i, 0))
                raise SessionFileError(
                    path, line_of.get(first), f"{exc}", entry_id=first
                ) from None
            except UnknownEntryError as exc:
                child = next((e for e in entries if e.parent_id == exc.entry_id), None)
                if child is None:  # pragma: no cover - the leaf is always known here
                    raise SessionFileError(path, None, str(exc)) from None
                raise SessionFileError(
                    path, line_of.get(child.id),
                    f"entry {child.id!r} names a parent {exc.entry_id!r} that does not exist",
                    entry_id=child.id,
                ) from None

        def repaired(entry: Entry, reason: str) -> None:
            self.warn(line_of.get(entry.id), f"entry {entry.id!r}: {reason}",
                      reason.removesuffix(": made a root"), entry.id)

        return SessionTree.from_entries(entries, leaf_id=leaf, header=header, on_repair=repaired)


_SKIP = object()


def _kind(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


def _through_leaf_records(entry: Entry, leaf_target: dict[str, str | None]) -> Entry:
    # Pi's CLI hangs an append under the last line, which may be one of our leaf records:
    # the record stands for its target, so the entry is the target's child.
    pid = entry.parent_id
    if pid is not None and pid in leaf_target:
        return entry.evolve(parent_id=leaf_target[pid])
    return entry


def read_state(path: StrPath, data: bytes, *, strict: bool = True) -> FileState:
    """Read a session file's bytes (already read from ``path``): tree and file facts.

    The cyclic garbage collector is paused while the tree is built: a load makes
    hundreds of thousands of objects, none of them garbage, and each collection of the
    older generations would walk them all again (measured: a third of the time).
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _Reader(os.fspath(path), strict).read(data)
    finally:
        if paused:
            gc.enable()


def load(path: StrPath, *, strict: bool = True) -> SessionTree:
    """Read a session file (version 1, 2 or 3) into a :class:`~ptree.SessionTree`.

    The tree keeps the header (session id, cwd, timestamp, parent session, other
    fields) as :attr:`SessionTree.header`; entries of unknown types and fields ptree
    does not know are kept to be written back.  The leaf is where the file leaves it
    (the last entry, or the last ``leaf`` record's target).  The file is only read.

    Lines are split at ``\\n``; a ``\\r`` before it and a UTF-8 byte-order mark at
    the start are accepted.  Blank lines (empty or only white space) are not data and
    are skipped without a warning, as Pi skips them; a second ``session`` line (an old
    Pi bug) is skipped with a warning in both modes.

    Cost: O(size of the file), one read; the JSON is frozen while it is parsed.

    Args:
        path: the file.
        strict: raise on any bad line (the default); with ``False``, skip bad lines
            and make entries with a missing parent roots, warning for each.

    Raises:
        SessionFileError: (a ``ValueError``) naming the file and the line: malformed
            JSON, a line that is not an object, a missing or invalid header, an entry
            without an id or with invalid fields, a duplicate id, a missing parent, a
            cycle, a leaf record naming an unknown entry.  Lenient loading raises it
            only for a missing or invalid header.
        OSError: the file cannot be read.

    Warns:
        SessionFileWarning: a torn last line was recovered (both modes); in lenient
            mode, once per line skipped or entry repaired.

    >>> import tempfile, os
    >>> tree = SessionTree().append({"role": "user", "content": "hi"})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     saved = dump(tree, os.path.join(d, "s.jsonl"))
    ...     again = load(os.path.join(d, "s.jsonl"))
    >>> again == saved, again.current_path()
    (True, ({'role': 'user', 'content': 'hi'},))
    """
    with open(path, "rb") as f:
        data = f.read()
    return read_state(path, data, strict=strict).tree


# ---------------------------------------------------------------------------- writing

_ENCODE = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
).encode
_ENCODE_ASCII = json.JSONEncoder(
    ensure_ascii=True, separators=(",", ":"), allow_nan=False, check_circular=False
).encode


def encode_line(obj: Any) -> bytes:
    """One JSON line, compact like Pi's ``JSON.stringify``, UTF-8, ending in ``\\n``."""
    text = _ENCODE(obj)
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (from a \\ud800 escape) has no UTF-8 form: escape it again.
        return (_ENCODE_ASCII(obj) + "\n").encode("ascii")


def leaf_record(record_id: str, target: str | None, timestamp: str) -> dict[str, Any]:
    """A ``leaf`` record that moves the leaf to ``target`` (see the module doc)."""
    return {
        "type": LEAF_TYPE,
        "id": record_id,
        "parentId": target,
        "timestamp": timestamp,
        "targetId": target,
    }


def new_leaf_id(taken: Callable[[str], bool], first: int = 1) -> str:
    """An id for a leaf record: ``leaf-<n>``, the first ``n >= first`` not ``taken``.

    Deterministic, so that two dumps of one tree (with one clock) give the same bytes.
    ``taken`` must cover every id of the file (entries and leaf records).  Such an id
    cannot be one Pi makes (8 hex digits or a UUID) nor one of ptree's default ids
    (``e<n>``); an entry given one later on by hand is refused by the writer
    (:class:`~ptree.CommitError`).  O(number of taken ``leaf-<n>`` ids from ``first``).

    >>> new_leaf_id({"leaf-1", "e1"}.__contains__)
    'leaf-2'
    """
    n = first
    while taken(f"leaf-{n}"):
        n += 1
    return f"leaf-{n}"


def header_of(tree: SessionTree) -> SessionHeader:
    """The header a file of ``tree`` gets: the tree's own, as version 3, or a new one."""
    header = tree.header
    if header is None:
        return SessionHeader.new()
    if header.version != CURRENT_VERSION:
        return attrs.evolve(header, version=CURRENT_VERSION)
    return header


def file_bytes(tree: SessionTree, header: SessionHeader) -> bytes:
    """The whole file for ``tree``: header, entries in order, and a leaf record if the
    leaf is not the last entry.  O(size of the tree)."""
    encode = _ENCODE
    parts = [_ENCODE(header.to_json())]
    entries = tree.entries()
    for entry in entries:
        parts.append(encode(entry._json()))
    last = entries[-1].id if entries else None
    if tree.leaf_id != last:
        parts.append(encode(leaf_record(new_leaf_id(tree.__contains__), tree.leaf_id,
                                        tree.clock())))
    parts.append("")
    text = "\n".join(parts)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return b"".join(encode_line(json.loads(p)) for p in parts[:-1])


def dump(tree: SessionTree, path: StrPath) -> SessionTree:
    """Write ``tree`` to ``path`` as a complete version 3 session file, atomically.

    The file is written beside ``path`` under a temporary name, flushed to disk
    (``fsync``) and renamed over ``path``: a crash leaves the old file or the new one,
    never half of either.  A tree without a header gets a new one (a fresh session id,
    this directory); a header read from an older version is written as version 3.
    The leaf survives: when it is not the last entry, a ``leaf`` record follows (see
    the module doc for how Pi's CLI reads it).

    Cost: O(size of the tree).

    Returns:
        the tree as written (with the header the file has): ``load(path)`` equals it.

    Raises:
        SessionLockedError: a :class:`~ptree.SessionWriter` holds ``path``; replacing
            the file under it would lose its later commits.
        OSError: the file cannot be written; an existing file is then left as it was.

    >>> import tempfile, os
    >>> t = SessionTree().append({"role": "user", "content": "a"}).move_to(None)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     saved = dump(t, os.path.join(d, "s.jsonl"))
    ...     load(os.path.join(d, "s.jsonl")).leaf_id is None
    True
    """
    target = Path(path)
    header = header_of(tree)
    data = file_bytes(tree, header)
    guard = _lock_existing(target)
    try:
        _replace(target, data)
    finally:
        if guard is not None:
            os.close(guard)
    return tree if header is tree.header else tree.with_header(header)


def _lock_existing(path: Path) -> int | None:
    """Lock the file now at ``path`` (if any) for the replace, or raise if a writer has it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise SessionLockedError(
            os.fspath(path), "a SessionWriter holds this file: replacing it would lose "
            "that writer's commits; close the writer first"
        ) from None
    except OSError:  # pragma: no cover - a file system without locks
        pass
    return fd


def _replace(path: Path, data: bytes) -> None:
    try:
        mode: int | None = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    tmp = write_temp(path, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    sync_directory(path.parent)


def write_temp(path: Path, data: bytes, mode: int | None = None) -> str:
    """A temporary file beside ``path`` holding ``data``, on the disk; return its name.

    It gets ``mode``, or what a new file gets under the umask.  If writing fails it
    is removed again and the error raised: the caller renames or links it into place.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            write_all(fd, data)
            if mode is None:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def sync_directory(directory: Path) -> None:
    """Flush a directory's entries (a new or renamed file) to disk, where possible."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:  # pragma: no cover - platforms that cannot open a directory
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - file systems that refuse
        pass
    finally:
        os.close(fd)
