"""The kinds of entry a session tree holds, as frozen attrs classes, and their JSON.

Each kind mirrors one ``type`` of Pi's session files (see ``docs/pi-session-format.md``
in the shared folder): :class:`MessageEntry` (``message``), :class:`ThinkingLevelChange`,
:class:`ModelChange`, :class:`ActiveToolsChange`, :class:`Compaction`,
:class:`BranchSummary`, :class:`Custom`, :class:`CustomMessage`, :class:`Label`,
:class:`SessionInfo`, and Pi 1.6's :class:`Usage` and :class:`ContextEdit`.  An entry
of a type ptree does not know is kept whole as an :class:`UnknownEntry`; fields ptree
does not know are kept in ``extra``.  Both are written back unchanged, so nothing a
newer Pi or an extension wrote is lost.

Every entry has ``id``, ``parent_id``, ``timestamp`` (ISO-8601 text) and ``type``.
Entries are values: equal when their fields are equal, hashable, picklable.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from operator import attrgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias, TypeVar

import attrs

from .errors import InvalidEntryError, InvalidMessageError
from .frozen import FrozenDict, FrozenList, JSONValue, freeze, thaw

try:
    from . import _cfrozen
except ImportError:  # pragma: no cover - built where a C compiler is found (setup.py)
    _cfrozen = None  # type: ignore[assignment]

__all__ = [
    "ENTRY_TYPES",
    "RESERVED_TYPES",
    "ActiveToolsChange",
    "AnyEntry",
    "BranchSummary",
    "Compaction",
    "ContextEdit",
    "Custom",
    "CustomMessage",
    "Entry",
    "Label",
    "MessageEntry",
    "ModelChange",
    "SessionInfo",
    "ThinkingLevelChange",
    "UnknownEntry",
    "Usage",
    "entry_from_json",
]

EMPTY: FrozenDict = FrozenDict()


class _Links:
    """Where an entry sits in the tree that holds it: set once, by :func:`_link`, when a
    tree takes the entry in, and never part of its value (equality, hashing, pickling).

    ``parent_entry`` is the parent entry object (so walking a path needs no lookups),
    ``depth`` the number of ancestors, ``seq`` the position in insertion order.  Read
    them only on entries taken from a tree: a fresh entry has none (``AttributeError``).

    Where the C extension is built, the base of :class:`Entry` is its ``Links`` instead:
    the same three read-only attributes, set by the same three functions below, with
    depth and position held as machine integers (an int slot above 256 costs a 32-byte
    object per entry: 32 MB per 10^6 positions).

    >>> a = MessageEntry(id="a", parent_id=None, timestamp="t", message={"role": "user"})
    >>> b = MessageEntry(id="b", parent_id="a", timestamp="t", message={"role": "user"})
    >>> _link(a, None, 0); _link(b, a, 1)
    >>> b.parent_entry is a, b.depth, b.seq
    (True, 1, 1)
    """

    __slots__ = ("depth", "parent_entry", "seq")

    parent_entry: Entry | None
    depth: int
    seq: int


# The slot setters: entries are frozen to everyone but the functions below.
_set_parent = _Links.__dict__["parent_entry"].__set__
_set_depth = _Links.__dict__["depth"].__set__
_set_seq = _Links.__dict__["seq"].__set__


def _link(entry: Entry, parent: Entry | None, seq: int) -> None:
    """For the core's tree builders (:mod:`ptree.tree`, :mod:`ptree.building`) only.

    Sets ``entry``'s links once: its parent object (already linked), its depth, and its
    position ``seq`` in insertion order.  Only for an entry no one else holds yet (a
    fresh object or a private copy): links are set once and then shared by every tree
    version.  Cost: O(1).
    """
    _set_parent(entry, parent)
    if parent is None:
        _set_depth(entry, 0)
    else:
        depth = parent.depth + 1
        # On a run that starts at the first entry, the depth is the position: one int
        # object for both (an int above 256 is a 32-byte object of its own).
        _set_depth(entry, seq if depth == seq else depth)
    _set_seq(entry, seq)


def _set_position(entry: Entry, seq: int) -> None:
    """For the core's builders: set only ``entry``'s position (its parent and depth were set by
    :func:`_link_parent`).  For builders that link parents before they number entries.
    """
    _set_seq(entry, seq)


def _link_parent(entry: Entry, parent: Entry | None, depth: int) -> None:
    """For the core's builders: set ``entry``'s parent object and depth, not yet its position."""
    _set_parent(entry, parent)
    _set_depth(entry, depth)


if TYPE_CHECKING or _cfrozen is None:
    _LinksBase = _Links
else:  # the same links in C (ptree/_cfrozen.c)
    _LinksBase = _cfrozen.Links
    _link = _cfrozen.link
    _set_position = _cfrozen.set_position
    _link_parent = _cfrozen.link_parent


def is_linked(entry: Entry) -> bool:
    """Whether a tree has taken ``entry`` in (its links are set).  O(1)."""
    try:
        entry.seq  # noqa: B018
    except AttributeError:
        return False
    return True


def _str(what: str) -> Callable[[Any, attrs.Attribute[Any], Any], None]:
    def check(inst: Any, attr: attrs.Attribute[Any], value: Any) -> None:
        if type(value) is not str:
            raise InvalidEntryError(
                f"{what} must be a string, not {type(value).__name__}",
                entry_id=getattr(inst, "id", None),
                field=_json_name(attr.name),
            )

    return check


def _opt_str(what: str) -> Callable[[Any, attrs.Attribute[Any], Any], None]:
    inner = _str(what)

    def check(inst: Any, attr: attrs.Attribute[Any], value: Any) -> None:
        if value is not None:
            inner(inst, attr, value)

    return check


def _id_check(inst: Any, attr: attrs.Attribute[Any], value: Any) -> None:
    if type(value) is not str or not value:
        raise InvalidEntryError(
            f"an id must be a non-empty string, not {value!r}", entry_id=None, field="id"
        )


def _number(inst: Any, attr: attrs.Attribute[Any], value: Any) -> None:
    if type(value) not in (int, float):
        raise InvalidEntryError(
            f"must be a number, not {type(value).__name__}",
            entry_id=getattr(inst, "id", None),
            field=_json_name(attr.name),
        )


def _opt_bool(inst: Any, attr: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and type(value) is not bool:
        raise InvalidEntryError(
            f"must be true or false, not {value!r}",
            entry_id=getattr(inst, "id", None),
            field=_json_name(attr.name),
        )


def _freeze_json(value: Any) -> Any:
    return freeze(value)


def freeze_extra(value: Any) -> FrozenDict:
    """The ``extra`` field's converter (also the session header's): a frozen mapping of
    field names to JSON values; ``None`` gives the shared empty one.

    Raises:
        InvalidMessageError: not a mapping of JSON values.
    """
    if value is None:
        return EMPTY
    frozen = freeze(value, where="extra")
    if not isinstance(frozen, FrozenDict):
        raise InvalidMessageError("extra", "must be a mapping of field names to JSON values")
    return frozen


# attribute name -> JSON key, for the fields that differ
_CAMEL = {
    "parent_id": "parentId",
    "thinking_level": "thinkingLevel",
    "model_id": "modelId",
    "active_tool_names": "activeToolNames",
    "first_kept_entry_id": "firstKeptEntryId",
    "tokens_before": "tokensBefore",
    "from_hook": "fromHook",
    "from_id": "fromId",
    "custom_type": "customType",
    "target_id": "targetId",
    "system_message": "systemMessage",
}


def _json_name(attr_name: str) -> str:
    return _CAMEL.get(attr_name, attr_name)


_BASE_KEYS = frozenset({"type", "id", "parentId", "timestamp"})
# The field ptree.pi's writer marks the lines of a multi-line commit with (the reader
# takes it off): an entry cannot have it, or its line would read as such a mark.
_BATCH_KEY = "ptreeBatch"
# Set while entry_from_json(keep_invalid=True) makes an entry with an invalid optional
# field set aside into extra (and while such an entry is evolved): the one case where
# extra may hold a known optional field that is not null.
_SETTING_ASIDE: ContextVar[bool] = ContextVar("ptree_setting_aside", default=False)

_E = TypeVar("_E", bound="Entry")

# What a context needs to know of an entry without reading its message: its shape, a
# small int set when the entry is made (the C line scanner gives it from a line's
# bytes), so that ptree.context can select entries from the shapes of a path alone.
# A message entry's shape is 0 or the sum of the flags below; every other entry's is
# SHAPE_OTHER.
SHAPE_NO_CONTENT = 1
"""Flag: the message's ``content`` is absent or ``null``."""
SHAPE_SYSTEM = 2
"""Flag: the message's role is ``"system"``."""
SHAPE_ASSISTANT = 4
"""Flag: the message's role is ``"assistant"``."""
SHAPE_OTHER = 8
"""The shape of an entry that is not a message entry."""


