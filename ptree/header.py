"""The header line of a session file: which session this is, where, and its origin."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from typing import Any

import attrs

from .entries import EMPTY, freeze_extra
from .errors import InvalidEntryError
from .frozen import FrozenDict, thaw
from .ids import utc_now

__all__ = ["CURRENT_VERSION", "SessionHeader"]

CURRENT_VERSION = 3
"""The version of Pi's session format that ptree writes."""

_HEADER_KEYS = frozenset({"type", "version", "id", "timestamp", "cwd", "parentSession"})


@attrs.frozen(kw_only=True, weakref_slot=True)
class SessionHeader:
    """The first line of a Pi session file (``"type": "session"``).

    Attributes:
        id: the session's id (Pi uses a UUID).
        timestamp: when the session began, ISO-8601 text.
        cwd: the working directory the session ran in.
        parent_session: the file this session was forked from, if any.
        version: the format version the file was written in (1, 2 or 3).
        extra: any other header fields (v1 headers carry ``provider``, ``modelId``,
            ``thinkingLevel``, ``branchedFrom``), kept to be written back.
        origin: the files trees with this header were read from or written to, each
            as it was then: ``(real path, (device, inode, size, mtime ns))``.  Set by
            :func:`~ptree.load`, :func:`~ptree.dump` and :class:`~ptree.SessionWriter`
            (so ``dump(tree, path, overwrite=True)`` can refuse to replace a file that
            changed since); it travels with the value (pickled, copied, kept by every
            tree grown from it) but is no part of it: not compared, not hashed, never
            written to a file or a store.

    >>> h = SessionHeader(id="s1", timestamp="2026-01-01T00:00:00.000Z", cwd="/w")
    >>> h.to_json()  # doctest: +NORMALIZE_WHITESPACE
    {'type': 'session', 'version': 3, 'id': 's1', 'timestamp': '2026-01-01T00:00:00.000Z',
     'cwd': '/w'}
    """

    id: str
    timestamp: str
    cwd: str
    parent_session: str | None = None
    version: int = CURRENT_VERSION
    extra: FrozenDict = attrs.field(default=EMPTY, converter=freeze_extra, repr=False)
    origin: tuple[tuple[str, tuple[int, int, int, int]], ...] = attrs.field(
        default=(), eq=False, repr=False
    )

    @classmethod
    def new(cls, *, cwd: str | None = None, parent_session: str | None = None) -> SessionHeader:
        """A header for a new session: a fresh UUID, the time now, this directory.  O(1).

        Args:
            cwd: the session's working directory (default: the process's).
            parent_session: the session this one was forked from, if any.
        """
        return cls(
            id=str(uuid.uuid4()),
            timestamp=utc_now(),
            cwd=os.getcwd() if cwd is None else cwd,
            parent_session=parent_session,
        )

    def to_json(self, *, version: int | None = None) -> dict[str, Any]:
        """The header as a plain dict in Pi's format (``version`` overrides the stored one).

        Cost: O(size of the header's extra fields).

        Args:
            version: the format version to write; the stored one when ``None``.
        """
        out: dict[str, Any] = {
            "type": "session",
            "version": self.version if version is None else version,
            "id": self.id,
            "timestamp": self.timestamp,
            "cwd": self.cwd,
        }
        if self.parent_session is not None:
            out["parentSession"] = self.parent_session
        for key, value in self.extra.items():
            if key not in out:
                out[key] = thaw(value)
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> SessionHeader:
        """Read a parsed header line; a missing ``version`` means version 1.

        Cost: O(size of the line).

        Args:
            obj: the line, parsed from JSON.

        Raises:
            InvalidEntryError: not a ``session`` line, or a field of the wrong kind.
        """
        if not isinstance(obj, Mapping) or obj.get("type") != "session":
            raise InvalidEntryError("the first line must be a session header", field="type")
        version = obj.get("version", 1)
        if type(version) is not int or version < 1:
            raise InvalidEntryError(f"unsupported version {version!r}", field="version")
        values: dict[str, Any] = {}
        for key, attr in (("id", "id"), ("timestamp", "timestamp"), ("cwd", "cwd")):
            value = obj.get(key)
            if type(value) is not str:
                raise InvalidEntryError(f"the header needs a string {key!r}", field=key)
            values[attr] = value
        parent = obj.get("parentSession")
        if parent is not None and type(parent) is not str:
            raise InvalidEntryError("parentSession must be a string", field="parentSession")
        extra = {k: v for k, v in obj.items() if k not in _HEADER_KEYS}
        return cls(parent_session=parent, version=version, extra=extra or None, **values)
