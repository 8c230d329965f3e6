"""Writing a whole Pi session file: :func:`dump` (atomic: temp file, fsync, rename)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import attrs

from ..header import CURRENT_VERSION, SessionHeader
from ..tree import SessionTree
from .errors import SessionChangedError
from .files import (
    Stamp,
    lock_existing,
    recorded_stamp,
    replace_file,
    stamp_of,
    with_stamp,
    write_new,
)
from .lines import ENCODE_COMPACT, StrPath, encode_line, leaf_record, new_leaf_id

__all__ = ["dump", "file_bytes", "file_parts", "header_of"]


def header_of(tree: SessionTree) -> SessionHeader:
    """The header a file of ``tree`` gets: the tree's own, as version 3, or a new one.

    Cost: O(1) (a new header draws a fresh session id and reads the clock and the
    current directory).

    Args:
        tree: the tree about to be written.

    >>> header_of(SessionTree()).version
    3
    """
    header = tree.header
    if header is None:
        return SessionHeader.new()
    if header.version != CURRENT_VERSION:
        return attrs.evolve(header, version=CURRENT_VERSION)
    return header


def file_bytes(tree: SessionTree, header: SessionHeader) -> bytes:
    """The whole file for ``tree``: header, entries in order, and a leaf record if the
    leaf is not the last entry.  O(size of the tree)."""
    return file_parts(tree, header)[0]


def file_parts(tree: SessionTree, header: SessionHeader) -> tuple[bytes, str | None]:
    """:func:`file_bytes`, and the id of the leaf record it writes (``None`` if none):
    what an appender to the new file must know.  O(size of the tree).

    Args:
        tree: the tree to write.
        header: the file's header, written first (:func:`header_of` gives it).
    """
    encode = ENCODE_COMPACT
    parts = [ENCODE_COMPACT(header.to_json())]
    entries = tree.entries()
    for entry in entries:
        parts.append(encode(entry.json_fields()))
    last = entries[-1].id if entries else None
    leaf_id: str | None = None
    if tree.leaf_id != last:
        leaf_id = new_leaf_id(tree.__contains__)
        parts.append(encode(leaf_record(leaf_id, tree.leaf_id, tree.clock())))
    parts.append("")
    text = "\n".join(parts)
    try:
        return text.encode("utf-8"), leaf_id
    except UnicodeEncodeError:
        return b"".join(encode_line(json.loads(p)) for p in parts[:-1]), leaf_id


def dump(tree: SessionTree, path: StrPath, *, overwrite: bool = False) -> SessionTree:
    """Write ``tree`` to ``path`` as a complete version 3 session file, atomically.

    The file is written beside ``path`` under a temporary name, flushed to disk
    (``fsync``) and then linked (a new file) or renamed (``overwrite=True``) into
    place: a crash leaves the old file or the new one, never half of either.  A tree
    without a header gets a new one (a fresh session id, this directory); a header
    read from an older version is written as version 3.  The leaf survives: when it
    is not the last entry, a ``leaf`` record follows (see the module doc for how Pi's
    CLI reads it).

    Nothing is lost by accident: an existing ``path`` is replaced only with
    ``overwrite=True``, and even then not when the tree was read from that file and
    the file changed since (a :class:`~ptree.SessionWriter` appended to it, another
    dump replaced it).  A symbolic link at ``path`` is replaced itself, never the file
    it points to.

    Cost: O(size of the tree), plus one ``stat`` of ``path``.

    Args:
        tree: the tree to write.
        path: the file.
        overwrite: replace a file that exists (else ``FileExistsError``).

    Returns:
        the tree as written (with the header the file has): ``load(path)`` equals it.
        Its header notes the file as written (:attr:`~ptree.SessionHeader.origin`), so
        a later ``dump(returned, path, overwrite=True)`` refuses if the file changed.

    Raises:
        SessionExistsError: (a ``FileExistsError``) ``path`` exists and ``overwrite``
            is false; the message names ``path`` and says that ``overwrite=True``
            replaces it.
        SessionChangedError: (a ``SessionFileError``) ``overwrite`` is true, the tree
            was read from ``path``, and the file changed since.
        SessionLockedError: a :class:`~ptree.SessionWriter` holds ``path``; replacing
            the file under it would lose its later commits.
        SessionWriteError: (an ``OSError``) the file cannot be written (a full disk,
            a read-only directory or file), naming ``path`` (never a temporary file);
            an existing file is left as it was.

    >>> import tempfile, os
    >>> from ptree.pi import load
    >>> t = SessionTree().append({"role": "user", "content": "a"}).move_to(None)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     saved = dump(t, os.path.join(d, "s.jsonl"))
    ...     again = load(os.path.join(d, "s.jsonl"))
    ...     _ = dump(again.append({"role": "user", "content": "b"}),
    ...              os.path.join(d, "s.jsonl"), overwrite=True)
    ...     again.leaf_id is None, len(load(os.path.join(d, "s.jsonl")))
    (True, 2)
    """
    target = Path(path)
    header = header_of(tree)
    data = file_bytes(tree, header)
    written = tree if header is tree.header else tree.with_header(header)
    if not overwrite:
        write_new(target, data)
        return with_stamp(written, target, stamp_of(os.stat(target)))
    guard = lock_existing(target)
    try:
        known = recorded_stamp(tree.header, target)
        if known is not None:
            try:
                now: Stamp | None = stamp_of(os.stat(target))
            except FileNotFoundError:
                now = None
            if now is not None and now != known:
                raise SessionChangedError(os.fspath(target))
        replace_file(target, data)
        written = with_stamp(written, target, stamp_of(os.stat(target)))
    finally:
        if guard is not None:
            os.close(guard)
    return written
