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
from typing import TYPE_CHECKING, cast

from .entries import Entry, Label, SessionInfo
from .js import trim

if TYPE_CHECKING:
    ChildSlot = Entry | list[Entry]

__all__ = ["MAX_CHAIN", "Store"]

MAX_CHAIN = 16
"""Longest chain of stores before a branch copies its view into a fresh store."""

seq_of = attrgetter("seq")
"""An entry's position in insertion order (``entry.seq``): the sort key of slots."""


class Store:
    """Entries ``base``, ``base + 1``, … of every value that uses this store.

    Indexes: ``by_id`` (id to entry), ``labels`` and ``names`` (the label and
    session-info entries), and ``children``, parent id (``None`` for the roots) to its
    children in insertion order, one bare or several in a list, *except* a child
    stored right after its parent in the same store while it is the only child the
    store holds of that parent.  That child, the first of its parent's (none can come
    before it), is found by position instead (see :func:`children_of`), until a second
    child in the store makes the parent a key (a list of both): on a conversation's
    long runs of one child each, most entries are such a child, and a key per entry
    cost about 42 B of 10^6 loaded.

    Args:
        parent: the store holding the entries before ``base`` (``None`` for the first).
        base: how many entries come before this store's first.
    """

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

        The caller holds ``lock`` or is the only one who can see this store.  Cost:
        O(1) amortised.

        Args:
            entry: the entry to keep, its parent and child links set.
        """
        entries = self.entries
        parent = entry.parent_entry
        if not entries or entries[-1] is not parent:
            # Not its parent's next entry in this store: indexed (see the class).
            # _push(self.children, ...) inlined: this runs once per append.
            children = self.children
            pid = entry.parent_id
            slot = children.get(pid)
            if slot is None:
                first = None if parent is None else self._next_of(parent)
                children[pid] = entry if first is None else [first, entry]
            elif type(slot) is list:
                slot.append(entry)
            else:
                children[pid] = [slot, entry]  # type: ignore[list-item]
        entries.append(entry)
        self.by_id[entry.id] = entry
        kind = type(entry)
        if kind is Label:
            _push(self.labels, entry.target_id, entry)  # type: ignore[attr-defined]
        elif kind is SessionInfo:
            self.names.append(entry)

    def index(self, entry: Entry) -> None:
        """Index ``entry`` among its parent's children although it is stored right after
        its parent, where :meth:`add` leaves it to its position: for a parent stored
        after another of its children (:func:`~ptree.building.link_entries` takes
        entries in any order), whose index holds that child, so that position alone
        would hide this one.  O(1).

        Args:
            entry: an entry just added, stored right after its parent.
        """
        _push(self.children, entry.parent_id, entry)

    def _next_of(self, parent: Entry) -> Entry | None:
        """The child of ``parent`` stored right after it in this store, if any.  O(1)."""
        try:
            i = parent.seq + 1 - self.base
        except AttributeError:  # not numbered yet (a builder numbering parents later)
            return None
        if 0 < i < len(self.entries):
            after = self.entries[i]
            if after.parent_entry is parent:
                return after
        return None

    def claim(self, size: int, entry: Entry) -> bool:
        """Add ``entry`` if a value of ``size`` is at this store's end.  O(1) amortised.

        Args:
            size: the number of entries of the value adding it: it adds only when
                that value ends where this store does.
            entry: the entry to add.
        """
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
        if e is not None and e.seq < limit:
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
        return slot[: bisect_left(slot, limit, key=seq_of)]
    return [slot] if slot.seq < limit else []


def last_visible(slot: Entry | list[Entry] | None, limit: int) -> Entry | None:
    """The latest entry of an index slot below ``limit``, or ``None``."""
    if slot is None:
        return None
    if isinstance(slot, list):
        i = bisect_left(slot, limit, key=seq_of)
        return slot[i - 1] if i else None
    return slot if slot.seq < limit else None


def view(store: Store, size: int) -> list[Entry]:
    """All entries a value of ``size`` sees, in insertion order.  O(size)."""
    return _joined([s.entries[: limit - s.base] for s, limit in chain(store, size)])


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
    return _joined(parts)


def _joined(parts: list[list[Entry]]) -> list[Entry]:
    """The parts of a view, newest store first, as one list in insertion order."""
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


# ---------------------------------------------------------------------- index queries
# What a value sees of the indexes its stores keep: the answers SessionTree gives.


def children_of(store: Store, size: int, entry_id: str | None) -> list[Entry]:
    """The children of ``entry_id`` (``None``: the roots) that the view sees, in
    insertion order.  O(number of children + chain length), never a scan."""
    if store.parent is None:  # one store: the common case
        slot = store.children.get(entry_id)
        if slot is not None or entry_id is None:
            return visible(slot, size)
        parent = store.by_id.get(entry_id)
        if parent is None or parent.seq + 1 >= size:
            return []
        after = store._next_of(parent)
        return [] if after is None else [after]
    parent = None if entry_id is None else lookup(store, size, entry_id)
    out: list[Entry] = []
    for s, limit in reversed(list(chain(store, size))):
        slot = s.children.get(entry_id)
        if slot is None and parent is not None and s.base <= parent.seq < limit - 1:
            # The parent's store, holding one child of it at most: by position.
            after = s._next_of(parent)
            if after is not None:
                out.append(after)
        out.extend(visible(slot, limit))
    return out


def leaves(store: Store, size: int) -> list[Entry]:
    """The entries the view sees that have no children there, in insertion order.  O(n)."""
    entries = view(store, size)
    parents = {e.parent_id for e in entries}
    return [e for e in entries if e.id not in parents]


def label_of(store: Store, size: int, entry_id: str) -> str | None:
    """The label the latest ``label`` entry aimed at ``entry_id`` gives it (``None``
    when there is none, or it cleared the label).  O(log labels + chain length)."""
    for s, limit in chain(store, size):
        latest = last_visible(s.labels.get(entry_id), limit)
        if latest is not None:
            return cast(Label, latest).label or None
    return None


def labels(store: Store, size: int) -> dict[str, str]:
    """Every labelled entry's id and label, latest wins.  O(number of label entries)."""
    found: list[Label] = []
    for s, limit in chain(store, size):
        # A copy of the index first: another thread may add a key to it meanwhile.
        for slot in list(s.labels.values()):
            found.extend(cast(list[Label], visible(slot, limit)))
    found.sort(key=seq_of)
    out: dict[str, str] = {}
    for entry in found:
        if entry.label:
            out[entry.target_id] = entry.label
        else:
            out.pop(entry.target_id, None)
    return out


