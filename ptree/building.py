"""Linking a batch of entries into the arrays a tree value sees, in one pass.

:meth:`SessionTree.from_entries <ptree.SessionTree.from_entries>` (and through it the
Pi reader's slow path and the importers) hands entries here in insertion order, with
parents possibly after their children; missing parents and cycles are errors or, given
``on_repair``, repaired into roots.  Everything is iterative: 10^6-deep chains are fine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .arrays import Store
from .entries import AnyEntry, Entry, _link_parent, _set_position, is_linked
from .errors import CycleError, DuplicateEntryError, UnknownEntryError
from .ids import counter_of

__all__ = ["check_kind", "link_entries"]


def check_kind(entry: object, where: str) -> None:
    """Raise ``TypeError`` unless ``entry`` is an entry of one of the kinds.

    Not the base class, nor a subclass of it that is no kind: a tree holds only what
    :data:`~ptree.AnyEntry` names, so that type is exact (subclasses of a kind are fine).
    Cost: O(1).

    Args:
        entry: the object a tree is asked to take.
        where: the name of the calling operation, for the message (``"from_entries"``).

    Raises:
        TypeError: ``entry`` is not an entry of one of the kinds.
    """
    if not isinstance(entry, AnyEntry):
        raise TypeError(
            f"{where}() takes entries of a kind (MessageEntry, Label, ...), "
            f"not {type(entry).__name__}"
        )


def link_entries(
    entries: Iterable[Entry], on_repair: Callable[[Entry, str], None] | None
) -> tuple[Store, list[Entry], dict[str, Entry], int]:
    """Link ``entries`` (in insertion order) into a new store.

    An entry some tree already holds is copied first (links are set once).  Returns the
    store, the entries as linked (repaired ones replaced by their copies), the entries
    by id, and the counter of ``e<k>`` ids (:func:`~ptree.ids.counter_of`).  Cost: O(n).

    Args:
        entries: the entries, each parent before its children.
        on_repair: called with an entry and why, for each entry made a root (its
            parent missing, or on a cycle); ``None``: such entries raise.

    Raises:
        TypeError: something that is not an entry of a kind.
        DuplicateEntryError: two entries share an id.
        UnknownEntryError: a parent is missing (without ``on_repair``).
        CycleError: parent links that never reach a root (without ``on_repair``).
    """
    items: list[Entry] = []
    by_id: dict[str, Entry] = {}
    for entry in entries:
        check_kind(entry, "from_entries")
        if entry.id in by_id:
            raise DuplicateEntryError(entry.id)
        if is_linked(entry):
            entry = entry.evolve()
        by_id[entry.id] = entry
        items.append(entry)
    for i, entry in enumerate(items):
        pid = entry.parent_id
        if pid is not None and pid not in by_id:
            if on_repair is None:
                raise UnknownEntryError(
                    pid, f"entry {entry.id!r} names a parent {pid!r} that does not exist"
                )
            on_repair(entry, f"its parent {pid!r} does not exist: made a root")
            items[i] = by_id[entry.id] = entry = entry.evolve(parent_id=None)
    _link(items, by_id, on_repair)
    store = Store()
    counter = 0
    for seq, entry in enumerate(items):
        _set_position(entry, seq)
    early: set[str] = set()  # parents stored after one of their children
    for seq, entry in enumerate(items):
        store.add(entry)
        parent = entry.parent_entry
        if parent is not None:
            if parent.seq > seq:
                early.add(parent.id)
            elif early and parent.seq == seq - 1 and parent.id in early:
                store.index(entry)  # its parent's index holds an earlier child
        k = counter_of(entry.id)
        if k > counter:
            counter = k
    return store, items, by_id, counter


def _link(
    items: list[Entry], by_id: dict[str, Entry], on_repair: Callable[[Entry, str], None] | None
) -> None:
    """Set parent links and depths, iteratively; find cycles without ever hanging."""
    depth: dict[str, int] = {}
    position: dict[str, int] = {}  # filled at the first cycle: where each entry is
    for start in items:
        if start.id in depth:
            continue
        walk: list[Entry] = []
        on_walk: set[str] = set()
        e: Entry | None = start
        base = -1
        while e is not None:
            if e.id in depth:
                base = depth[e.id]
                break
            if e.id in on_walk:
                cycle_from = next(i for i, w in enumerate(walk) if w.id == e.id)
                cycle = walk[cycle_from:]
                if on_repair is None:
                    raise CycleError(tuple(w.id for w in cycle))
                # Break the cycle at its first entry: it becomes a root.
                root = cycle[0]
                on_repair(root, "its parent links form a cycle: made a root")
                fixed = root.evolve(parent_id=None)
                # By a map, not items.index: a list search per cycle made a file of
                # many cycles and self-parents quadratic.
                if not position:
                    position.update((item.id, i) for i, item in enumerate(items))
                items[position[root.id]] = by_id[root.id] = fixed
                walk = [*walk[:cycle_from], fixed]
                base = -1
                break
            walk.append(e)
            on_walk.add(e.id)
            e = None if e.parent_id is None else by_id[e.parent_id]
        for w in reversed(walk):
            base += 1
            depth[w.id] = base
    for e in items:
        _link_parent(e, None if e.parent_id is None else by_id[e.parent_id], depth[e.id])
