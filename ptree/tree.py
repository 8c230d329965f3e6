"""The persistent session tree: :class:`SessionTree`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import EllipsisType
from typing import Any, TypeVar, cast

from . import arrays
from . import entries as kinds
from .arrays import Store
from .building import check_kind, link_entries
from .entries import AnyEntry, Entry, MessageEntry, _link
from .errors import DuplicateEntryError, EntryKindError, InvalidMessageError, UnknownEntryError
from .frozen import FrozenDict, JSONValue, Message, freeze
from .header import SessionHeader
from .ids import Clock, IdFactory, _clock, counter_ids, counter_of, utc_now
from .names import sanitize_session_name

__all__ = ["SessionTree", "TreeBuilder"]

_E = TypeVar("_E", bound=Entry)

# The arrays hold entries typed as the base class, yet every entry a tree takes is of a
# kind (building.check_kind, MessageEntry.unchecked, entry_from_json), so the public
# queries return AnyEntry.  This is the builtin ``tuple`` under that narrower type: no
# call is added on the way out.
_as_kinds = cast("Callable[[Iterable[Entry]], tuple[AnyEntry, ...]]", tuple)


class _Config:
    """How a tree makes new ids and timestamps: shared by all its versions."""

    __slots__ = ("clock", "id_factory")

    def __init__(self, id_factory: IdFactory, clock: Clock) -> None:
        self.id_factory = id_factory
        self.clock = clock


_DEFAULT_CONFIG = _Config(counter_ids, utc_now)


class _Queries:
    """The reading half of :class:`SessionTree`: lookups, paths and the index queries
    (which :mod:`ptree.arrays` answers).  Every query is O(1) or O(what it returns)."""

    __slots__ = ("_config", "_hash", "_header", "_leaf", "_max_seq", "_size", "_store")

    _store: Store
    _size: int
    _leaf: Entry | None
    _max_seq: int
    _header: SessionHeader | None
    _config: _Config
    _hash: int

    @property
    def _storage(self) -> tuple[Store, int]:
        """The store this value reads and how many of its entries it sees: for the
        tests that inspect how versions share storage (:mod:`ptree.arrays`).  O(1)."""
        return self._store, self._size

    @property
    def counter(self) -> int:
        """The largest ``k`` among this tree's ids of the form ``e<k>`` (0 if none), or more.

        The default id factory (:func:`~ptree.ids.counter_ids`) gives ``e<counter + 1>``.
        A tree loaded from a file also counts the ids of the lines the reader skipped
        as an unfinished commit (a process killed while writing it), so that new ids
        never repeat an id the file holds.  Cost: O(1).

        >>> SessionTree().append({"role": "user", "content": "hi"}, id="e7").counter
        7
        """
        return self._max_seq

    # ------------------------------------------------------------------ reading

    @property
    def leaf_id(self) -> str | None:
        """The id of the current leaf, or ``None`` (an empty tree, or after ``move_to(None)``)."""
        leaf = self._leaf
        return None if leaf is None else leaf.id

    @property
    def leaf(self) -> AnyEntry | None:
        """The current leaf entry, or ``None``."""
        return self._leaf  # type: ignore[return-value]  # of a kind: see _as_kinds

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

    def __getitem__(self, entry_id: str) -> AnyEntry:
        """The entry with this id.  O(1).

        Its type is :data:`~ptree.AnyEntry`, the union of the kinds: narrow it with
        ``isinstance`` to read a kind's own fields, or use :meth:`message` for a
        message.

        Raises:
            UnknownEntryError: (a ``KeyError``) no such entry.

        >>> t = SessionTree().append({"role": "user", "content": "hi"})
        >>> e = t["e1"]
        >>> isinstance(e, MessageEntry) and e.message["content"]
        'hi'
        """
        entry = arrays.lookup(self._store, self._size, entry_id) if type(entry_id) is str else None
        if entry is None:
            raise UnknownEntryError(entry_id)
        return entry  # type: ignore[return-value]  # of a kind: see _as_kinds

    def get(self, entry_id: str, default: _E | None = None) -> AnyEntry | _E | None:
        """The entry with this id, or ``default``.  O(1).

        >>> SessionTree().get("e1") is None
        True
        """
        entry = arrays.lookup(self._store, self._size, entry_id) if type(entry_id) is str else None
        return default if entry is None else entry  # type: ignore[return-value]

    def message(self, entry_id: str) -> FrozenDict:
        """The message of the message entry with this id, typed for a type checker.

        ``tree.message(id)["content"]`` is what ``tree[id].message["content"]`` gives
        at run time, but type-checks: ``tree[id]`` may be any kind of entry, and only a
        :class:`~ptree.MessageEntry` has a ``message``.  O(1).

        Raises:
            UnknownEntryError: no entry has this id.
            EntryKindError: the entry is not a message (both are a ``KeyError``).

        >>> t = SessionTree().append({"role": "user", "content": "hi"})
        >>> t.message("e1")["content"]
        'hi'
        >>> t.append_label("e1", "start").message("e2")
        Traceback (most recent call last):
        ...
        ptree.EntryKindError: entry 'e2' is a label entry, not a message entry
        """
        entry = self[entry_id]
        if not isinstance(entry, MessageEntry):
            raise EntryKindError(entry_id, MessageEntry.TYPE, entry.type)
        return entry.message

    def __iter__(self) -> Iterator[str]:
        """The ids of all entries, in insertion order."""
        return (e.id for e in arrays.view(self._store, self._size))

    def entries(self) -> tuple[AnyEntry, ...]:
        """All entries, in the order they were added.  O(n).

        >>> t = SessionTree().append({"role": "user", "content": "hi"})
        >>> [e.id for e in t.entries()]
        ['e1']
        """
        return _as_kinds(arrays.view(self._store, self._size))

    def ids(self) -> tuple[str, ...]:
        """All ids, in the order their entries were added.  O(n)."""
        return tuple(e.id for e in arrays.view(self._store, self._size))

    def added_since(self, older: SessionTree) -> tuple[AnyEntry, ...] | None:
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
        return _as_kinds(arrays.view_from(self._store, self._size, n))

    def _entry(self, entry_id: str) -> Entry:
        entry = arrays.lookup(self._store, self._size, entry_id) if type(entry_id) is str else None
        if entry is None:
            raise UnknownEntryError(entry_id)
        return entry

    def _at(self, entry_id: str | None) -> Entry | None:
        """``entry_id``'s entry, or the leaf when ``entry_id`` is ``None``."""
        return self._leaf if entry_id is None else self._entry(entry_id)

    def path(self, entry_id: str | None = None) -> tuple[AnyEntry, ...]:
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
            entry = entry.parent_entry
        out.reverse()
        return _as_kinds(out)

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
            if isinstance(entry, MessageEntry):
                out.append(entry.message)
            entry = entry.parent_entry
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
        return entry.depth

    def parent(self, entry_id: str) -> AnyEntry | None:
        """The parent entry of ``entry_id``, or ``None`` for a root.  O(1)."""
        return self._entry(entry_id).parent_entry  # type: ignore[return-value]

    def children(self, entry_id: str | None) -> tuple[AnyEntry, ...]:
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
        return _as_kinds(arrays.children_of(self._store, self._size, entry_id))

    def roots(self) -> tuple[AnyEntry, ...]:
        """The entries without a parent, in insertion order.  O(number of roots)."""
        return self.children(None)

    def siblings(self, entry_id: str) -> tuple[AnyEntry, ...]:
        """The other children of ``entry_id``'s parent (roots for a root), in order.

        Cost: O(number of siblings).
        """
        entry = self._entry(entry_id)
        return tuple(c for c in self.children(entry.parent_id) if c is not entry)

    def leaves(self) -> tuple[AnyEntry, ...]:
        """The entries without children, in insertion order: the ends of all branches.

        Cost: O(n).
        """
        return _as_kinds(arrays.leaves(self._store, self._size))

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
        dx = x.depth  # type: ignore[union-attr]
        dy = y.depth  # type: ignore[union-attr]
        while dx > dy:
            x = x.parent_entry  # type: ignore[union-attr]
            dx -= 1
        while dy > dx:
            y = y.parent_entry  # type: ignore[union-attr]
            dy -= 1
        while x is not y:
            x = x.parent_entry  # type: ignore[union-attr]
            y = y.parent_entry  # type: ignore[union-attr]
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
        return arrays.label_of(self._store, self._size, entry_id)

    def labels(self) -> dict[str, str]:
        """Every labelled entry's id and label, resolved over the whole tree, latest wins.

        Cost: O(number of label entries).
        """
        return arrays.labels(self._store, self._size)

    @property
    def session_name(self) -> str | None:
        """The session's name: the latest ``session_info`` entry's, trimmed; ``None`` if unset.

        The latest in the whole tree (any branch), as in Pi; trimmed with JavaScript's
        ``trim`` (:func:`ptree.js.trim`), as Pi trims it.  Cost: O(log names).
        """
        return arrays.session_name(self._store, self._size)


