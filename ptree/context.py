"""What an agent sends to its model: :func:`build_context` and :func:`to_provider_messages`.

Two steps, as in Pi.  :func:`build_context` turns a tree, at its leaf or at any entry,
into Pi's *agent-level* messages (stored messages as they are, plus the synthesised
``compactionSummary``, ``branchSummary`` and ``custom`` messages) together with the state
the path sets (model, thinking level, active tools).  :func:`to_provider_messages` turns
those into plain chat messages (``user``, ``assistant``, ``toolResult``) for a provider.

The semantics are those of Pi's ``buildSessionContext`` and ``convertToLlm``; see
``docs/pi-session-format.md`` in the shared folder.  Where ptree differs, the docstring
says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, NoReturn, SupportsIndex, cast, overload

import attrs

from .entries import (
    SHAPE_ASSISTANT,
    SHAPE_NO_CONTENT,
    SHAPE_OTHER,
    SHAPE_SYSTEM,
    ActiveToolsChange,
    BranchSummary,
    Compaction,
    ContextEdit,
    CustomMessage,
    Entry,
    MessageEntry,
    ModelChange,
    ThinkingLevelChange,
)
from .errors import InvalidMessageError
from .frozen import FrozenDict, FrozenList, Message, freeze, frozen_dict_unchecked
from .js import UNDEFINED as _UNDEFINED
from .js import template, truthy
from .tree import SessionTree

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "Context",
    "Messages",
    "ModelRef",
    "PiVersion",
    "build_context",
    "current_system_message",
    "iso_to_ms",
    "to_provider_messages",
]

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
"""What Pi puts before a compaction summary when it becomes a user message."""
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
"""What Pi puts after a compaction summary."""
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
"""What Pi puts before a branch summary when it becomes a user message."""
BRANCH_SUMMARY_SUFFIX = "</summary>"
"""What Pi puts after a branch summary (Pi writes no newline before it)."""


@attrs.frozen(weakref_slot=False)
class ModelRef:
    """A model as a session names it: the provider and the model id.

    Pi's ``{provider, modelId}``.  Unpacks like a pair.

    Attributes:
        provider: the provider's name, ``"anthropic"``.
        model_id: the model's id at that provider.

    >>> provider, model_id = ModelRef("anthropic", "claude-opus-4-5")
    >>> provider, model_id
    ('anthropic', 'claude-opus-4-5')
    """

    provider: str
    model_id: str

    def __iter__(self) -> Any:
        return iter((self.provider, self.model_id))


class Messages(Sequence[dict[str, Any]]):
    """A context's messages: a sequence that stands for the tuple of them, each stored
    message read when first asked for.

    What :attr:`Context.messages` holds.  :func:`build_context` keeps, for each message
    the context gives as stored, the entry that holds it; the message is read (on a
    loaded session, decoded from the file's bytes) the first time someone asks for it,
    and it is the entry's own message, never a copy: the entry keeps it for every later
    read.  So building a context costs the walk of the path and nothing per message,
    and asking for the last message reads that one alone.

    A value, like the tuple of its messages it stands for: immutable; ``==`` to that
    tuple (on either side of ``==``) and to any ``Messages`` of equal messages; hashes,
    prints (``repr``) and pickles as that tuple does (unpickled, it holds the messages
    read); a slice is a ``Messages``, and so is ``+`` with a tuple or another
    ``Messages``, and ``*``; ``len``, ``in``, iteration, ``reversed``, ``index`` and
    ``count`` as on a tuple.  A :class:`collections.abc.Sequence`, **not a tuple**:
    ``json.dumps`` wants ``list(messages)`` (or ``default=list``), and ``isinstance(m,
    tuple)`` is false.  Threads may read one concurrently: every thread gets the same
    object for a message (its entry hands out only the first value decoded).

    Cost: making one from an iterable is O(length); reading a message is O(1), plus
    decoding it the first time (O(its size)); ``==``, ``hash``, ``repr`` and pickling
    read every message (``==`` stops at the first difference, and two contexts of the
    same tree compare their shared entries without reading them).

    Args:
        messages: the messages, any iterable, oldest first (kept as they are: a
            ``dict`` given stays that ``dict``).

    Raises:
        InvalidMessageError: an item is a :class:`~ptree.MessageEntry`, which is not a
            message (give its ``message``).

    >>> from ptree import SessionTree, build_context
    >>> t = SessionTree().append({"role": "user", "content": "hi"})
    >>> messages = build_context(t).messages
    >>> messages
    ({'role': 'user', 'content': 'hi'},)
    >>> messages == ({"role": "user", "content": "hi"},), messages[-1]["content"]
    (True, 'hi')
    >>> import json
    >>> json.dumps(list(messages))
    '[{"role": "user", "content": "hi"}]'
    """

    __slots__ = ("_items",)

    # One item per message: a MessageEntry stands for its own stored message (read on
    # access); anything else is the message itself.  The public constructor refuses
    # MessageEntry items, so no item is ambiguous.
    _items: tuple[Any, ...]

    def __new__(cls, messages: Iterable[dict[str, Any]] = ()) -> Messages:
        if type(messages) is Messages:
            return messages
        items = messages if type(messages) is tuple else tuple(messages)
        if any(issubclass(t, MessageEntry) for t in set(map(type, items))):
            i = next(i for i, m in enumerate(items) if isinstance(m, MessageEntry))
            raise InvalidMessageError(
                f"messages[{i}]", "a MessageEntry is not a message: give its message"
            )
        return cls._of(items)

    def __init__(self, messages: Iterable[dict[str, Any]] = ()) -> None:
        pass  # everything happened in __new__ (the walk's constructor skips both)

    @classmethod
    def _of(cls, items: tuple[Any, ...]) -> Messages:
        """The messages of these items (a MessageEntry standing for its message), no
        check: the context walk's constructor.  O(1)."""
        self = _new_object(cls)
        _set_items(self, items)
        return self

    def sources(self) -> tuple[Any, ...]:
        """Internal interface for writers: where each message comes from, none read.

        One item per message, in order: a :class:`~ptree.MessageEntry` stands for its
        own message exactly as stored (the message is ``entry.message``, the same
        object); any other item is the message itself (synthesised from a summary,
        custom message or checkpoint, filled in, changed by an edit, or given to the
        constructor, which refuses a ``MessageEntry``).  ``ptree path`` writes a
        loaded message from its JSON bytes this way, without decoding it.  O(1).
        """
        return self._items

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: SupportsIndex) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> Messages: ...

    def __getitem__(self, index: SupportsIndex | slice) -> dict[str, Any] | Messages:
        if isinstance(index, slice):
            return Messages._of(self._items[index])
        item = self._items[index]
        return item.message if isinstance(item, MessageEntry) else item

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for item in self._items:
            yield item.message if isinstance(item, MessageEntry) else item

    def __reversed__(self) -> Iterator[dict[str, Any]]:
        for item in reversed(self._items):
            yield item.message if isinstance(item, MessageEntry) else item

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Messages):
            if other is self:
                return True
            theirs: tuple[Any, ...] = other._items
            same_kind = True  # an entry on both sides stands for its message on both
        elif isinstance(other, tuple):
            theirs, same_kind = other, False
        else:
            return NotImplemented
        mine = self._items
        if len(mine) != len(theirs):
            return False
        for a, b in zip(mine, theirs, strict=True):
            if a is b and same_kind:
                continue  # the same entry, or the same message: equal without a read
            x = a.message if isinstance(a, MessageEntry) else a
            if same_kind and isinstance(b, MessageEntry):
                b = b.message
            if not (x is b or x == b):
                return False
        return True

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Messages, (tuple(self),))

    def __copy__(self) -> Messages:
        return self

    def __add__(self, other: object) -> Messages:
        if isinstance(other, Messages):
            return Messages._of(self._items + other._items)
        if isinstance(other, tuple):
            return Messages._of(self._items + Messages(other)._items)
        return NotImplemented

    def __radd__(self, other: object) -> Messages:
        if isinstance(other, tuple):
            return Messages._of(Messages(other)._items + self._items)
        return NotImplemented

    def __mul__(self, n: SupportsIndex) -> Messages:
        return Messages._of(self._items * n)

    __rmul__ = __mul__

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError("Messages is immutable: build a new value instead")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("Messages is immutable: build a new value instead")


