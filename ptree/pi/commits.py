"""How ptree appends to a Pi session file: the one commit protocol that
:class:`~ptree.SessionWriter` and the ``jsonl:`` store both follow.

A *commit* appends what a newer value of the tree adds: its new entries, then a
``leaf`` record when the leaf ended up elsewhere than the last entry written.  All of
it goes to the file in one ``write``.  A commit of several lines marks each of them
``"ptreeBatch": [k, n]`` (line ``k`` of ``n``, :data:`~ptree.pi.lines.BATCH_KEY`), so
that ptree's reader can tell a commit cut short (a kill, a full disk) from a whole one
and skip it, in both modes.  Pi's readers ignore the field, and read the file as
before.

Pi reads every whole line, marks or not: it sees the first lines of a commit that was
cut short, which ptree skips.  So the next appender (holding the file's lock, so the
commit's writer is gone) removes such a tail first (:func:`unfinished_tail`): then
ptree, the store and Pi read the same entries again.  Only a tail that is provably a
ptree commit cut short is removed (lines marked ``1..m`` of ``n``, ``m < n``, at the
very end of the file, and a torn line after them); lines anyone else appended are
never touched.

>>> from ptree import SessionTree
>>> t = SessionTree().append({"role": "user", "content": "a"})
>>> t2 = t.append({"role": "user", "content": "b"}).append({"role": "user", "content": "c"})
>>> data, leaf_id = commit_bytes(t2, t2.entries()[1:], file_leaf="e1", leaf_ids=set())
>>> [line[-19:] for line in data.decode().splitlines()], leaf_id
(['"ptreeBatch":[1,2]}', '"ptreeBatch":[2,2]}'], None)
>>> unfinished_tail(b'{"type":"session"}\\n' + data[: len(data) // 2 + 30])
19
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..entries import Entry, entry_from_json
from ..frozen import FrozenDict, FrozenList
from ..tree import SessionTree
from .errors import SessionFileError
from .lines import (
    BATCH_KEY,
    LEAF_TYPE,
    encode_line,
    is_torn,
    leaf_record,
    new_leaf_id,
    parse_line,
)

__all__ = ["appended_entries", "commit_bytes", "finished_end", "unfinished_tail"]


def commit_bytes(
    tree: SessionTree,
    added: Sequence[Entry],
    *,
    file_leaf: str | None,
    leaf_ids: Iterable[str],
    ends_clean: bool = True,
) -> tuple[bytes, str | None]:
    """The bytes of one commit: ``added`` (the entries ``tree`` has past the file's),
    then a ``leaf`` record if ``tree``'s leaf is not the last line's; each line marked
    ``[k, n]`` when there are several; a newline first when the file does not end
    with one (after a torn line: never glued onto it).

    Cost: O(size of ``added``).

    Args:
        tree: the value being committed (its leaf, its ids, its clock).
        added: the new entries, in order.
        file_leaf: the leaf the file's lines leave now.
        leaf_ids: the ids of the file's leaf records (taken).
        ends_clean: whether the file ends with a newline (or is empty).

    Returns:
        the bytes (empty if nothing changed), and the id of the new leaf record if
        there is one.  Cost: O(size of ``added``).
    """
    taken = leaf_ids if isinstance(leaf_ids, (set, frozenset)) else set(leaf_ids)
    records: list[dict[str, Any]] = [entry.json_fields() for entry in added]
    last = added[-1].id if added else file_leaf
    leaf_id: str | None = None
    if tree.leaf_id != last:
        leaf_id = new_leaf_id(lambda i: i in tree or i in taken, len(taken) + 1)
        records.append(leaf_record(leaf_id, tree.leaf_id, tree.clock()))
    if len(records) > 1:
        n = len(records)
        for k, rec in enumerate(records, 1):
            rec[BATCH_KEY] = [k, n]
    lines = [encode_line(rec) for rec in records]
    if lines and not ends_clean:
        lines.insert(0, b"\n")
    return b"".join(lines), leaf_id


def _mark(line: bytes) -> tuple[int, int] | None:
    """The ``[k, n]`` mark of a whole line, or ``None`` (no mark, or no JSON object)."""
    if BATCH_KEY.encode() not in line:
        return None
    try:
        value = parse_line(line.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    mark = value.get(BATCH_KEY) if type(value) is FrozenDict else None
    if (
        type(mark) is FrozenList
        and len(mark) == 2
        and type(mark[0]) is int
        and type(mark[1]) is int
        and 1 <= mark[0] <= mark[1]
    ):
        return mark[0], mark[1]
    return None


def unfinished_tail(data: bytes) -> int:
    """Where a file's finished commits end: the start of what a commit cut short left
    at its end (its marked lines ``1..m`` of ``n``, ``m < n``, and a torn line after
    them, even one that Pi 1.6 ended with a newline when it opened the file), else
    ``len(data)`` (a torn line alone is left: no reader reads it, and the next commit
    starts on a fresh line).

    An appender holding the file's lock truncates the file there before its commit
    (the module doc says why).  Cost: O(size of the tail examined).

    Args:
        data: the file's bytes (its tail is enough when it starts at a line).
    """
    end = len(data)
    stop = end if not data or data.endswith(b"\n") else data.rfind(b"\n") + 1
    # Torn lines that were ended since: Pi 1.6 ends a file it opens with a newline.
    while stop > 0:
        start = data.rfind(b"\n", 0, stop - 1) + 1
        if not is_torn(data[start : stop - 1].decode("utf-8", "replace")):
            break
        stop = start
    # The whole lines just before, newest first, while they carry marks.
    marks: list[tuple[int, int, int]] = []  # (start, k, n)
    while stop > 0:
        start = data.rfind(b"\n", 0, stop - 1) + 1
        mark = _mark(data[start : stop - 1])
        if mark is None:
            break
        if marks and not (mark[1] == marks[-1][2] and mark[0] == marks[-1][1] - 1):
            break
        marks.append((start, *mark))
        if mark[0] == 1:
            break
        stop = start
    if marks and marks[0][1] < marks[0][2] and marks[-1][1] == 1:
        return marks[-1][0]  # lines 1..m of n, m < n: a commit cut short
    return end  # a torn line alone stays: no reader reads it, the next commit skips it


def finished_end(data: bytes) -> int:
    """Where a file's finished writes end: :func:`unfinished_tail`, and before a torn
    last line too (a line still being written, if a writer holds the file's lock).

    For a reader that finds a save in progress: it reads ``data[:finished_end(data)]``,
    what was finished before that save began.  Cost: O(size of the tail examined).

    Args:
        data: the file's bytes (its tail is enough when it starts at a line).

    >>> finished_end(b'{"a":1}\\n{"b":'), finished_end(b'{"a":1}\\n{"b":2}')
    (8, 15)
    """
    end = unfinished_tail(data)
    if end == len(data) and data and not data.endswith(b"\n"):
        start = data.rfind(b"\n") + 1
        if is_torn(data[start:].decode("utf-8", "replace")):
            return start
    return end


def appended_entries(chunk: bytes, path: str) -> list[Entry]:
    """The entries of whole commits' lines (``chunk``: bytes between two commit points
    of a file, header excluded), marks taken off, leaf records left out.

    For an appender that knows the lines before ``chunk`` and wants only what was
    committed since.  Cost: O(size of ``chunk``).

    Args:
        chunk: the file's bytes from one commit point to a later one.
        path: the file's path, carried by the error.

    Raises:
        SessionFileError: a line that is not an entry ptree wrote (bad UTF-8, JSON or
            entry), with ``path``.
    """
    out: list[Entry] = []
    for line in chunk.split(b"\n"):
        if not line.strip():
            continue
        try:
            value = parse_line(line.decode("utf-8"))
            if value.get("type") == LEAF_TYPE:
                continue
            if BATCH_KEY in value:
                value = {k: v for k, v in value.items() if k != BATCH_KEY}
            out.append(entry_from_json(value))
        except (ValueError, UnicodeDecodeError, AttributeError) as exc:
            raise SessionFileError(
                path, None, f"a committed line does not read back: {exc}"
            ) from None
    return out
