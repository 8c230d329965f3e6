"""Retention: which entries of a session a prune keeps, written once for every store.

:func:`plan` takes the entries the caller wants kept (:class:`Keep`) and closes the
set over what a session needs to stay whole, until nothing more is added:

- the current leaf always stays;
- every ancestor of a kept entry stays (the path to it), so what goes is only whole
  branches that nothing kept hangs from;
- a kept assistant message keeps the results of its tool calls (a result's call is
  its ancestor already): a call never loses its result, nor a result its call;
- a compaction keeps its ``firstKeptEntryId``, a branch summary its ``fromId``, a
  label and a context edit their target;
- a kept entry keeps the labels that name it, so its label is unchanged.

So the context built at any kept entry, its label, and everything on its path are the
same after the prune as before.  The stores then remove the rest in one transaction
(see :meth:`~ptree.stores.Store.prune`) and remember the removed ids, so that a save
of an older tree still holding them is refused, never a silent resurrection.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta

import attrs

from ..entries import BranchSummary, Compaction, ContextEdit, Entry, Label, MessageEntry
from ..tree import SessionTree
from .errors import ConflictError, UnknownKeepError

__all__ = ["Keep", "KeepSpec", "PruneReport", "digest", "plan", "refuse_pruned"]


@attrs.frozen
class Keep:
    """What a prune must keep: the union of its parts.  Combine with ``|``.

    Made by the class methods below rather than by hand; each field is one part.

    Attributes:
        all_leaves: keep every leaf (:meth:`leaves`).
        all_labelled: keep every entry that has a label (:meth:`labelled`).
        newer_than: keep the entries whose timestamp is after this time, or ``None``
            (:meth:`newer`).
        entry_ids: keep these entries (:meth:`ids`).
        where: keep the entries for which one of these predicates is true
            (:meth:`matching`).

    >>> keep = Keep.leaves() | Keep.ids(["e3"])
    >>> keep.all_leaves, keep.entry_ids
    (True, frozenset({'e3'}))
    """

    all_leaves: bool = False
    all_labelled: bool = False
    newer_than: datetime | None = None
    entry_ids: frozenset[str] = frozenset()
    where: tuple[Callable[[Entry], bool], ...] = ()

    @classmethod
    def ids(cls, entry_ids: Iterable[str]) -> Keep:
        """These entries (each must exist, or the prune raises
        :class:`~ptree.stores.UnknownKeepError`).  O(number of ids).

        Args:
            entry_ids: the ids to keep (a single ``str`` is one id, not its letters).

        Raises:
            TypeError: an id that is not a ``str``.

        >>> sorted(Keep.ids(["e2", "e1"]).entry_ids), Keep.ids("e10").entry_ids
        (['e1', 'e2'], frozenset({'e10'}))
        """
        if isinstance(entry_ids, str):
            entry_ids = [entry_ids]
        ids = frozenset(entry_ids)
        bad = [i for i in ids if not isinstance(i, str)]
        if bad:
            raise TypeError(f"entry ids are str, not {type(bad[0]).__name__}")
        return cls(entry_ids=ids)

    @classmethod
    def leaves(cls) -> Keep:
        """Every leaf (the tip of every branch): what was last said on each branch.

        O(1) to make; finding the leaves is part of the prune's O(n).
        """
        return cls(all_leaves=True)

    @classmethod
    def labelled(cls) -> Keep:
        """Every entry that has a label.

        O(1) to make; finding the labels is part of the prune's O(n).
        """
        return cls(all_labelled=True)

    @classmethod
    def matching(cls, predicate: Callable[[Entry], bool]) -> Keep:
        """The entries for which ``predicate(entry)`` is true.

        O(1) to make; the prune calls ``predicate`` once per entry of the session.

        Args:
            predicate: a function of an entry; what it raises stops the prune, before
                anything is removed.
        """
        return cls(where=(predicate,))

    @classmethod
    def newer(cls, than: datetime | timedelta) -> Keep:
        """Entries whose timestamp is after ``than`` (a time, or an age: ``timedelta(
        days=30)`` is the last 30 days).  An entry whose timestamp does not parse is
        kept; one without a time zone is read as UTC.  O(1) to make (an age is taken
        from the clock now, not at the prune).

        Args:
            than: an aware ``datetime``, or a ``timedelta`` before now.

        Raises:
            ValueError: ``than`` is a naive ``datetime`` (no ``tzinfo``).
        """
        when = datetime.now(UTC) - than if isinstance(than, timedelta) else than
        if when.tzinfo is None:
            raise ValueError("newer-than needs an aware datetime (tzinfo=UTC)")
        return cls(newer_than=when)

    def __or__(self, other: Keep) -> Keep:
        if not isinstance(other, Keep):
            return NotImplemented
        newer = [t for t in (self.newer_than, other.newer_than) if t is not None]
        return Keep(
            all_leaves=self.all_leaves or other.all_leaves,
            all_labelled=self.all_labelled or other.all_labelled,
            newer_than=min(newer) if newer else None,
            entry_ids=self.entry_ids | other.entry_ids,
            where=self.where + other.where,
        )

    def select(self, tree: SessionTree) -> set[str]:
        """The ids this asks to keep in ``tree`` (before :func:`plan` closes them).
        O(n)."""
        chosen = set(self.entry_ids)
        if self.all_leaves:
            chosen.update(e.id for e in tree.leaves())
        if self.all_labelled:
            chosen.update(tree.labels())
        if self.newer_than is not None or self.where:
            for e in tree.entries():
                newer = self.newer_than is not None and _newer(e, self.newer_than)
                if newer or any(p(e) for p in self.where):
                    chosen.add(e.id)
        return chosen


KeepSpec = Keep | Iterable[str] | Callable[[Entry], bool]
"""What ``keep=`` takes: a :class:`Keep`, entry ids, or a predicate on entries."""


def _newer(entry: Entry, than: datetime) -> bool:
    try:
        stamp = datetime.fromisoformat(entry.timestamp)
    except ValueError:
        return True  # unknown age: never pruned for being old
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp > than


def as_keep(keep: object) -> Keep:
    """``keep=`` as a :class:`Keep`."""
    if isinstance(keep, Keep):
        return keep
    if callable(keep):
        return Keep.matching(keep)
    if isinstance(keep, Iterable):
        return Keep.ids(keep)
    raise TypeError(f"keep is a Keep, entry ids or a predicate, not {type(keep).__name__}")


@attrs.frozen
class PruneReport:
    """What a prune removed (or, with ``dry_run``, would remove) and what stays.

    Attributes:
        session_id: the session.
        kept: the ids that stay, in the session's order.
        removed: the ids that go, in the session's order.
        dry_run: whether nothing was changed.
    """

    session_id: str
    kept: tuple[str, ...]
    removed: tuple[str, ...]
    dry_run: bool


def plan(url: str, tree: SessionTree, keep: Keep) -> tuple[SessionTree, PruneReport]:
    """The tree that keeps what ``keep`` names and what it needs (see the module doc),
    and the report.  O(n + removed × depth).

    Raises:
        UnknownKeepError: ``keep`` names ids the session does not have.
    """
    assert tree.header is not None
    sid = tree.header.id
    missing = sorted(i for i in keep.entry_ids if i not in tree)
    if missing:
        raise UnknownKeepError(url, sid, tuple(missing))
    entries = tree.entries()
    labels_of: dict[str, list[str]] = {}
    results_of: dict[str, list[Entry]] = {}
    for e in entries:
        if isinstance(e, Label):
            labels_of.setdefault(e.target_id, []).append(e.id)
        elif isinstance(e, MessageEntry) and e.message.get("role") == "toolResult":
            call = e.message.get("toolCallId")
            if isinstance(call, str):
                results_of.setdefault(call, []).append(e)
    kept: set[str] = set()
    work = list(keep.select(tree))
    if tree.leaf_id is not None:
        work.append(tree.leaf_id)
    while work:
        eid = work.pop()
        if eid in kept or eid not in tree:
            continue
        kept.add(eid)
        e = tree[eid]
        if e.parent_id is not None:
            work.append(e.parent_id)
        work.extend(labels_of.get(eid, ()))
        if isinstance(e, Compaction) and e.first_kept_entry_id is not None:
            work.append(e.first_kept_entry_id)
        elif isinstance(e, BranchSummary):
            work.append(e.from_id)
        elif isinstance(e, (Label, ContextEdit)):
            work.append(e.target_id)
        elif isinstance(e, MessageEntry):
            for call in _call_ids(e.message):
                for result in results_of.get(call, ()):
                    if _descends(tree, result, eid):
                        work.append(result.id)
    kept_entries = [e for e in entries if e.id in kept]
    removed = tuple(e.id for e in entries if e.id not in kept)
    report = PruneReport(sid, tuple(e.id for e in kept_entries), removed, False)
    if not removed:
        return tree, report
    new = SessionTree.from_entries(kept_entries, leaf_id=tree.leaf_id, header=tree.header)
    return new, report


def _call_ids(message: Mapping[str, object]) -> list[str]:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, (list, tuple)):
        return []
    return [
        b["id"]
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "toolCall" and isinstance(b.get("id"), str)
    ]


def _descends(tree: SessionTree, entry: Entry, ancestor: str) -> bool:
    parent = entry.parent_id
    while parent is not None:
        if parent == ancestor:
            return True
        parent = tree[parent].parent_id
    return False


def digest(entry: Entry) -> str:
    """What a store remembers of a pruned entry beside its id: the SHA-256 of its JSON
    line.  A new entry that reuses the id (a counter's next id) is not the pruned one."""
    from ._base import entry_payload  # _base imports this module

    return hashlib.sha256(entry_payload(entry).encode("utf-8")).hexdigest()


def refuse_pruned(
    url: str, session_id: str, new: Iterable[Entry], pruned: set[tuple[str, str]]
) -> None:
    """Refuse a save whose new entries include one a prune removed.

    Raises:
        ConflictError: naming the entry.
    """
    if not pruned:
        return
    for entry in new:
        if (entry.id, digest(entry)) in pruned:
            raise ConflictError(
                session_id,
                url,
                f"entry {entry.id!r} was pruned: this tree was loaded before the prune; "
                "load the session again",
            )