class SessionTree(_Queries):
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
        id_factory: makes the ids of new entries; default :func:`~ptree.ids.counter_ids`
            (``"e1"``, ``"e2"``, …), or :func:`~ptree.ids.random_ids` for Pi's 8 hex digits.
        clock: makes the timestamps of new entries; default :func:`~ptree.ids.utc_now`.
        header: the session file header this tree belongs to, if any.

    >>> a = SessionTree().append({"role": "user", "content": "plan A"})
    >>> b = a.append({"role": "assistant", "content": "sure"})
    >>> len(a), len(b), a.leaf_id, b.leaf_id
    (1, 2, 'e1', 'e2')
    """

    __slots__ = ()

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

    # ------------------------------------------------------------------ new values

    def move_to(self, entry_id: str | None) -> SessionTree:
        """A tree whose leaf is ``entry_id``: the next append grows a branch there.

        ``None`` moves above the roots, so the next append starts a new root.
        Returns ``self`` when the leaf is already there.  Cost: O(1).

        Args:
            entry_id: the new leaf, or ``None`` for above the roots.

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
        message: Message,
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
        if id is None and timestamp is None and _compiled_append is not None:
            # The common case in C (ptree/_cfrozen.c): the same value, or None to
            # take the path below (which also raises every error).
            tree: SessionTree | None = _compiled_append(self, message)
            if tree is not None:
                return tree
        frozen: FrozenDict
        if type(message) is FrozenDict:
            frozen = message
        else:
            if not isinstance(message, Mapping):
                raise InvalidMessageError(
                    "message", f"must be a mapping, not {type(message).__name__}"
                )
            frozen = freeze(message, where="message")
        if type(frozen.get("role")) is not str:
            raise InvalidMessageError("message['role']", "a message needs a string role")
        config = self._config
        if id is None and config.id_factory is counter_ids:
            max_seq = self._max_seq + 1
            entry_id = f"e{max_seq}"
        else:
            entry_id, max_seq = self._claim_id(id)
        leaf = self._leaf
        entry = MessageEntry.unchecked(
            entry_id,
            None if leaf is None else leaf.id,
            config.clock() if timestamp is None else _checked_time(timestamp),
            frozen,
        )
        # What _insert does, inlined: this is the path of nearly every append.
        size = self._size
        _link(entry, leaf, size)
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
        k = counter_of(entry_id)
        return entry_id, self._max_seq if k <= self._max_seq else k

    def _insert(self, entry: Entry, parent: Entry | None, max_seq: int) -> SessionTree:
        """Link ``entry`` (not yet seen by anyone) under ``parent`` and make the new value."""
        size = self._size
        _link(entry, parent, size)
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
        """Append a :class:`~ptree.ThinkingLevelChange` under the leaf.  O(1).

        Args:
            thinking_level: Pi's level name (``"off"``, ``"low"``, ``"high"``, ...).
            id: the new entry's id (default: the tree's id factory makes one).
            timestamp: the new entry's time, ISO-8601 (default: the tree's clock).

        Raises:
            DuplicateEntryError: ``id`` is already used in this tree.
        """
        return self._append_kind(
            kinds.ThinkingLevelChange, id, timestamp, thinking_level=thinking_level
        )

    def append_model_change(
        self,
        provider: str,
        model_id: str,
        *,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append a :class:`~ptree.ModelChange` under the leaf.  O(1).

        Args:
            provider: the provider's name (``"anthropic"``).
            model_id: the model's id at that provider.
            id: the new entry's id (default: the tree's id factory makes one).
            timestamp: the new entry's time, ISO-8601 (default: the tree's clock).

        Raises:
            DuplicateEntryError: ``id`` is already used in this tree.

        >>> SessionTree().append_model_change("anthropic", "claude-opus-4-5").leaf.model_id
        'claude-opus-4-5'
        """
        return self._append_kind(
            kinds.ModelChange, id, timestamp, provider=provider, model_id=model_id
        )

    def append_active_tools_change(
        self,
        active_tool_names: Sequence[str],
        *,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append an :class:`~ptree.ActiveToolsChange` under the leaf.  O(len(names)).

        Args:
            active_tool_names: the names of the tools active from now on.
            id: the new entry's id (default: the tree's id factory makes one).
            timestamp: the new entry's time, ISO-8601 (default: the tree's clock).

        Raises:
            DuplicateEntryError: ``id`` is already used in this tree.
        """
        return self._append_kind(
            kinds.ActiveToolsChange, id, timestamp, active_tool_names=active_tool_names
        )

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int | float,
        *,
        details: JSONValue = None,
        from_hook: bool | None = None,
        usage: Mapping[str, Any] | None = None,
        system_message: Mapping[str, Any] | EllipsisType | None = ...,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append a :class:`~ptree.Compaction` under the leaf, as Pi 1.6's ``appendCompaction``.

        ``first_kept_entry_id`` ``None`` keeps nothing from before the compaction:
        the entry then names itself, as Pi 1.6 writes it.  ``system_message``, left
        out, is computed as Pi does: the checkpoint of every system message in the
        context at the leaf (:func:`ptree.context.current_system_message`), timed at the
        compaction, or none when that context holds no system message; pass a
        message to store that one, or ``None`` for none.

        Cost: O(size of details), plus O(path length) to compute the checkpoint.

        Args:
            summary: the summary the model is given in place of what it replaces.
            first_kept_entry_id: the first entry kept after the summary.
            tokens_before: the size of the context the compaction replaces.
            details: any JSON value, for the extension that wrote it.
            from_hook: whether an extension's hook made it (Pi's ``fromHook``).
            usage: the token usage of making the summary.
            system_message: the system-prompt checkpoint (see above).
            id: the new entry's id (default: the tree's id factory makes one).
            timestamp: the new entry's time, ISO-8601 (default: the tree's clock).

        Raises:
            UnknownEntryError: ``first_kept_entry_id`` names no entry.
            DuplicateEntryError: ``id`` is already used in this tree.

        >>> t = SessionTree().append({"role": "system", "content": "Be brief.", "timestamp": 0})
        >>> t = t.append({"role": "user", "content": "hi"}, id="u1")
        >>> c = t.append_compaction("said hi", None, 10, id="c1").leaf
        >>> c.first_kept_entry_id, c.system_message["content"]
        ('c1', 'Be brief.')
        """
        if first_kept_entry_id is not None:
            self._entry(first_kept_entry_id)
        entry_id, max_seq = self._claim_id(id)
        when = self._config.clock() if timestamp is None else timestamp
        if system_message is ...:
            from .context import build_context, current_system_message, iso_to_ms

            system_message = current_system_message(build_context(self).messages)
            if system_message is not None:
                system_message = {**system_message, "timestamp": iso_to_ms(when)}
        leaf = self._leaf
        entry = kinds.Compaction(
            id=entry_id,
            parent_id=None if leaf is None else leaf.id,
            timestamp=when,
            summary=summary,
            first_kept_entry_id=entry_id if first_kept_entry_id is None else first_kept_entry_id,
            tokens_before=tokens_before,
            details=details,
            usage=usage,
            from_hook=from_hook,
            system_message=system_message,
        )
        return self._insert(entry, leaf, max_seq)

    def append_branch_summary(
        self,
        from_id: str,
        summary: str,
        *,
        details: JSONValue = None,
        from_hook: bool | None = None,
        usage: Mapping[str, Any] | None = None,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append a :class:`~ptree.BranchSummary` under the leaf.  O(size of details).

        Pi 1.6 writes the leaf before the move as ``from_id`` (``"root"`` when there
        was none); :func:`ptree.branching.move_with_summary` does that for you.

        Args:
            from_id: the abandoned leaf (Pi 1.6) or the entry moved to (Pi 0.73.1).
            summary: what the abandoned branch did, as the model is given it.
            details: any JSON value, for the extension that wrote it.
            from_hook: whether an extension's hook made it (Pi's ``fromHook``).
            usage: the token usage of making the summary.
            id: the new entry's id (default: the tree's id factory makes one).
            timestamp: the new entry's time, ISO-8601 (default: the tree's clock).

        Raises:
            DuplicateEntryError: ``id`` is already used in this tree.
        """
        return self._append_kind(
            kinds.BranchSummary,
            id,
            timestamp,
            from_id=from_id,
            summary=summary,
            details=details,
            usage=usage,
            from_hook=from_hook,
        )

    def append_usage(
        self,
        kind: str,
        provider: str,
        model: str,
        usage: Mapping[str, Any],
        *,
        note: str | None = None,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append a :class:`~ptree.Usage` (Pi 1.6) under the leaf.  O(size of usage).

        As Pi's ``appendUsage``: an empty ``note`` is left out.  The entry never
        reaches the model.

        Args:
            kind: what the usage paid for (``"cache_warm"``, say).
            provider: the provider that was paid.
            model: the model that was used.
            usage: Pi's usage record (tokens, cost).
            note: a free-text note.
            id: the new entry's id (default: the tree's id factory makes one).
            timestamp: the new entry's time, ISO-8601 (default: the tree's clock).

        Raises:
            DuplicateEntryError: ``id`` is already used in this tree.

        >>> t = SessionTree().append_usage("cache_warm", "anthropic", "claude-sonnet-4-5",
        ...                                {"input": 0, "cacheRead": 500}, note="")
        >>> t.leaf.to_json()["kind"], "note" in t.leaf.to_json()
        ('cache_warm', False)
        """
        return self._append_kind(
            kinds.Usage,
            id,
            timestamp,
            kind=kind,
            provider=provider,
            model=model,
            usage=usage,
            note=note or None,
        )

    def append_context_edit(
        self,
        target_id: str,
        replacement: str | Sequence[JSONValue] | Mapping[str, Any] | None,
        *,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append a :class:`~ptree.ContextEdit` (Pi 1.6) of ``target_id`` under the leaf.

        ``replacement`` is ``None`` (leave the target out of the context), new
        content (a string or a list of content blocks), or ``{"content": ...}`` as
        the file holds it.  As Pi's ``appendContextEdit``: the target must be on the
        current branch and be a user, assistant or tool-result message or a custom
        message, and a string for an assistant or tool-result message is stored as
        one text block.  Cost: O(path length) to check the target.

        Args:
            target_id: the message whose content changes.
            replacement: the new content (see above).
            id: the new entry's id (default: the tree's id factory makes one).
            timestamp: the new entry's time, ISO-8601 (default: the tree's clock).

        Raises:
            UnknownEntryError: ``target_id`` names no entry.
            DuplicateEntryError: ``id`` is already used in this tree.
            ValueError: the target is not on the current branch, or gives the model
                no content it could edit, or ``replacement`` is no content.

        >>> t = SessionTree().append({"role": "user", "content": "long question"}, id="q")
        >>> t.append_context_edit("q", "short").leaf.replacement
        {'content': 'short'}
        """
        target = self._entry(target_id)
        if not any(e is target for e in self.path()):
            raise ValueError(f"entry {target_id!r} is not on the current branch")
        role = target.role if isinstance(target, MessageEntry) else None
        if type(target) is not kinds.CustomMessage and role not in (
            "user",
            "assistant",
            "toolResult",
        ):
            raise ValueError(f"entry {target_id!r} gives the model no content to edit")
        if replacement is None:
            value: Mapping[str, Any] | None = None
        elif isinstance(replacement, Mapping):
            value = replacement
        else:
            value = {"content": replacement}
        if value is not None:
            content = value.get("content")
            if not isinstance(content, (str, Sequence)):
                raise ValueError("a replacement needs a string or a list as its content")
            if type(content) is str and role in ("assistant", "toolResult"):
                value = {"content": [{"type": "text", "text": content}]}
        return self._append_kind(
            kinds.ContextEdit, id, timestamp, target_id=target_id, replacement=value
        )

    def append_custom(
        self,
        custom_type: str,
        data: JSONValue = None,
        *,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append a :class:`~ptree.Custom` (extension state) under the leaf.  O(size of data).

        Args:
            custom_type: the extension's name for the kind of state.
            data: any JSON value; it never reaches the model.
            id: the new entry's id (default: the tree's id factory makes one).
            timestamp: the new entry's time, ISO-8601 (default: the tree's clock).

        Raises:
            DuplicateEntryError: ``id`` is already used in this tree.
        """
        return self._append_kind(kinds.Custom, id, timestamp, custom_type=custom_type, data=data)

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
        """Append a :class:`~ptree.CustomMessage` under the leaf.  O(size of content).

        Args:
            custom_type: the extension's name for the kind of message.
            content: what the model is given, as a user message (text or blocks).
            display: whether Pi's interface shows it.
            details: any JSON value, for the extension; never sent to the model.
            id: the new entry's id (default: the tree's id factory makes one).
            timestamp: the new entry's time, ISO-8601 (default: the tree's clock).

        Raises:
            DuplicateEntryError: ``id`` is already used in this tree.
        """
        return self._append_kind(
            kinds.CustomMessage,
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

        Args:
            target_id: the entry labelled.
            label: the label, or ``None`` or ``""`` to clear it.
            id: the new entry's id (default: the tree's id factory makes one).
            timestamp: the new entry's time, ISO-8601 (default: the tree's clock).

        Raises:
            UnknownEntryError: ``target_id`` names no entry.
            DuplicateEntryError: ``id`` is already used in this tree.
        """
        self._entry(target_id)
        return self._append_kind(kinds.Label, id, timestamp, target_id=target_id, label=label)

    def append_session_info(
        self,
        name: str | None,
        *,
        id: str | None = None,  # noqa: A002
        timestamp: str | None = None,
    ) -> SessionTree:
        """Append a :class:`~ptree.SessionInfo` naming the session (``None`` clears).  O(1).

        The name is stored as Pi 1.6 stores it: each run of ``\\r``/``\\n`` becomes one
        space, then it is trimmed (:func:`ptree.names.sanitize_session_name`).

        Args:
            name: the session's name, or ``None`` to clear it.
            id: the new entry's id (default: the tree's id factory makes one).
            timestamp: the new entry's time, ISO-8601 (default: the tree's clock).

        Raises:
            DuplicateEntryError: ``id`` is already used in this tree.

        >>> SessionTree().append_session_info("  Fix\\nthe bug ").session_name
        'Fix the bug'
        """
        if name is not None:
            name = sanitize_session_name(name)
        return self._append_kind(kinds.SessionInfo, id, timestamp, name=name)

    def append_entry(self, entry: Entry) -> SessionTree:
        """Append a copy of ``entry`` (any kind, even unknown ones) under the leaf.

        The copy keeps ``entry``'s id and timestamp and takes the leaf as its parent.
        Cost: O(1) beyond the copy of the entry.

        Args:
            entry: the entry to copy, of any kind.

        Raises:
            TypeError: ``entry`` is not an :class:`~ptree.Entry`.
            DuplicateEntryError: its id is already used.
        """
        check_kind(entry, "append_entry")
        return self._insert_own(entry.evolve(parent_id=self.leaf_id))

    def insert(self, entry: Entry) -> SessionTree:
        """Add a copy of ``entry`` under the parent it names; it becomes the leaf.  O(1).

        Always a copy: the caller's object may be going into other trees, from other
        threads, at the same time, and each tree links its own entries.

        Args:
            entry: the entry to copy; its ``parent_id`` names its parent (or ``None``).

        Raises:
            TypeError: ``entry`` is not an :class:`~ptree.Entry`.
            DuplicateEntryError: its id is already used.
            UnknownEntryError: its ``parent_id`` names no entry.
        """
        check_kind(entry, "insert")
        return self._insert_own(entry.evolve())

    def _insert_own(self, entry: Entry) -> SessionTree:
        """insert() of an entry nobody else holds (a fresh copy)."""
        _entry_id, max_seq = self._claim_id(entry.id)
        parent = None if entry.parent_id is None else self._entry(entry.parent_id)
        return self._insert(entry, parent, max_seq)

    def with_header(self, header: SessionHeader | None) -> SessionTree:
        """The same tree with another session header.  O(1).

        Args:
            header: the new header, or ``None`` for none.

        Raises:
            TypeError: ``header`` is not a :class:`~ptree.SessionHeader`.
        """
        if header is not None and not isinstance(header, SessionHeader):
            raise TypeError(f"header must be a SessionHeader, not {type(header).__name__}")
        return SessionTree._new(
            self._store, self._size, self._leaf, self._max_seq, header, self._config
        )

    def with_config(
        self, *, id_factory: IdFactory | None = None, clock: Clock | None = None
    ) -> SessionTree:
        """The same tree making new ids or timestamps another way.  O(1).

        Args:
            id_factory: makes the id of each new entry (default: keep the tree's).
            clock: gives the time of each new entry (default: keep the tree's).
        """
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
        counter: int = 0,
    ) -> SessionTree:
        """Build a tree from entries in insertion order, in one step (no value per entry).

        Parents may come after their children (Pi's readers allow it).  By default the
        leaf is the last entry, as Pi's CLI has it.

        Cost: O(n).

        Args:
            entries: the entries, with ids and parent ids already set.
            leaf_id: the leaf (default: the last entry; ``None``: no leaf).
            header: the session header to keep with the tree.
            id_factory: makes the ids of entries appended later (default ``e1``, ...).
            clock: gives the times of entries appended later (default: UTC now).
            on_repair: if given, an entry whose parent is missing or that is on a
                cycle becomes a root instead of an error, and ``on_repair(entry,
                reason)`` is called for it (lenient loading warns there).
            counter: the tree's :attr:`counter` is at least this (a reader that
                skipped lines with ids ``e<k>`` gives the largest ``k``, so that new
                ids never repeat one of them).

        Raises:
            DuplicateEntryError: two entries share an id.
            UnknownEntryError: an entry's parent is missing (``entry_id`` is the
                parent's id), or ``leaf_id`` is unknown.
            CycleError: parent links that never reach a root.

        >>> t = SessionTree().append({"role": "user", "content": "a"})
        >>> SessionTree.from_entries(t.entries()) == t
        True
        """
        config = (
            _DEFAULT_CONFIG
            if id_factory is counter_ids and clock is utc_now
            else _Config(id_factory, clock)
        )
        store, items, by_id, seen = link_entries(entries, on_repair)
        if leaf_id is ...:
            leaf = items[-1] if items else None
        elif leaf_id is None:
            leaf = None
        else:
            leaf = by_id.get(leaf_id)
            if leaf is None:
                raise UnknownEntryError(leaf_id, f"the leaf {leaf_id!r} names no entry")
        return cls._new(store, len(items), leaf, max(seen, counter), header, config)

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
        arrays.check(self._store, self._size)
        entries = arrays.view(self._store, self._size)
        assert all(self[e.id] is e for e in entries), "a lookup finds another entry"
        counter = max((counter_of(e.id) for e in entries), default=0)
        assert counter <= self._max_seq, f"counter {self._max_seq} < {counter}"
        leaf = self._leaf
        assert leaf is None or self.get(leaf.id) is leaf, "leaf is not here"