_new_object = object.__new__
_set_items = Messages.__dict__["_items"].__set__


def _messages_of(messages: Iterable[dict[str, Any]]) -> Messages:
    return messages if type(messages) is Messages else Messages(messages)


@attrs.frozen(weakref_slot=False)
class Context:
    """What an agent gives its model at one point of the tree.

    Attributes:
        messages: Pi's agent-level messages, oldest first, as :class:`Messages` (any
            iterable given is made one): a sequence that stands for the tuple of them,
            ``==`` to it, hashing and printing like it, whose stored messages are read
            when first asked for.  **Not a tuple** (it was one before issue 26):
            ``json.dumps(list(context.messages))``.  Each message is a ``dict`` (a
            :class:`~ptree.FrozenDict`: the stored message itself, never a copy, or
            a message synthesised from a summary or custom-message entry), so building
            a context reads and copies no message.  The messages refuse changes;
            ``ptree.thaw(context.messages)`` gives plain, mutable copies for code
            that wants to change them.
        model: the model the path last set (a ``model_change`` entry or an assistant
            message's ``provider``/``model``), or ``None`` (none set, or the latest
            assistant message names none).
        thinking_level: the thinking level the path last set; ``"off"`` by default.
        active_tools: the tool names the path last set (Pi's harness), or ``None``.
        leaf_id: the entry the context was built at (``None``: no leaf).

    A context is a value: it compares with ``==`` and hashes like the messages in it
    (a context of a tuple of messages equals one of the same messages read from a
    tree).
    """

    messages: Messages = attrs.field(converter=_messages_of)
    model: ModelRef | None = None
    thinking_level: str = "off"
    active_tools: tuple[str, ...] | None = None
    leaf_id: str | None = None

    def __getstate__(self) -> dict[str, object]:
        """The fields by name, as attrs pickles a slotted class."""
        return {name: getattr(self, name) for name in _CONTEXT_FIELDS}

    def __setstate__(self, state: dict[str, object] | tuple[object, ...]) -> None:
        """Unpickles a context, its messages a :class:`Messages` as the constructor
        makes them: one pickled before issue 26 holds a tuple (unpickling runs no
        converter).  ``state``: the fields by name, or in order (older attrs)."""
        if isinstance(state, dict):
            items: Iterable[tuple[str, object]] = state.items()
        else:
            items = zip(_CONTEXT_FIELDS, state, strict=True)
        for name, value in items:
            if name == "messages":
                value = _messages_of(value)  # type: ignore[arg-type]
            object.__setattr__(self, name, value)


_CONTEXT_FIELDS = tuple(f.name for f in attrs.fields(Context))


