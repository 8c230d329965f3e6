"""Writing a whole Pi session file: :func:`dump` (atomic: temp file, fsync, rename)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import attrs

from ..header import CURRENT_VERSION, SessionHeader
from ..tree import SessionTree
from .files import lock_existing, replace_file
from .lines import ENCODE_COMPACT, StrPath, encode_line, leaf_record, new_leaf_id

__all__ = ["dump", "file_bytes", "header_of"]


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
    encode = ENCODE_COMPACT
    parts = [ENCODE_COMPACT(header.to_json())]
    entries = tree.entries()
    for entry in entries:
        parts.append(encode(entry.json_fields()))
    last = entries[-1].id if entries else None
    if tree.leaf_id != last:
        parts.append(
            encode(leaf_record(new_leaf_id(tree.__contains__), tree.leaf_id, tree.clock()))
        )
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
    >>> from ptree.pi import load
    >>> t = SessionTree().append({"role": "user", "content": "a"}).move_to(None)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     saved = dump(t, os.path.join(d, "s.jsonl"))
    ...     load(os.path.join(d, "s.jsonl")).leaf_id is None
    True
    """
    target = Path(path)
    header = header_of(tree)
    data = file_bytes(tree, header)
    guard = lock_existing(target)
    try:
        replace_file(target, data)
    finally:
        if guard is not None:
            os.close(guard)
    return tree if header is tree.header else tree.with_header(header)