def _slots(cls: type, *names: str) -> tuple[object, ...]:
    """The member descriptors of ``cls``'s slots ``names`` (found along its MRO)."""
    return tuple(next(k.__dict__[n] for k in cls.__mro__ if n in k.__dict__) for n in names)


# append's common case in C, where the extension is built: it is handed the classes and
# their slots, so that their layout keeps one owner (the classes here, in entries.py
# and in arrays.py).  A layout it does not know (a slot that is no longer an object
# slot) leaves append to the Python path, and the reason in _APPEND_REFUSED (which
# tests/test_append_compiled.py reports as a failure): never a failed import.
_compiled_append: Callable[[SessionTree, object], SessionTree | None] | None
_APPEND_REFUSED = ""
try:
    from ._cfrozen import append_message as _compiled_append
    from ._cfrozen import setup_append
except ImportError:  # pragma: no cover - built where a C compiler is found
    _compiled_append = None
    _APPEND_REFUSED = "ptree._cfrozen was not built here"
else:
    try:
        setup_append(
            SessionTree,
            MessageEntry,
            Entry,
            Store,
            SessionHeader,
            _DEFAULT_CONFIG,
            _clock,  # what utc_now calls: the C clock where built, called without Python
            kinds.EMPTY,
            _slots(SessionTree, "_store", "_size", "_leaf", "_max_seq", "_header", "_config"),
            _slots(
                MessageEntry,
                "id",
                "parent_id",
                "timestamp",
                "extra",
                "message",
            ),
            _slots(Store, "base", "entries", "by_id", "children", "lock"),
            type(Store().lock),  # the lock whose locked() it asks (threading.Lock)
        )
    except (TypeError, StopIteration) as exc:  # pragma: no cover - a layout change
        _compiled_append = None
        _APPEND_REFUSED = f"ptree._cfrozen.setup_append refused the layout: {exc}"


