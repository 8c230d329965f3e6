"""Moving around the tree: move with a summary, fork, labels, and diffs.

The operations an agent uses to leave a branch and come back (:func:`summary_entries`,
:func:`move_with_summary`), to copy one path into a new session (:func:`fork`), to mark
entries (:func:`set_label`, :func:`clear_label`, :func:`labelled`), and to compare two
versions or two branches (:func:`diff`, :func:`diff_branches`).  Semantics are Pi's (see
``docs/pi-session-format.md`` in the shared folder) except where a docstring says
otherwise.  Every operation returns new values and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from .entries import BranchSummary, Compaction, CustomMessage, Entry, Label, MessageEntry
from .errors import InvalidEntryError
from .frozen import JSONValue
from .header import SessionHeader
from .tree import SessionTree

__all__ = [
    "BranchDiff",
    "BranchOrigin",
    "MoveResult",
    "TreeDiff",
    "branch_origin",
    "clear_label",
    "diff",
    "diff_branches",
    "editable_text",
    "fork",
    "labelled",
    "move_with_summary",
    "set_label",
    "summary_entries",
]


# --------------------------------------------------------------------- move with a summary


def summary_entries(tree: SessionTree, target_id: str) -> tuple[Entry, ...]:
    """The entries a summary should cover when the leaf moves to ``target_id``.

    Those from the current leaf back to, not including, the deepest common ancestor
    of the leaf and the target, oldest first (Pi's ``collectEntriesForBranchSummary``).
    Empty when the tree has no leaf or the target is below the leaf; the whole path
    when the target is under another root.

    Cost: O(distance from the leaf and the target to their common ancestor).

    Args:
        tree: the tree.
        target_id: the entry the leaf moves to.

    Raises:
        UnknownEntryError: ``target_id`` names no entry.

    >>> t = SessionTree().append({"role": "user", "content": "q"})
    >>> t = t.append({"role": "assistant", "content": "A"})
    >>> t = t.append({"role": "user", "content": "more"})
    >>> [e.id for e in summary_entries(t, "e1")]
    ['e2', 'e3']
    """
    target = tree[target_id]
    leaf = tree.leaf
    if leaf is None:
        return ()
    return diff_branches(tree, leaf.id, target.id).only_a


def editable_text(entry: Entry) -> str | None:
    """The text Pi hands back for re-editing when the leaf moves to ``entry``.

    A user message or a custom message gives its text (a string content, or its text
    blocks joined with nothing between them, as Pi does); any other entry gives
    ``None``.  Cost: O(size of the content).

    Args:
        entry: the entry the leaf moves to.

    >>> t = SessionTree().append({"role": "user", "content": [{"type": "text", "text": "hi"}]})
    >>> editable_text(t["e1"])
    'hi'
    """
    if isinstance(entry, MessageEntry):
        if entry.message.get("role") != "user":
            return None
        content = entry.message.get("content")
    elif type(entry) is CustomMessage:
        content = entry.content
    else:
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        return "".join(
            b["text"]
            for b in content
            if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


@attrs.frozen(weakref_slot=False)
class MoveResult:
    """What :func:`move_with_summary` gives back.

    Attributes:
        tree: the new tree, its leaf moved (and the summary appended, if any).
        edit: the user or custom message the move went *above*, handed back so that
            the user can edit and resend it; ``None`` when the move went to the target.
        edit_text: the text of ``edit`` (:func:`editable_text`), or ``None``.
        summary_id: the id of the ``branch_summary`` entry written, or ``None``.
    """

    tree: SessionTree
    edit: Entry | None = None
    edit_text: str | None = None
    summary_id: str | None = None


def move_with_summary(
    tree: SessionTree,
    target_id: str,
    summary: str | None,
    *,
    details: JSONValue = None,
    from_hook: bool | None = None,
    label: str | None = None,
    from_id: Literal["abandoned", "new_leaf"] = "abandoned",
) -> MoveResult:
    """Move the leaf to ``target_id``, leaving a summary of the abandoned branch.

    Pi's tree navigation.  If the target is a user message or a custom message, the
    new leaf is its parent (``None`` for a root) and the message is handed back in
    :attr:`MoveResult.edit` for re-editing; otherwise the new leaf is the target.
    When ``summary`` is not empty, a ``branch_summary`` entry is appended under the new
    leaf and becomes the leaf; :func:`summary_entries` tells what it should cover.
    ``label``, if given, labels the summary entry (or, without a summary, the target),
    as Pi does: the label entry is appended last and is the leaf (labels never reach
    the model).  A move to the current leaf changes nothing.

    **What ``fromId`` records.** Pi 1.6 (since 0.84.3, Pi issue #3796) writes the
    **abandoned leaf** (``"root"`` when there was no leaf), and so does ptree by
    default; Pi 0.73.1 wrote the new leaf, which the entry's ``parentId`` already
    says, and ``from_id="new_leaf"`` writes that.  Pi never interprets ``fromId``
    (it only copies it into the context), so both read the same in Pi.
    :func:`branch_origin` reads either convention.

    Cost: O(depth of the target) for the text of the message handed back, O(1) for
    the rest, plus the size of ``details``.

    Args:
        tree: the tree to move in.
        target_id: where to go.
        summary: the summary of the abandoned branch; ``None`` or ``""`` moves
            without one (Pi writes no entry then either).
        details: extension data kept in the entry (never sent to the model).
        from_hook: whether an extension made the summary.
        label: a label for the summary entry, or for the target without a summary.
        from_id: ``"abandoned"`` (the default, as Pi 1.6) or ``"new_leaf"`` (as Pi
            0.73.1).

    Raises:
        UnknownEntryError: ``target_id`` names no entry.

    >>> t = SessionTree().append({"role": "user", "content": "q"})
    >>> t = t.append({"role": "assistant", "content": "A"})
    >>> r = move_with_summary(t, "e1", "tried A")
    >>> r.tree.leaf.type, r.tree.leaf.parent_id, r.tree.leaf.from_id, r.edit_text
    ('branch_summary', None, 'e2', 'q')
    """
    if from_id not in ("abandoned", "new_leaf"):
        raise ValueError(f"from_id must be 'abandoned' or 'new_leaf', not {from_id!r}")
    target = tree[target_id]
    old_leaf = tree.leaf_id
    if target_id == old_leaf:
        return MoveResult(tree)
    text = editable_text(target)
    if text is not None:
        new_leaf = target.parent_id
        edit: Entry | None = target
    else:
        new_leaf = target_id
        edit = None
    moved = tree.move_to(new_leaf)
    summary_id: str | None = None
    if summary:
        recorded = old_leaf if from_id == "abandoned" else new_leaf
        moved = moved.append_branch_summary(
            "root" if recorded is None else recorded,
            summary,
            details=details,
            from_hook=from_hook,
        )
        summary_id = moved.leaf_id
        if label:
            # As in Pi, the label entry is appended like any entry and becomes the leaf.
            moved = moved.append_label(summary_id, label)  # type: ignore[arg-type]
    elif label:
        moved = moved.append_label(target_id, label)
    return MoveResult(moved, edit, text, summary_id)


@attrs.frozen(weakref_slot=False)
class BranchOrigin:
    """Where a ``branch_summary`` entry came from and went back to.

    Attributes:
        returned_to: the entry the conversation came back to (the summary's parent),
            ``None`` for a root.
        abandoned: the leaf of the branch that was left, when the entry records it
            (ptree's and Pi 1.6's convention); ``None`` when it does not (Pi before
            0.84.3, 0.73.1 included, recorded the new leaf, which is ``returned_to``)
            or when there was no leaf.
        convention: ``"ptree"`` (``fromId`` names the abandoned leaf: ptree, and Pi
            since 0.84.3, 1.6 included) or ``"pi"`` (``fromId`` names the new leaf:
            Pi 0.73.1 and older).
    """

    returned_to: str | None
    abandoned: str | None
    convention: Literal["ptree", "pi"]


def branch_origin(tree: SessionTree, summary_id: str) -> BranchOrigin:
    """Read a ``branch_summary``'s ``fromId`` under either convention.  O(1).

    A ``fromId`` equal to the entry's own parent (or ``"root"`` for a root entry) is
    read as old Pi's convention (0.73.1): it names the new leaf, and the abandoned
    leaf is unknown.  Any other value names the abandoned leaf (ptree's and Pi 1.6's
    convention).  The two agree in the one case where they cannot be told apart: a
    move that abandoned nothing (or, for a root entry, one made without a leaf).

    Args:
        tree: the tree holding the summary.
        summary_id: the id of a ``branch_summary`` entry.

    Raises:
        UnknownEntryError: ``summary_id`` names no entry.
        InvalidEntryError: the entry is not a ``branch_summary``.

    >>> t = SessionTree().append({"role": "user", "content": "q"})
    >>> t = t.append({"role": "assistant", "content": "A"})
    >>> pi = move_with_summary(t, "e1", "s", from_id="new_leaf")
    >>> branch_origin(pi.tree, pi.summary_id)
    BranchOrigin(returned_to=None, abandoned=None, convention='pi')
    >>> r = move_with_summary(t, "e1", "s")
    >>> branch_origin(r.tree, r.summary_id)
    BranchOrigin(returned_to=None, abandoned='e2', convention='ptree')
    """
    entry = tree[summary_id]
    if type(entry) is not BranchSummary:
        raise InvalidEntryError(
            f"a {entry.type} entry is not a branch_summary", entry_id=summary_id, field="type"
        )
    parent = entry.parent_id
    if entry.from_id == ("root" if parent is None else parent):
        return BranchOrigin(parent, None, "pi")
    return BranchOrigin(parent, None if entry.from_id == "root" else entry.from_id, "ptree")


# --------------------------------------------------------------------- fork


def fork(
    tree: SessionTree,
    entry_id: str,
    *,
    position: Literal["at", "before"] = "at",
    parent_session: str | None = None,
) -> SessionTree:
    """A new session holding only the path from the root to ``entry_id``.

    ``position="at"`` ends the path at the entry; ``"before"`` requires a user message
    and ends at its parent (an empty session for a root message), so that the
    message can be edited and sent again (:func:`editable_text` gives its text).  Label
    entries on the path are left out and the path is re-linked around them; the
    labels that point at copied entries (resolved over the whole source, latest
    winning) are written again at the end, as new label entries with the times the
    labels were set.  The leaf of the new
    tree is its last entry, as when Pi opens the file.

    The new tree has a new :class:`~ptree.SessionHeader` (a new id, the source's
    ``cwd``) whose ``parent_session`` names the source: ``parent_session`` if given
    (Pi writes the source file's path), else the source header's id.  It makes ids and
    timestamps the way the source does.

    This is Pi 1.6's ``createBranchedSession``: each copied entry's parent is the
    previous copied entry, and a compaction's ``firstKeptEntryId`` naming a left-out
    label entry names the next copied entry instead, so the fork's context is the
    source's context at ``entry_id``.  (Pi 0.73.1 copied the entries unchanged, so
    the children of a left-out label named an entry the new file lacked.)

    Cost: O(depth of the entry), plus O(number of entries) when the tree has labels.

    Args:
        tree: the source session.
        entry_id: the entry the path leads to.
        position: ``"at"`` (end at the entry) or ``"before"`` (end at its parent).
        parent_session: what the new header's ``parent_session`` names; the
            source header's id when ``None``.

    Raises:
        UnknownEntryError: ``entry_id`` names no entry.
        InvalidEntryError: ``position="before"`` and the entry is not a user message.
        ValueError: ``position`` is neither ``"at"`` nor ``"before"``.

    >>> t = SessionTree().append({"role": "user", "content": "q"})
    >>> t = t.append_label("e1", "start")
    >>> t = t.append({"role": "assistant", "content": "A"})
    >>> f = fork(t, "e3", parent_session="/sessions/a.jsonl")
    >>> [(e.id, e.type, e.parent_id) for e in f.entries()]
    [('e1', 'message', None), ('e3', 'message', 'e1'), ('e4', 'label', 'e3')]
    >>> f.labels(), f.header.parent_session
    ({'e1': 'start'}, '/sessions/a.jsonl')
    """
    target = tree[entry_id]
    if position == "before":
        if not isinstance(target, MessageEntry) or target.message.get("role") != "user":
            what = (
                f"a message with role {target.message.get('role')!r}"
                if isinstance(target, MessageEntry)
                else f"a {target.type} entry"
            )
            raise InvalidEntryError(
                f"fork before an entry needs a user message, not {what}",
                entry_id=entry_id,
                field="type",
            )
        end = target.parent_entry
    elif position == "at":
        end = target
    else:
        raise ValueError(f"position must be 'at' or 'before', not {position!r}")
    kept: list[Entry] = []
    previous: str | None = None
    # Label entries left out, each standing for the next entry copied after it.
    skipped: list[str] = []
    stands_for: dict[str, str] = {}
    for e in () if end is None else tree.path(end.id):
        if type(e) is Label:
            skipped.append(e.id)
            continue
        for label_id in skipped:
            stands_for[label_id] = e.id
        skipped.clear()
        changes: dict[str, Any] = {}
        if e.parent_id != previous:
            changes["parent_id"] = previous
        if type(e) is Compaction and e.first_kept_entry_id in stands_for:
            # Kept from a label entry: from the next entry, which gives the same context.
            changes["first_kept_entry_id"] = stands_for[e.first_kept_entry_id]
        if changes:
            e = e.evolve(**changes)
        kept.append(e)
        previous = e.id
    source = tree.header
    header = SessionHeader.new(
        cwd=None if source is None else source.cwd,
        parent_session=parent_session
        if parent_session is not None
        else (None if source is None else source.id),
    )
    out = SessionTree.from_entries(
        kept, header=header, id_factory=tree.id_factory, clock=tree.clock
    )
    copied = {e.id for e in kept}
    labels = tree.labels()
    if labels:
        # Each label keeps the time it was set, as Pi 1.6 writes it again.
        set_at: dict[str, str] = {}
        for e in tree.entries():
            if type(e) is Label:
                set_at[e.target_id] = e.timestamp
        for labelled_id, text in labels.items():
            if labelled_id in copied:
                out = out.append_label(labelled_id, text, timestamp=set_at[labelled_id])
    return out


# --------------------------------------------------------------------- labels


def set_label(tree: SessionTree, entry_id: str, label: str) -> SessionTree:
    """Label an entry (a bookmark an agent or a user can find again).

    As in Pi, the label is a ``label`` entry appended under the leaf, which becomes
    the leaf (it never reaches the model, so the context does not change; the next
    message hangs under it).  Setting the label an entry already has returns ``tree``
    itself.  Cost: O(log labels).

    Args:
        tree: the tree.
        entry_id: the entry to label.
        label: the label, not empty.

    Raises:
        UnknownEntryError: ``entry_id`` names no entry.
        ValueError: ``label`` is empty (use :func:`clear_label`).

    >>> t = SessionTree().append({"role": "user", "content": "q"})
    >>> t2 = set_label(t, "e1", "good")
    >>> t2.label_of("e1"), set_label(t2, "e1", "good") is t2
    ('good', True)
    """
    if not isinstance(label, str) or not label:
        raise ValueError(f"a label must be a non-empty string, not {label!r}")
    if tree.label_of(entry_id) == label:
        return tree
    return tree.append_label(entry_id, label)


def clear_label(tree: SessionTree, entry_id: str) -> SessionTree:
    """Remove an entry's label (a ``label`` entry without one); ``tree`` if it has none.

    Cost: O(log labels).

    Args:
        tree: the tree.
        entry_id: the entry whose label goes.

    Raises:
        UnknownEntryError: ``entry_id`` names no entry.

    >>> t = set_label(SessionTree().append({"role": "user", "content": "q"}), "e1", "x")
    >>> clear_label(t, "e1").label_of("e1") is None
    True
    """
    if tree.label_of(entry_id) is None:
        return tree
    return tree.append_label(entry_id, None)


def labelled(tree: SessionTree, label: str) -> tuple[str, ...]:
    """The ids of the entries whose label is ``label`` now, in labelling order.

    Cost: O(number of label entries).

    Args:
        tree: the tree whose labels are searched.
        label: the label text to find.

    >>> t = SessionTree().append({"role": "user", "content": "q"})
    >>> labelled(set_label(t, "e1", "good"), "good")
    ('e1',)
    """
    return tuple(i for i, text in tree.labels().items() if text == label)


# --------------------------------------------------------------------- diffs


@attrs.frozen(weakref_slot=False)
class TreeDiff:
    """How two versions of a tree differ (:func:`diff`).

    Attributes:
        only_a: entries whose id only ``a`` has, in ``a``'s order.
        only_b: entries whose id only ``b`` has, in ``b``'s order.
        changed: ``(in a, in b)`` pairs of entries with the same id and different
            content (two sessions that numbered their entries alike).
        leaf_a: ``a``'s leaf id.
        leaf_b: ``b``'s leaf id.

    A diff is true when the versions differ in entries or in leaf.
    """

    only_a: tuple[Entry, ...]
    only_b: tuple[Entry, ...]
    changed: tuple[tuple[Entry, Entry], ...]
    leaf_a: str | None
    leaf_b: str | None

    def __bool__(self) -> bool:
        return bool(self.only_a or self.only_b or self.changed or self.leaf_a != self.leaf_b)


def diff(a: SessionTree, b: SessionTree) -> TreeDiff:
    """Which entries one version has that the other lacks, and how their leaves differ.

    Entries are matched by id.  When one version grew from the other (the usual case
    for two versions of one session), the answer takes O(number of added entries);
    otherwise O(len(a) + len(b)).

    Args:
        a: one version.
        b: the other version.

    >>> v1 = SessionTree().append({"role": "user", "content": "q"})
    >>> v2 = v1.append({"role": "assistant", "content": "A"})
    >>> d = diff(v1, v2)
    >>> [e.id for e in d.only_b], d.only_a, d.leaf_a, d.leaf_b
    (['e2'], (), 'e1', 'e2')
    """
    added = b.added_since(a)
    if added is not None:
        return TreeDiff((), added, (), a.leaf_id, b.leaf_id)
    removed = a.added_since(b)
    if removed is not None:
        return TreeDiff(removed, (), (), a.leaf_id, b.leaf_id)
    in_b: dict[str, Entry] = {e.id: e for e in b.entries()}
    only_a: list[Entry] = []
    changed: list[tuple[Entry, Entry]] = []
    seen: set[str] = set()
    for e in a.entries():
        other = in_b.get(e.id)
        if other is None:
            only_a.append(e)
        else:
            seen.add(e.id)
            if other is not e and other != e:
                changed.append((e, other))
    only_b = tuple(e for e in in_b.values() if e.id not in seen)
    return TreeDiff(tuple(only_a), only_b, tuple(changed), a.leaf_id, b.leaf_id)


@attrs.frozen(weakref_slot=False)
class BranchDiff:
    """Where two branches of one tree part (:func:`diff_branches`).

    Attributes:
        fork_point: the deepest entry on both paths, or ``None`` when the branches
            have different roots.
        only_a: the entries after the fork point on the way to ``a``, oldest first.
        only_b: the same for ``b``.
    """

    fork_point: str | None
    only_a: tuple[Entry, ...]
    only_b: tuple[Entry, ...]


def diff_branches(tree: SessionTree, a: str, b: str) -> BranchDiff:
    """Where the paths to two entries of one tree part, and what each has after that.

    An agent comparing two attempts gets the shared history (up to ``fork_point``) and
    the two divergent segments.  If one entry is an ancestor of the other, the
    ancestor is the fork point and its segment is empty.

    Cost: O(distance from ``a`` and ``b`` to the fork point).

    Args:
        tree: the tree holding both entries.
        a: the id of one entry.
        b: the id of the other.

    Raises:
        UnknownEntryError: ``a`` or ``b`` names no entry.

    >>> t = SessionTree().append({"role": "user", "content": "q"})
    >>> t = t.append({"role": "assistant", "content": "A"})
    >>> t = t.move_to("e1").append({"role": "assistant", "content": "B"})
    >>> d = diff_branches(t, "e2", "e3")
    >>> d.fork_point, [e.id for e in d.only_a], [e.id for e in d.only_b]
    ('e1', ['e2'], ['e3'])
    """
    x: Any = tree[a]
    y: Any = tree[b]
    only_a: list[Entry] = []
    only_b: list[Entry] = []
    while x is not None and y is not None and x.depth > y.depth:
        only_a.append(x)
        x = x.parent_entry
    while x is not None and y is not None and y.depth > x.depth:
        only_b.append(y)
        y = y.parent_entry
    while x is not y:
        only_a.append(x)
        only_b.append(y)
        x = x.parent_entry
        y = y.parent_entry
    only_a.reverse()
    only_b.reverse()
    return BranchDiff(None if x is None else x.id, tuple(only_a), tuple(only_b))