def session_name(store: Store, size: int) -> str | None:
    """The latest ``session_info`` entry's name, trimmed, or ``None``.  O(log names)."""
    for s, limit in chain(store, size):
        latest = last_visible(s.names, limit) if s.names else None
        if latest is not None:
            name = cast(SessionInfo, latest).name
            return trim(name or "") or None
    return None


def check(store: Store, size: int) -> None:
    """Assert the invariants of a view's stores and indexes (tests call it through
    ``SessionTree._check``).  O(n)."""
    entries = view(store, size)
    assert len(entries) == size, "size disagrees with the entries seen"
    seen: dict[str, Entry] = {}
    for seq, e in enumerate(entries):
        assert isinstance(e, Entry), f"not an entry at {seq}"
        assert e.seq == seq, f"{e.id}: position {e.seq} != {seq}"
        assert e.id not in seen, f"duplicate id {e.id}"
        seen[e.id] = e
        assert lookup(store, size, e.id) is e, f"lookup of {e.id} finds another entry"
    for e in entries:
        parent = e.parent_entry
        if e.parent_id is None:
            assert parent is None, f"{e.id}: a root with a parent link"
            assert e.depth == 0, f"{e.id}: a root with a depth"
        else:
            assert parent is seen.get(e.parent_id), f"{e.id}: parent link is wrong"
            assert parent is not None
            assert e.depth == parent.depth + 1, f"{e.id}: depth is wrong"
    kids: dict[str | None, list[str]] = {}
    for e in entries:
        kids.setdefault(e.parent_id, []).append(e.id)
    for pid, ids in kids.items():
        assert [c.id for c in children_of(store, size, pid)] == ids, f"children of {pid}"
    assert children_of(store, size, None) == [e for e in entries if e.parent_id is None]
    for e in entries:
        if e.id not in kids:
            assert children_of(store, size, e.id) == [], f"{e.id}: children it does not have"
    assert [e.id for e in leaves(store, size)] == [e.id for e in entries if e.id not in kids]
    links = list(chain(store, size))
    assert len(links) == store.chain, "the store's chain count is wrong"
    assert store.chain <= MAX_CHAIN, "store chain too long"
    for s, limit in links:
        assert s.base <= limit <= s.end, "a store seen past its end"
        assert s.parent is None or s.parent.base < s.base, "an empty store in the chain"
    expected: dict[str, str] = {}
    name: str | None = None
    for e in entries:
        if isinstance(e, Label):
            if e.label:
                expected[e.target_id] = e.label
            else:
                expected.pop(e.target_id, None)
        elif isinstance(e, SessionInfo):
            name = trim(e.name or "") or None
    assert labels(store, size) == expected, "labels disagree with the entries"
    for e in entries:
        assert label_of(store, size, e.id) == expected.get(e.id), f"label_of({e.id}) is wrong"
    assert session_name(store, size) == name, "session name disagrees with the entries"