# JavaScript's date-time string format (ECMA-262, "Date Time String Format"), as V8
# reads it: a 4-digit or signed 6-digit year, optional month and day, optional time
# after `T` (either case) with optional seconds and a fraction of any length, and an
# optional `Z` (either case) or +hh:mm / +hhmm offset.  A space instead of the `T` is
# read by V8's fallback parser, alike for four-digit years from 0100 on.
_ES_DATE = re.compile(
    r"(?P<year>[+-]\d{6}|\d{4})(?:-(?P<month>\d{2})(?:-(?P<day>\d{2}))?)?"
    r"(?:(?P<sep>[Tt ])(?P<hour>\d{2}):(?P<minute>\d{2})"
    r"(?::(?P<second>\d{2})(?:\.(?P<fraction>\d+))?)?"
    r"(?:[Zz]|(?P<sign>[+-])(?P<zone_hour>\d{2}):?(?P<zone_minute>\d{2}))?)?",
    re.ASCII,
)
_MS_PER_DAY = 86_400_000
_MAX_TIME = 8_640_000_000_000_000  # JavaScript's largest time value, in ms either way


def _days_before_month(year: int, month: int) -> int:
    """Days from 1970-01-01 to the first of ``month`` of ``year`` (proleptic Gregorian)."""
    # Count years from March so that the leap day ends a year (Hinnant's days_from_civil).
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468


def iso_to_ms(timestamp: str) -> int | None:
    """Unix milliseconds of an ISO-8601 time, as JavaScript's ``new Date(text).getTime()``.

    Pi stores entry times as ISO text but puts milliseconds into the messages it
    synthesises.  This reads JavaScript's date-time format as V8 does: ``2026``,
    ``2026-01``, ``2026-01-01``, each optionally followed by ``T`` (or ``t``, or a
    space) and ``hh:mm``, ``hh:mm:ss`` or ``hh:mm:ss.f…`` (any number of digits, cut
    to milliseconds) and ``Z``, ``±hh:mm`` or ``±hhmm``; years ``±yyyyyy``; ``24:00``
    as the end of the day; a day up to 31 in any month, rolling over (``02-30`` is
    in March).  Anything else gives ``None``, as does a time out of JavaScript's
    range: JavaScript's ``NaN``, which ``JSON.stringify`` writes as ``null``.

    Where it differs from JavaScript: a time of day without an offset is read as UTC
    (JavaScript reads it as the machine's local time); text outside the format that
    V8's lenient fallback parser still guesses at (``"Thu, 01 Jan 2026"``, ``"1"``)
    gives ``None``.  Cost: O(length of the text).

    Args:
        timestamp: the text to read (anything that is not a ``str`` gives ``None``).

    Returns:
        The milliseconds since 1970-01-01T00:00Z, or ``None`` where JavaScript gives
        ``NaN``.

    >>> iso_to_ms("2025-12-09T00:53:29.825Z"), iso_to_ms("yesterday")
    (1765241609825, None)
    >>> iso_to_ms("2026-01-01T00:00+01:00"), iso_to_ms("20260101T000000Z")
    (1767222000000, None)
    """
    if type(timestamp) is not str:
        return None
    m = _ES_DATE.fullmatch(timestamp)
    if m is None:
        return None
    year_text = m["year"]
    if year_text == "-000000" or (m["sep"] == " " and (len(year_text) > 4 or year_text < "0100")):
        return None
    month = int(m["month"] or 1)
    day = int(m["day"] or 1)
    hour = int(m["hour"] or 0)
    minute = int(m["minute"] or 0)
    second = int(m["second"] or 0)
    fraction = m["fraction"] or ""
    if not (1 <= month <= 12 and 1 <= day <= 31 and minute <= 59 and second <= 59):
        return None
    if hour > 24 or (hour == 24 and (minute or second or fraction.strip("0"))):
        return None
    ms = (
        (_days_before_month(int(year_text), month) + day - 1) * _MS_PER_DAY
        + ((hour * 60 + minute) * 60 + second) * 1000
        + int((fraction + "00")[:3])
    )
    if m["sign"]:
        zone_hour = int(m["zone_hour"])
        zone_minute = int(m["zone_minute"])
        if zone_hour > 23 or zone_minute > 59:
            return None
        offset = (zone_hour * 60 + zone_minute) * 60_000
        ms += -offset if m["sign"] == "+" else offset
    return ms if -_MAX_TIME <= ms <= _MAX_TIME else None


# --------------------------------------------------------------------- synthesised messages

PiVersion = Literal["1.6", "0.73.1"]
"""The Pi release whose meaning :func:`build_context` and :func:`to_provider_messages`
follow: ``"1.6"`` (``@earendil-works/pi-coding-agent`` 1.6, the default) or ``"0.73.1"``
(``@mariozechner/pi-coding-agent`` 0.73.1, the last release under the old name)."""

_VERSIONS = ("1.6", "0.73.1")


def _check_version(pi: object) -> bool:
    """Whether ``pi`` asks for 1.6's meaning; raises ValueError for an unknown one."""
    if pi == "1.6":
        return True
    if pi == "0.73.1":
        return False
    raise ValueError(f"pi must be one of {_VERSIONS}, not {pi!r}")


@attrs.frozen(weakref_slot=False)
class _Policy:
    """What one Pi release's context does, as data; the one walk reads it.

    Pi 0.73.1 and Pi 1.6 select and turn entries into messages alike but for these
    (``docs/pi-1.6-changes.md``): 1.6 fills a missing content in (``fills_content``),
    leaves system messages out of a compaction's kept range (``drops_kept_system``),
    applies ``context_edit`` entries (``edits``) and gives a compaction's
    ``systemMessage`` checkpoint before its summary (``checkpoint``).
    """

    fills_content: bool
    drops_kept_system: bool
    edits: bool
    checkpoint: bool
    # The shape flags (ptree.entries) of the entries that give more, or other, than
    # their stored message: outside a kept range, and inside one.
    mask: int = attrs.field(init=False)
    kept_mask: int = attrs.field(init=False)

    @mask.default
    def _mask(self) -> int:
        return SHAPE_OTHER | (SHAPE_NO_CONTENT if self.fills_content else 0)

    @kept_mask.default
    def _kept_mask(self) -> int:
        return self.mask | (SHAPE_SYSTEM if self.drops_kept_system else 0)


