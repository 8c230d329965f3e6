"""Session files on disk: :func:`load` and :func:`dump`, in Pi's JSON Lines format.

A session file is JSON Lines, UTF-8, one object per line: the header
(``"type": "session"``), then one entry per line (see ``docs/pi-session-format.md``
in the shared folder).  ptree reads versions 1, 2 and 3 (old versions are migrated in
memory, :mod:`ptree.pi.migrate`) and writes version 3.  **Reading never modifies,
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
skipped, a missing parent makes a root, an entry whose optional field has the wrong
type is kept with that field set aside (as Pi keeps it), and each is reported with a
:class:`~ptree.SessionFileWarning`.  A torn last line (a crash while writing: no
newline at the end and not valid JSON) is recovered in both modes, with a warning.
Blank lines are skipped, as Pi does; a second ``session`` line (an old Pi bug wrote
them) is skipped with a warning.
"""

from __future__ import annotations

import gc
import os
import warnings
from array import array
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any, cast

import attrs

from ..entries import Entry, MessageEntry, entry_from_json
from ..errors import CycleError, InvalidEntryError, InvalidMessageError, UnknownEntryError
from ..frozen import FrozenDict, FrozenList, frozen_dict_unchecked
from ..header import CURRENT_VERSION, SessionHeader
from ..ids import counter_of
from ..tree import SessionTree, TreeBuilder
from . import fast as fast_path
from .errors import SessionFileError, SessionFileWarning, UnsupportedVersionError
from .files import read_regular, with_stamp
from .lines import (
    BATCH_KEY,
    LEAF_TYPE,
    LINE_DEPTH,
    TOO_DEEP,
    StrPath,
    containers_made,
    deeper_than,
    is_torn,
    parse_line,
    scan_once,
)
from .migrate import migrate_record, record_lines

__all__ = ["FileState", "load", "read_state"]

_EMPTY = FrozenDict()
# A fast path makes plain message entries without attrs' validators, after checking
# exactly what entry_from_json would check (MessageEntry.unchecked's contract).
_unchecked_message = MessageEntry.unchecked


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


@attrs.define
class _Found:
    """What :meth:`_Reader.entries_of` found (and :meth:`_Reader.add_run` before it):
    the entries in file order, each one's line, the store they were linked into while
    they came in order, and the ``leaf`` records' targets."""

    entries: list[Entry] = attrs.Factory(list)
    # The line of each entry (entry_lines[k] for entries[k]), as machine integers: a
    # dict from id to line is made only where an error or repair needs one.  The first
    # ``streamed`` entries (added by _Reader.add_run) are on the consecutive lines from
    # ``first_line`` and have none here.
    entry_lines: array[int] = attrs.Factory(lambda: array("q"))
    line_of: dict[str, int] | None = None
    first_line: int = 0
    streamed: int = 0
    builder: TreeBuilder = attrs.Factory(TreeBuilder)
    leaf_target: dict[str, str | None] = attrs.Factory(dict)
    leaf: str | None = None
    in_order: bool = True

    def lines_by_id(self) -> dict[str, int]:
        """Each entry's line by its id, made on first need (an error, a repair)."""
        if self.line_of is None:
            first = self.first_line
            lines = chain(range(first, first + self.streamed), self.entry_lines)
            self.line_of = dict(zip((e.id for e in self.entries), lines, strict=True))
        return self.line_of


