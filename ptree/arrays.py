"""The shared, append-only storage under tree values.

A :class:`SessionTree` value is ``(store, size, leaf)``: it sees the first ``size``
entries, in insertion order, of a chain of stores.  Entries never change and are
never removed, so a value's view never changes either, whatever happens later.

Appending to a value whose view ends where its store ends *extends* that store in
place (amortised O(1), no copy): the new value sees one more entry, the old value
still sees ``size`` entries.  Appending to a value that is not at its store's end
(an older version, after someone else extended the store) starts a new store whose
``parent`` is the old one, seen up to ``base``: a branch of the storage itself.
Chains are cut short by collapsing their newest stores into one once they grow past
:data:`MAX_CHAIN` (:func:`collapsed`).

Why not a persistent hash map per value (pyrsistent's ``pmap``)?  Measured in
``benchmarks/``: the cyclic garbage collector walks every new ``pmap`` version whole,
so keeping every version (undo history) makes appends quadratic.  This layout
creates, per append, only the entry and the new value, whatever the tree's size.

A store's end is claimed under its lock, so two threads extending the same value
never both succeed: one extends, the other branches.  Readers take no lock: what a
value can see was complete before the value existed.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Iterator
from operator import attrgetter
from typing import TYPE_CHECKING

from .entries import Entry, Label, SessionInfo

if TYPE_CHECKING:
    ChildSlot = Entry | list[Entry]

__all__ = ["MAX_CHAIN", "Store"]

MAX_CHAIN = 16
"""Longest chain of stores before a branch copies its view into a fresh store."""

_seq_of = attrgetter("_seq")


class Store:
    """Entries ``base``, ``base + 1``, … of every value that uses this store."""

    __slots__ = (
        "base",
        "by_id",
        "chain",
        "children",
        "entries",
        "labels",
        "lock",
        "names",
        "parent",
    )

    base: int
    parent: Store | None

    def __init__(self, parent: Store | None = None, base: int = 0) -> None:
        # A branch at the very start of a store sees nothing of it: skip it.
        while parent is not None and base == parent.base:
            parent = parent.parent
        self.parent = parent
        self.base = base
        self.chain: int = 1 if parent is None else parent.chain + 1
        self.entries: list[Entry] = []
        self.by_id: dict[str, Entry] = {}
        self.children: dict[str | None, Entry | list[Entry]] = {}
        self.labels: dict[str, Entry | list[Entry]] = {}
        self.names: list[Entry] = []
        self.lock = threading.Lock()

    @property
    def end(self) -> int:
        """The size of a value that sees all of this store."""
        return self.base + len(self.entries)

    def add(self, entry: Entry) -> None:
        """Index and keep ``entry``, whose links are already set.

        The caller holds ``lock`` or is the only one who can see this store.
        """
        self.entries.append(entry)
        self.by_id[entry.id] = entry
        # _push(self.children, ...) inlined: this runs once per append.
        children = self.children
        pid = entry.parent_id
        slot = children.get(pid)
        if slot is None:
            children[pid] = entry
        elif type(slot) is list:
            slot.append(entry)
        else:
            children[pid] = [slot, entry]  # type: ignore[list-item]
        kind = type(entry)
        if kind is Label:
            _push(self.labels, entry.target_id, entry)  # type: ignore[attr-defined]
        elif kind is SessionInfo:
            self.names.append(entry)

    def claim(self, size: int, entry: Entry) -> bool:
        """Add ``entry`` if a value of ``size`` is at this store's end."""
        with self.lock:
            if self.base + len(self.entries) != size:
                return False
            self.add(entry)
            return True


def _push(
    index: dict[str | None, Entry | list[Entry]] | dict[str, Entry | list[Entry]],
    key: str | None,
    entry: Entry,
) -> None:
    # One child is stored bare: most entries have exactly one, and a bare entry
    # costs no list (and no object for the garbage collector to walk).
    slot = index.get(key)  # type: ignore[arg-type]
    if slot is None:
        index[key] = entry  # type: ignore[index]
    elif type(slot) is list:
        slot.append(entry)
    else:
        index[key] = [slot, entry]  # type: ignore[index, list-item]


