"""The persistent session tree: :class:`SessionTree`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import EllipsisType
from typing import Any, TypeVar, cast

from . import arrays
from .arrays import Store
from .entries import (
    ActiveToolsChange,
    BranchSummary,
    Compaction,
    Custom,
    CustomMessage,
    Entry,
    Label,
    MessageEntry,
    ModelChange,
    SessionInfo,
    ThinkingLevelChange,
    _Links,
)
from .errors import CycleError, DuplicateEntryError, InvalidMessageError, UnknownEntryError
from .frozen import FrozenDict, JSONValue, freeze
from .header import SessionHeader
from .ids import Clock, IdFactory, counter_ids, utc_now

__all__ = ["SessionTree"]

_E = TypeVar("_E", bound=Entry)

# Slot setters of the link fields: entries are frozen to everyone else.
_set_parent = _Links.__dict__["_parent"].__set__
_set_depth = _Links.__dict__["_depth"].__set__
_set_seq = _Links.__dict__["_seq"].__set__
_set_id = Entry.__dict__["id"].__set__
_set_parent_id = Entry.__dict__["parent_id"].__set__
_set_timestamp = Entry.__dict__["timestamp"].__set__
_set_extra = Entry.__dict__["extra"].__set__
_set_message = MessageEntry.__dict__["message"].__set__
_EMPTY_EXTRA = FrozenDict()


# Longer digit runs are ids like any other: int() refuses past 4,300 digits (a
# ValueError from append), and no counter ever reaches 10**30, so they never collide.
_COUNTER_DIGITS = 30


def _counter_of(entry_id: str) -> int:
    """``k`` for an id ``"e<k>"`` (the default ids, up to 30 digits), else 0."""
    if entry_id[:1] == "e" and entry_id[1:2] != "0" and len(entry_id) <= _COUNTER_DIGITS + 1:
        digits = entry_id[1:]
        if digits.isascii() and digits.isdigit():
            return int(digits)
    return 0


def _is_linked(entry: Entry) -> bool:
    try:
        entry._seq  # noqa: B018
    except AttributeError:
        return False
    return True


class _Config:
    """How a tree makes new ids and timestamps: shared by all its versions."""

    __slots__ = ("clock", "id_factory")

    def __init__(self, id_factory: IdFactory, clock: Clock) -> None:
        self.id_factory = id_factory
        self.clock = clock


_DEFAULT_CONFIG = _Config(counter_ids, utc_now)


class SessionTree:
    """An immutable tree of session entries with a current leaf.

    Every entry has a parent (or is a root); the *leaf* marks where the conversation
    is; the path from a root to the leaf is what a model is given.  Every operation
    returns a new tree and leaves this one exactly as it was, so old values are
    undo history, safe to read from any thread, and cheap to keep: a new value
    shares all of its storage with the old one.

    Equal trees (the same entries, in the same order, the same leaf and header) are
    ``==`` and hash alike; how new ids and timestamps are made (``id_factory``,
    ``clock``) is configuration and takes no part in equality, as a
    ``defaultdict``'s factory does not.

    Args:
        id_factory: makes the ids of new entries; default :func:`~ptree.counter_ids`
            (``"e1"``, ``"e2"``, …), or :func:`~ptree.random_ids` for Pi's 8 hex digits.
        clock: makes the timestamps of new entries; default :func:`~ptree.utc_now`.
        header: the session file header this tree belongs to, if any.

    >>> a = SessionTree().append({"role": "user", "content": "plan A"})
    >>> b = a.append({"role": "assistant", "content": "sure"})
    >>> len(a), len(b), a.leaf_id, b.leaf_id
    (1, 2, 'e1', 'e2')
    """

    __slots__ = ("_config", "_hash", "_header", "_leaf", "_max_seq", "_size", "_store")

    _store: Store
    _size: int
    _leaf: Entry | None
    _max_seq: int
    _header: SessionHeader | None
    _config: _Config
    _hash: int

    def __init__(
        self,
        *,
        id_factory: IdFactory = counter_ids,
        clock: Clock = utc_now,
        header: SessionHeader | None = None,
    ) -> None:
        self._store = Store()
        self._size = 0
        self._leaf = None
        self._max_seq = 0
        self._header = header
        if id_factory is counter_ids and clock is utc_now:
            self._config = _DEFAULT_CONFIG
        else:
            self._config = _Config(id_factory, clock)

    @classmethod
    def _new(
        cls,
        store: Store,
        size: int,
        leaf: Entry | None,
        max_seq: int,
        header: SessionHeader | None,
        config: _Config,
    ) -> SessionTree:
        tree = object.__new__(cls)
        tree._store = store
        tree._size = size
        tree._leaf = leaf
        tree._max_seq = max_seq
        tree._header = header
        tree._config = config
        return tree

    # ------------------------------------------------------------------ reading

    @property
    def leaf_id(self) -> str | None:
        """The id of the current leaf, or ``None`` (an empty tree, or after ``move_to(None)``)."""
        leaf = self._leaf
        return None if leaf is None else leaf.id

    @property
    def leaf(self) -> Entry | None:
        """The current leaf entry, or ``None``."""
        return self._leaf

    @property
    def header(self) -> SessionHeader | None:
        """The session header kept with this tree (set by ``load``), or ``None``."""
        return self._header

    @property
    def id_factory(self) -> IdFactory:
        """How this tree makes the ids of new entries."""
        return self._config.id_factory

    @property
    def clock(self) -> Clock:
        """How this tree makes the timestamps of new entries."""
        return self._config.clock

    def __len__(self) -> int:
        """The number of entries.  O(1)."""
        return self._size

    def __bool__(self) -> bool:
        return self._size > 0

    def __contains__(self, entry_id: object) -> bool:
        """Whether an entry has this id.  O(1)."""
        if type(entry_id) is not str:
            return False
        return arrays.lookup(self._store, self._size, entry_id) is not None

    def __getitem__(self, entry_id: str) -> Entry:
        """The entry with this id.  O(1).

        Raises:
            UnknownEntryError: (a ``KeyError``) no such entry.
        """
        entry = arrays.lookup(self._store, self._size, entry_id) if type(entry_id) is str else None
        if entry is None:
            raise UnknownEntryError(entry_id)
        return entry

    def get(self, entry_id: str, default: _E | None = None) -> Entry | _E | None:
        """The entry with this id, or ``default``.  O(1).

        >>> SessionTree().get("e1") is None
        True
        """
        entry = arrays.lookup(self._store, self._size, entry_id) if type(entry_id) is str else None
        return default if entry is None else entry

    def __iter__(self) -> Iterator[str]:
        """The ids of all entries, in insertion order."""
        return (e.id for e in arrays.view(self._store, self._size))

    def entries(self) -> tuple[Entry, ...]:
        """All entries, in the order they were added.  O(n).

        >>> t = SessionTree().append({"role": "user", "content": "hi"})
        >>> [e.id for e in t.entries()]
        ['e1']
        """
        return tuple(arrays.view(self._store, self._size))

    def ids(self) -> tuple[str, ...]:
        """All ids, in the order their entries were added.  O(n)."""
        return tuple(e.id for e in arrays.view(self._store, self._size))

    def added_since(self, older: SessionTree) -> tuple[Entry, ...] | None:
        """The entries this tree has beyond ``older``, if it grew from ``older``.

        ``None`` when ``older``'s entries are not the start of this tree's entries
        (this tree is not a later version of ``older``).  Leaf moves are not entries:
        compare ``leaf_id`` for those.  A storage writer commits exactly this.

        Cost: O(number of added entries), not O(n): versions share their entries,
        so one identity check tells whether ``older`` is where this tree came from.

        >>> a = SessionTree().append({"role": "user", "content": "a"})
        >>> b = a.append({"role": "assistant", "content": "b"})
        >>> [e.id for e in b.added_since(a)], a.added_since(b)
        (['e2'], None)
        """
        n = older._size
        if n > self._size:
            return None
        if n and arrays.at(self._store, self._size, n - 1) is not arrays.at(older._store, n, n - 1):
            return None
        return tuple(arrays.view_from(self._store, self._size, n))

    def _entry(self, entry_id: str) -> Entry:
        entry = arrays.lookup(self._store, self._size, entry_id) if type(entry_id) is str else None
        if entry is None:
            raise UnknownEntryError(entry_id)
        return entry

    def _at(self, entry_id: str | None) -> Entry | None:
        """``entry_id``'s entry, or the leaf when ``entry_id`` is ``None``."""
        return self._leaf if entry_id is None else self._entry(entry_id)

    def path(self, entry_id: str | None = None) -> tuple[Entry, ...]:
        """The entries from the root down to ``entry_id`` (default: the leaf).

        Cost: O(depth), iterative: paths 100,000 deep are fine.

        Raises:
            UnknownEntryError: no entry has that id.

        >>> t = SessionTree().append({"role": "user", "content": "a"})
        >>> t = t.append({"role": "assistant", "content": "b"})
        >>> [e.id for e in t.path()], [e.id for e in t.path("e1")]
        (['e1', 'e2'], ['e1'])
        """
        entry = self._at(entry_id)
        out: list[Entry] = []
        while entry is not None:
            out.append(entry)
            entry = entry._parent
        out.reverse()
        return tuple(out)

    def current_path(self) -> tuple[FrozenDict, ...]:
        """The messages on the path from the root to the leaf: what a model is shown.

        Only ``message`` entries contribute; for the full context with compactions,
        summaries, model and thinking level, use :func:`ptree.build_context`.  A pure
        function of the value: the same tree always gives the same path.

        Cost: O(depth), iterative.

        >>> t = SessionTree().append({"role": "user", "content": "hi"})
        >>> t.current_path()
        ({'role': 'user', 'content': 'hi'},)
        """
        out: list[FrozenDict] = []
        entry = self._leaf
        while entry is not None:
            if type(entry) is MessageEntry:
                out.append(entry.message)
            entry = entry._parent
        out.reverse()
        return tuple(out)

    def depth(self, entry_id: str | None = None) -> int:
        """How many ancestors an entry has (default: the leaf); a root has depth 0.  O(1).

        Raises:
            UnknownEntryError: no such entry, or no id given and the tree has no leaf.
        """
        entry = self._at(entry_id)
        if entry is None:
            raise UnknownEntryError(None, "the tree has no leaf, so no depth")
        return entry._depth

    def parent(self, entry_id: str) -> Entry | None:
        """The parent entry of ``entry_id``, or ``None`` for a root.  O(1)."""
        return self._entry(entry_id)._parent

    def children(self, entry_id: str | None) -> tuple[Entry, ...]:
        """The children of ``entry_id`` in insertion order; ``None`` gives the roots.

        Cost: O(number of children), never a scan of the tree.

        Raises:
            UnknownEntryError: no such entry.

        >>> t = SessionTree().append({"role": "user", "content": "q"})
        >>> t = t.append({"role": "assistant", "content": "A"})
        >>> t = t.move_to("e1").append({"role": "assistant", "content": "B"})
        >>> [c.id for c in t.children("e1")], [r.id for r in t.children(None)]
        (['e2', 'e3'], ['e1'])
        """
        if entry_id is not None:
            self._entry(entry_id)
        links = list(arrays.chain(self._store, self._size))
        if len(links) == 1:
            s, limit = links[0]
            return tuple(arrays.visible(s.children.get(entry_id), limit))
        out: list[Entry] = []
        for s, limit in reversed(links):
            out.extend(arrays.visible(s.children.get(entry_id), limit))
        return tuple(out)

    def roots(self) -> tuple[Entry, ...]:
        """The entries without a parent, in insertion order.  O(number of roots)."""
        return self.children(None)

    def siblings(self, entry_id: str) -> tuple[Entry, ...]:
        """The other children of ``entry_id``'s parent (roots for a root), in order.

        Cost: O(number of siblings).
        """
        entry = self._entry(entry_id)
        return tuple(c for c in self.children(entry.parent_id) if c is not entry)

    def leaves(self) -> tuple[Entry, ...]:
        """The entries without children, in insertion order: the ends of all branches.

        Cost: O(n).
        """
        entries = arrays.view(self._store, self._size)
        parents = {e.parent_id for e in entries}
        return tuple(e for e in entries if e.id not in parents)

    def common_ancestor(self, a: str, b: str) -> str | None:
        """The id of the deepest entry that is an ancestor of both (or is one of them).

        ``None`` when ``a`` and ``b`` are in trees with different roots.

        Cost: O(distance from ``a`` and ``b`` to that ancestor).

        Raises:
            UnknownEntryError: ``a`` or ``b`` is unknown.

        >>> t = SessionTree().append({"role": "user", "content": "q"})
        >>> t = t.append({"role": "assistant", "content": "A"})
        >>> t = t.move_to("e1").append({"role": "assistant", "content": "B"})
        >>> t.common_ancestor("e2", "e3")
        'e1'
        """
        x: Entry | None = self._entry(a)
        y: Entry | None = self._entry(b)
        dx = x._depth  # type: ignore[union-attr]
        dy = y._depth  # type: ignore[union-attr]
        while dx > dy:
            x = x._parent  # type: ignore[union-attr]
            dx -= 1
        while dy > dx:
            y = y._parent  # type: ignore[union-attr]
            dy -= 1
        while x is not y:
            x = x._parent  # type: ignore[union-attr]
            y = y._parent  # type: ignore[union-attr]
        return None if x is None else x.id

    def is_ancestor(self, ancestor: str, entry_id: str) -> bool:
        """Whether ``ancestor`` is on the path to ``entry_id`` (an entry is its own)."""
        return self.common_ancestor(ancestor, entry_id) == ancestor

    def label_of(self, entry_id: str) -> str | None:
        """The label of an entry: the latest ``label`` entry aimed at it, in the whole tree.

        ``None`` when it has none or the latest one cleared it.  Cost: O(log labels).

        Raises:
            UnknownEntryError: no such entry.
        """
        self._entry(entry_id)
        for s, limit in arrays.chain(self._store, self._size):
            latest = arrays.last_visible(s.labels.get(entry_id), limit)
            if latest is not None:
                return cast(Label, latest).label or None
        return None

    def labels(self) -> dict[str, str]:
        """Every labelled entry's id and label, resolved over the whole tree, latest wins.

        Cost: O(number of label entries).
        """
        found: list[Label] = []
        for s, limit in arrays.chain(self._store, self._size):
            # A copy of the index first: another thread may add a key to it meanwhile.
            for slot in list(s.labels.values()):
                found.extend(cast(list[Label], arrays.visible(slot, limit)))
        found.sort(key=arrays._seq_of)
        out: dict[str, str] = {}
        for entry in found:
            if entry.label:
                out[entry.target_id] = entry.label
            else:
                out.pop(entry.target_id, None)
        return out

    @property
    def session_name(self) -> str | None:
        """The session's name: the latest ``session_info`` entry's, trimmed; ``None`` if unset.

        Cost: O(log names).
        """
        for s, limit in arrays.chain(self._store, self._size):
            latest = arrays.last_visible(s.names, limit) if s.names else None
            if latest is not None:
                name = cast(SessionInfo, latest).name
                return (name or "").strip() or None
        return None

    # ------------------------------------------------------------------ new values

    def move_to(self, entry_id: str | None) -> SessionTree:
        """A tree whose leaf is ``entry_id``: the next append grows a branch there.

        ``None`` moves above the roots, so the next append starts a new root.
        Returns ``self`` when the leaf is already there.  Cost: O(1).

        Raises:
            UnknownEntryError: (a ``KeyError``) no entry has that id; carries it as
                ``entry_id``.

        >>> t = SessionTree().append({"role": "user", "content": "q"})
        >>> t.move_to(None).leaf_id is None
        True
        >>> t.move_to("nope")
        Traceback (most recent call last):
        ...
        ptree.UnknownEntryError: no entry with id 'nope' in this tree
        """
        target = None if entry_id is None else self._entry(entry_id)
        if target is self._leaf:
            return self
        return SessionTree._new(
            self._store, self._size, target, self._max_seq, self._header, self._config
        )

    def append(
        self,
        message: Mapping[str, JSONValue],
        *,
        id: str | None = None,  # noqa: A002 - the name Pi and the issue use
        timestamp: str | None = None,
    ) -> SessionTree:
        """A tree with ``message`` added under the leaf, the new entry being the leaf.

        The message is copied into a :class:`~ptree.FrozenDict`: changing the
        caller's dict afterwards changes no tree.  Cost: O(size of the message) for the
        copy (O(1) for a message already frozen), O(1) amortised for the rest.

        Args:
            message: a JSON-like mapping with a string ``role``.
            id: the new entry's id (default: from the tree's ``id_factory``).
            timestamp: the entry's ISO-8601 time (default: from the tree's ``clock``).

        Raises:
            DuplicateEntryError: ``id`` is already used.
            InvalidMessageError: ``message`` is not a JSON-like mapping with a role.

        >>> t = SessionTree().append({"role": "user", "content": "hi"}, id="u1")
        >>> t.leaf_id, t["u1"].message["content"]
        ('u1', 'hi')
        """
        if type(message) is not FrozenDict:
            if not isinstance(message, Mapping):
                raise InvalidMessageError(
                    "message", f"must be a mapping, not {type(message).__name__}"
                )
            message = freeze(message, where="message")
        if type(message.get("role")) is not str:
            raise InvalidMessageError("message['role']", "a message needs a string role")
        config = self._config
        if id is None and config.id_factory is counter_ids:
            max_seq = self._max_seq + 1
            entry_id = f"e{max_seq}"
        else:
            entry_id, max_seq = self._claim_id(id)
        leaf = self._leaf
        entry: Entry = object.__new__(MessageEntry)
        _set_id(entry, entry_id)
        _set_timestamp(entry, config.clock() if timestamp is None else _checked_time(timestamp))
        _set_extra(entry, _EMPTY_EXTRA)
        _set_message(entry, message)
        # What _insert does, inlined: this is the path of nearly every append.
        size = self._size
        if leaf is None:
            _set_parent_id(entry, None)
            _set_depth(entry, 0)
        else:
            _set_parent_id(entry, leaf.id)
            _set_depth(entry, leaf._depth + 1)
        _set_parent(entry, leaf)
        _set_seq(entry, size)
        store = self._store
        if not store.claim(size, entry):
            store = self._branch_store(entry)
        tree = object.__new__(SessionTree)
        tree._store = store
        tree._size = size + 1
        tree._leaf = entry
        tree._max_seq = max_seq
        tree._header = self._header
        tree._config = config
        return tree

    def _claim_id(self, entry_id: str | None) -> tuple[str, int]:
        """Check or make the id of a new entry; return it with the new counter."""
        if entry_id is None:
            entry_id = self._config.id_factory(self)
            if type(entry_id) is not str or not entry_id:
                raise InvalidMessageError("id", f"the id factory returned {entry_id!r}")
        elif type(entry_id) is not str or not entry_id:
            raise InvalidMessageError("id", f"an id must be a non-empty string, not {entry_id!r}")
        if arrays.lookup(self._store, self._size, entry_id) is not None:
            raise DuplicateEntryError(entry_id)
        k = _counter_of(entry_id)
        return entry_id, self._max_seq if k <= self._max_seq else k

    def _insert(self, entry: Entry, parent: Entry | None, max_seq: int) -> SessionTree:
        """Link ``entry`` (not yet seen by anyone) under ``parent`` and make the new value."""
        size = self._size
        _set_parent(entry, parent)
        _set_depth(entry, 0 if parent is None else parent._depth + 1)
        _set_seq(entry, size)
        store = self._store
        if not store.claim(size, entry):
            store = self._branch_store(entry)
        return SessionTree._new(store, size + 1, entry, max_seq, self._header, self._config)

    def _branch_store(self, entry: Entry) -> Store:
        """A new store holding ``entry`` after this value's view.

        For when someone extended this value's store past it: the storage branches.
        """
        size = self._size
        store = Store(self._store, size)
        if store.chain > arrays.MAX_CHAIN:
            store = arrays.collapsed(self._store, size)
        store.add(entry)
        return store

    def _append_kind(
        self, cls: type[Entry], entry_id: str | None, timestamp: str | None, **fields: Any
    ) -> SessionTree:
        entry_id, max_seq = self._claim_id(entry_id)
        leaf = self._leaf
        entry = cls(
            id=entry_id,
            parent_id=None if leaf is None else leaf.id,
            timestamp=self._config.clock() if timestamp is None else timestamp,
            **fields,
        )
        return self._insert(entry, leaf, max_seq)

    def append_thinking_level_change(
        self,
        thinking_level: str,
        *,
        id: str | None = None,  # noqa: A002 - the entry field is called id
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append a :class:`~ptree.ThinkingLevelChange` under the leaf.  O(1)."""
        return self._append_kind(ThinkingLevelChange, id, timestamp, thinking_level=thinking_level)

    def append_model_change(
        self,
        provider: str,
        model_id: str,
        *,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append a :class:`~ptree.ModelChange` under the leaf.  O(1).

        >>> SessionTree().append_model_change("anthropic", "claude-opus-4-5").leaf.model_id
        'claude-opus-4-5'
        """
        return self._append_kind(ModelChange, id, timestamp, provider=provider, model_id=model_id)

    def append_active_tools_change(
        self,
        active_tool_names: Sequence[str],
        *,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append an :class:`~ptree.ActiveToolsChange` under the leaf.  O(len(names))."""
        return self._append_kind(
            ActiveToolsChange, id, timestamp, active_tool_names=active_tool_names
        )

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int | float,
        *,
        details: JSONValue = None,
        from_hook: bool | None = None,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append a :class:`~ptree.Compaction` under the leaf.  O(size of details).

        Raises:
            UnknownEntryError: ``first_kept_entry_id`` names no entry.
        """
        self._entry(first_kept_entry_id)
        return self._append_kind(
            Compaction,
            id,
            timestamp,
            summary=summary,
            first_kept_entry_id=first_kept_entry_id,
            tokens_before=tokens_before,
            details=details,
            from_hook=from_hook,
        )

    def append_branch_summary(
        self,
        from_id: str,
        summary: str,
        *,
        details: JSONValue = None,
        from_hook: bool | None = None,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append a :class:`~ptree.BranchSummary` under the leaf.  O(size of details)."""
        return self._append_kind(
            BranchSummary,
            id,
            timestamp,
            from_id=from_id,
            summary=summary,
            details=details,
            from_hook=from_hook,
        )

    def append_custom(
        self,
        custom_type: str,
        data: JSONValue = None,
        *,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append a :class:`~ptree.Custom` (extension state) under the leaf.  O(size of data)."""
        return self._append_kind(Custom, id, timestamp, custom_type=custom_type, data=data)

    def append_custom_message(
        self,
        custom_type: str,
        content: str | Sequence[JSONValue],
        *,
        display: bool = True,
        details: JSONValue = None,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append a :class:`~ptree.CustomMessage` under the leaf.  O(size of content)."""
        return self._append_kind(
            CustomMessage,
            id,
            timestamp,
            custom_type=custom_type,
            content=content,
            display=display,
            details=details,
        )

    def append_label(
        self,
        target_id: str,
        label: str | None,
        *,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append a :class:`~ptree.Label` setting (or, with ``None``/``""``, clearing)
        the label of ``target_id``.  Like any entry, it becomes the leaf.  O(1).

        Raises:
            UnknownEntryError: ``target_id`` names no entry.
        """
        self._entry(target_id)
        return self._append_kind(Label, id, timestamp, target_id=target_id, label=label)

    def append_session_info(
        self,
        name: str | None,
        *,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append a :class:`~ptree.SessionInfo` naming the session (``None`` clears).  O(1)."""
        return self._append_kind(SessionInfo, id, timestamp, name=name)

    def append_entry(self, entry: Entry) -> SessionTree:
        """Append a copy of ``entry`` (any kind, even unknown ones) under the leaf.

        The copy keeps ``entry``'s id and timestamp and takes the leaf as its parent.

        Raises:
            DuplicateEntryError: its id is already used.
        """
        _check_kind(entry, "append_entry")
        return self._insert_own(entry.evolve(parent_id=self.leaf_id))

    def insert(self, entry: Entry) -> SessionTree:
        """Add a copy of ``entry`` under the parent it names; it becomes the leaf.  O(1).

        Always a copy: the caller's object may be going into other trees, from other
        threads, at the same time, and each tree links its own entries.

        Raises:
            TypeError: ``entry`` is not an :class:`~ptree.Entry`.
            DuplicateEntryError: its id is already used.
            UnknownEntryError: its ``parent_id`` names no entry.
        """
        _check_kind(entry, "insert")
        return self._insert_own(entry.evolve())

    def _insert_own(self, entry: Entry) -> SessionTree:
        """insert() of an entry nobody else holds (a fresh copy)."""
        _entry_id, max_seq = self._claim_id(entry.id)
        parent = None if entry.parent_id is None else self._entry(entry.parent_id)
        return self._insert(entry, parent, max_seq)

    def with_header(self, header: SessionHeader | None) -> SessionTree:
        """The same tree with another session header.  O(1)."""
        if header is not None and not isinstance(header, SessionHeader):
            raise TypeError(f"header must be a SessionHeader, not {type(header).__name__}")
        return SessionTree._new(
            self._store, self._size, self._leaf, self._max_seq, header, self._config
        )

    def with_config(
        self, *, id_factory: IdFactory | None = None, clock: Clock | None = None
    ) -> SessionTree:
        """The same tree making new ids or timestamps another way.  O(1)."""
        config = _Config(
            self._config.id_factory if id_factory is None else id_factory,
            self._config.clock if clock is None else clock,
        )
        return SessionTree._new(
            self._store, self._size, self._leaf, self._max_seq, self._header, config
        )

    @classmethod
    def from_entries(
        cls,
        entries: Iterable[Entry],
        *,
        leaf_id: str | EllipsisType | None = ...,
        header: SessionHeader | None = None,
        id_factory: IdFactory = counter_ids,
        clock: Clock = utc_now,
        on_repair: Callable[[Entry, str], None] | None = None,
    ) -> SessionTree:
        """Build a tree from entries in insertion order, in one step (no value per entry).

        Parents may come after their children (Pi's readers allow it).  By default the
        leaf is the last entry, as Pi's CLI has it.

        Cost: O(n).

        Args:
            entries: the entries, with ids and parent ids already set.
            leaf_id: the leaf (default: the last entry; ``None``: no leaf).
            header: the session header to keep with the tree.
            on_repair: if given, an entry whose parent is missing or that is on a
                cycle becomes a root instead of an error, and ``on_repair(entry,
                reason)`` is called for it (lenient loading warns there).

        Raises:
            DuplicateEntryError: two entries share an id.
            UnknownEntryError: an entry's parent is missing (``entry_id`` is the
                parent's id), or ``leaf_id`` is unknown.
            CycleError: parent links that never reach a root.

        >>> t = SessionTree().append({"role": "user", "content": "a"})
        >>> SessionTree.from_entries(t.entries()) == t
        True
        """
        tree = cls(id_factory=id_factory, clock=clock, header=header)
        items: list[Entry] = []
        by_id: dict[str, Entry] = {}
        for entry in entries:
            _check_kind(entry, "from_entries")
            if entry.id in by_id:
                raise DuplicateEntryError(entry.id)
            if _is_linked(entry):
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
        store = tree._store
        max_seq = 0
        for seq, entry in enumerate(items):
            _set_seq(entry, seq)
            store.add(entry)
            k = _counter_of(entry.id)
            if k > max_seq:
                max_seq = k
        if leaf_id is ...:
            leaf = items[-1] if items else None
        elif leaf_id is None:
            leaf = None
        else:
            leaf = by_id.get(leaf_id)
            if leaf is None:
                raise UnknownEntryError(leaf_id, f"the leaf {leaf_id!r} names no entry")
        return cls._new(store, len(items), leaf, max_seq, header, tree._config)

    # ------------------------------------------------------------------ value manners

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionTree):
            return NotImplemented
        if self is other:
            return True
        if (
            self._size != other._size
            or self.leaf_id != other.leaf_id
            or self._header != other._header
        ):
            return False
        if self._store is other._store:
            return True
        return arrays.view(self._store, self._size) == arrays.view(other._store, other._size)

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        """Hash of the whole value: O(n) the first time, then cached."""
        try:
            return self._hash
        except AttributeError:
            h = hash(
                (
                    self._size,
                    self.leaf_id,
                    self._header,
                    tuple(arrays.view(self._store, self._size)),
                )
            )
            self._hash = h
            return h

    def __reduce__(self) -> tuple[Any, ...]:
        # Entries travel without their links (a deep chain of references would make
        # pickle recurse 100,000 deep); they are linked again on the way in.
        return (
            _restore,
            (
                self.entries(),
                self.leaf_id,
                self._header,
                self._config.id_factory,
                self._config.clock,
            ),
        )

    def __copy__(self) -> SessionTree:
        return self

    def __deepcopy__(self, memo: object) -> SessionTree:
        return self

    def __repr__(self) -> str:
        parts = [f"{self._size} entr{'y' if self._size == 1 else 'ies'}", f"leaf={self.leaf_id!r}"]
        if self._header is not None:
            parts.append(f"session={self._header.id!r}")
        return f"SessionTree({', '.join(parts)})"

    # ------------------------------------------------------------------ checking

    def _check(self) -> None:
        """Assert every internal invariant; tests call this after each operation.  O(n)."""
        entries = arrays.view(self._store, self._size)
        assert len(entries) == self._size, "size disagrees with the entries seen"
        seen: dict[str, Entry] = {}
        max_seq = 0
        for seq, e in enumerate(entries):
            assert isinstance(e, Entry), f"not an entry at {seq}"
            assert e._seq == seq, f"{e.id}: position {e._seq} != {seq}"
            assert e.id not in seen, f"duplicate id {e.id}"
            seen[e.id] = e
            assert self[e.id] is e, f"lookup of {e.id} finds another entry"
            max_seq = max(max_seq, _counter_of(e.id))
        assert max_seq == self._max_seq, f"counter {self._max_seq} != {max_seq}"
        for e in entries:
            parent = e._parent
            if e.parent_id is None:
                assert parent is None, f"{e.id}: a root with a parent link"
                assert e._depth == 0, f"{e.id}: a root with a depth"
            else:
                assert parent is seen.get(e.parent_id), f"{e.id}: parent link is wrong"
                assert parent is not None
                assert e._depth == parent._depth + 1, f"{e.id}: depth is wrong"
        kids: dict[str | None, list[str]] = {}
        for e in entries:
            kids.setdefault(e.parent_id, []).append(e.id)
        for pid, ids in kids.items():
            assert [c.id for c in self.children(pid)] == ids, f"children of {pid} are wrong"
        assert self.children(None) == tuple(e for e in entries if e.parent_id is None), "roots"
        for e in entries:
            if e.id not in kids:
                assert self.children(e.id) == (), f"{e.id}: children it does not have"
        assert [e.id for e in self.leaves()] == [e.id for e in entries if e.id not in kids]
        assert self._leaf is None or seen.get(self._leaf.id) is self._leaf, "leaf is not here"
        links = list(arrays.chain(self._store, self._size))
        assert len(links) == self._store.chain, "the store's chain count is wrong"
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
                name = (e.name or "").strip() or None
        assert self.labels() == expected, "labels disagree with the entries"
        for e in entries:
            assert self.label_of(e.id) == expected.get(e.id), f"label_of({e.id}) is wrong"
        assert self.session_name == name, "session name disagrees with the entries"
        assert self._store.chain <= arrays.MAX_CHAIN, "store chain too long"


def _check_kind(entry: object, where: str) -> None:
    if not isinstance(entry, Entry) or type(entry) is Entry:
        raise TypeError(
            f"{where}() takes entries of a kind (MessageEntry, Label, ...), "
            f"not {type(entry).__name__}"
        )


def _checked_time(timestamp: object) -> str:
    if type(timestamp) is not str:
        raise InvalidMessageError("timestamp", f"must be a string, not {type(timestamp).__name__}")
    return timestamp


def _link(
    items: list[Entry], by_id: dict[str, Entry], on_repair: Callable[[Entry, str], None] | None
) -> None:
    """Set parent links and depths, iteratively; find cycles without ever hanging."""
    depth: dict[str, int] = {}
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
                items[items.index(root)] = by_id[root.id] = fixed
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
        _set_depth(e, depth[e.id])
        _set_parent(e, None if e.parent_id is None else by_id[e.parent_id])


def _restore(
    entries: tuple[Entry, ...],
    leaf_id: str | None,
    header: SessionHeader | None,
    id_factory: IdFactory,
    clock: Clock,
) -> SessionTree:
    return SessionTree.from_entries(
        entries, leaf_id=leaf_id, header=header, id_factory=id_factory, clock=clock
    )