_POLICIES = {
    "1.6": _Policy(fills_content=True, drops_kept_system=True, edits=True, checkpoint=True),
    "0.73.1": _Policy(fills_content=False, drops_kept_system=False, edits=False, checkpoint=False),
}


def _policy(pi: object) -> _Policy:
    _check_version(pi)
    return _POLICIES["1.6" if _check_version(pi) else "0.73.1"]


_EMPTY_LIST = FrozenList()
# Pi 1.6 gives a message without content (null or absent) this content in the context.
_NO_CONTENT: dict[str, Any] = {
    "system": "",
    "user": _EMPTY_LIST,
    "assistant": _EMPTY_LIST,
    "toolResult": _EMPTY_LIST,
}
_EDITABLE = frozenset({"user", "assistant", "toolResult", "custom"})
_BLOCK_ROLES = frozenset({"assistant", "toolResult"})


def _aside(entry: Entry, key: str, value: Any) -> Any:
    """An optional field as Pi reads it: ``value``, or when it is ``None`` what the
    lenient loader set aside under ``key`` (a ``null`` or a value of the wrong type,
    kept as it was), or ``_UNDEFINED`` when the line has no such field."""
    if value is None:
        return entry.extra.get(key, _UNDEFINED)
    return value


def _custom_message(entry: CustomMessage, policy: _Policy) -> FrozenDict:
    """Pi's ``createCustomMessage`` of a custom message entry."""
    out: dict[str, Any] = {"role": "custom", "customType": entry.custom_type}
    content = _aside(entry, "content", entry.content)
    if policy.fills_content and (content is None or content is _UNDEFINED):
        content = _EMPTY_LIST  # Pi 1.6: `entry.content ?? []`
    # Pi copies each field even when undefined, and JSON drops an undefined field: so
    # each is present exactly when the entry's line has it, with the line's value.
    for key, value in (
        ("content", content),
        ("display", _aside(entry, "display", entry.display)),
        ("details", _aside(entry, "details", entry.details)),
    ):
        if value is not _UNDEFINED:
            out[key] = value
    out["timestamp"] = iso_to_ms(entry.timestamp)
    return frozen_dict_unchecked(out)


def _summary_message(
    role: str, entry: BranchSummary | Compaction, key: str, value: object
) -> FrozenDict:
    """Pi's ``createBranchSummaryMessage`` and ``createCompactionSummaryMessage``: the
    role, the summary, the one field of the entry each adds (``key``), the time."""
    return frozen_dict_unchecked(
        {
            "role": role,
            "summary": entry.summary,
            key: value,
            "timestamp": iso_to_ms(entry.timestamp),
        }
    )


def _assistant_model(message: Mapping[str, Any]) -> ModelRef | None:
    provider = message.get("provider")
    model = message.get("model")
    if type(provider) is str and type(model) is str:
        return ModelRef(provider, model)
    return None


def _entry_messages(e: Entry, policy: _Policy, head: bool) -> list[Any]:
    """The messages one selected entry gives (Pi's ``sessionEntryToContextMessages``):
    the one owner of that rule.  ``head``: ``e`` is the latest compaction, which
    stands first in the selection (an older compaction gives nothing).  A message
    entry whose shape the policy does not call special gives its stored message: the
    walk adds those itself, many at a time (see :func:`_select`)."""
    if isinstance(e, MessageEntry):
        message = e.message
        if policy.fills_content and message.get("content") is None:
            role = message.get("role")
            if role in _NO_CONTENT:
                return [frozen_dict_unchecked({**message, "content": _NO_CONTENT[role]})]
        return [message]
    if isinstance(e, CustomMessage):
        return [_custom_message(e, policy)]
    if isinstance(e, BranchSummary):
        if not e.summary:
            return []
        return [_summary_message("branchSummary", e, "fromId", e.from_id)]
    if isinstance(e, Compaction) and head:
        summary = _summary_message("compactionSummary", e, "tokensBefore", e.tokens_before)
        # Pi 1.6: `entry.systemMessage ? [systemMessage, summary] : [summary]`; a
        # value the lenient loader set aside counts as Pi reads it.
        checkpoint = _aside(e, "systemMessage", e.system_message)
        if policy.checkpoint and checkpoint is not _UNDEFINED and truthy(checkpoint):
            return [checkpoint, summary]
        return [summary]
    return []


def _edited(messages: list[Any], edit: ContextEdit) -> list[Any]:
    """An entry's messages with a context edit applied, as Pi 1.6 applies it."""
    replacement = edit.replacement
    if replacement is None:
        return []
    content = replacement.get("content", _UNDEFINED)
    out = []
    for m in messages:
        role = m.get("role") if isinstance(m, Mapping) else None
        if role in _EDITABLE:
            new: dict[str, Any] = dict(m)
            value = content
            if type(value) is str and role in _BLOCK_ROLES:
                value = _text_block(value)
            if value is _UNDEFINED:
                new.pop("content", None)
            else:
                new["content"] = value
            m = frozen_dict_unchecked(new)
        out.append(m)
    return out


