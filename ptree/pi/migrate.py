"""Old session files (versions 1 and 2) brought to version 3, in memory only.

Pi's own reader migrates an old file and then rewrites it; ptree never touches the
file: the records are converted as they are read, and the file stays as it was.

- **v1 → v2**: version 1 entries have no ``id`` and no ``parentId``; each one is the
  child of the entry before it.  ptree derives each id from the entry's line number
  (``v1_id(7) == "00000007"``: eight hex digits, the shape of Pi's ids), so loading the
  same file twice gives the same ids (Pi invents random ones).  A compaction's
  ``firstKeptEntryIndex`` (an index into the file's parsed records, header = 0) becomes
  ``firstKeptEntryId``; when it names no entry, the compaction keeps nothing before
  itself (Pi leaves the field out; ptree names the compaction's own id, which has the
  same meaning and keeps the entry valid).
- **v2 → v3**: a message whose ``role`` is ``hookMessage`` gets the role ``custom``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..frozen import FrozenDict, freeze, frozen_dict_unchecked

__all__ = ["migrate_record", "record_lines", "v1_id"]


def v1_id(line: int) -> str:
    """The id ptree gives the version 1 entry on 1-based line ``line``.  O(1).

    >>> v1_id(2), v1_id(300)
    ('00000002', '0000012c')
    """
    return f"{line:08x}"


def migrate_record(
    record: FrozenDict,
    version: int,
    line: int,
    parent_id: str | None,
    record_line: Callable[[int], int | None],
) -> FrozenDict:
    """One parsed entry record of a version ``version`` file, as version 3 has it.

    Cost: O(size of the changed fields); a version 3 record is returned as it is.

    Args:
        record: the parsed line (frozen).
        version: the file's version, from its header.
        line: the record's 1-based line number (for a v1 id).
        parent_id: the id of the entry before it (a v1 entry's parent).
        record_line: the line of the parsed record at an index (header = 0), or
            ``None`` if there is no such record; resolves ``firstKeptEntryIndex``.

    >>> rec = freeze({"type": "message", "timestamp": "t",
    ...               "message": {"role": "hookMessage", "content": "x"}})
    >>> out = migrate_record(rec, 1, 3, "00000002", lambda i: None)
    >>> out["id"], out["parentId"], out["message"]["role"]
    ('00000003', '00000002', 'custom')
    """
    if version >= 3:
        return record
    changed: dict[str, Any] = dict(record)
    if version < 2:
        own = v1_id(line)
        changed["id"] = own
        changed["parentId"] = parent_id
        if record.get("type") == "compaction" and "firstKeptEntryIndex" in record:
            index = changed.pop("firstKeptEntryIndex")
            target = record_line(index) if type(index) is int and index > 0 else None
            changed["firstKeptEntryId"] = own if target is None else v1_id(target)
    if record.get("type") == "message":
        message = record.get("message")
        if isinstance(message, Mapping) and message.get("role") == "hookMessage":
            changed["message"] = freeze({**message, "role": "custom"})
    # Its values are frozen already; the record wraps them one level deeper than
    # freeze allows a value to go, as a line does (LINE_DEPTH).
    return frozen_dict_unchecked(changed)


def record_lines(lines: Sequence[int]) -> Callable[[int], int | None]:
    """A ``record_line`` lookup over the lines of the parsed records (header first).

    Cost: O(1) to make (``lines`` is kept, not copied), O(1) per lookup.

    Args:
        lines: the 1-based line number of each parsed record, the header's first.

    Returns:
        The lookup :func:`migrate_record` takes: the line of the record at an index,
        or ``None`` for index 0 (the header) or one past the end.

    >>> lookup = record_lines([1, 2, 4])
    >>> lookup(2), lookup(0), lookup(3)
    (4, None, None)
    """

    def record_line(index: int) -> int | None:
        return lines[index] if 0 < index < len(lines) else None

    return record_line