def chain(store: Store, size: int) -> Iterator[tuple[Store, int]]:
    """The stores a value of ``size`` sees, newest first, each with its limit."""
    s: Store | None = store
    limit = size
    while s is not None:
        yield s, limit
        limit = s.base
        s = s.parent


def lookup(store: Store, size: int, entry_id: str) -> Entry | None:
    """The entry ``entry_id`` as a value of ``size`` sees it, or ``None``.  O(chain)."""
    s: Store | None = store
    limit = size
    while s is not None:
        e = s.by_id.get(entry_id)
        if e is not None and e._seq < limit:
            return e
        limit = s.base
        s = s.parent
    return None


def at(store: Store, size: int, seq: int) -> Entry:
    """The entry at position ``seq`` (``0 <= seq < size``) of a value's view.  O(chain)."""
    for s, _limit in chain(store, size):
        if seq >= s.base:
            return s.entries[seq - s.base]
    raise IndexError(seq)  # pragma: no cover - callers check the range


def visible(slot: Entry | list[Entry] | None, limit: int) -> list[Entry]:
    """The entries of an index slot with a position below ``limit``, in order."""
    if slot is None:
        return []
    if isinstance(slot, list):
        # Always a copy: another thread may append to this very list at any moment
        # (entries it adds are past ``limit``, so the bisection still cuts right).
        return slot[: bisect_left(slot, limit, key=_seq_of)]
    return [slot] if slot._seq < limit else []


def last_visible(slot: Entry | list[Entry] | None, limit: int) -> Entry | None:
    """The latest entry of an index slot below ``limit``, or ``None``."""
    if slot is None:
        return None
    if isinstance(slot, list):
        i = bisect_left(slot, limit, key=_seq_of)
        return slot[i - 1] if i else None
    return slot if slot._seq < limit else None


def view(store: Store, size: int) -> list[Entry]:
    """All entries a value of ``size`` sees, in insertion order.  O(size)."""
    parts = [s.entries[: limit - s.base] for s, limit in chain(store, size)]
    if len(parts) == 1:
        return parts[0]
    out: list[Entry] = []
    for part in reversed(parts):
        out.extend(part)
    return out


def view_from(store: Store, size: int, start: int) -> list[Entry]:
    """The entries at positions ``start`` to ``size - 1`` of a value's view, in order.

    Cost: O(size - start + chain), not O(size): a writer asks this at every commit.
    """
    parts: list[list[Entry]] = []
    for s, limit in chain(store, size):
        if limit <= start:
            break
        parts.append(s.entries[max(start, s.base) - s.base : limit - s.base])
        if s.base <= start:
            break
    if len(parts) == 1:
        return parts[0]
    out: list[Entry] = []
    for part in reversed(parts):
        out.extend(part)
    return out


def collapsed(store: Store, size: int) -> Store:
    """A store that sees what a value of ``size`` sees, through a chain half as long.

    The newest half of the chain (at least) is copied into one fresh store, which
    also absorbs each older store no bigger than what it already holds; the older
    stores stay below it, shared.  Chains grow by editing old versions (undo, then a
    new message), where the newest stores are small branches over one big one: so
    this copies the small ones, not the session.  Measured on a 100,000-entry tree
    edited after each of 2,000 undos: a fork cost 7 µs on average and 0.9 ms at most,
    where copying the whole view at each 16th fork cost 2.6 ms on average and 45 ms.

    Cost: O(entries seen in the copied stores).
    """
    links = list(chain(store, size))  # newest first
    last = max(len(links) // 2, 1) - 1  # the oldest store copied, so far
    held = sum(limit - s.base for s, limit in links[: last + 1])
    while last + 1 < len(links):
        below, limit = links[last + 1]
        if limit - below.base > held:
            break
        last += 1
        held += limit - below.base
    oldest = links[last][0]
    fresh = Store(links[last + 1][0] if last + 1 < len(links) else None, oldest.base)
    for s, limit in reversed(links[: last + 1]):
        for entry in s.entries[: limit - s.base]:
            fresh.add(entry)
    return fresh