class _Walk:
    """One backward walk of a path (the one selection algorithm; see :func:`_select`).

    Walking from the leaf towards the root, the first compaction met is the latest,
    and the first value of each setting met is the one that holds; nothing dropped is
    ever collected.  ``out`` gets the context's items latest first: a message entry
    standing for its stored message (read only when the context's reader asks for it),
    or a message; ``owners`` names the entry of each other item (by its place in
    ``out``), for the edits.
    """

    __slots__ = (
        "edits",
        "mask",
        "model",
        "model_set",
        "out",
        "owners",
        "policy",
        "thinking",
        "tools",
        "tools_set",
    )

    def __init__(self, policy: _Policy) -> None:
        self.policy = policy
        self.out: list[Any] = []
        self.owners: dict[int, str] = {}
        self.edits: dict[str, ContextEdit] = {}
        self.model: ModelRef | None = None
        # The latest model setter may name no model (an assistant message without
        # provider and model), so whether one was met is kept apart from the value.
        self.model_set = False
        self.thinking: str | None = None
        self.tools: tuple[str, ...] | None = None
        self.tools_set = False
        # Until the model is known, assistant messages are looked at too.
        self.mask = policy.mask | SHAPE_ASSISTANT

    def collect(self, e: Entry | None, end: Entry | None, kept: bool) -> Compaction | None:
        """Collect from ``e`` back to ``end`` (an ancestor, or ``None``), excluded.

        Outside the kept range the walk stops at a compaction and returns it; in the
        kept range (``kept``) an older compaction gives nothing.  The hot loop: a
        shape test and an append per plain message (its entry: nothing read).
        """
        out = self.out
        add = out.append
        mask = self.mask | self.policy.kept_mask if kept else self.mask
        run = _compiled_walk
        # Any: ``e`` is an entry until it is ``end``, and only a message entry has no
        # bit of the mask set (SHAPE_OTHER is in every mask); mypy cannot follow that.
        e_: Any = e
        while e_ is not end:
            if run is not None:  # the runs of plain messages in C: the same items
                e_ = run(out, e_, end, mask)
                if e_ is end:
                    break
            if not e_.shape & mask:
                add(e_)
            elif self.special(e_, kept):
                return cast(Compaction, e_)
            else:  # the model may have been found: the mask may be smaller now
                mask = self.mask | self.policy.kept_mask if kept else self.mask
            e_ = e_.parent_entry
        return None

    def special(self, e: Entry, kept: bool) -> bool:
        """Take an entry the mask picked out; true when it is the latest compaction."""
        policy = self.policy
        if isinstance(e, MessageEntry):
            shape = e.shape
            if shape & SHAPE_ASSISTANT and not self.model_set:
                self.found_model(_assistant_model(e.message))
            if kept and policy.drops_kept_system and shape & SHAPE_SYSTEM:
                return False  # not selected: the checkpoint stands for it
            if policy.fills_content and shape & SHAPE_NO_CONTENT:
                self.give(e, _entry_messages(e, policy, head=False))
            else:
                self.out.append(e)
            return False
        if isinstance(e, Compaction):
            return not kept  # in the kept range, an older compaction gives nothing
        if isinstance(e, ContextEdit):
            if policy.edits:
                self.edits.setdefault(e.target_id, e)  # the first met is the latest
            return False
        self.setting(e)
        if isinstance(e, (CustomMessage, BranchSummary)):
            self.give(e, _entry_messages(e, policy, head=False))
        return False

    def give(self, e: Entry, messages: list[Any]) -> None:
        """Add an entry's messages (latest first), noting whose they are."""
        out = self.out
        for m in reversed(messages):
            self.owners[len(out)] = e.id
            out.append(m)

    def found_model(self, model: ModelRef | None) -> None:
        self.model = model
        self.model_set = True
        self.mask = self.policy.mask

    def setting(self, e: Entry) -> None:
        """Take the setting an entry other than a message sets, unless a later one did."""
        if isinstance(e, ThinkingLevelChange):
            if self.thinking is None:
                self.thinking = e.thinking_level
        elif isinstance(e, ModelChange):
            if not self.model_set:
                self.found_model(ModelRef(e.provider, e.model_id))
        elif isinstance(e, ActiveToolsChange) and not self.tools_set:
            self.tools = tuple(e.active_tool_names)
            self.tools_set = True

    def settle(self, e: Entry | None) -> None:
        """The settings over the rest of the path (back to the root), collecting
        nothing; stops once every setting is known."""
        mask = SHAPE_OTHER if self.model_set else SHAPE_OTHER | SHAPE_ASSISTANT
        run = _compiled_walk
        e_: Any = e  # Any: as in collect()
        while e_ is not None:
            if run is not None:  # past the plain messages in C, as collect()
                e_ = run(None, e_, None, mask)
                if e_ is None:
                    break
            if e_.shape & mask:
                if isinstance(e_, MessageEntry):
                    self.found_model(_assistant_model(e_.message))
                else:
                    self.setting(e_)
                if self.model_set:
                    if self.thinking is not None and self.tools_set:
                        return
                    mask = SHAPE_OTHER
            e_ = e_.parent_entry


# The walk's runs of plain messages in C, where the extension is built (ptree/_cfrozen.c,
# ``walk_plain``): it is handed MessageEntry, its shape slot and the ``shape`` that
# reads it, so the layout keeps one owner.  It takes only what collect() and settle()
# would take without a second look and stops at anything else, which they then take
# as ever; None: the Python loops alone (the same contexts;
# tests/test_context_compiled.py compares them).
_compiled_walk: Callable[[list[Any] | None, Entry | None, Entry | None, int], Any] | None
_WALK_REFUSED = ""
try:
    from ._cfrozen import setup_walk
    from ._cfrozen import walk_plain as _compiled_walk
except ImportError:  # pragma: no cover - built where a C compiler is found
    _compiled_walk = None
    _WALK_REFUSED = "ptree._cfrozen was not built here"
else:
    try:
        setup_walk(MessageEntry, MessageEntry.__dict__["_shape"], MessageEntry.__dict__["shape"])
    except TypeError as exc:  # pragma: no cover - a layout change
        _compiled_walk = None
        _WALK_REFUSED = f"ptree._cfrozen.setup_walk refused the layout: {exc}"