def message_shape(message: Mapping[str, Any]) -> int:
    """The shape of a message entry holding ``message``: the sum of
    :data:`SHAPE_NO_CONTENT`, :data:`SHAPE_SYSTEM` and :data:`SHAPE_ASSISTANT` that
    apply.  O(1).

    >>> message_shape({"role": "user", "content": "hi"}), message_shape({"role": "system"})
    (0, 3)
    """
    role = message.get("role")
    shape = SHAPE_NO_CONTENT if message.get("content") is None else 0
    if role == "system":
        return shape | SHAPE_SYSTEM
    if role == "assistant":
        return shape | SHAPE_ASSISTANT
    return shape


@attrs.frozen(kw_only=True, weakref_slot=False)
class Entry(_LinksBase):  # _Links, or the same in C
    """The fields every entry has.  Not made directly: use one of the kinds.

    Attributes:
        id: unique within a tree; any non-empty string.
        parent_id: the parent's id, or ``None`` for a root.
        timestamp: when the entry was made, ISO-8601 text such as
            ``"2026-01-01T00:00:00.000Z"``.
        extra: fields this version of ptree does not know, kept to be written back.
    """

    TYPE: ClassVar[str] = ""
    # Internal: what a context walk needs to know of the entry (see SHAPE_OTHER); a
    # message entry has its own.
    shape = SHAPE_OTHER
    # (attribute, JSON key, required) of the kind's own fields, in Pi's order.
    _FIELDS: ClassVar[tuple[tuple[str, str, bool], ...]] = ()

    id: str = attrs.field(validator=_id_check)
    parent_id: str | None = attrs.field(validator=_opt_str("parentId"))
    timestamp: str = attrs.field(validator=_str("timestamp"))
    extra: FrozenDict = attrs.field(default=EMPTY, converter=freeze_extra, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.extra:
            _check_extra(self)

    @property
    def type(self) -> str:
        """The ``type`` this entry has in a session file (``"message"``, …)."""
        return self.TYPE

    def to_json(self) -> dict[str, Any]:
        """This entry as a plain dict in Pi's file format, ready for ``json.dumps``.

        Unknown fields (``extra``) are included; known optional fields only when set.
        Cost: O(size of the entry).

        >>> ModelChange(id="a1", parent_id=None, timestamp="t", provider="p",
        ...             model_id="m").to_json()  # doctest: +NORMALIZE_WHITESPACE
        {'type': 'model_change', 'id': 'a1', 'parentId': None, 'timestamp': 't',
         'provider': 'p', 'modelId': 'm'}
        """
        return thaw(self.json_fields())  # type: ignore[no-any-return]

    def json_fields(self) -> dict[str, Any]:
        """This entry in Pi's file format with its frozen values inside, not copied.

        What writers hand to ``json.dumps`` (which takes frozen values as they are):
        :meth:`to_json` without the thaw.  Cost: O(number of fields).
        """
        out: dict[str, Any] = {
            "type": self.type,
            "id": self.id,
            "parentId": self.parent_id,
            "timestamp": self.timestamp,
        }
        for attr, key, required in self._FIELDS:
            value = getattr(self, attr)
            if required or value is not None:
                out[key] = value
        for key, value in self.extra.items():
            if key not in out:
                out[key] = value
        return out

    def evolve(self: _E, **changes: Any) -> _E:
        """A copy of this entry with some fields changed (``attrs.evolve``).

        The copy belongs to no tree until one takes it in.  Cost: O(number of fields),
        plus checking the changed ones.

        Args:
            **changes: the fields to change, by name, and their new values.
        """
        if "extra" in changes or not self.extra:
            return attrs.evolve(self, **changes)
        # An entry the lenient loader kept with an invalid field set aside keeps it.
        token = _SETTING_ASIDE.set(True)
        try:
            return attrs.evolve(self, **changes)
        finally:
            _SETTING_ASIDE.reset(token)


def _check_extra(entry: Entry) -> None:
    """Refuse ``extra`` fields that the entry's own fields would hide when written.

    Written back, such a field would be lost (``type``, ``id``…) or read as the field
    itself (a ``label`` of ``[]`` beside a label of ``None``).  The one exception is
    what a file can hold: a known optional field that is ``None``, kept in ``extra``
    as ``null`` so that the line is written back as it was read; and, only for
    :func:`entry_from_json` with ``keep_invalid`` (the lenient loader, which such a
    line reads back the same way), an invalid value set aside beside a field that is
    ``None``.  O(len(extra)).
    """
    aside = _SETTING_ASIDE.get()
    own = {key: (attr, required) for attr, key, required in entry._FIELDS}
    for key, value in entry.extra.items():
        if key == _BATCH_KEY:
            raise InvalidEntryError(
                f"{key!r} is reserved: the session writer marks the lines of a commit with it",
                entry_id=entry.id,
                field=key,
            )
        if key in _BASE_KEYS:
            raise InvalidEntryError(
                f"{key!r} is a field of every entry, not an extra one",
                entry_id=entry.id,
                field=key,
            )
        field = own.get(key)
        if field is not None and (
            field[1] or (value is not None and not aside) or getattr(entry, field[0]) is not None
        ):
            raise InvalidEntryError(
                f"{key!r} is a field of a {entry.type} entry, not an extra one "
                "(an extra field of that name can only be null, beside a field that is None)",
                entry_id=entry.id,
                field=key,
            )


def _freeze_message(value: Any) -> FrozenDict:
    return freeze(value, where="message")  # type: ignore[no-any-return]


@attrs.frozen(kw_only=True, weakref_slot=False)
class MessageEntry(Entry):
    """A conversation message (``type: "message"``).

    ``message`` is a JSON-like mapping with a string ``role`` (``user``,
    ``assistant``, ``toolResult``, ``bashExecution``, ``custom``, …), copied into a
    :class:`~ptree.FrozenDict` so that nobody can change it afterwards.

    Attributes:
        message: the message, a frozen JSON-like mapping with a string ``role``.
    """

    TYPE: ClassVar[str] = "message"
    _FIELDS: ClassVar[tuple[tuple[str, str, bool], ...]] = (("message", "message", True),)

    message: FrozenDict = attrs.field(converter=_freeze_message)
    # Internal, not part of the value: the message's shape (message_shape), for the
    # context walk, read as ``shape``.  Left empty when the entry is made (append pays
    # nothing for it) and filled on the first read; a fast reader gives it at once.
    # Not a __getattr__ for the empty slot: a class with one reads every attribute
    # through CPython's hook, never specialised, and a path walk (parent_entry, depth)
    # ran 2-3.5x slower for it.
    _shape: int = attrs.field(init=False, eq=False, hash=False, repr=False)

    @property
    def shape(self) -> int:  # type: ignore[override]
        """Internal: the message's shape (:func:`message_shape`), for a context walk.

        O(1): the first read fills the slot, the next ones read it.
        """
        # getattr's default, not try/except: an empty slot's first read costs a third
        # less (build_context's first walk over an appended tree reads every one).
        shape: int | None = getattr(self, "_shape", None)
        if shape is None:
            shape = message_shape(self.message)
            _set_shape(self, shape)
        return shape

    def __reduce_ex__(self, protocol: Any) -> Any:
        # Made again as append makes it (its fields were checked when it was made), of
        # its own kind, the shape left to its first read: attrs' pickling would read
        # every slot, an empty one failing.
        return type(self).unchecked, (
            self.id,
            self.parent_id,
            self.timestamp,
            self.message,
            self.extra,
        )

    @message.validator
    def _check_message(self, attr: attrs.Attribute[Any], value: Any) -> None:
        if type(value) is not FrozenDict:
            raise InvalidMessageError("message", f"must be a mapping, not {type(value).__name__}")
        if type(value.get("role")) is not str:
            raise InvalidMessageError("message['role']", "a message needs a string role")

    @property
    def role(self) -> str:
        """The message's role."""
        return self.message["role"]  # type: ignore[no-any-return]

    @classmethod
    def unchecked(
        cls,
        entry_id: str,
        parent_id: str | None,
        timestamp: str,
        message: FrozenDict,
        extra: FrozenDict = EMPTY,
    ) -> MessageEntry:
        """Internal API: a message entry made without attrs' validators and converters.

        For the hot paths that have already checked exactly what the constructor checks
        (``append``, the Pi reader): ``entry_id`` a non-empty string, ``parent_id`` a
        string or ``None``, ``timestamp`` a string, ``message`` a
        :class:`~ptree.FrozenDict` with a string ``role``, ``extra`` a FrozenDict.
        Anything else makes an entry that breaks the tree's invariants.  Cost: O(1),
        about a third of the validating constructor.

        Args:
            entry_id: the entry's id, a non-empty string.
            parent_id: the parent's id, or ``None``.
            timestamp: the entry's time, a string.
            message: the message, already a :class:`~ptree.FrozenDict` with a string ``role``.
            extra: unknown fields, already a FrozenDict.

        >>> e = MessageEntry.unchecked("u1", None, "t", FrozenDict(role="user"))
        >>> e == MessageEntry(id="u1", parent_id=None, timestamp="t", message={"role": "user"})
        True
        """
        entry = _new_object(cls)
        _set_id(entry, entry_id)
        _set_parent_id(entry, parent_id)
        _set_timestamp(entry, timestamp)
        _set_extra(entry, extra)
        _set_message(entry, message)
        return entry


_new_object = object.__new__
_set_id = Entry.__dict__["id"].__set__
_set_parent_id = Entry.__dict__["parent_id"].__set__
_set_timestamp = Entry.__dict__["timestamp"].__set__
_set_extra = Entry.__dict__["extra"].__set__
_set_message = MessageEntry.__dict__["message"].__set__
_get_message = MessageEntry.__dict__["message"].__get__
_set_shape = MessageEntry.__dict__["_shape"].__set__
_decode_lock = threading.Lock()


class LazyMessageEntry(MessageEntry):
    """A message entry whose message is decoded on first read: what a fast reader makes.

    Internal API for readers (the Pi reader subclasses it with its decoder).  The entry
    keeps the message's undecoded source (for the Pi reader, the JSON bytes it has
    already checked) and leaves its ``message`` slot empty: the first read of
    ``message`` finds the slot empty, decodes the source with :meth:`decode` and fills
    the slot (dropping the source), after which reads are plain slot reads, as fast as
    on any entry.  The class never changes: the entry compares, hashes, pickles (as a
    plain :class:`MessageEntry`), prints and evolves exactly like the message entry it
    stands for, decoding first.  Its :attr:`~MessageEntry.shape` is given when it is
    made, so a context walk needs no decode to select it.

    Threads: two threads reading one entry for the first time may both decode, but
    only the first value stored is ever handed out (the store is a check-and-set under
    a lock taken once per entry); nobody sees the undecoded source.

    A subclass must define :meth:`decode`; whatever it is given must decode without
    error to a :class:`~ptree.FrozenDict` with a string ``role`` whose shape is the one
    given: the reader checked that when it made the entry.
    """

    __slots__ = ("_source",)

    _source: object

    @classmethod
    def pending(
        cls, entry_id: str, parent_id: str | None, timestamp: str, source: object, shape: int
    ) -> LazyMessageEntry:
        """An entry whose message will be decoded from ``source`` on first read; ``shape``
        is that message's (:func:`message_shape`).  O(1)."""
        entry = _new_object(cls)
        _set_id(entry, entry_id)
        _set_parent_id(entry, parent_id)
        _set_timestamp(entry, timestamp)
        _set_extra(entry, EMPTY)
        _set_source(entry, source)
        _set_shape(entry, shape)
        return entry

    @staticmethod
    def decode(source: Any) -> FrozenDict:
        """The message ``source`` stands for (subclasses define it)."""
        raise NotImplementedError

    def __getattr__(self, name: str) -> Any:
        # Called only for a slot left empty: the message before its first read (or a
        # link a tree has not set yet, which stays an AttributeError).
        if name != "message":
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        try:
            source = self._pending()
        except AttributeError:  # another thread decoded it and dropped the source
            return _get_message(self, MessageEntry)
        value = self.decode(source)
        with _decode_lock:
            try:
                return _get_message(self, MessageEntry)  # another thread was first
            except AttributeError:
                _set_message(self, value)
                self._drop_source()
                return value

    def _pending(self) -> object:
        """The undecoded source; ``AttributeError`` once decoded (the slot dropped).

        A subclass may keep its source otherwise (the Pi reader's C entries keep the
        file's bytes and the message's place in them) and make it here.  O(1).
        """
        return _get_source(self)

    def _drop_source(self) -> None:
        """Let the undecoded source go (the message is decoded).  O(1)."""
        _del_source(self)

    def undecoded(self) -> object | None:
        """The message's undecoded source, or ``None`` once it has been decoded.  O(1).

        For helpers of the reader that made the entry (the Pi reader's raw JSON
        bytes): they may read what they need straight from the source without
        decoding, freezing and keeping the whole message.  The source never changes;
        the entry may be decoded meanwhile by another thread, which is harmless.
        """
        try:
            source: object = self._pending()
        except AttributeError:
            return None
        return source

    def _plain(self) -> MessageEntry:
        """The plain message entry this one stands for (decoded).  O(1) once decoded."""
        return MessageEntry.unchecked(
            self.id, self.parent_id, self.timestamp, self.message, self.extra
        )

    def __eq__(self, other: object) -> bool:
        # attrs' equality wants the same class; a lazy entry is the message entry it
        # stands for (Python asks this subclass first, on either side of ``==``).
        if type(other) is not MessageEntry and not isinstance(other, LazyMessageEntry):
            return NotImplemented
        return _eq_fields(self) == _eq_fields(other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = MessageEntry.__hash__

    def __repr__(self) -> str:
        return repr(self._plain())

    def __reduce_ex__(self, protocol: Any) -> Any:
        # Unpickled as the plain entry it stands for (the message decoded).
        return MessageEntry.unchecked, (
            self.id,
            self.parent_id,
            self.timestamp,
            self.message,
            self.extra,
        )

    def evolve(self, **changes: Any) -> Any:
        """As :meth:`Entry.evolve`: a plain :class:`MessageEntry`, decoded first."""
        return self._plain().evolve(**changes)


_source_slot = LazyMessageEntry.__dict__["_source"]
_get_source = _source_slot.__get__
_set_source = _source_slot.__set__
_del_source = _source_slot.__delete__
_eq_fields = attrgetter(*(a.name for a in attrs.fields(MessageEntry) if a.eq))


@attrs.frozen(kw_only=True, weakref_slot=False)
class ThinkingLevelChange(Entry):
    """The thinking level changed (``off``, ``minimal``, ``low``, ``medium``, ``high``, …).

    Attributes:
        thinking_level: the new level, as Pi names it.
    """

    TYPE: ClassVar[str] = "thinking_level_change"
    _FIELDS: ClassVar[tuple[tuple[str, str, bool], ...]] = (
        ("thinking_level", "thinkingLevel", True),
    )

    thinking_level: str = attrs.field(validator=_str("thinkingLevel"))


@attrs.frozen(kw_only=True, weakref_slot=False)
class ModelChange(Entry):
    """The model changed to ``provider`` / ``model_id``.

    Attributes:
        provider: the provider's name.
        model_id: the model's id at that provider.
    """

    TYPE: ClassVar[str] = "model_change"
    _FIELDS: ClassVar[tuple[tuple[str, str, bool], ...]] = (
        ("provider", "provider", True),
        ("model_id", "modelId", True),
    )

    provider: str = attrs.field(validator=_str("provider"))
    model_id: str = attrs.field(validator=_str("modelId"))


def _tool_names(value: Any) -> FrozenList:
    frozen = freeze(value, where="activeToolNames")
    if not isinstance(frozen, FrozenList) or any(type(n) is not str for n in frozen):
        raise InvalidMessageError("activeToolNames", "must be a list of strings")
    return frozen


@attrs.frozen(kw_only=True, weakref_slot=False)
class ActiveToolsChange(Entry):
    """The set of tools the model may call changed (Pi's harness).

    Attributes:
        active_tool_names: the names of the tools active from this entry on.
    """

    TYPE: ClassVar[str] = "active_tools_change"
    _FIELDS: ClassVar[tuple[tuple[str, str, bool], ...]] = (
        ("active_tool_names", "activeToolNames", True),
    )

    active_tool_names: FrozenList = attrs.field(converter=_tool_names)


def _opt_mapping(value: Any, where: str) -> FrozenDict | None:
    if value is None:
        return None
    frozen = freeze(value, where=where)
    if type(frozen) is not FrozenDict:
        raise InvalidMessageError(where, "must be an object (or null)")
    return frozen


def _opt_usage(value: Any) -> FrozenDict | None:
    return _opt_mapping(value, "usage")


def _opt_system_message(value: Any) -> FrozenDict | None:
    return _opt_mapping(value, "systemMessage")


@attrs.frozen(kw_only=True, weakref_slot=False)
class Compaction(Entry):
    """Everything before ``first_kept_entry_id`` was summarised into ``summary``.

    ``first_kept_entry_id`` is ``None`` when the file has none (Pi 0.73.1 wrote such
    compactions) or ``null``; like an id that is not on the path before the
    compaction, or the compaction's own id (Pi 1.6's "keep nothing"), it keeps
    nothing from before the compaction.  ``usage`` (Pi 1.6) is what making the
    summary cost; ``system_message`` (Pi 1.6) is the checkpoint of the system prompt
    and tools at the compaction, a ``role: "system"`` message that stands for the
    system messages the compaction summarised.

    Attributes:
        summary: the text the model is given in place of what was summarised.
        first_kept_entry_id: the first entry kept after the summary (see above).
        tokens_before: the size of the context the compaction replaced.
        details: any JSON value, for the extension that wrote it.
        usage: what making the summary cost (Pi 1.6).
        from_hook: whether an extension's hook made it (Pi's ``fromHook``).
        system_message: the system-prompt checkpoint (Pi 1.6), or ``None``.
    """

    TYPE: ClassVar[str] = "compaction"
    _FIELDS: ClassVar[tuple[tuple[str, str, bool], ...]] = (
        ("summary", "summary", True),
        ("first_kept_entry_id", "firstKeptEntryId", False),
        ("tokens_before", "tokensBefore", True),
        ("details", "details", False),
        ("usage", "usage", False),
        ("from_hook", "fromHook", False),
        ("system_message", "systemMessage", False),
    )

    summary: str = attrs.field(validator=_str("summary"))
    first_kept_entry_id: str | None = attrs.field(
        default=None, validator=_opt_str("firstKeptEntryId")
    )
    tokens_before: int | float = attrs.field(validator=_number)
    details: JSONValue = attrs.field(default=None, converter=_freeze_json)
    usage: FrozenDict | None = attrs.field(default=None, converter=_opt_usage)
    from_hook: bool | None = attrs.field(default=None, validator=_opt_bool)
    system_message: FrozenDict | None = attrs.field(default=None, converter=_opt_system_message)

    @system_message.validator
    def _check_system_message(self, attr: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and type(value.get("role")) is not str:
            raise InvalidEntryError(
                "a checkpoint needs a string role", entry_id=self.id, field="systemMessage"
            )


@attrs.frozen(kw_only=True, weakref_slot=False)
class BranchSummary(Entry):
    """A summary of a branch the conversation came back from.

    ``from_id`` is, as Pi 1.6 writes it, the leaf before the move (the end of the
    abandoned branch), ``"root"`` when there was none; Pi 0.73.1 wrote the entry
    moved to instead (see :func:`ptree.branching.branch_origin`).  ``usage`` (Pi 1.6) is what
    making the summary cost.

    Attributes:
        from_id: the abandoned leaf, or the entry moved to (see above).
        summary: what the branch did, as the model is given it.
        details: any JSON value, for the extension that wrote it.
        usage: what making the summary cost (Pi 1.6).
        from_hook: whether an extension's hook made it (Pi's ``fromHook``).
    """

    TYPE: ClassVar[str] = "branch_summary"
    _FIELDS: ClassVar[tuple[tuple[str, str, bool], ...]] = (
        ("from_id", "fromId", True),
        ("summary", "summary", True),
        ("details", "details", False),
        ("usage", "usage", False),
        ("from_hook", "fromHook", False),
    )

    from_id: str = attrs.field(validator=_str("fromId"))
    summary: str = attrs.field(validator=_str("summary"))
    details: JSONValue = attrs.field(default=None, converter=_freeze_json)
    usage: FrozenDict | None = attrs.field(default=None, converter=_opt_usage)
    from_hook: bool | None = attrs.field(default=None, validator=_opt_bool)


@attrs.frozen(kw_only=True, weakref_slot=False)
class Custom(Entry):
    """State an extension keeps in the session; never reaches the model.

    Attributes:
        custom_type: the extension's name for the kind of state.
        data: any JSON value.
    """

    TYPE: ClassVar[str] = "custom"
    _FIELDS: ClassVar[tuple[tuple[str, str, bool], ...]] = (
        ("custom_type", "customType", True),
        ("data", "data", False),
    )

    custom_type: str = attrs.field(validator=_str("customType"))
    data: JSONValue = attrs.field(default=None, converter=_freeze_json)


def _content(value: Any) -> str | FrozenList | None:
    if value is None:
        return None
    frozen = freeze(value, where="content")
    if not isinstance(frozen, (str, FrozenList)):
        raise InvalidMessageError("content", "must be a string or a list of content blocks")
    return frozen


@attrs.frozen(kw_only=True, weakref_slot=False)
class CustomMessage(Entry):
    """A message an extension puts into the context, as a user message.

    ``content`` is ``None`` when the file has none (or ``null``, kept to be written
    back): the context then gives ``[]``, as Pi does.  ``display`` is ``None`` when
    the file has none; a ``null`` one is kept (in ``extra``) and reaches the context
    message as ``null``.

    Attributes:
        custom_type: the extension's name for the kind of message.
        content: what the model is given (text or content blocks), or ``None``.
        display: whether Pi's interface shows it.
        details: any JSON value, for the extension; never sent to the model.
    """

    TYPE: ClassVar[str] = "custom_message"
    _FIELDS: ClassVar[tuple[tuple[str, str, bool], ...]] = (
        ("custom_type", "customType", True),
        ("content", "content", False),
        ("display", "display", False),
        ("details", "details", False),
    )

    custom_type: str = attrs.field(validator=_str("customType"))
    content: str | FrozenList | None = attrs.field(converter=_content)
    # None: the file had no display field (Pi's readers then show the message); kept
    # absent so that the entry is written back, and enters the context, as it was.
    display: bool | None = attrs.field(default=True)
    details: JSONValue = attrs.field(default=None, converter=_freeze_json)

    @display.validator
    def _check_display(self, attr: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and type(value) is not bool:
            raise InvalidEntryError(
                f"must be true or false, not {value!r}", entry_id=self.id, field="display"
            )


@attrs.frozen(kw_only=True, weakref_slot=False)
class Label(Entry):
    """Sets (or, with ``label`` ``None`` or empty, clears) the label of ``target_id``.

    Attributes:
        target_id: the entry labelled.
        label: the label; ``None`` or empty clears it.
    """

    TYPE: ClassVar[str] = "label"
    _FIELDS: ClassVar[tuple[tuple[str, str, bool], ...]] = (
        ("target_id", "targetId", True),
        ("label", "label", False),
    )

    target_id: str = attrs.field(validator=_str("targetId"))
    label: str | None = attrs.field(default=None, validator=_opt_str("label"))


@attrs.frozen(kw_only=True, weakref_slot=False)
class SessionInfo(Entry):
    """Names the session (``name`` trimmed; ``None`` or empty clears the name).

    Attributes:
        name: the session's name; ``None`` or empty clears it.
    """

    TYPE: ClassVar[str] = "session_info"
    _FIELDS: ClassVar[tuple[tuple[str, str, bool], ...]] = (("name", "name", False),)

    name: str | None = attrs.field(default=None, validator=_opt_str("name"))


def _usage(value: Any) -> FrozenDict:
    frozen = freeze(value, where="usage")
    if type(frozen) is not FrozenDict:
        raise InvalidMessageError("usage", "must be an object")
    return frozen


@attrs.frozen(kw_only=True, weakref_slot=False)
class Usage(Entry):
    """Usage paid for something that is not an assistant message (Pi 1.6).

    Cache warming, a classifier call: ``kind`` says what (any string), ``provider``
    and ``model`` who, ``usage`` how much (the object assistant messages carry:
    ``input``, ``output``, ``cacheRead``, ``cacheWrite``, ``totalTokens``, ``cost``),
    ``note`` (optional) why.  It never reaches the model and sets no state.

    Attributes:
        kind: what was paid for (any string: ``"cache_warm"``).
        provider: the provider paid.
        model: the model used.
        usage: how much, as assistant messages carry it.
        note: why, or ``None``.

    >>> u = Usage(id="u1", parent_id=None, timestamp="t", kind="cache_warm",
    ...           provider="anthropic", model="claude-sonnet-4-5", usage={"input": 0})
    >>> u.to_json()["usage"], u.note
    ({'input': 0}, None)
    """

    TYPE: ClassVar[str] = "usage"
    _FIELDS: ClassVar[tuple[tuple[str, str, bool], ...]] = (
        ("kind", "kind", True),
        ("provider", "provider", True),
        ("model", "model", True),
        ("usage", "usage", True),
        ("note", "note", False),
    )

    kind: str = attrs.field(validator=_str("kind"))
    provider: str = attrs.field(validator=_str("provider"))
    model: str = attrs.field(validator=_str("model"))
    usage: FrozenDict = attrs.field(converter=_usage)
    note: str | None = attrs.field(default=None, validator=_opt_str("note"))


def _replacement(value: Any) -> FrozenDict | None:
    if value is None:
        return None
    frozen = freeze(value, where="replacement")
    if type(frozen) is not FrozenDict or not isinstance(frozen.get("content"), (str, FrozenList)):
        raise InvalidMessageError(
            "replacement", "must be null or an object whose content is a string or a list"
        )
    return frozen


@attrs.frozen(kw_only=True, weakref_slot=False)
class ContextEdit(Entry):
    """Changes what an earlier entry, ``target_id``, gives the model (Pi 1.6).

    ``replacement`` ``None`` leaves the target's messages out of the context;
    otherwise ``replacement["content"]`` (a string or a list of content blocks)
    replaces their content, and nothing else of them.  Only an edit inside the
    context being built counts (one on another branch, or before a compaction's kept
    range, does nothing), the latest one per target winning.  The target itself is
    never changed: moving the leaf back before the edit shows the original again.

    Attributes:
        target_id: the entry whose messages the edit changes.
        replacement: ``None`` to leave them out of the context, or a mapping whose
            ``content`` replaces theirs.

    >>> e = ContextEdit(id="x", parent_id="a", timestamp="t", target_id="a",
    ...                 replacement={"content": "shorter"})
    >>> e.to_json()["replacement"], e.removes
    ({'content': 'shorter'}, False)
    """

    TYPE: ClassVar[str] = "context_edit"
    _FIELDS: ClassVar[tuple[tuple[str, str, bool], ...]] = (
        ("target_id", "targetId", True),
        ("replacement", "replacement", True),
    )

    target_id: str = attrs.field(validator=_str("targetId"))
    replacement: FrozenDict | None = attrs.field(converter=_replacement)

    @property
    def removes(self) -> bool:
        """Whether the edit leaves its target out of the context."""
        return self.replacement is None


@attrs.frozen(kw_only=True, weakref_slot=False)
class UnknownEntry(Entry):
    """An entry of a ``type`` ptree does not know, kept whole to be written back.

    Its own fields are in ``extra``.  It is a node like any other (it has an id and a
    parent) and never reaches the model.  Its type cannot be one ptree knows (a kind
    of :data:`ENTRY_TYPES`, ``session``, ``leaf``): written back, such a line would
    read as something else.

    Attributes:
        entry_type: the line's ``type``.
    """

    entry_type: str = attrs.field(validator=_str("type"))

    @entry_type.validator
    def _check_unknown(self, attr: attrs.Attribute[Any], value: str) -> None:
        # Written back under a type ptree reads otherwise, the entry would come back
        # as something else (or as nothing): every value must survive a round trip.
        if value in ENTRY_TYPES:
            reads_as = f"a {value} entry (make one of those instead)"
        elif value == "session":
            reads_as = "a session header"
        elif value == "leaf":
            reads_as = "a leaf move"
        else:
            return
        raise InvalidEntryError(
            f"{value!r} is not an unknown type: such a line reads as {reads_as}",
            entry_id=self.id,
            field="type",
        )

    @property
    def type(self) -> str:
        """The ``type`` as the file spelt it."""
        return self.entry_type


RESERVED_TYPES = frozenset({"session", "leaf"})
"""Line types that are not entries: the header, and leaf records (a leaf move)."""


ENTRY_TYPES: Mapping[str, type[Entry]] = MappingProxyType(
    {
        cls.TYPE: cls
        for cls in (
            MessageEntry,
            ThinkingLevelChange,
            ModelChange,
            ActiveToolsChange,
            Compaction,
            BranchSummary,
            Custom,
            CustomMessage,
            Label,
            SessionInfo,
            Usage,
            ContextEdit,
        )
    }
)
"""Pi's ``type`` names to the classes that stand for them."""

if _cfrozen is not None:
    # Their fields hold strings, numbers, frozen JSON values and (the links) entries
    # made before them: never a cycle, so once linked the collector need not track
    # them (nor a subclass's instances that add no field).
    _cfrozen.acyclic((*ENTRY_TYPES.values(), UnknownEntry, LazyMessageEntry))

AnyEntry: TypeAlias = (
    MessageEntry
    | ThinkingLevelChange
    | ModelChange
    | ActiveToolsChange
    | Compaction
    | BranchSummary
    | Custom
    | CustomMessage
    | Label
    | SessionInfo
    | Usage
    | ContextEdit
    | UnknownEntry
)
"""Any entry a tree holds: the union of the kinds, what lookups such as ``tree[id]``
return.  A type checker narrows it with ``isinstance`` (or ``match``) to one kind, whose
own fields it then knows; only the fields every kind has (``id``, ``parent_id``,
``timestamp``, ``type``, ``extra``) are there without narrowing.  A tree takes only
entries of these kinds (subclasses included), so the union is exact.  It works with
``isinstance`` at run time too.
"""


def entry_from_json(obj: Mapping[str, Any], *, keep_invalid: bool = False) -> AnyEntry:
    """Make an entry from one parsed line of a session file (not the header).

    Known fields become attributes; every other field goes into ``extra``, and an
    unknown ``type`` gives an :class:`UnknownEntry`.  A known optional field written as
    ``null`` stays in ``extra`` too, so that writing the entry back gives the same JSON.
    With ``keep_invalid``, a known *optional* field of the wrong kind (a ``details``
    that is fine, but a ``fromHook`` that is a string, a ``usage`` that is a list) is
    set aside into ``extra`` instead of refusing the entry, as Pi keeps such entries
    (the lenient loader uses it; required fields must still be right).
    Cost: O(size of the entry).

    Args:
        obj: the parsed line.
        keep_invalid: set aside invalid optional fields instead of refusing them.

    Raises:
        InvalidEntryError: no ``type``, no usable ``id``, or a known field missing or
            of the wrong kind (naming the field).
        InvalidMessageError: a value that is not JSON.

    >>> e = entry_from_json({"type": "label", "id": "x", "parentId": None,
    ...                      "timestamp": "t", "targetId": "a", "label": "good", "by": "me"})
    >>> e.label, e.extra
    ('good', {'by': 'me'})
    """
    entry_id = obj.get("id")
    if type(entry_id) is not str or not entry_id:
        raise InvalidEntryError(
            "an entry needs a non-empty string id", entry_id=entry_id or None, field="id"
        )
    kind = obj.get("type")
    if type(kind) is not str:
        raise InvalidEntryError("an entry needs a string type", entry_id=entry_id, field="type")
    if "parentId" not in obj:
        raise InvalidEntryError(
            "an entry needs a parentId (null for a root)", entry_id=entry_id, field="parentId"
        )
    if "timestamp" not in obj:
        raise InvalidEntryError("an entry needs a timestamp", entry_id=entry_id, field="timestamp")
    cls = ENTRY_TYPES.get(kind)
    kwargs: dict[str, Any] = {}
    if cls is None:
        taken: set[str] = set(_BASE_KEYS)
        kwargs["entry_type"] = kind
        cls = UnknownEntry
    else:
        taken = set(_BASE_KEYS)
        for attr, key, required in cls._FIELDS:
            if not required:
                # Absent and null both read as None (not the constructor's default);
                # a null stays in extra, so it is written back as null.
                value = obj.get(key)
                kwargs[attr] = value
                if value is not None:
                    taken.add(key)
            elif key in obj:
                kwargs[attr] = obj[key]
                taken.add(key)
            else:
                raise InvalidEntryError(
                    f"a {kind} entry needs {key!r}", entry_id=entry_id, field=key
                )
    optional = {key: attr for attr, key, required in cls._FIELDS if not required}
    set_aside = False
    while True:
        extra = {k: v for k, v in obj.items() if k not in taken}
        token = _SETTING_ASIDE.set(True) if set_aside else None
        try:
            return cls(  # type: ignore[return-value]  # cls is one of the kinds
                id=entry_id,
                parent_id=obj["parentId"],
                timestamp=obj["timestamp"],
                extra=extra or None,
                **kwargs,
            )
        except InvalidMessageError as exc:
            # `where` names the field, or a place inside it ("content[0]").
            field = exc.where.partition("[")[0]
            if keep_invalid and field in optional and field in taken:
                kwargs[optional[field]] = None
                taken.discard(field)
                set_aside = True
                continue
            raise InvalidEntryError(f"{exc.where}: {exc.reason}", entry_id=entry_id) from None
        except InvalidEntryError as exc:
            if keep_invalid and exc.field in optional and exc.field in taken:
                kwargs[optional[exc.field]] = None
                taken.discard(exc.field)
                set_aside = True
                continue
            if exc.entry_id is None:
                raise InvalidEntryError(exc.reason, entry_id=entry_id, field=exc.field) from None
            raise
        finally:
            if token is not None:
                _SETTING_ASIDE.reset(token)