class _Reader:
    """One read of one file; collects the entries and reports or raises problems."""

    def __init__(self, path: str, strict: bool) -> None:
        self.path = path
        self.strict = strict
        # The largest e<k> among the ids of skipped unfinished commits: the tree's
        # counter goes past it, so that new default ids never repeat one of them (Pi,
        # which reads those lines, would see the id twice).
        self.skipped_counter = 0

    def fail(self, line: int | None, reason: str, entry_id: object = None) -> None:
        """Raise in strict mode; warn that the line was skipped in lenient mode."""
        if self.strict:
            raise SessionFileError(self.path, line, reason, entry_id=entry_id)
        self.warn(line, f"skipped: {reason}", reason, entry_id)

    def warn(
        self,
        line: int | None,
        text: str,
        reason: str,
        entry_id: object = None,
        *,
        strict_too: bool = False,
    ) -> None:
        """Warn ``FILE:LINE: text``; ``reason`` (what is wrong) and the rest as attributes."""
        where = self.path if line is None else f"{self.path}:{line}"
        warnings.warn(
            SessionFileWarning(
                f"{where}: {text}",
                path=self.path,
                line=line,
                reason=reason,
                entry_id=entry_id,
                strict_too=strict_too,
            ),
            stacklevel=4,
        )

    def line_text(self, i: int, raw: bytes) -> str | None:
        """Line ``i`` as text; ``None`` for a line that is not UTF-8.

        A line that is UTF-8 but for a character cut short at its very end (a crash
        in the middle of writing a multi-byte character) has its text before that
        character in :attr:`cut`, to be judged as a torn line.  A byte-order mark
        opening the file is refused (:class:`~ptree.SessionFileError`), as Pi 1.6
        refuses it.
        """
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.end == len(raw) and exc.reason == "unexpected end of data":
                # The first error is at the end, so all before it is text.
                self.cut[i] = raw[: exc.start].decode("utf-8")
            return None
        if i == 0 and text.startswith("\ufeff"):
            # Pi 1.6 refuses such a file (its header line does not parse), and no Pi
            # writes one: accepting it would hide a file Pi cannot open.
            raise SessionFileError(
                self.path,
                1,
                "the file starts with a UTF-8 byte-order mark, which Pi 1.6 refuses: "
                "remove the first three bytes (EF BB BF)",
            )
        return text

    def read(self, data: bytes) -> FileState:
        """The stages of a read: lines to records (:meth:`records_of`), unfinished
        commits dropped (:meth:`whole_batches`), records to entries
        (:meth:`entries_of`), entries to the tree (:meth:`tree_of`)."""
        header = self.records_of(data)
        records, rec_lines = self.records, self.rec_lines
        if self.batched:
            records, rec_lines = self.whole_batches(records, rec_lines)
        found = self.entries_of(header, records, rec_lines, record_lines(self.parsed))
        tree = self.tree_of(found, header)
        return FileState(tree, header.version, self.ends_clean, set(found.leaf_target), len(data))

    def records_of(self, data: bytes) -> SessionHeader:
        """Stage 1: parse every line into :attr:`records` (with :attr:`rec_lines`, their
        line numbers); the header is returned.  O(size of the file).

        Lines are cut out one at a time, not split all at once: a message the fast
        path keeps undecoded refers to the file's bytes, so no second copy of the
        file is ever held.  :attr:`parsed` holds the line numbers of all records that
        are JSON (header first): a version 1 ``firstKeptEntryIndex`` counts them.
        Plain message lines of a version 3 file take the fast path
        (:mod:`ptree.pi.fast`): checked whole, their message decoded on first read;
        with the C scanner, a few thousand lines are checked per call and only the
        others go through :meth:`line`.  While no record waits for stage 3, a
        chunk's run of entries in order is added to the tree at once
        (:meth:`add_run`): a session of message entries alone never holds a list of
        every record (10^6 small entries: 12 B an entry at the peak).
        """
        size = len(data)
        self.data = data
        self.view = memoryview(data)
        self.ends_clean = size == 0 or data.endswith(b"\n")
        self.cut: dict[int, str] = {}
        self.records: list[FrozenDict | Entry] = []
        # Line numbers as machine integers (no object per line), of 4 bytes where the
        # file's size bounds them below 2^31, else 8.
        self.line_code = "i" if size < 2**31 - 1 else "q"
        self.rec_lines: array[int] = array(self.line_code)
        self.found = _Found(entry_lines=array(self.line_code))
        self.parsed: list[int] = []
        self.batched = False  # a record marks a multi-line commit (BATCH_KEY)
        self.file_header: SessionHeader | None = None
        self.fast: Callable[[bytes, memoryview], Entry | None] | None = None
        find = data.find
        line = self.line
        i = start = 0
        # (No count of the lines first: the loops end at the end of the data.)
        while start < size and self.file_header is None:
            stop = find(b"\n", start)
            if stop < 0:
                stop = size
            line(i, start, stop)
            i, start = i + 1, stop + 1
        lines = (
            fast_path.line_scanner(data)
            if self.file_header is not None and self.fast is not None
            else None
        )
        records, rec_lines = self.records, self.rec_lines
        while start < size:
            if lines is None:
                stop = find(b"\n", start)
                if stop < 0:
                    stop = size
                line(i, start, stop)
                i, start = i + 1, stop + 1
                continue
            # The C scanner: an entry for each plain message line, a line's start
            # offset for any other.
            items, start = lines.scan(start)
            if int not in map(type, items):  # entries only: the usual chunk, in C
                if not records:
                    # Nothing before them waits for stage 3: the run of them that
                    # stage 3 would add in order is added now (the chunk's list, not
                    # a list of every record, is all they cost meanwhile).
                    taken = self.add_run(items, i + 1)
                    if taken:
                        i += taken
                        items = items[taken:]
                records += items
                rec_lines.extend(range(i + 1, i + 1 + len(items)))
                i += len(items)
                continue
            for item in items:
                if isinstance(item, int):
                    stop = find(b"\n", item)
                    line(i, item, size if stop < 0 else stop)
                else:  # (a version 3 file: no record_line lookups, so no ``parsed``)
                    records.append(item)
                    rec_lines.append(i + 1)
                i += 1
        if self.file_header is None:
            raise SessionFileError(self.path, None, "empty file: no session header")
        return self.file_header

    def add_run(self, items: list[Any], first_line: int) -> int:
        """Add the run of scanned entries from ``items[0]`` (on lines ``first_line``,
        ...) that stage 3 would add in file order, as it would add them (see
        :meth:`entries_of`): how many were added (none while the entries do not come
        in order).  For a chunk no record comes before in the file.  O(len(items)).
        """
        found = self.found
        if found.streamed == 0:
            found.first_line = first_line
        if (
            not found.in_order
            or found.line_of is not None
            or first_line != found.first_line + found.streamed  # a line between
        ):
            return 0
        builder = found.builder
        parents = fast_path.in_order_parents(items, 0, builder.index, found.leaf_target)
        if not parents:
            return 0
        add = builder.add
        for item, parent in zip(items, parents, strict=False):  # parents: perhaps fewer
            add(item, parent)
        n = len(parents)
        found.streamed += n
        found.leaf = items[n - 1].id
        return n

    def line(self, i: int, line_start: int, stop: int) -> None:
        """Line ``i`` (``data[line_start:stop]``), the ordinary way: a record, the
        header, or a problem reported (:meth:`fail`, :meth:`torn`)."""
        path = self.path
        raw = self.data[line_start:stop]
        fast = self.fast
        if fast is not None and raw:
            entry = fast(raw, self.view[line_start:stop])
            if entry is not None:  # (version 3: ``parsed`` is not needed)
                self.records.append(entry)
                self.rec_lines.append(i + 1)
                return
        header = self.file_header
        text = self.line_text(i, raw)
        if not text:
            if text is None:
                if header is None:
                    raise SessionFileError(path, i + 1, "no session header: not UTF-8")
                cut = self.cut.get(i)
                if cut is not None and is_torn(cut):
                    self.torn(i + 1, stop == len(self.data))
                else:
                    self.fail(i + 1, "not UTF-8 text")
            return
        lineno = i + 1
        before = containers_made()
        try:
            value, end = scan_once(text, 0)
        except (StopIteration, ValueError, RecursionError):
            end = -1
        if end == len(text) and containers_made() - before > LINE_DEPTH + 1 and deeper_than(value):
            # Valid JSON, but deeper than anything ptree stores or writes.
            if header is None:
                raise SessionFileError(path, lineno, f"no session header: {TOO_DEEP}")
            self.fail(lineno, TOO_DEEP)
            return
        if end != len(text):
            try:
                value = parse_line(text)
            except ValueError as exc:
                if text.isspace():
                    return
                if header is None:
                    raise SessionFileError(path, lineno, f"no session header: {exc}") from None
                if stop == len(self.data):  # the last line, without its newline
                    self.torn(lineno, True)
                    return
                if is_torn(text):
                    self.torn(lineno, False)
                    return
                self.fail(lineno, str(exc))
                return
        if header is None:
            header = self.file_header = self.header(lineno, value)
            self.parsed.append(lineno)
            if header.version >= 3 and fast_path.AVAILABLE:
                self.fast = fast_path.message_line
            return
        self.parsed.append(lineno)
        if type(value) is not FrozenDict:
            self.fail(lineno, f"not a JSON object but {_kind(value)}")
            return
        if BATCH_KEY in value:
            self.batched = True
        self.records.append(value)
        self.rec_lines.append(lineno)

    def whole_batches(
        self, records: list[FrozenDict | Entry], rec_lines: Sequence[int]
    ) -> tuple[list[FrozenDict | Entry], array[int]]:
        """The records without the lines of unfinished commits, batch marks taken off.

        A multi-line commit marks its lines ``[k, n]`` (:data:`BATCH_KEY`); a process
        killed in the middle of the write leaves lines ``1..m`` of ``n``, the last
        one perhaps torn.  Such a commit never happened: its lines are skipped, in
        both modes, with a warning (like a torn line).  A commit is whole when lines
        ``1..n`` follow each other on consecutive lines.  O(number of records).
        """
        out: list[FrozenDict | Entry] = []
        out_lines: list[int] = []
        group: list[FrozenDict | Entry] = []
        group_lines: list[int] = []
        size = 0

        def drop() -> None:
            for rec in group:
                eid = rec.get("id") if type(rec) is FrozenDict else None
                if type(eid) is str:
                    self.skipped_counter = max(self.skipped_counter, counter_of(eid))
            self.warn(
                group_lines[0],
                f"skipped an unfinished commit ({len(group)} of its {size} lines were "
                "written: a process stopped while writing it)",
                "an unfinished commit (a process stopped while writing it)",
                strict_too=True,
            )
            group.clear()
            group_lines.clear()

        for rec, lineno in zip(records, rec_lines, strict=True):
            mark = rec.get(BATCH_KEY) if type(rec) is FrozenDict else None
            if mark is None:
                if group:
                    drop()
                out.append(rec)
                out_lines.append(lineno)
                continue
            if not (
                type(mark) is FrozenList
                and len(mark) == 2
                and type(mark[0]) is int
                and type(mark[1]) is int
                and 1 <= mark[0] <= mark[1]
            ):
                self.fail(lineno, f"{BATCH_KEY} must be [k, n] with 1 <= k <= n")
                continue
            k, n = mark
            bare = frozen_dict_unchecked(
                {key: v for key, v in rec.items() if key != BATCH_KEY}  # type: ignore[union-attr]
            )
            if group and not (k == len(group) + 1 and n == size and lineno == group_lines[-1] + 1):
                drop()
            if not group:
                if k != 1:  # the rest of a commit whose start was lost or torn
                    group_lines.append(lineno)
                    group.append(bare)
                    size = n
                    drop()
                    continue
                size = n
            group.append(bare)
            group_lines.append(lineno)
            if len(group) == size:
                out += group
                out_lines += group_lines
                group.clear()
                group_lines.clear()
        if group:
            drop()
        return out, array(self.line_code, out_lines)

    def torn(self, lineno: int, last: bool) -> None:
        """Report a line that a crash cut short, skipped in both modes."""
        if last:
            self.warn(
                lineno,
                "recovered a torn last line (a write that did not finish): ignored it",
                "a torn last line (a write that did not finish)",
                strict_too=True,
            )
        else:
            # A crash cut this line short and a later write began afresh on the next
            # line: the same recovery, found later.
            self.warn(
                lineno,
                "skipped a torn line (a write that did not finish, followed by later writes)",
                "a torn line (a write that did not finish, followed by later writes)",
                strict_too=True,
            )

    def header(self, lineno: int, value: Any) -> SessionHeader:
        if type(value) is not FrozenDict or value.get("type") != "session":
            raise SessionFileError(
                self.path,
                lineno,
                'no session header: the first line must be {"type":"session",...}',
            )
        try:
            header = SessionHeader.from_json(value)
        except (InvalidEntryError, InvalidMessageError) as exc:
            raise SessionFileError(self.path, lineno, f"invalid session header: {exc}") from None
        if header.version > CURRENT_VERSION:
            raise UnsupportedVersionError(self.path, lineno, header.version)
        return header

    def entries_of(
        self,
        header: SessionHeader,
        records: list[FrozenDict | Entry],
        rec_lines: Sequence[int],
        record_line: Callable[[int], int | None],
    ) -> _Found:
        """Stage 3: the records as entries, in file order: old versions migrated,
        duplicates and ``leaf`` records resolved, problems reported.  O(records).

        Entries are linked as they come (parents before children, as every writer
        does it): one pass, no second index.  Anything unusual (a parent further
        down, a missing one, a cycle) is left to :meth:`tree_of`.
        """
        version = header.version
        # What stage 1 added already (runs of scanned entries at the file's start).
        found = self.found
        builder = found.builder
        # While they come in order, the entries are the store's own list (add appends
        # to it): one list where there were two (8 B an entry of 10^6 at the peak).
        entries = found.entries = builder.entries
        entry_lines = found.entry_lines
        leaf_target = found.leaf_target
        leaf: str | None = found.leaf
        prev: str | None = found.leaf
        leaf_records = version >= 2  # a v1 file has no ids for a record to target
        add = builder.add
        # The store's index is the reader's while entries come in order (add fills
        # it); after that the store is dropped, and the index goes on alone.
        by_id = builder.index
        in_order = found.in_order
        message_fast = version >= 3
        loaded = fast_path.LoadedMessage
        # (Where the scanner does not make the entries, no runs: the general path.)
        runs = fast_path.ENTRIES_IN_C
        run_of = fast_path.in_order_parents
        k, count = 0, len(records)
        while k < count:
            if runs and in_order and found.line_of is None and type(records[k]) is loaded:
                # Nearly every line: a run of message entries the scanner made, in
                # order, their ids new (found in C), added as the general path below
                # would add each of them.
                parents = run_of(records, k, by_id, leaf_target)
                if parents:
                    run = records[k : k + len(parents)]
                    for item, parent in zip(run, parents, strict=True):
                        add(item, parent)  # type: ignore[arg-type]
                    entry_lines.extend(rec_lines[k : k + len(parents)])
                    leaf = prev = run[-1].id  # type: ignore[union-attr]
                    k += len(parents)
                    continue
            item, lineno = records[k], rec_lines[k]
            k += 1
            entry: Entry | None = None
            eid: str
            pid: str | None
            rec: FrozenDict
            if type(item) is loaded:  # checked and made by a fast path
                entry = item
                eid = item.id
                pid = item.parent_id
                rec = _EMPTY
                kind: object = "message"
            else:
                rec = cast(FrozenDict, item)
                kind = rec.get("type")
            if entry is not None:
                pass
            elif kind == "message" and message_fast and len(rec) == 5:
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
                    entry = _unchecked_message(eid, pid, ts, msg)
            if entry is None:
                if kind == "session":
                    self.warn(
                        lineno,
                        "skipped a second session header",
                        "a second session header",
                        strict_too=True,
                    )
                    continue
                if version < 3:
                    rec = migrate_record(rec, version, lineno, prev, record_line)
                if kind == LEAF_TYPE:
                    if not leaf_records:
                        self.fail(
                            lineno,
                            "a leaf record in a version 1 file, which has no ids for it to name",
                        )
                        continue
                    target = self.leaf_record(rec, lineno, by_id, leaf_target)
                    if target is not _SKIP:
                        leaf = target  # type: ignore[assignment]
                    continue
                try:
                    entry = entry_from_json(rec)
                except (InvalidEntryError, InvalidMessageError) as exc:
                    bad = rec.get("id")
                    kept = None if self.strict else self.keep_invalid(rec)
                    if kept is None:
                        self.fail(lineno, str(exc), bad if type(bad) is str else None)
                        continue
                    self.warn(
                        lineno,
                        f"kept entry {kept.id!r} with its invalid optional field set aside "
                        f"(written back as it was): {exc}",
                        str(exc),
                        kept.id,
                    )
                    entry = kept
                eid = entry.id
                pid = entry.parent_id
            if eid in by_id or eid in leaf_target:
                first = found.lines_by_id().get(eid)
                same = by_id.get(eid)
                # (Each entry writes back exactly the JSON of its line.)
                if same is not None and first is not None and same.to_json() == entry.to_json():
                    # An exact copy of an earlier line: Pi 0.73.1 flushed whole sessions
                    # twice into one file.  Pi reads one entry from both lines, and its
                    # leaf is the last line's id; ptree does the same.
                    self.warn(
                        lineno,
                        f"skipped an exact duplicate of line {first} (entry {eid!r})",
                        "an exact duplicate line",
                        eid,
                        strict_too=True,
                    )
                    leaf = prev = eid
                    continue
                self.fail(
                    lineno,
                    f"duplicate id {eid!r}" + (f" (first on line {first})" if first else ""),
                    eid,
                )
                continue
            if in_order:
                parent = None if pid is None else by_id.get(pid)
                if parent is None and pid is not None:
                    in_order = False
                    # From here on the entries are not all the store's: a list of their own.
                    entries = found.entries = list(entries)
                    by_id[eid] = entry
                    entries.append(entry)
                else:
                    add(entry, parent)  # by_id[eid] = entry, entries.append(entry), ...
            else:
                by_id[eid] = entry
                entries.append(entry)
            if found.line_of is not None:
                found.line_of[eid] = lineno
            entry_lines.append(lineno)
            leaf = prev = eid
        found.leaf, found.in_order = leaf, in_order
        return found

    def tree_of(self, found: _Found, header: SessionHeader) -> SessionTree:
        """Stage 4: the tree of the entries :meth:`entries_of` found.  O(1) when they
        came in order (linked already); else O(entries), through
        :meth:`SessionTree.from_entries`, each problem named by its line."""
        if found.in_order and not found.leaf_target:
            leaf = found.leaf
            leaf_entry = None if leaf is None else found.builder.index[leaf]
            return found.builder.finish(leaf_entry, header=header, counter=self.skipped_counter)
        entries = found.entries
        if found.leaf_target:
            entries = [_through_leaf_records(e, found.leaf_target) for e in entries]
        return self.link(entries, found.leaf, header, found.lines_by_id())

    def keep_invalid(self, rec: FrozenDict) -> Entry | None:
        """The entry with its invalid optional fields set aside, or ``None``."""
        try:
            return entry_from_json(rec, keep_invalid=True)
        except (InvalidEntryError, InvalidMessageError):
            return None

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
                return SessionTree.from_entries(
                    entries, leaf_id=leaf, header=header, counter=self.skipped_counter
                )
            except CycleError as exc:
                first = min(exc.entry_ids, key=lambda i: line_of.get(i, 0))
                raise SessionFileError(path, line_of.get(first), f"{exc}", entry_id=first) from None
            except UnknownEntryError as exc:
                child = next((e for e in entries if e.parent_id == exc.entry_id), None)
                if child is None:  # pragma: no cover - the leaf is always known here
                    raise SessionFileError(path, None, str(exc)) from None
                raise SessionFileError(
                    path,
                    line_of.get(child.id),
                    f"entry {child.id!r} names a parent {exc.entry_id!r} that does not exist",
                    entry_id=child.id,
                ) from None

        def repaired(entry: Entry, reason: str) -> None:
            self.warn(
                line_of.get(entry.id),
                f"entry {entry.id!r}: {reason}",
                reason.removesuffix(": made a root"),
                entry.id,
            )

        return SessionTree.from_entries(
            entries,
            leaf_id=leaf,
            header=header,
            on_repair=repaired,
            counter=self.skipped_counter,
        )


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

    Cost: O(len(data)), as :func:`load` (which calls it after reading the file); no
    file is opened.

    Args:
        path: where ``data`` came from, named by errors and warnings (a store passes
            its own name for the session).
        data: the file's whole content.
        strict: raise on any bad line (the default); with ``False``, skip bad lines and
            make entries with a missing parent roots, warning for each (as :func:`load`).

    Raises:
        SessionFileError: (a ``ValueError``) a bad line or header, naming ``path`` and
            the line: the same cases as :func:`load`.
        UnsupportedVersionError: (a ``SessionFileError``) the header states a version
            newer than 3.

    Warns:
        SessionFileWarning: as :func:`load`.
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

    Lines are split at ``\\n``; a ``\\r`` before it is accepted.  Blank lines (empty
    or only white space) are not data and are skipped without a warning, as Pi skips
    them; a second ``session`` line (an old Pi bug) is skipped with a warning in both
    modes, and so is an exact duplicate of an earlier entry line (Pi 0.73.1 could
    write a session twice into one file; Pi reads one entry, and the leaf is the last
    line's id).  A UTF-8 byte-order mark at the start is refused, as Pi 1.6 refuses it.
    Files of Pi 0.73.1 and Pi 1.6 are read alike (both say version 3).

    Cost: O(size of the file), one read; the JSON is frozen while it is parsed.

    Args:
        path: the file.
        strict: raise on any bad line (the default); with ``False``, skip bad lines
            and make entries with a missing parent roots, warning for each.

    Raises:
        SessionFileError: (a ``ValueError``) naming the file and the line: malformed
            JSON, a line that is not an object or nests deeper than ptree stores, a
            missing or invalid header (or a byte-order mark before it), an entry
            without an id or with invalid fields, a duplicate id with other content, a
            missing parent, a cycle, a leaf record naming an unknown entry.  Lenient
            loading raises it only for a missing or invalid header, and for a path
            that is not a regular file (a FIFO, a device), which is refused before
            anything is read.
        UnsupportedVersionError: (a ``SessionFileError``) the header states a
            version newer than 3; in both modes.
        OSError: the file cannot be read (``IsADirectoryError`` for a folder).

    Warns:
        SessionFileWarning: a torn last line was recovered, or an exact duplicate line
            or second header skipped (both modes); in lenient mode, once per line
            skipped or entry repaired (an entry with a wrongly typed optional field is
            kept, the field set aside to be written back as it was).

    >>> import tempfile, os
    >>> from ptree.pi import dump
    >>> tree = SessionTree().append({"role": "user", "content": "hi"})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     saved = dump(tree, os.path.join(d, "s.jsonl"))
    ...     again = load(os.path.join(d, "s.jsonl"))
    >>> again == saved, again.current_path()
    (True, ({'role': 'user', 'content': 'hi'},))
    """
    # The collector stays paused until the end, as in read_state: the stamp's few
    # objects would otherwise set off a collection over the whole new tree here.
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        data, stamp = read_regular(path)
        tree = with_stamp(read_state(path, data, strict=strict).tree, path, stamp)
    finally:
        if paused:
            gc.enable()
    return tree