def _select(
    tree: SessionTree, start: Entry, policy: _Policy
) -> tuple[list[Any], tuple[ModelRef | None, str, tuple[str, ...] | None, str]]:
    """The context's items at ``start`` (a message given as stored stands as its
    entry: see :class:`Messages`), then the rest of the value (model, thinking level,
    active tools, leaf): the one algorithm under :func:`build_context`, for both Pi
    releases (``policy``).

    As Pi 1.6's ``buildSessionProjection``: without a compaction on the path, every
    entry of it is selected; otherwise only the latest compaction C counts: C, the
    entries from C's first kept entry up to C (the kept range), and those after C.
    Edits among the selected entries apply to their targets, the latest per target.
    Each selected entry gives its messages (:func:`_entry_messages`).

    Cost: one walk from ``start`` back to the root: per plain message a shape test
    and an append; the rest (other entries, messages to fill in, the latest
    assistant message) looked at one by one.  When the selection holds context edits
    (rare), one pass over the items applies them.
    """
    walk = _walk(tree, start, policy)
    fields = (
        walk.model,
        "off" if walk.thinking is None else walk.thinking,
        walk.tools,
        start.id,
    )
    out = walk.out
    if walk.edits:
        out = _edited_items(out, walk.owners, walk.edits)
    out.reverse()
    return out, fields


def _walk(tree: SessionTree, start: Entry, policy: _Policy) -> _Walk:
    """The walk of :func:`_select`: after the latest compaction, its kept range, then
    the settings over the rest of the path."""
    walk = _Walk(policy)
    head = walk.collect(start, None, kept=False)
    if head is not None:
        first = _first_kept(tree, head)
        rest: Entry | None = head.parent_entry
        if first is not None:
            walk.collect(rest, first.parent_entry, kept=True)
            rest = first.parent_entry
        walk.settle(rest)
        walk.give(head, _entry_messages(head, policy, head=True))
    return walk


def _edited_items(
    out: list[Any], owners: Mapping[int, str], edits: Mapping[str, ContextEdit]
) -> list[Any]:
    """A walk's items (latest first, entries standing for their messages) with the
    edits applied to their targets' messages.  O(items)."""
    done: list[Any] = []
    i, n = 0, len(out)
    while i < n:
        item = out[i]
        owner = item.id if isinstance(item, MessageEntry) else owners.get(i)
        j = i + 1
        if owner is not None:
            while j < n and owners.get(j) == owner:  # the rest of that entry's messages
                j += 1
        edit = None if owner is None else edits.get(owner)
        if edit is None:
            done.extend(out[i:j])
        else:
            messages = [m.message if isinstance(m, MessageEntry) else m for m in out[i:j]]
            messages.reverse()
            edited = _edited(messages, edit)
            edited.reverse()
            done.extend(edited)
        i = j
    return done


def _first_kept(tree: SessionTree, compaction: Compaction) -> Entry | None:
    """``compaction``'s first kept entry if it is on the path before it, else ``None``
    (missing, ``None``, the compaction itself: nothing kept).  O(length of the kept range).
    """
    first_id = compaction.first_kept_entry_id
    first = None if first_id is None else tree.get(first_id)
    if first is None or first.depth >= compaction.depth:
        return None
    e: Entry | None = compaction
    depth = first.depth
    while e is not None and e.depth > depth:
        e = e.parent_entry
    return first if e is first else None


