"""Claude Code sessions (``~/.claude/projects/<project>/<session>.jsonl``) as Pi sessions.

:func:`read` takes one session file and the subagent files found beside it (the 2.1
layout ``<stem>/subagents/agent-*.jsonl`` and the 2.0 layout ``agent-*.jsonl`` in the
same folder carrying the session's ``sessionId``) and gives one tree.  The mapping
follows ``formats.md`` (shared docs):

- Assistant records sharing ``message.id`` are one Pi assistant message (their
  blocks in file order; ``thinking``, ``redacted_thinking``, ``text``, ``tool_use``
  become Pi's thinking, text and toolCall blocks), keeping every record's ``uuid``
  in the entry's ``claudeCode.uuids``.  Its id is the first record's ``uuid``.
- Each ``tool_result`` block is a ``toolResult`` message, chained right after its
  call's message in file order (message → result 1 → result 2 …), so a batch of
  parallel calls keeps every result on the path; the next response, and anything
  else that hung under a call or a result, comes after the last result of the batch
  (Claude Code's own resume loses results here).  A user record's other blocks are
  one user message after its results.  A record giving several entries gives the
  first its ``uuid`` and the n-th ``<uuid>#<n>``.
- ``compact_boundary`` with its ``isCompactSummary`` child is one ``compaction``
  entry (``firstKeptEntryId`` = itself: the model sees only the summary and what
  follows), linked above through ``logicalParentUuid``.
- ``isMeta`` user records are user messages (the model read them).
- Every other record (``system``, ``progress``, ``attachment``, ``summary``,
  ``file-history-snapshot``, ``queue-operation``, …) is a ``custom`` entry
  ``claude-code.<type>`` holding the record unchanged: it never reaches the model.
  Records with a ``uuid`` hang where their ``parentUuid`` puts them, those without
  one under the entry of the line before.  A ``uuid`` written a second time gives a
  ``custom`` entry ``claude-code.duplicate``.
- A subagent file's records (and old in-file sidechains) hang under a ``custom``
  entry ``claude-code.subagent`` (agent id, file, the Task call and its
  ``subagent_type`` when the session has them): a Task subagent is its own root, so
  the context at its last message is what the subagent saw; a compaction's own
  conversation (``agent-acompact-*``) branches off the main line under its marker.
- The leaf is the last main-file message, below it the non-message entries that end
  the file's line (a trailing ``turn_duration`` …).  The title (the latest
  ``custom-title``, else the ``summary`` of the main line) is a ``session_info``
  entry that is the first root.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn

from ..header import SessionHeader
from ..tree import SessionTree
from ._common import (
    EPOCH,
    ZERO_USAGE,
    Ids,
    ImportedSession,
    Node,
    Report,
    assemble,
    collector_paused,
    imported,
    imported_header,
    kind,
    ms,
    read_json_lines,
    reporter,
    text_blocks,
    text_of,
    title_node,
    tool_result,
)
from .errors import ImportFormatError

__all__ = ["FORMAT", "from_records", "read", "session_files", "sessions"]

FORMAT = "claude-code"

_STOP = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "toolUse",
    "max_tokens": "length",
    "refusal": "stop",
    "pause_turn": "stop",
}


class _Rec:
    """One line of one file."""

    __slots__ = ("file", "line", "path", "raw", "seq", "uuid")

    def __init__(self, file: int, path: Path, line: int, seq: int, raw: dict[str, Any]) -> None:
        self.file = file
        self.path = path
        self.line = line
        self.seq = seq
        self.raw = raw
        uuid = raw.get("uuid")
        if uuid is not None and (not isinstance(uuid, str) or not uuid):
            self.fail("'uuid' must be a non-empty string", None)
        self.uuid: str | None = uuid
        parent = raw.get("parentUuid")
        if parent is not None and not isinstance(parent, str):
            self.fail(f"'parentUuid' must be a string or null, not {kind(parent)}")

    def fail(self, reason: str, record_id: object = ...) -> NoReturn:
        raise ImportFormatError(
            self.path, self.line, reason, record_id=self.uuid if record_id is ... else record_id
        )

    @property
    def type(self) -> str:
        t = self.raw.get("type")
        return t if isinstance(t, str) else "unknown"

    @property
    def timestamp(self) -> str | None:
        t = self.raw.get("timestamp")
        return t if isinstance(t, str) and t else None


class _Group:
    """The assistant records of one API response (one ``message.id``)."""

    __slots__ = ("node", "recs", "results")

    def __init__(self) -> None:
        self.recs: list[_Rec] = []
        self.results: list[Node] = []
        self.node: Node | None = None

    def tail(self) -> Node:
        assert self.node is not None
        return self.results[-1] if self.results else self.node


class _Later:
    """A parent written later in the files than its child: resolved at the end."""

    __slots__ = ("seq",)

    def __init__(self, seq: int) -> None:
        self.seq = seq


# A parent reference resolved once every record is read: a node, the tail of a
# response's batch (its last result, known only at the end), or a later record.
_Ref = Node | _Group | _Later | None


def session_files(path: str | os.PathLike[str]) -> list[Path]:
    """The session file and its subagent files (both layouts), in the order they are read.

    The main file first, then ``<stem>/subagents/agent-*.jsonl`` and the
    ``agent-*.jsonl`` files beside the main file whose first record carries the main
    file's ``sessionId``, together in sorted path order.  Cost: reads the first
    line of each candidate ``agent-*.jsonl``.
    """
    main = Path(path)
    found: list[Path] = []
    sub = main.with_suffix("") / "subagents"
    if sub.is_dir():
        found.extend(p for p in sub.glob("agent-*.jsonl") if p.is_file())
    if not main.name.startswith("agent-"):
        session_id = _first_session_id(main)
        if session_id is not None:
            for p in main.parent.glob("agent-*.jsonl"):
                if p.is_file() and _first_session_id(p) == session_id:
                    found.append(p)
    return [main, *sorted(set(found))]


def _first_session_id(path: Path) -> str | None:
    """The ``sessionId`` of the first record that has one (lines that are not JSON skipped:
    this only decides which files belong to the session; reading them is strict)."""
    try:
        # Without blocking, and regular files only: a FIFO must not make this wait
        # (reading the main file then refuses it with a clear error).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            for line in f:
                try:
                    value = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                sid = value.get("sessionId") if isinstance(value, dict) else None
                if isinstance(sid, str):
                    return sid
    except OSError:
        return None
    return None


def read(
    src: str | os.PathLike[str],
    *,
    on_report: Report | None = None,
    keep_progress: bool = True,
) -> ImportedSession:
    """Read a Claude Code session, with its subagent files, into one session.

    See the module documentation for what becomes what.  Nothing is read twice and
    nothing is written.  Cost: O(total size of the files).

    Args:
        src: the session's main file, ``<sessionId>.jsonl``.
        on_report: called with one line of text for each kind of record left out
            (default: a :class:`~ptree.pi.SessionFileWarning`).
        keep_progress: keep ``progress`` records as ``custom`` entries (the
            default); with ``False`` they are left out (entries below one hang under
            its parent) and their number is reported.

    Returns:
        The session: its tree's header from the first record (``sessionId``, time,
        ``cwd``) with ``importedFrom``; the leaf at the end of the main conversation.

    Raises:
        ImportFormatError: (a ``ValueError``) a line that is not a JSON object, not
            UTF-8 or torn, or a record whose fields are not Claude Code's, naming
            the file, the line and the record's ``uuid``.
        OSError: a file cannot be read.

    >>> import tempfile, pathlib
    >>> lines = [
    ...   {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
    ...    "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "user", "content": "hi"}},
    ...   {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": {"id": "m",
    ...    "role": "assistant", "model": "claude", "content": [{"type": "text", "text": "hello"}]}}]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = pathlib.Path(d, "s.jsonl")
    ...     _ = p.write_text("".join(json.dumps(x) + "\\n" for x in lines))
    ...     s = read(p)
    >>> s.source_id, s.filename, [e.id for e in s.tree.path()]
    ('s', 's.pi.jsonl', ['u1', 'a1'])
    """
    main = Path(src)
    files = session_files(main)
    recs: list[_Rec] = []
    with collector_paused():
        for f, p in enumerate(files):
            for line, raw in read_json_lines(p):
                recs.append(_Rec(f, p, line, len(recs), raw))
        return imported(
            FORMAT, main, _Reader(keep_progress, reporter(on_report, main)).run(files, recs)
        )


def sessions(src: str | os.PathLike[str], **options: Any) -> Iterator[ImportedSession]:
    """``iter([read(src, ...)])``: a main file holds one session.  Raises as :func:`read`.

    The whole session is read before this returns.  Cost: O(total size of the files),
    as :func:`read`.

    Args:
        src: the session's main file, ``<sessionId>.jsonl``.
        **options: :func:`read`'s keyword options (``on_report``, ``keep_progress``).
    """
    return iter([read(src, **options)])


def from_records(
    main: Iterable[Mapping[str, Any]],
    subagents: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
    *,
    name: str = "session.jsonl",
    on_report: Report | None = None,
    keep_progress: bool = True,
) -> SessionTree:
    """The tree of a Claude Code transcript given as records (parsed JSON lines).

    The same conversion as :func:`read`, for records that are not in files (a
    transcript held by the Claude Agent SDK, a store): ``main`` is the session's
    records in order, ``subagents`` each subagent transcript's records by its file
    name (``agent-<id>.jsonl``, which names the agent).  Errors name ``name`` (or the
    subagent's name) and the 1-based record number as the line.  Cost: O(total size
    of the records).

    Args:
        main: the session's records, in order.
        subagents: each subagent transcript's records, by its file name.
        name: the name errors give the main transcript.
        on_report: called with one line of text for each kind of record left out
            (default: a :class:`~ptree.pi.SessionFileWarning`).
        keep_progress: keep ``progress`` records as ``custom`` entries (the default);
            with ``False`` they are left out and their number is reported.

    Raises:
        ImportFormatError: a record that is not an object, or whose fields are not
            Claude Code's.

    >>> tree = from_records([
    ...   {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
    ...    "message": {"role": "user", "content": "hi"}}])
    >>> [e.message["content"] for e in tree.path()], tree.header.id
    (['hi'], 's')
    """
    sources: list[tuple[Path, Iterable[Mapping[str, Any]]]] = [(Path(name), main)]
    sources.extend((Path(n), records) for n, records in (subagents or {}).items())
    files = [p for p, _ in sources]
    recs: list[_Rec] = []
    for f, (p, records) in enumerate(sources):
        for line, raw in enumerate(records, 1):
            if not isinstance(raw, dict):
                raise ImportFormatError(p, line, f"expected a JSON object, found {kind(raw)}")
            recs.append(_Rec(f, p, line, len(recs), raw))
    return _Reader(keep_progress, reporter(on_report, Path(name))).run(files, recs)


class _Reader:
    def __init__(self, keep_progress: bool, on_report: Report) -> None:
        self.keep_progress = keep_progress
        self.report = on_report
        self.ids = Ids()
        self.nodes: list[Node] = []
        self.node_file: dict[str, int] = {}
        self.node_raw: dict[str, dict[str, Any]] = {}
        self.refs: dict[str, _Ref] = {}  # node id -> its parent, to resolve
        self.by_uuid: dict[str, _Rec] = {}
        self.anchor: dict[int, _Ref] = {}  # rec seq -> what its children hang under
        self.groups: dict[tuple[int, str], _Group] = {}
        self.group_of: dict[int, _Group] = {}
        self.calls: dict[str, tuple[_Group, str]] = {}  # tool_use id -> (response, name)
        self.summary_of: dict[str, _Rec] = {}  # boundary uuid -> its isCompactSummary child
        self.skipped: dict[str, int] = {}
        self.last_time = EPOCH

    # ---------------------------------------------------------------- reading

    def run(self, files: list[Path], recs: list[_Rec]) -> SessionTree:
        main = files[0]
        self.index(recs)
        prev_in_file: _Rec | None = None
        for rec in recs:
            if prev_in_file is not None and prev_in_file.file != rec.file:
                prev_in_file = None
            try:
                self.place(rec, prev_in_file)
            except RecursionError:
                rec.fail("nested too deeply to import")
            prev_in_file = rec
        try:
            self.resolve(files)
        except RecursionError:
            raise ImportFormatError(main, None, "nested too deeply to import") from None
        leaf = self.find_leaf(recs)
        self.add_name(recs, leaf)
        for what, n in sorted(self.skipped.items()):
            self.report(f"left out {n:,} {what} record{'' if n == 1 else 's'}")
        return assemble(self.nodes, leaf, self.header(main, recs))

    def index(self, recs: list[_Rec]) -> None:
        for rec in recs:
            if rec.uuid is not None and rec.uuid not in self.by_uuid:
                self.by_uuid[rec.uuid] = rec
        for rec in recs:
            raw = rec.raw
            if rec.uuid is not None and self.by_uuid[rec.uuid] is not rec:
                continue
            t = rec.type
            if t == "assistant":
                message = self.message_of(rec)
                mid = message.get("id")
                key = (rec.file, mid) if isinstance(mid, str) and mid else (rec.file, f"#{rec.seq}")
                group = self.groups.get(key)
                if group is None:
                    group = self.groups[key] = _Group()
                group.recs.append(rec)
                self.group_of[rec.seq] = group
                for block in self.blocks_of(rec, message):
                    if block.get("type") == "tool_use":
                        call_id = block.get("id")
                        if not isinstance(call_id, str) or not call_id:
                            rec.fail("a tool_use block needs a string 'id'")
                        name = block.get("name")
                        if call_id not in self.calls:
                            self.calls[call_id] = (
                                group,
                                name if isinstance(name, str) else "unknown",
                            )
            elif (
                t == "user"
                and raw.get("isCompactSummary") is True
                and isinstance(raw.get("parentUuid"), str)
            ):
                boundary = self.by_uuid.get(raw["parentUuid"])
                if (
                    boundary is not None
                    and boundary.raw.get("subtype") == "compact_boundary"
                    and boundary.type == "system"
                    and boundary.uuid not in self.summary_of
                ):
                    assert boundary.uuid is not None
                    self.summary_of[boundary.uuid] = rec

    def message_of(self, rec: _Rec) -> dict[str, Any]:
        message = rec.raw.get("message")
        if not isinstance(message, dict):
            rec.fail(f"a {rec.type} record needs a 'message' object, found {kind(message)}")
        return message

    def content_list(self, rec: _Rec, content: object, what: str) -> list[Any]:
        """Content as a list: none for ``None``, one text block for a string."""
        if content is None:
            return []
        if isinstance(content, str):
            return text_blocks(content)
        if not isinstance(content, list):
            rec.fail(f"{what} must be a string or a list, not {kind(content)}")
        return content

    def blocks_of(self, rec: _Rec, message: dict[str, Any]) -> list[dict[str, Any]]:
        content = self.content_list(rec, message.get("content"), "'message.content'")
        for i, block in enumerate(content):
            if not isinstance(block, dict):
                rec.fail(f"'message.content[{i}]' must be an object, not {kind(block)}")
        return content

    def time_of(self, rec: _Rec) -> str:
        t = rec.timestamp
        if t is not None:
            self.last_time = t
        return self.last_time

    def new_node(self, rec: _Rec, wanted: str, fields: dict[str, Any], parent: _Ref) -> Node:
        node = Node(self.ids.claim(wanted), fields, rec.path, rec.line, rec.uuid)
        self.nodes.append(node)
        self.node_file[node.id] = rec.file
        self.node_raw[node.id] = rec.raw
        self.refs[node.id] = parent
        return node

    def parent_ref(self, rec: _Rec, prev: _Rec | None) -> _Ref:
        """What a record's first entry hangs under (before re-threading ends)."""
        if rec.uuid is None or self.by_uuid[rec.uuid] is not rec:
            return None if prev is None else self.anchor.get(prev.seq)
        pid = rec.raw.get("parentUuid")
        if pid is None and rec.raw.get("subtype") == "compact_boundary":
            logical = rec.raw.get("logicalParentUuid")
            pid = logical if isinstance(logical, str) else None
        if pid is None:
            return None
        parent = self.by_uuid.get(pid)
        if parent is None or parent.seq not in self.anchor:
            # Not in the session, or later in the files: resolved by uuid at the end.
            return None if parent is None else _Later(parent.seq)
        return self.anchor[parent.seq]

    # ---------------------------------------------------------------- placing

    def place(self, rec: _Rec, prev: _Rec | None) -> None:
        raw = rec.raw
        t = rec.type
        duplicate = rec.uuid is not None and self.by_uuid[rec.uuid] is not rec
        parent = self.parent_ref(rec, prev)
        if duplicate:
            node = self.custom(rec, f"{rec.uuid}#duplicate", "duplicate", parent)
            self.anchor[rec.seq] = node
            return
        if t == "assistant":
            group = self.group_of[rec.seq]
            if group.node is None:
                group.node = self.new_node(
                    rec, self.nth_id(rec, 1), {"timestamp": self.time_of(rec)}, parent
                )
            self.anchor[rec.seq] = group
            return
        if t == "user":
            summary_for = raw.get("parentUuid")
            if (
                raw.get("isCompactSummary") is True
                and isinstance(summary_for, str)
                and self.summary_of.get(summary_for) is rec
                and self.by_uuid[summary_for].seq in self.anchor
            ):
                self.anchor[rec.seq] = self.anchor[self.by_uuid[summary_for].seq]
                return
            self.anchor[rec.seq] = self.user(rec, parent)
            return
        if t == "system" and raw.get("subtype") == "compact_boundary" and rec.uuid is not None:
            self.anchor[rec.seq] = self.compaction(rec, parent)
            return
        if t == "progress" and not self.keep_progress:
            self.skipped["progress"] = self.skipped.get("progress", 0) + 1
            self.anchor[rec.seq] = parent
            return
        self.anchor[rec.seq] = self.custom(rec, rec.uuid or self.line_id(rec), t, parent)

    def nth_id(self, rec: _Rec, n: int) -> str:
        """The id of the n-th entry made from a record: its uuid, then ``<uuid>#<n>``."""
        base = rec.uuid or self.line_id(rec)
        return base if n == 1 else f"{base}#{n}"

    def line_id(self, rec: _Rec) -> str:
        return f"L{rec.line}" if rec.file == 0 else f"{rec.path.stem}:L{rec.line}"

    def custom(self, rec: _Rec, wanted: str, what: str, parent: _Ref) -> Node:
        fields = {
            "type": "custom",
            "timestamp": self.time_of(rec),
            "customType": f"claude-code.{what}",
            "data": rec.raw,
        }
        return self.new_node(rec, wanted, fields, parent)

    def compaction(self, rec: _Rec, parent: _Ref) -> Node:
        assert rec.uuid is not None
        raw = rec.raw
        meta = raw.get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        tokens = meta.get("preTokens")
        summary_rec = self.summary_of.get(rec.uuid)
        uuids = [rec.uuid]
        if summary_rec is not None:
            message = self.message_of(summary_rec)
            summary = text_of(message.get("content"))
            assert summary_rec.uuid is not None
            uuids.append(summary_rec.uuid)
        else:
            content = raw.get("content")
            summary = content if isinstance(content, str) else ""
        details = {"trigger": meta.get("trigger")} if "trigger" in meta else None
        fields: dict[str, Any] = {
            "type": "compaction",
            "timestamp": self.time_of(rec),
            "summary": summary,
            "firstKeptEntryId": rec.uuid,
            "tokensBefore": tokens
            if isinstance(tokens, int) and not isinstance(tokens, bool)
            else 0,
            "claudeCode": {"uuids": uuids},
        }
        if details is not None:
            fields["details"] = details
        node = self.new_node(rec, rec.uuid, fields, parent)
        fields["firstKeptEntryId"] = node.id
        return node

    def user(self, rec: _Rec, parent: _Ref) -> _Ref:
        raw = rec.raw
        message = self.message_of(rec)
        blocks = self.blocks_of(rec, message)
        stamp = self.time_of(rec)
        when = ms(stamp)
        prev: _Ref = parent
        made = 0
        rest: list[dict[str, Any]] = []
        others: list[dict[str, Any]] = []
        results = [b for b in blocks if b.get("type") == "tool_result"]
        for block in blocks:
            btype = block.get("type")
            if btype == "tool_result":
                call_id = block.get("tool_use_id")
                if not isinstance(call_id, str):
                    rec.fail("a tool_result block needs a string 'tool_use_id'")
                call = self.calls.get(call_id)
                if call is not None and call[0].node is None:
                    call = None  # a result written before its call: placed where it is
                msg = tool_result(
                    call_id,
                    call[1] if call is not None else "unknown",
                    self.result_content(rec, block.get("content")),
                    block.get("is_error") is True,
                    when,
                )
                details = raw.get("toolUseResult")
                if details is not None and (len(results) == 1 or made == 0):
                    msg["details"] = details
                made += 1
                wanted = self.nth_id(rec, made)
                fields = {"type": "message", "timestamp": stamp, "message": msg}
                if call is not None:
                    group = call[0]
                    node = self.new_node(rec, wanted, fields, group.tail())
                    group.results.append(node)
                    prev = group
                else:
                    node = self.new_node(rec, wanted, fields, prev)
                    prev = node
            elif btype == "text" and isinstance(block.get("text"), str):
                rest.append({"type": "text", "text": block["text"]})
            elif btype == "image":
                rest.append(self.image(rec, block))
            else:
                others.append(block)
        content = message.get("content")
        if rest or others or not made:
            user: dict[str, Any] = {
                "role": "user",
                "content": content if isinstance(content, str) else rest,
                "timestamp": when,
            }
            extra: dict[str, Any] = {}
            if raw.get("isMeta") is True:
                extra["isMeta"] = True
            if others:
                extra["otherBlocks"] = others
            fields = {"type": "message", "timestamp": stamp, "message": user}
            if extra:
                fields["claudeCode"] = extra
            made += 1
            prev = self.new_node(rec, self.nth_id(rec, made), fields, prev)
        return prev

    def image(self, rec: _Rec, block: dict[str, Any]) -> dict[str, Any]:
        source = block.get("source")
        if isinstance(source, dict) and isinstance(source.get("data"), str):
            mime = source.get("media_type")
            return {
                "type": "image",
                "data": source["data"],
                "mimeType": mime if isinstance(mime, str) else "image/png",
            }
        return {"type": "text", "text": f"[image: {json.dumps(source)[:200]}]"}

    def result_content(self, rec: _Rec, content: object) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for block in self.content_list(rec, content, "a tool_result's 'content'"):
            if (
                isinstance(block, dict)
                and block.get("type") == "text"
                and isinstance(block.get("text"), str)
            ):
                out.append({"type": "text", "text": block["text"]})
            elif isinstance(block, dict) and block.get("type") == "image":
                out.append(self.image(rec, block))
            else:
                out.append({"type": "text", "text": json.dumps(block, ensure_ascii=False)})
        return out

    # ---------------------------------------------------------------- finishing

    def resolve(self, files: list[Path]) -> None:
        """Turn parent references into ids; fill in assistant messages; add subagent markers."""
        for group in self.groups.values():
            if group.node is not None:
                self.fill_assistant(group)
        for node in list(self.nodes):
            ref = self.refs[node.id]
            node.parent = self.ref_id(ref)
        markers: dict[tuple[int, str | None], Node] = {}
        agents = self.task_calls()
        for node in list(self.nodes):
            f = self.node_file[node.id]
            if f > 0:
                if node.parent is not None and self.node_file[node.parent] == f:
                    continue  # inside the subagent's own branch
                key = (f, node.parent)
            elif self.is_sidechain_root(node):
                key = (0, node.id)
            else:
                continue
            marker = markers.get(key)
            if marker is None:
                marker = self.marker(files[f], node, agents)
                marker.parent = node.parent
                markers[key] = marker
            node.parent = marker.id

    def is_sidechain_root(self, node: Node) -> bool:
        """A main-file entry of an old in-file sidechain whose parent is not one."""
        if self.node_raw.get(node.id, {}).get("isSidechain") is not True:
            return False
        return (
            node.parent is None or self.node_raw.get(node.parent, {}).get("isSidechain") is not True
        )

    def task_calls(self) -> dict[str, tuple[object, object]]:
        """agentId -> (Task call id, subagent_type) from the main file's Task results."""
        out: dict[str, tuple[object, object]] = {}
        for rec in self.by_uuid.values():
            result = rec.raw.get("toolUseResult")
            if rec.type != "user" or not isinstance(result, dict):
                continue
            agent = result.get("agentId")
            content = (
                rec.raw.get("message", {}).get("content")
                if isinstance(rec.raw.get("message"), dict)
                else None
            )
            if not isinstance(agent, str) or not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    call_id = block.get("tool_use_id")
                    sub_type = None
                    call = self.calls.get(call_id) if isinstance(call_id, str) else None
                    if call is not None:
                        sub_type = self.call_input(call[0], call_id).get("subagent_type")
                    out.setdefault(agent, (call_id, sub_type))
        return out

    def call_input(self, group: _Group, call_id: object) -> dict[str, Any]:
        for rec in group.recs:
            for block in self.blocks_of(rec, self.message_of(rec)):
                if block.get("type") == "tool_use" and block.get("id") == call_id:
                    value = block.get("input")
                    return value if isinstance(value, dict) else {}
        return {}

    def marker(self, path: Path, first: Node, agents: dict[str, tuple[object, object]]) -> Node:
        rec = self.by_uuid.get(first.record_id) if isinstance(first.record_id, str) else None
        raw = rec.raw if rec is not None else {}
        agent = raw.get("agentId")
        if not isinstance(agent, str):
            stem = path.stem
            agent = stem[len("agent-") :] if stem.startswith("agent-") else None
        data: dict[str, Any] = {"agentId": agent, "file": path.name}
        if isinstance(agent, str) and agent in agents:
            data["toolCallId"], data["subagentType"] = agents[agent]
        if isinstance(agent, str) and agent.startswith("acompact"):
            data["kind"] = "compaction"
        node = Node(
            self.ids.claim(f"subagent:{agent or path.stem}"),
            {
                "type": "custom",
                "timestamp": first.fields.get("timestamp", EPOCH),
                "customType": "claude-code.subagent",
                "data": data,
            },
            first.path,
            first.line,
            None,
        )
        self.nodes.append(node)
        self.node_file[node.id] = self.node_file.get(first.id, 0)
        return node

    def ref_id(self, ref: _Ref) -> str | None:
        seen: set[int] = set()
        while isinstance(ref, _Later):
            if ref.seq in seen:
                return None
            seen.add(ref.seq)
            ref = self.anchor.get(ref.seq)
        if ref is None:
            return None
        if isinstance(ref, _Group):
            return ref.tail().id
        return ref.id

    def fill_assistant(self, group: _Group) -> None:
        assert group.node is not None
        content: list[dict[str, Any]] = []
        others: list[dict[str, Any]] = []
        usage: object = None
        stop: object = None
        model: object = None
        error = False
        uuids: list[str] = []
        for rec in group.recs:
            if rec.uuid is not None:
                uuids.append(rec.uuid)
            message = self.message_of(rec)
            if isinstance(message.get("usage"), dict):
                usage = message["usage"]
            if message.get("stop_reason") is not None:
                stop = message.get("stop_reason")
            if isinstance(message.get("model"), str):
                model = message["model"]
            error = error or rec.raw.get("isApiErrorMessage") is True
            for block in self.blocks_of(rec, message):
                btype = block.get("type")
                if btype == "text" and isinstance(block.get("text"), str):
                    content.append({"type": "text", "text": block["text"]})
                elif btype == "thinking" and isinstance(block.get("thinking"), str):
                    out = {"type": "thinking", "thinking": block["thinking"]}
                    if isinstance(block.get("signature"), str):
                        out["thinkingSignature"] = block["signature"]
                    content.append(out)
                elif btype == "redacted_thinking":
                    data = block.get("data")
                    content.append(
                        {
                            "type": "thinking",
                            "thinking": "",
                            "redacted": True,
                            "thinkingSignature": data if isinstance(data, str) else "",
                        }
                    )
                elif btype == "tool_use":
                    args = block.get("input")
                    content.append(
                        {
                            "type": "toolCall",
                            "id": block["id"],
                            "name": block.get("name")
                            if isinstance(block.get("name"), str)
                            else "unknown",
                            "arguments": args if isinstance(args, dict) else {},
                        }
                    )
                else:
                    others.append(block)
        first = group.recs[0]
        has_calls = any(b["type"] == "toolCall" for b in content)
        if error:
            reason = "error"
        elif isinstance(stop, str) and stop in _STOP:
            reason = _STOP[stop]
        else:
            reason = "toolUse" if has_calls else "stop"
        message_out: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": model if isinstance(model, str) else "unknown",
            "usage": self.usage(usage),
            "stopReason": reason,
            "timestamp": ms(first.timestamp),
        }
        if error:
            message_out["errorMessage"] = (
                "\n".join(b["text"] for b in content if b["type"] == "text") or "API error"
            )
        extra: dict[str, Any] = {"uuids": uuids}
        if isinstance(stop, str) and stop not in _STOP:
            extra["stopReason"] = stop
        if others:
            extra["otherBlocks"] = others
        group.node.fields.update({"type": "message", "message": message_out, "claudeCode": extra})

    @staticmethod
    def usage(raw: object) -> dict[str, Any]:
        if not isinstance(raw, dict):
            return ZERO_USAGE

        def count(key: str) -> int:
            value = raw.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else 0

        out = {
            "input": count("input_tokens"),
            "output": count("output_tokens"),
            "cacheRead": count("cache_read_input_tokens"),
            "cacheWrite": count("cache_creation_input_tokens"),
        }
        return {
            **out,
            "totalTokens": sum(out.values()),
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        }

    def find_leaf(self, recs: list[_Rec]) -> str | None:
        if not self.nodes:
            return None
        start: _Ref = None
        for rec in reversed(recs):
            if (
                rec.file == 0
                and rec.type in ("user", "assistant")
                and rec.raw.get("isSidechain") is not True
                and (rec.uuid is None or self.by_uuid[rec.uuid] is rec)
            ):
                start = self.anchor[rec.seq]
                break
        at = self.ref_id(start) if start is not None else None
        if at is None:
            main_nodes = [n for n in self.nodes if self.node_file.get(n.id) == 0]
            at = (main_nodes or self.nodes)[-1].id
        children: dict[str, list[Node]] = {}
        for node in self.nodes:
            if node.parent is not None:
                children.setdefault(node.parent, []).append(node)
        seen = {at}
        while True:
            below = [
                c
                for c in children.get(at, ())
                if not c.is_message and c.fields.get("customType") != "claude-code.subagent"
            ]
            if not below or below[-1].id in seen:
                return at
            at = below[-1].id
            seen.add(at)

    def add_name(self, recs: list[_Rec], leaf: str | None) -> None:
        name: str | None = None
        for rec in recs:
            title = rec.raw.get("customTitle")
            if rec.type == "custom-title" and isinstance(title, str) and title:
                name = title
        if name is None and leaf is not None:
            by_id = {n.id: n for n in self.nodes}
            on_path: set[str] = set()
            at: str | None = leaf
            while at is not None and at not in on_path:
                on_path.add(at)
                at = by_id[at].parent
            for rec in recs:
                target = rec.raw.get("leafUuid")
                summary = rec.raw.get("summary")
                if (
                    rec.type == "summary"
                    and isinstance(summary, str)
                    and summary
                    and isinstance(target, str)
                    and target in self.by_uuid
                ):
                    ref = self.ref_id(self.anchor.get(self.by_uuid[target].seq))
                    if ref in on_path:
                        name = summary
        if name is not None:
            first = self.nodes[0] if self.nodes else None
            stamp = first.fields.get("timestamp", EPOCH) if first else EPOCH
            self.nodes.insert(0, title_node(self.ids, name, stamp, None))

    def header(self, main: Path, recs: Iterable[_Rec]) -> SessionHeader:
        session_id = cwd = stamp = version = None
        for rec in recs:
            raw = rec.raw
            if session_id is None and isinstance(raw.get("sessionId"), str):
                session_id = raw["sessionId"]
            if cwd is None and isinstance(raw.get("cwd"), str):
                cwd = raw["cwd"]
            if stamp is None and rec.timestamp is not None:
                stamp = rec.timestamp
            if version is None and isinstance(raw.get("version"), str):
                version = raw["version"]
        session_id = session_id or main.stem
        return imported_header(
            session_id,
            stamp or EPOCH,
            cwd or "",
            {"format": FORMAT, "sessionId": session_id, "file": main.name, "version": version},
        )
