"""The baselines ptree is timed against, written here so that nothing is hidden.

(a) :class:`FloorTree`: the mutable tree exactly as the teaching chapter designs it: a
    dict of entries (id, parent id, message), a leaf pointer, an instance counter, no
    copying, no index of children.  Nothing sound can be cheaper; it is the floor.
(b) :class:`CopyTree`: the same tree deep-copying each message on append, which is what
    a careful mutable implementation pays so that callers cannot change its history.
(c) :class:`PmapTree`: a persistent tree whose entry store is a ``pyrsistent.pmap``
    (one new map per version), the obvious design the request names.
(d) bare ``json.loads`` and (e) Pi's own loader live in ``run.py`` (loading cases).
"""

from __future__ import annotations

import copy
from typing import Any

from pyrsistent import PMap, pmap

__all__ = ["CopyTree", "FloorEntry", "FloorTree", "PmapTree", "ValueLike"]

Message = Any


class FloorEntry:
    """One entry of the floor: id, parent id and message."""

    __slots__ = ("id", "message", "parent")

    def __init__(self, id: str, parent: str | None, message: Message) -> None:  # noqa: A002
        self.id = id
        self.parent = parent
        self.message = message


class FloorTree:
    """Baseline (a): mutable, no copying; the cheapest tree one can write."""

    __slots__ = ("counter", "entries", "leaf")

    def __init__(self) -> None:
        self.entries: dict[str, FloorEntry] = {}
        self.leaf: str | None = None
        self.counter = 0

    def append(self, message: Message) -> str:
        self.counter += 1
        entry_id = f"e{self.counter}"
        self.entries[entry_id] = FloorEntry(entry_id, self.leaf, message)
        self.leaf = entry_id
        return entry_id

    def move_to(self, entry_id: str | None) -> None:
        if entry_id is not None and entry_id not in self.entries:
            raise KeyError(entry_id)
        self.leaf = entry_id

    def current_path(self) -> list[Message]:
        """The messages root -> leaf: a walk up the parent ids, then a reverse."""
        entries = self.entries
        out: list[Message] = []
        entry_id = self.leaf
        while entry_id is not None:
            entry = entries[entry_id]
            out.append(entry.message)
            entry_id = entry.parent
        out.reverse()
        return out

    def children(self, entry_id: str | None) -> list[FloorEntry]:
        """The chapter keeps no index of children: a scan of every entry."""
        return [e for e in self.entries.values() if e.parent == entry_id]

    def common_ancestor(self, a: str, b: str) -> str | None:
        """Walk ``a``'s path into a set, then walk ``b`` up until it meets it."""
        entries = self.entries
        seen: set[str] = set()
        x: str | None = a
        while x is not None:
            seen.add(x)
            x = entries[x].parent
        y: str | None = b
        while y is not None and y not in seen:
            y = entries[y].parent
        return y


class CopyTree(FloorTree):
    """Baseline (b): the floor, deep-copying each message it is given."""

    __slots__ = ()

    def append(self, message: Message) -> str:
        return super().append(copy.deepcopy(message))


class PmapEntry:
    """An entry of the pmap-backed tree (never changed once made)."""

    __slots__ = ("id", "message", "parent")

    def __init__(self, id: str, parent: str | None, message: Message) -> None:  # noqa: A002
        self.id = id
        self.parent = parent
        self.message = message


class PmapTree:
    """Baseline (c): a persistent tree, one ``pmap`` of id -> entry per version.

    Every append returns a new value and leaves the old one intact, as ptree does;
    the messages are stored as given (not copied), so only the store is measured.
    """

    __slots__ = ("counter", "entries", "leaf")

    def __init__(
        self, entries: PMap[str, PmapEntry] | None = None, leaf: str | None = None, counter: int = 0
    ) -> None:
        self.entries: PMap[str, PmapEntry] = pmap() if entries is None else entries
        self.leaf = leaf
        self.counter = counter

    def append(self, message: Message) -> PmapTree:
        counter = self.counter + 1
        entry_id = f"e{counter}"
        entries = self.entries.set(entry_id, PmapEntry(entry_id, self.leaf, message))
        return PmapTree(entries, entry_id, counter)

    def move_to(self, entry_id: str | None) -> PmapTree:
        if entry_id is not None and entry_id not in self.entries:
            raise KeyError(entry_id)
        return PmapTree(self.entries, entry_id, self.counter)


class ValueLike:
    """A value of six fields, made the way ptree makes a new tree value.

    The reference for ``move_to``: one dict lookup plus building this is the least any
    persistent ``move_to`` can do.
    """

    __slots__ = ("a", "b", "c", "d", "e", "f")

    a: object
    b: object
    c: object
    d: object
    e: object
    f: object

    @classmethod
    def make(cls, a: object, b: object, c: object, d: object, e: object, f: object) -> ValueLike:
        v = object.__new__(cls)
        v.a = a
        v.b = b
        v.c = c
        v.d = d
        v.e = e
        v.f = f
        return v