def build_context(tree: SessionTree, leaf: str | None = None, *, pi: PiVersion = "1.6") -> Context:
    """The context a model is given at ``leaf`` (default: the tree's leaf), as Pi builds it.

    As Pi 1.6's ``buildSessionContext`` (``pi="1.6"``, the default), in three steps:

    1. **Selection.** The path runs from the root to ``leaf``.  Without a compaction on
       it, every entry of the path is selected.  Otherwise only the latest compaction
       C counts: C, then the entries from C's ``firstKeptEntryId`` up to just before C
       (leaving out system messages, which C's checkpoint stands for), then the
       entries after C.  A ``firstKeptEntryId`` that is missing, ``null``, C's own id
       or not on the path before C keeps nothing from before C.
    2. **Edits.** Each :class:`~ptree.ContextEdit` among the selected entries applies
       to its target, the latest one per target winning; an edit outside the
       selection (on another branch, or summarised by C) does nothing.
    3. **Messages**, in selection order: a ``message`` entry's message as stored (a
       ``null`` or absent ``content`` given as ``""`` for role ``system`` and ``[]``
       for ``user``, ``assistant`` and ``toolResult``); a ``custom_message`` as
       ``{"role": "custom", "customType", "content", "display"?, "details"?,
       "timestamp": ms}`` (``content`` ``[]`` when it has none); a ``branch_summary``
       with a non-empty summary as ``{"role": "branchSummary", "summary", "fromId",
       "timestamp": ms}``; C as its ``systemMessage`` checkpoint (if it has one) and
       ``{"role": "compactionSummary", "summary", "tokensBefore", "timestamp": ms}``.
       Other kinds (usage, edits, labels, session info, custom state, unknown kinds,
       older compactions) give nothing.  An edit whose replacement is ``null`` removes
       all its target's messages; otherwise each of them with role ``user``,
       ``assistant``, ``toolResult`` or ``custom`` gets the new content (a string made
       one text block for ``assistant`` and ``toolResult``), all else kept.

    State resolves over the whole path, the last value winning: the thinking level
    (default ``"off"``), the model (set by ``model_change`` entries *and* by every
    assistant message, from its ``provider`` and ``model``), and the active tools
    (Pi's harness).  An assistant message without a string ``provider`` and ``model``
    still sets the model, to ``None``: Pi sets one with undefined fields, which names
    no model.

    A field the lenient loader set aside for its type (``load(strict=False)``: a
    custom message's ``display`` or ``content``, a compaction's ``systemMessage``)
    reaches the messages as Pi passes it, even a checkpoint that is no object.

    With ``pi="0.73.1"``, as Pi 0.73.1: no edits (a ``context_edit`` gives nothing),
    system messages in the kept range stay, no checkpoint, and contents are given as
    stored.  On files both versions read, the two agree everywhere else.

    Where ptree differs from Pi: an unknown ``leaf`` raises instead of falling back to
    the last entry; timestamps without an offset are read as UTC (see
    :func:`iso_to_ms`).

    Cost: O(path length), iterative: one walk from the leaf back to the root, which
    meets the latest compaction first and so never collects what it dropped (a second
    pass over the items when the selection holds context edits).  No stored message
    is read or copied: the context's :class:`Messages` reads each when first asked
    for.  The walk itself reads only the latest assistant message (for the model)
    and those an edit changes or whose content is missing (a new message each).
    Where the C extension is built, the runs of plain messages between the entries
    that need a look are walked in C (at depth 10^5, about half a bare Python walk of
    the path; ``benchmarks/context_depth.py``); without it, about 2-2.5x that walk.

    Args:
        tree: the tree.
        leaf: the id of the entry to build the context at; ``None`` for the tree's
            leaf (a tree without a leaf gives an empty context).
        pi: the Pi release whose meaning to follow (:data:`PiVersion`).

    Raises:
        UnknownEntryError: no entry has the id ``leaf``.
        ValueError: ``pi`` is not a known release.

    >>> from ptree import SessionTree
    >>> t = SessionTree().append_model_change("anthropic", "claude-sonnet-4-5")
    >>> t = t.append({"role": "user", "content": "hi"}, id="q")
    >>> t = t.append_thinking_level_change("high")
    >>> ctx = build_context(t)
    >>> ctx.messages, ctx.model, ctx.thinking_level
    (({'role': 'user', 'content': 'hi'},), ModelRef(provider='anthropic', model_id='claude-sonnet-4-5'), 'high')
    >>> build_context(t.append_context_edit("q", "hello")).messages
    ({'role': 'user', 'content': 'hello'},)
    """  # noqa: E501
    policy = _policy(pi)
    start = tree.leaf if leaf is None else tree[leaf]
    if start is None:
        return Context(_NO_MESSAGES)
    items, fields = _select(tree, start, policy)
    return Context(Messages._of(tuple(items)), *fields)


_NO_MESSAGES = Messages()


def current_system_message(messages: Iterable[Mapping[str, Any]]) -> FrozenDict | None:
    r"""The system prompt and tools after replaying every system message (Pi's fold).

    As Pi 1.6's ``getCurrentSystemMessage`` (``@earendil-works/pi-ai``), which Pi's
    ``appendCompaction`` stores as a compaction's ``systemMessage``: the non-empty
    texts of the system messages' contents (a list's text blocks joined with
    ``\n``) joined with a blank line; their ``sections`` set, or removed by a
    ``null``, by name in order; their tools removed (``toolsRemoved``, by name) and
    then added (``toolsAdded``, a later declaration of a name replacing the earlier
    one); the first ``timestamp`` found.  ``sections`` and ``toolsAdded`` appear only
    when not empty.  ``None`` when no system message has a timestamp and no tool is
    left.  Other messages are ignored (a context's :class:`Messages` reads none of its
    stored ones that are not system messages).  Cost: O(number of messages + size of
    the system messages).

    Args:
        messages: the messages, oldest first; those that are not system messages
            are ignored.

    >>> current_system_message([
    ...     {"role": "system", "content": "Base.", "sections": {"a": "A"}, "timestamp": 5},
    ...     {"role": "user", "content": "hi"},
    ...     {"role": "system", "content": [{"type": "text", "text": "More."}],
    ...      "sections": {"a": None, "b": "B"}, "toolsAdded": [{"name": "read"}]},
    ... ])
    {'role': 'system', 'content': 'Base.\n\nMore.', 'sections': {'b': 'B'}, 'toolsAdded': [{'name': 'read'}], 'timestamp': 5}
    """  # noqa: E501
    if type(messages) is Messages:
        # A stored message's role is in its entry's shape: the others are never read.
        messages = [
            s.message if isinstance(s, MessageEntry) else s
            for s in messages.sources()
            if not isinstance(s, MessageEntry) or s.shape & SHAPE_SYSTEM
        ]
    texts: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[Any, Any] = {}
    timestamp: Any = None
    for m in messages:
        if m.get("role") != "system":
            continue
        if timestamp is None:
            timestamp = m.get("timestamp")
        text = _content_text(m.get("content"))
        if text:
            texts.append(text)
        patch = m.get("sections")
        if isinstance(patch, Mapping):
            for name, value in patch.items():
                if value is None:
                    sections.pop(name, None)
                else:
                    sections[name] = value
        for tool in _tools(m.get("toolsRemoved")):
            tools.pop(tool.get("name"), None)
        for tool in _tools(m.get("toolsAdded")):
            tools[tool.get("name")] = tool
    if timestamp is None and not tools:
        return None
    out: dict[str, Any] = {"role": "system", "content": "\n\n".join(texts)}
    if sections:
        out["sections"] = sections
    if tools:
        out["toolsAdded"] = list(tools.values())
    out["timestamp"] = 0 if timestamp is None else timestamp
    return cast(FrozenDict, freeze(out))


def _content_text(content: Any) -> str:
    """Pi's ``contentText``: a string, or a list's text blocks joined with newlines."""
    if type(content) is str:
        return content
    if not isinstance(content, (list, tuple)):
        return ""
    return "\n".join(
        "" if b.get("text") is None else template(b["text"])
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "text"
    )