def _checked_time(timestamp: object) -> str:
    if type(timestamp) is not str:
        raise InvalidMessageError("timestamp", f"must be a string, not {type(timestamp).__name__}")
    return timestamp


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


class TreeBuilder:
    """Entries added parents first, each in O(1), and one tree value at the end.

    How a reader that meets entries in file order (the Pi reader) builds a tree of
    10^6 entries without making a value per entry, as pyrsistent's evolver or
    immutables' ``mutate()`` do.  The caller promises what :meth:`add` does not check:
    each entry is new (no tree holds it), its id is not taken, and its parent was added
    before it (or it is a root).  Anything else goes through
    :meth:`SessionTree.from_entries`, which checks.  After :meth:`finish` the builder
    is spent.

    >>> from ptree.entries import MessageEntry
    >>> a = MessageEntry(id="e1", parent_id=None, timestamp="t", message={"role": "user"})
    >>> b = MessageEntry(id="e2", parent_id="e1", timestamp="t", message={"role": "user"})
    >>> builder = TreeBuilder()
    >>> builder.add(a, None); builder.add(b, builder.index["e1"])
    >>> t = builder.finish(b, header=None)
    >>> [e.id for e in t.path()], t.counter
    (['e1', 'e2'], 2)
    """

    __slots__ = ("_max_seq", "_size", "_store", "entries", "index")

    def __init__(self) -> None:
        self._store = Store()
        self._size = 0
        self._max_seq = 0
        self.index: dict[str, Entry] = self._store.by_id
        """The entries added so far, by id (the tree's own index: read it, never write
        it while the builder is in use)."""
        self.entries: list[Entry] = self._store.entries
        """The entries added so far, in order (the tree's own list: read it, never
        write it while the builder is in use)."""

    def add(self, entry: Entry, parent: Entry | None) -> None:
        """Add ``entry`` under ``parent`` (an entry added before, or ``None``).  O(1).

        Args:
            entry: the entry to add.
            parent: its parent, an entry added before, or ``None`` for a root.
        """
        _link(entry, parent, self._size)
        self._store.add(entry)
        self._size += 1
        eid = entry.id
        if eid[0] == "e":
            k = counter_of(eid)
            if k > self._max_seq:
                self._max_seq = k

    def finish(
        self, leaf: Entry | None, *, header: SessionHeader | None, counter: int = 0
    ) -> SessionTree:
        """The tree of every entry added, its leaf ``leaf`` (one of them, or ``None``).

        The tree makes ids and timestamps the default way.  O(1).

        Args:
            leaf: the leaf, one of the entries added, or ``None``.
            header: the session header the tree keeps.
            counter: the tree's :attr:`~SessionTree.counter` is at least this (a
                reader that skipped lines with ids ``e<k>`` gives the largest ``k``).
        """
        return SessionTree._new(
            self._store,
            self._size,
            leaf,
            max(self._max_seq, counter),
            header,
            _DEFAULT_CONFIG,
        )
