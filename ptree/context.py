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

import operator
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, cast

import attrs

from .entries import (
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
    "ContextSources",
    "ModelRef",
    "Peek",
    "PiVersion",
    "build_context",
    "context_sources",
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

    >>> provider, model_id = ModelRef("anthropic", "claude-opus-4-5")
    >>> provider, model_id
    ('anthropic', 'claude-opus-4-5')
    """

    provider: str
    model_id: str

    def __iter__(self) -> Any:
        return iter((self.provider, self.model_id))


def _messages_tuple(messages: Iterable[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    return messages if type(messages) is tuple else tuple(messages)


@attrs.frozen(weakref_slot=False)
class Context:
    """What an agent gives its model at one point of the tree.

    Attributes:
        messages: Pi's agent-level messages, oldest first, as a tuple (any iterable
            given is made one).  Each is a ``dict`` (a
            :class:`~ptree.FrozenDict`: the stored message itself, never a copy, or a
            message synthesised from a summary or custom-message entry), so the tuple
            ``json.dumps`` as it is and building it copies no message.  The messages
            refuse changes; ``ptree.thaw(context.messages)`` gives plain, mutable
            copies for code that wants to change them.
        model: the model the path last set (a ``model_change`` entry or an assistant
            message's ``provider``/``model``), or ``None`` (none set, or the latest
            assistant message names none).
        thinking_level: the thinking level the path last set; ``"off"`` by default.
        active_tools: the tool names the path last set (Pi's harness), or ``None``.
        leaf_id: the entry the context was built at (``None``: no leaf).

    A context is a value: it holds tuples, compares with ``==`` and hashes like the
    frozen messages in it.
    """

    messages: tuple[dict[str, Any], ...] = attrs.field(converter=_messages_tuple)
    model: ModelRef | None = None
    thinking_level: str = "off"
    active_tools: tuple[str, ...] | None = None
    leaf_id: str | None = None


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


def _custom_message(entry: CustomMessage, new: bool) -> FrozenDict:
    content: Any = entry.content
    out: dict[str, Any] = {"role": "custom", "customType": entry.custom_type}
    if content is not None:
        out["content"] = content
    elif new:
        out["content"] = _EMPTY_LIST  # Pi 1.6: `entry.content ?? []`
    elif "content" in entry.extra:
        out["content"] = None
    # Pi copies display and details even when undefined, and JSON drops an undefined
    # field: so each is present exactly when the entry has it (a null stays null).
    if entry.display is not None:
        out["display"] = entry.display
    elif "display" in entry.extra:
        out["display"] = None
    if entry.details is not None:
        out["details"] = entry.details
    elif "details" in entry.extra:
        out["details"] = None
    out["timestamp"] = iso_to_ms(entry.timestamp)
    return frozen_dict_unchecked(out)


def _branch_summary(entry: BranchSummary) -> FrozenDict:
    return frozen_dict_unchecked(
        {
            "role": "branchSummary",
            "summary": entry.summary,
            "fromId": entry.from_id,
            "timestamp": iso_to_ms(entry.timestamp),
        }
    )


def _compaction_summary(entry: Compaction) -> FrozenDict:
    return frozen_dict_unchecked(
        {
            "role": "compactionSummary",
            "summary": entry.summary,
            "tokensBefore": entry.tokens_before,
            "timestamp": iso_to_ms(entry.timestamp),
        }
    )


def _assistant_model(message: Mapping[str, Any]) -> ModelRef | None:
    provider = message.get("provider")
    model = message.get("model")
    if type(provider) is str and type(model) is str:
        return ModelRef(provider, model)
    return None


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


def _message(message: FrozenDict) -> FrozenDict:
    """A stored message as Pi 1.6's context gives it: missing content normalised."""
    role = message.get("role")
    if role in _NO_CONTENT:
        return frozen_dict_unchecked({**message, "content": _NO_CONTENT[role]})
    return message


def _entry_messages(e: Any, head: bool, new: bool) -> list[FrozenDict]:
    """The messages one selected entry gives; ``head``: it is the compaction at the head."""
    kind = type(e)
    if isinstance(e, MessageEntry):
        message = e.message
        if new and message.get("content") is None:
            return [_message(message)]
        return [message]
    if kind is CustomMessage:
        return [_custom_message(e, new)]
    if kind is BranchSummary:
        return [_branch_summary(e)] if e.summary else []
    if kind is Compaction and head:
        summary = _compaction_summary(e)
        if new and e.system_message is not None:
            return [e.system_message, summary]
        return [summary]
    return []


def _edited(messages: list[FrozenDict], edit: ContextEdit) -> list[FrozenDict]:
    """An entry's messages with a context edit applied, as Pi 1.6 applies it."""
    replacement = edit.replacement
    if replacement is None:
        return []
    content = replacement.get("content", _UNDEFINED)
    out = []
    for m in messages:
        role = m.get("role")
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


def _selection(path: tuple[Entry, ...], new: bool) -> tuple[list[Entry], Compaction | None]:
    """The entries that give the context (Pi 1.6's ``buildContextEntries``), and the head.

    Without a compaction, the path; otherwise the latest compaction C, the entries from
    C's first kept entry up to C (less system messages, in 1.6), and those after C.
    """
    for i in range(len(path) - 1, -1, -1):
        c = path[i]
        if type(c) is Compaction:
            break
    else:
        return list(path), None
    first = c.first_kept_entry_id
    k = i
    if first is not None:
        for j in range(i):
            if path[j].id == first:
                k = j
                break
    kept: list[Entry] = [c]
    if new:
        # The checkpoint (or, without one, nothing) stands for the system messages.
        for e in path[k:i]:
            if not isinstance(e, MessageEntry) or e.message.get("role") != "system":
                kept.append(e)
    else:
        kept.extend(path[k:i])
    kept.extend(path[i + 1 :])
    return kept, c


class _State:
    """The state a backward walk has found so far: the first value met is the latest."""

    __slots__ = ("edited", "model", "model_set", "thinking_level", "tools", "tools_set")

    def __init__(self) -> None:
        self.model: ModelRef | None = None
        # The latest model setter may name no model (an assistant message without
        # provider and model), so whether one was met is kept apart from the value.
        self.model_set = False
        self.thinking_level: str | None = None
        self.tools: tuple[str, ...] | None = None
        self.tools_set = False
        self.edited = False  # a context edit was met among the selected entries

    def see(self, e: Entry) -> None:
        """Take the state an entry other than a message sets, unless a later one did."""
        kind = type(e)
        if kind is ThinkingLevelChange:
            if self.thinking_level is None:
                self.thinking_level = e.thinking_level  # type: ignore[attr-defined]
        elif kind is ModelChange:
            if not self.model_set:
                self.model = ModelRef(e.provider, e.model_id)  # type: ignore[attr-defined]
                self.model_set = True
        elif kind is ActiveToolsChange and not self.tools_set:
            self.tools = tuple(e.active_tool_names)  # type: ignore[attr-defined]
            self.tools_set = True


def _collect(
    e: Entry | None,
    end: Entry | None,
    out: list[Any],
    state: _State,
    new: bool,
    kept: bool,
    peek: Peek,
    direct: bool = False,
) -> Entry | None:
    """Walk from ``e`` towards the root until ``end`` (excluded), adding to ``out``.

    What is added, in backward order: a message entry whose message the context
    gives as stored is added itself (see :class:`ContextSources`), any other message
    as the message.  ``new``: Pi 1.6's meaning (else 0.73.1's).  ``kept``: the walk is
    in the latest compaction's kept range, where an older compaction gives nothing
    (and Pi 1.6 leaves system messages out); otherwise the walk stops at a compaction
    and returns it.  ``end`` is None or an ancestor of ``e``, so the walk always
    reaches it.  ``peek`` tells a message entry's role and whether its content is
    missing (see :func:`context_sources`); the message itself is read only for a
    content to fill in and for the latest assistant message's model.  ``direct``: add
    every message itself, never its entry (what :func:`build_context` needs; ``peek``
    is then the message, and the hot loops read it once).
    """
    add = out.append
    message_kind = MessageEntry
    kept_range = new and kept
    mode = (2 if kept else 1) if new else (3 if kept else 0)
    # Any: the kinds are told apart by `type(...) is` tests, which mypy does not narrow.
    e_: Any = e
    # Until the model is known, every message's role is read; usually a step or two.
    while not state.model_set and e_ is not end:
        if isinstance(e_, message_kind):
            head = peek(e_)
            role = head.get("role")
            if role == "assistant":
                state.model = _assistant_model(e_.message)
                state.model_set = True
            if not kept_range or role != "system":
                if new and head.get("content") is None:
                    add(_message(e_.message))
                else:
                    add(e_.message if direct else e_)
        elif _other(e_, add, state, mode):
            return e_  # type: ignore[no-any-return]
        e_ = e_.parent_entry
    # The hot loops: a type test, an append and a link per message (and, for Pi 1.6,
    # a look at the content, which may be missing).
    if direct:
        return _collect_messages(e_, end, add, state, mode)  # type: ignore[no-any-return]
    if kept_range:
        while e_ is not end:
            if isinstance(e_, message_kind):
                head = peek(e_)
                if head.get("role") != "system":
                    add(e_ if head.get("content") is not None else _message(e_.message))
            else:
                _other(e_, add, state, mode)
            e_ = e_.parent_entry
    elif new:
        while e_ is not end:
            if isinstance(e_, message_kind):
                add(e_ if peek(e_).get("content") is not None else _message(e_.message))
            elif _other(e_, add, state, mode):
                return e_  # type: ignore[no-any-return]
            e_ = e_.parent_entry
    else:
        while e_ is not end:
            if isinstance(e_, message_kind):
                add(e_)
            elif _other(e_, add, state, mode):
                return e_  # type: ignore[no-any-return]
            e_ = e_.parent_entry
    return None


def _collect_messages(e_: Any, end: Entry | None, add: Any, state: _State, mode: int) -> Any:
    """:func:`_collect`'s hot loops when it adds messages themselves (``direct``): each
    message is read once, no peek is called."""
    message_kind = MessageEntry
    if mode == 2:  # Pi 1.6, in a kept range: no system messages
        while e_ is not end:
            if isinstance(e_, message_kind):
                m = e_.message
                if m.get("role") != "system":
                    add(m if m.get("content") is not None else _message(m))
            else:
                _other(e_, add, state, mode)
            e_ = e_.parent_entry
    elif mode == 1:  # Pi 1.6
        while e_ is not end:
            if isinstance(e_, message_kind):
                m = e_.message
                add(m if m.get("content") is not None else _message(m))
            elif _other(e_, add, state, mode):
                return e_
            e_ = e_.parent_entry
    else:  # Pi 0.73.1 (in a kept range or not: _other tells)
        while e_ is not end:
            if isinstance(e_, message_kind):
                add(e_.message)
            elif _other(e_, add, state, mode):
                return e_
            e_ = e_.parent_entry
    return None


def _other(e: Any, add: Any, state: _State, mode: int) -> bool:
    """Take an entry other than a message; true when the walk must stop at it.

    ``mode``: 0 (0.73.1) and 1 (1.6) stop at a compaction; 2 (1.6) and 3 (0.73.1) are
    in a kept range, where a compaction gives nothing.
    """
    kind = type(e)
    if kind is CustomMessage:
        add(_custom_message(e, mode in (1, 2)))
    elif kind is BranchSummary:
        if e.summary:
            add(_branch_summary(e))
    elif kind is Compaction:
        return mode < 2
    elif kind is ContextEdit:
        state.edited = mode in (1, 2)
    else:
        state.see(e)
    return False


def _resolve_state(e: Entry | None, state: _State, peek: Peek) -> None:
    """Finish resolving the state over the rest of the path, collecting no message."""
    message_kind = MessageEntry
    while e is not None:
        if isinstance(e, message_kind):
            if not state.model_set and peek(e).get("role") == "assistant":
                state.model = _assistant_model(e.message)
                state.model_set = True
        else:
            state.see(e)
        e = e.parent_entry


def _first_kept(tree: SessionTree, compaction: Compaction) -> Entry | None:
    """``compaction``'s first kept entry if it is on the path before it, else ``None``.

    Cost: O(length of the kept range).
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


def _edited_context(path: tuple[Entry, ...], new: bool) -> list[Any]:
    """The messages of a path with context edits: selection, edits, then messages."""
    selected, head = _selection(path, new)
    edits: dict[str, ContextEdit] = {}
    for e in selected:
        if type(e) is ContextEdit:
            edits[e.target_id] = e
    out: list[Any] = []
    for e in selected:
        messages = _entry_messages(e, e is head, new)
        edit = edits.get(e.id)
        if edit is not None:
            messages = _edited(messages, edit)
        out.extend(messages)
    return out


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

    With ``pi="0.73.1"``, as Pi 0.73.1: no edits (a ``context_edit`` gives nothing),
    system messages in the kept range stay, no checkpoint, and contents are given as
    stored.  On files both versions read, the two agree everywhere else.

    Where ptree differs from Pi: an unknown ``leaf`` raises instead of falling back to
    the last entry; timestamps without an offset are read as UTC (see
    :func:`iso_to_ms`).

    Cost: O(path length), iterative: one walk from the leaf back to the root, which
    meets the latest compaction first and so never collects what it dropped (a second
    pass when the selection holds context edits).  No stored message is copied (see
    :class:`Context`) except those an edit changes or whose content is missing.

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
    gathered = _gather(tree, leaf, pi, _MESSAGE, direct=True)
    if gathered is None:
        return Context(())
    messages, fields = gathered
    return Context(messages, *fields)


Peek = Callable[[MessageEntry], Mapping[str, Any]]
"""How :func:`context_sources` reads a message entry: the entry's message, or a
stand-in mapping whose ``get("role")`` is the message's and whose ``get("content")``
is ``None`` exactly when the message's is (absent or null)."""

_MESSAGE: Peek = operator.attrgetter("message")


@attrs.frozen(weakref_slot=False, eq=False)
class ContextSources:
    """A context before its stored messages are read: where each message comes from.

    What :func:`context_sources` gives, for code that writes a context out and can
    do so faster from a message's stored form than from the decoded message (``ptree
    path`` writes a lazily loaded message from its JSON bytes).

    Attributes:
        sources: one item per message of the context, in order.  A
            :class:`~ptree.MessageEntry` stands for its own message exactly as stored
            (the context's message is ``entry.message``, the same object); any other
            item is the message itself: synthesised from a summary, custom message
            or checkpoint, with its missing content filled in, or changed by a
            context edit.
        model, thinking_level, active_tools, leaf_id: as in :class:`Context`.
    """

    sources: tuple[Mapping[str, Any] | MessageEntry, ...]
    model: ModelRef | None = None
    thinking_level: str = "off"
    active_tools: tuple[str, ...] | None = None
    leaf_id: str | None = None

    def context(self) -> Context:
        """The :class:`Context` these sources make (every message read).  O(messages)."""
        messages = tuple([s.message if isinstance(s, MessageEntry) else s for s in self.sources])
        return Context(
            messages,  # type: ignore[arg-type]
            self.model,
            self.thinking_level,
            self.active_tools,
            self.leaf_id,
        )


def context_sources(
    tree: SessionTree, leaf: str | None = None, *, pi: PiVersion = "1.6", peek: Peek | None = None
) -> ContextSources:
    """:func:`build_context`, telling for each message the entry it is stored in.

    An internal interface for writers (see :class:`ContextSources`):
    ``context_sources(tree, leaf, pi=pi).context() == build_context(tree, leaf, pi=pi)``
    always: both are made by the same walk (``_gather``).

    ``peek`` reads what the walk needs from a message entry without decoding its
    message (see :data:`Peek`); by default the message itself.  Messages are then
    read only where the context must change them (a missing content filled in, a
    context edit on the path) and for the latest assistant message's model: with a
    peek that decodes nothing, the other stored messages stay as they are.

    Cost: that of :func:`build_context`, less the reads of the messages.

    Raises:
        UnknownEntryError: no entry has the id ``leaf``.
        ValueError: ``pi`` is not a known release.

    >>> from ptree import SessionTree
    >>> t = SessionTree().append({"role": "user", "content": "hi"}, id="q")
    >>> t = t.append_branch_summary("q", "tried another way")
    >>> sources = context_sources(t).sources
    >>> sources[0] is t["q"], sources[1]["role"]
    (True, 'branchSummary')
    """
    gathered = _gather(tree, leaf, pi, _MESSAGE if peek is None else peek, direct=False)
    if gathered is None:
        return ContextSources(())
    sources, fields = gathered
    return ContextSources(sources, *fields)


def _gather(
    tree: SessionTree, leaf: str | None, pi: PiVersion, peek: Peek, *, direct: bool
) -> tuple[tuple[Any, ...], tuple[ModelRef | None, str, tuple[str, ...] | None, str]] | None:
    """The walk under :func:`context_sources` and :func:`build_context`: the sources
    (with ``direct``, the messages themselves), then the rest of the value (model,
    thinking level, active tools, leaf id); ``None`` for an empty tree."""
    new = _check_version(pi)
    start = tree.leaf if leaf is None else tree[leaf]
    if start is None:
        return None
    out: list[Any] = []
    state = _State()
    # Walking back from the leaf, the first compaction met is the latest one: the walk
    # never collects what it dropped.
    compaction = _collect(start, None, out, state, new, False, peek, direct)
    if compaction is not None:
        first = _first_kept(tree, compaction)  # type: ignore[arg-type]
        rest: Entry | None = compaction.parent_entry
        if first is not None:
            _collect(rest, first.parent_entry, out, state, new, True, peek, direct)
            rest = first.parent_entry
        _resolve_state(rest, state, peek)
        out.append(_compaction_summary(compaction))  # type: ignore[arg-type]
        checkpoint = compaction.system_message  # type: ignore[attr-defined]
        if new and checkpoint is not None:
            out.append(checkpoint)
    fields = (
        state.model,
        "off" if state.thinking_level is None else state.thinking_level,
        state.tools,
        start.id,
    )
    if state.edited:
        # Rare: edits may aim anywhere in the selection, before or after them.  Every
        # message is read (and given as a message, not as its entry).
        return tuple(_edited_context(tree.path(start.id), new)), fields
    return tuple(reversed(out)), fields  # one pass: no reverse, then a copy


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
    left.  Other messages are ignored.  Cost: O(size of the system messages).

    >>> current_system_message([
    ...     {"role": "system", "content": "Base.", "sections": {"a": "A"}, "timestamp": 5},
    ...     {"role": "user", "content": "hi"},
    ...     {"role": "system", "content": [{"type": "text", "text": "More."}],
    ...      "sections": {"a": None, "b": "B"}, "toolsAdded": [{"name": "read"}]},
    ... ])
    {'role': 'system', 'content': 'Base.\n\nMore.', 'sections': {'b': 'B'}, 'toolsAdded': [{'name': 'read'}], 'timestamp': 5}
    """  # noqa: E501
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
        role = m.get("role")
        if role in passed:
            out.append(m)  # type: ignore[arg-type]
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
            out.append(m)  # type: ignore[arg-type]
        elif unknown == "raise":
            raise ValueError(f"a message with role {role!r} has no provider form")
    return out