def _tools(value: Any) -> list[Mapping[str, Any]]:
    if not isinstance(value, (list, tuple)):
        return []
    return [t for t in value if isinstance(t, Mapping)]


# --------------------------------------------------------------------- provider messages


def bash_execution_text(message: Message) -> str:
    """The user text Pi gives the model for a ``bashExecution`` message.  O(size).

    >>> print(bash_execution_text({"command": "ls", "output": "a", "exitCode": 2}))
    Ran `ls`
    ```
    a
    ```
    <BLANKLINE>
    Command exited with code 2
    """
    text = f"Ran `{template(message.get('command', _UNDEFINED))}`\n"
    output = message.get("output")
    if truthy(output):
        text += f"```\n{template(output)}\n```"
    else:
        text += "(no output)"
    exit_code = message.get("exitCode")
    if truthy(message.get("cancelled")):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and (type(exit_code) is bool or exit_code != 0):
        # `!== 0` in Pi: false is not 0 there.
        text += f"\n\nCommand exited with code {template(exit_code)}"
    full = message.get("fullOutputPath")
    if truthy(message.get("truncated")) and truthy(full):
        text += f"\n\n[Output truncated. Full output: {template(full)}]"
    return text


def _user(content: Any, message: Mapping[str, Any]) -> FrozenDict:
    out: dict[str, Any] = {"role": "user"}
    # A custom message without content gives Pi's undefined, which JSON leaves out.
    if content is not _UNDEFINED:
        out["content"] = content
    if "timestamp" in message:
        out["timestamp"] = message["timestamp"]
    # Frozen parts, taken as they are: a content MAX_DEPTH deep stays usable here.
    return frozen_dict_unchecked(out)


def _text_block(text: str) -> FrozenList:
    return FrozenList((FrozenDict({"type": "text", "text": text}),))


_PASS = frozenset({"user", "assistant", "toolResult"})
_PASS_16 = frozenset({"system", "user", "assistant", "toolResult"})


def to_provider_messages(
    messages: Iterable[Message],
    *,
    unknown: Literal["drop", "keep", "raise"] = "drop",
    pi: PiVersion = "1.6",
) -> list[dict[str, Any]]:
    """Turn agent-level messages (a :class:`Context`'s) into a provider's chat messages.

    As Pi 1.6's ``convertToLlm``: ``system``, ``user``, ``assistant`` and ``toolResult``
    messages pass through as they are (with ``pi="0.73.1"``, as Pi 0.73.1, ``system``
    messages are dropped like any unknown role); a ``compactionSummary`` or ``branchSummary`` becomes a user
    message whose one text block wraps the summary (:data:`COMPACTION_SUMMARY_PREFIX`
    … :data:`COMPACTION_SUMMARY_SUFFIX`, :data:`BRANCH_SUMMARY_PREFIX` …
    :data:`BRANCH_SUMMARY_SUFFIX`); a ``custom`` message becomes a user message (a
    string content becoming one text block); a ``bashExecution`` becomes a user text
    (:func:`bash_execution_text`) unless its ``excludeFromContext`` is set.  Each keeps
    the ``timestamp`` of the message it came from.  Messages of other roles are dropped.

    The results are frozen dicts like the input (``ptree.thaw`` gives mutable copies).
    Cost: O(number of messages), plus the text of bash messages.

    Args:
        messages: agent-level messages, e.g. ``build_context(tree).messages``.
        unknown: what to do with a message of a role not listed above: ``"drop"`` it
            (Pi's way), ``"keep"`` it as it is, or ``"raise"`` a ``ValueError``.
        pi: the Pi release whose meaning to follow (:data:`PiVersion`).

    Raises:
        ValueError: ``unknown="raise"`` and a message has a role not listed above, or
            ``pi`` is not a known release.

    >>> msgs = [{"role": "compactionSummary", "summary": "S", "tokensBefore": 9},
    ...         {"role": "custom", "customType": "note", "content": "hi", "display": True},
    ...         {"role": "weird"}]
    >>> for m in to_provider_messages(msgs): print(m)
    {'role': 'user', 'content': [{'type': 'text', 'text': 'The conversation history before this point was compacted into the following summary:\\n\\n<summary>\\nS\\n</summary>'}]}
    {'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}]}
    """  # noqa: E501
    if unknown not in ("drop", "keep", "raise"):
        raise ValueError(f"unknown must be 'drop', 'keep' or 'raise', not {unknown!r}")
    passed = _PASS_16 if _check_version(pi) else _PASS
    out: list[dict[str, Any]] = []
    for m in messages:
        # A checkpoint the lenient loader kept may be no object: Pi drops it here.
        role = m.get("role") if isinstance(m, Mapping) else None
        if role in passed:
            out.append(m)  # type: ignore[arg-type]  # a message is a (frozen) dict
        elif role == "compactionSummary":
            summary = template(m.get("summary", _UNDEFINED))
            text = COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX
            out.append(_user(_text_block(text), m))
        elif role == "branchSummary":
            summary = template(m.get("summary", _UNDEFINED))
            text = BRANCH_SUMMARY_PREFIX + summary + BRANCH_SUMMARY_SUFFIX
            out.append(_user(_text_block(text), m))
        elif role == "custom":
            content = m.get("content", _UNDEFINED)
            out.append(_user(_text_block(content) if type(content) is str else content, m))
        elif role == "bashExecution":
            if not truthy(m.get("excludeFromContext")):
                out.append(_user(_text_block(bash_execution_text(m)), m))
        elif unknown == "keep":
            out.append(m)  # type: ignore[arg-type]  # a message is a (frozen) dict
        elif unknown == "raise":
            raise ValueError(f"a message with role {role!r} has no provider form")
    return out
