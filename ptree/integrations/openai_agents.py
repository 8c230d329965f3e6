"""A branching session for the OpenAI Agents SDK: :class:`TreeSession`.

The SDK's sessions (``SQLiteSession`` and the others) keep a conversation as a line
that can only grow and lose its last item.  :class:`TreeSession` implements the same
session protocol on a ptree tree, so that changing one line of an agent program gives
it branches: :meth:`TreeSession.branch` goes back to an earlier item and the next
``Runner.run`` continues from there while the old branch stays in the tree;
:meth:`TreeSession.undo` and :meth:`TreeSession.redo` step through every change;
``pop_item`` and ``clear_session`` move the leaf back and delete nothing.

Storage.  Each item the SDK adds is one entry.  Where a faithful Pi message exists
the entry is a Pi ``message`` (so the session opens in ``ptree show`` and in Pi),
and the item itself is kept whole beside it, in the entry's ``openaiAgentsItem``
field, so that :meth:`~TreeSession.get_items` returns exactly what was added:

- a user message (text, or input text and base64 ``data:`` images) is a Pi
  ``user`` message;
- the model's output items become the blocks of a Pi ``assistant`` message, as Pi's
  own OpenAI Responses provider stores them: an assistant message is one text block
  (its output text and refusals joined, ``textSignature`` naming the item's id), a
  ``function_call`` (arguments a JSON object) a ``toolCall`` block (id
  ``call_id|id``, arguments parsed), a ``reasoning`` item a ``thinking`` block whose
  signature is the item as JSON;
- a ``function_call_output`` (a string, or input text and ``data:`` images) is a
  ``toolResult`` that names the call it answers and its tool.

Consecutive output items added together (one model turn: reasoning, text, parallel
tool calls) make one Pi ``assistant`` message, on the entry of the turn's last item;
the entries before it in the turn are ``custom`` entries holding their items only.
Pi pairs tool calls with their results only within one message, so a turn split over
several messages would not replay.  Every other item (system and developer messages,
hosted tool calls, file inputs, anything newer than this module) is a ``custom``
entry of type ``openai-agents-item`` holding the item as its ``data``: kept, but not
shown to a model that Pi drives.

A session continued in Pi comes back: messages on the branch that no SDK item stands
behind (Pi wrote them) are read as the input items Pi's OpenAI Responses provider
sends for them, through the providers' one conversion
(:func:`ptree.providers.responses_items`, pi-ai 1.6.0's rules: user messages,
assistant text with its signature's id and phase, kept reasoning items, function calls
with pi-ai's ids and ``JSON.stringify`` arguments, and their outputs).  Other entries
(labels, model changes) hold no item.

Imports: the core, :mod:`ptree.pi`, :mod:`ptree.providers`, and the ``agents`` package
(the extra ``ptree[openai-agents]``).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Awaitable, Callable, Generator, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, cast
from urllib.parse import urlsplit

from agents.memory.session_settings import (
    SessionSettings,
    coerce_session_settings,
    resolve_session_limit,
)

from ..closing import AsyncClosing, Closing
from ..context import iso_to_ms, to_provider_messages
from ..entries import Custom, Entry, MessageEntry
from ..errors import InvalidMessageError
from ..frozen import FrozenDict, freeze, thaw
from ..header import SessionHeader
from ..history import History
from ..ids import utc_now
from ..js import stringify, template
from ..pi import SessionWriter
from ..pi.lines import StrPath
from ..providers import responses_items
from ..stores import (
    SCHEMES,
    AsyncStore,
    ConflictError,
    Pause,
    SessionNotFoundError,
    Store,
    open_async,
)
from ..stores import open as open_store
from ..tree import SessionTree

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

__all__ = [
    "CUSTOM_TYPE",
    "ITEM_FIELD",
    "TreeSession",
    "branch_items",
    "pi_call_id",
    "pi_message",
]

ITEM_FIELD = "openaiAgentsItem"
"""The entry field that keeps an SDK item whole beside its Pi message."""

CUSTOM_TYPE = "openai-agents-item"
"""The ``customType`` of the entries that hold items without a Pi message."""

_T = TypeVar("_T")

_ZERO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
_ZERO_USAGE = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 0,
    "cost": _ZERO_COST,
}


# Where the text of each part kind of an assistant message is.
_TEXT_KEYS = {"output_text": "text", "input_text": "text", "refusal": "refusal"}


def _image_block(url: object) -> dict[str, Any] | None:
    """A Pi image block from a base64 ``data:`` URL, or ``None``."""
    if not isinstance(url, str) or not url.startswith("data:"):
        return None
    head, sep, data = url[5:].partition(",")
    mime, _, encoding = head.partition(";")
    if not sep or encoding != "base64" or not mime:
        return None
    return {"type": "image", "data": data, "mimeType": mime}


def _input_blocks(content: object) -> list[dict[str, Any]] | None:
    """Pi text and image blocks of an input content list, or ``None`` if one has none."""
    if not isinstance(content, Sequence) or isinstance(content, str):
        return None
    blocks: list[dict[str, Any]] = []
    for part in content:
        if not isinstance(part, Mapping):
            return None
        kind = part.get("type")
        if kind == "input_text" and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "input_image" and (image := _image_block(part.get("image_url"))):
            blocks.append(image)
        else:
            return None
    return blocks


def _assistant(
    blocks: list[dict[str, Any]], ms: int, provider: str, model: str | None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": blocks, "api": "openai-responses"}
    if model is not None:
        message["provider"] = provider
        message["model"] = model
    message["usage"] = _ZERO_USAGE
    calls = any(b["type"] == "toolCall" for b in blocks)
    message["stopReason"] = "toolUse" if calls else "stop"
    message["timestamp"] = ms
    return message


def pi_call_id(item: Mapping[str, Any]) -> str | None:
    """The Pi tool call id of a ``function_call`` item: ``call_id|id``, as Pi writes it.

    Pi's OpenAI Responses provider keeps both ids of a call in one: the ``call_id``
    that its output answers, and the item's ``id``.  ``None`` for an item without a
    string ``call_id``.  O(length of the ids).

    Args:
        item: a Responses ``function_call`` item (a mapping).

    >>> pi_call_id({"type": "function_call", "call_id": "c1", "id": "fc_1"})
    'c1|fc_1'
    >>> pi_call_id({"type": "function_call", "call_id": "c1"})
    'c1'
    """
    call_id, item_id = item.get("call_id"), item.get("id")
    if not isinstance(call_id, str):
        return None
    return f"{call_id}|{item_id}" if isinstance(item_id, str) and item_id else call_id


def _assistant_blocks(item: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The Pi content blocks of a model output item, or ``None`` if it is none or has none."""
    kind = item.get("type", "message")
    if kind == "message":
        if item.get("role") != "assistant":
            return None
        content = item.get("content")
        if isinstance(content, str):
            text = content
        elif isinstance(content, Sequence):
            texts: list[str] = []
            for part in content:
                if not isinstance(part, Mapping):
                    return None
                key = _TEXT_KEYS.get(str(part.get("type")))
                value = None if key is None else part.get(key)
                if not isinstance(value, str):
                    return None
                texts.append(value)
            text = "".join(texts)  # Pi joins a message's parts into one text block
        else:
            return None
        block: dict[str, Any] = {"type": "text", "text": text}
        item_id = item.get("id")
        if isinstance(item_id, str) and item_id:
            signature: dict[str, Any] = {"v": 1, "id": item_id}
            if isinstance(item.get("phase"), str):
                signature["phase"] = item["phase"]
            block["textSignature"] = stringify(signature)
        return [block]
    if kind == "function_call":
        name, arguments, pi_id = item.get("name"), item.get("arguments"), pi_call_id(item)
        if not (isinstance(name, str) and isinstance(arguments, str) and pi_id is not None):
            return None
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return None
        if not isinstance(parsed, dict):
            return None
        return [{"type": "toolCall", "id": pi_id, "name": name, "arguments": parsed}]
    if kind == "reasoning":
        parts = item.get("summary") or item.get("content") or []
        if not isinstance(parts, Sequence) or isinstance(parts, str):
            return None
        texts = []
        for p in parts:
            value = p.get("text") if isinstance(p, Mapping) else None
            if not isinstance(value, str):
                return None
            texts.append(value)
        # The signature is the item itself: Pi sends it back to the Responses API.
        thinking = "\n\n".join(texts)
        return [{"type": "thinking", "thinking": thinking, "thinkingSignature": stringify(item)}]
    return None


def _input_message(
    item: Mapping[str, Any], calls: Mapping[str, tuple[str, str]], ms: int
) -> dict[str, Any] | None:
    """The Pi user or toolResult message of an input item, or ``None``."""
    kind = item.get("type", "message")
    if kind == "message" and item.get("role") == "user":
        content = item.get("content")
        if isinstance(content, str):
            return {"role": "user", "content": content, "timestamp": ms}
        blocks = _input_blocks(content)
        if blocks is None:
            return None
        return {"role": "user", "content": blocks, "timestamp": ms}
    if kind == "function_call_output":
        call_id, output = item.get("call_id"), item.get("output")
        if not isinstance(call_id, str):
            return None
        if isinstance(output, str):
            blocks = [{"type": "text", "text": output}]
        else:
            found = _input_blocks(output)
            if found is None:
                return None
            blocks = found
        name, pi_id = calls.get(call_id, ("", call_id))
        return {
            "role": "toolResult",
            "toolCallId": pi_id,
            "toolName": name,
            "content": blocks,
            "isError": False,
            "timestamp": ms,
        }
    return None


def pi_message(
    item: Mapping[str, Any],
    *,
    calls: Mapping[str, tuple[str, str]] | None = None,
    timestamp: int = 0,
    provider: str = "openai",
    model: str | None = None,
) -> dict[str, Any] | None:
    """The Pi message that stands for one Agents SDK item, or ``None`` if none is faithful.

    The mapping is the one described in the module doc; a session puts the blocks of
    consecutive output items into one assistant message (see :class:`TreeSession`).
    Cost: O(size of the item).

    Args:
        item: an input item (``TResponseInputItem``) as a JSON-like mapping.
        calls: for each ``call_id`` seen so far, the tool's name and the Pi id of the
            call (:func:`pi_call_id`), for the tool result that answers it (default:
            no name, and the ``call_id`` as the id).
        timestamp: the message's ``timestamp`` in Unix milliseconds.
        provider: the ``provider`` of assistant messages (written only with ``model``).
        model: the ``model`` of assistant messages; ``None`` writes neither field,
            so the message sets no model in Pi's context.

    >>> pi_message({"role": "user", "content": "Hi"})
    {'role': 'user', 'content': 'Hi', 'timestamp': 0}
    >>> pi_message({"type": "function_call", "call_id": "c1", "name": "f",
    ...             "arguments": '{"x": 1}'})["content"]
    [{'type': 'toolCall', 'id': 'c1', 'name': 'f', 'arguments': {'x': 1}}]
    >>> pi_message({"role": "system", "content": "Be brief."}) is None
    True
    """
    blocks = _assistant_blocks(item)
    if blocks is not None:
        return _assistant(blocks, timestamp, provider, model)
    return _input_message(item, calls or {}, timestamp)


def _note_call(item: Mapping[str, Any], calls: dict[str, tuple[str, str]]) -> None:
    if item.get("type") == "function_call":
        call_id, name, pi_id = item.get("call_id"), item.get("name"), pi_call_id(item)
        if isinstance(call_id, str) and isinstance(name, str) and pi_id is not None:
            calls[call_id] = (name, pi_id)


def _calls(
    tree: SessionTree, provider: str | None, model: str | None
) -> dict[str, tuple[str, str]]:
    """The name and Pi id of each function call on the current branch (the latest wins)."""
    found = [item for _, item in _items_back(tree, tree.leaf_id, provider, model)]
    calls: dict[str, tuple[str, str]] = {}
    for item in reversed(found):
        _note_call(item, calls)
    return calls


def _entry(
    tree: SessionTree, timestamp: str, item: FrozenDict, message: dict[str, Any] | None
) -> Entry:
    """The entry that keeps ``item``: a Pi message with the item beside it, or a custom one."""
    entry_id = tree.id_factory(tree)
    if message is None:
        return Custom(
            id=entry_id,
            parent_id=tree.leaf_id,
            timestamp=timestamp,
            custom_type=CUSTOM_TYPE,
            data=item,
        )
    return MessageEntry(
        id=entry_id,
        parent_id=tree.leaf_id,
        timestamp=timestamp,
        message=message,
        extra={ITEM_FIELD: item},
    )


def _pi_written(entry: Entry) -> bool:
    """Whether ``entry`` is a Pi message that no SDK item stands behind (Pi wrote it)."""
    return isinstance(entry, MessageEntry) and ITEM_FIELD not in entry.extra


def _pi_items(
    path: Sequence[Entry], provider: str | None, model: str | None
) -> dict[str, tuple[FrozenDict, ...]]:
    """The SDK items of each message on ``path`` that Pi wrote, by entry id.

    The input items Pi's OpenAI Responses provider sends for them, in pi-ai's one
    conversion of the whole branch (:func:`ptree.providers.responses_items`): every
    message on the path takes part (tool-call ids, failed turns, results pi-ai makes up
    for calls left without one, the fallback ids of texts without a signature), and
    each Pi message gets the items it gives.  The target is ``provider``'s ``model``;
    without one, the model of the branch's latest assistant message (Pi's own choice),
    so that its reasoning and ids go back as they were stored.
    O(size of the path's messages); nothing when Pi wrote none of them.

    Raises:
        ProviderError: pi-ai would refuse a message (e.g. a same-model thinking
            signature that is not JSON).
    """
    if not any(_pi_written(e) for e in path):
        return {}
    owners: list[Entry] = []
    messages: list[Mapping[str, Any]] = []
    for entry in path:
        if isinstance(entry, MessageEntry):
            for m in to_provider_messages([entry.message]):
                owners.append(entry)
                messages.append(m)
    if model is None:
        speakers = [m for m in messages if m.get("role") == "assistant"]
        latest: Mapping[str, Any] = speakers[-1] if speakers else {}
        provider, model = template(latest.get("provider", "")), template(latest.get("model", ""))
    per_message = responses_items(messages, provider=provider or "", model=model)
    found: dict[str, list[dict[str, Any]]] = {e.id: [] for e in path if _pi_written(e)}
    for entry, items in zip(owners, per_message, strict=True):
        if entry.id in found:
            found[entry.id] += items
    return {k: tuple(freeze(i) for i in v) for k, v in found.items()}


def _items_of(
    entry: Entry, pi_items: Mapping[str, tuple[FrozenDict, ...]]
) -> tuple[FrozenDict, ...]:
    """The SDK items an entry holds, oldest first: none, one, or (a Pi message) several."""
    if isinstance(entry, MessageEntry):
        item = entry.extra.get(ITEM_FIELD)
        if item is None:
            return pi_items.get(entry.id, ())
    elif type(entry) is Custom and entry.custom_type == CUSTOM_TYPE:
        item = entry.data
    else:
        return ()
    return (item,) if type(item) is FrozenDict else ()


def _items_back(
    tree: SessionTree, leaf: str | None, provider: str | None = None, model: str | None = None
) -> Iterator[tuple[Entry, FrozenDict]]:
    """The items from ``leaf`` back to the root with their entries, newest first.

    O(path length) to start (the tree's own path walk, much cheaper per step than
    looking each parent up; with messages Pi wrote, O(size of the path's messages) to
    convert them), then O(1) a step.
    """
    if leaf is None:
        return
    path = tree.path(leaf)
    pi_items = _pi_items(path, provider, model)
    for entry in reversed(path):
        for item in reversed(_items_of(entry, pi_items)):
            yield entry, item


def branch_items(
    tree: SessionTree,
    leaf: str | None = None,
    *,
    provider: str | None = None,
    model: str | None = None,
) -> list[TResponseInputItem]:
    """The SDK items on the path from the root to ``leaf`` (default: the tree's leaf).

    What :meth:`TreeSession.get_items` returns for a session whose value is ``tree``:
    fresh plain dicts and lists, oldest first.  Messages that no SDK item stands
    behind (written by Pi) are read as the input items Pi's OpenAI Responses provider
    sends for them to ``provider``'s ``model`` (pi-ai's conversion, as
    :func:`ptree.providers.payload` makes it; without a model, each turn as if sent
    back to the model that wrote it); entries that hold no item (labels, model
    changes) are passed over.  Works on any value a session ever had
    (:attr:`TreeSession.history`).
    Cost: O(path length + size of the items).

    Args:
        tree: the session's value.
        leaf: the entry ending the path; the tree's leaf when ``None``.
        provider: the provider Pi's messages are converted for (with ``model``).
        model: the model Pi's messages are converted for; ``None``: each turn for the
            model that wrote it.

    Raises:
        UnknownEntryError: ``leaf`` names no entry.
        ProviderError: pi-ai would refuse a message that Pi wrote.

    >>> t = SessionTree().append({"role": "user", "content": "typed in Pi"})
    >>> branch_items(t.append_label("e1", "start"))
    [{'role': 'user', 'content': [{'type': 'input_text', 'text': 'typed in Pi'}]}]
    """
    leaf = tree.leaf_id if leaf is None else leaf
    found = [item for _, item in _items_back(tree, leaf, provider, model)]
    found.reverse()
    return cast("list[TResponseInputItem]", thaw(found))


class _Call:
    """A store operation a session's plan asks for: ``store.<name>(*args)``, which a
    blocking :class:`~ptree.stores.Store` answers and an
    :class:`~ptree.stores.AsyncStore` awaits (``refresh``, ``update``, ``save``)."""

    __slots__ = ("args", "name")

    def __init__(self, name: str, *args: Any) -> None:
        self.name = name
        self.args = args


class _Write:
    """A plan's step: the session's new value, appended to its Pi file (a session in
    memory keeps it as it is); the reply is the value as committed."""

    __slots__ = ("tree",)

    def __init__(self, tree: SessionTree) -> None:
        self.tree = tree


_Plan: TypeAlias = Generator[Any, Any, _T]
"""A session operation: yields :class:`_Call` and :class:`_Write` steps (and
:class:`~ptree.stores.Pause` in a long change), receives their results (or their
errors, thrown in), returns the operation's result."""

_Change: TypeAlias = Callable[[SessionTree], SessionTree | _Plan[SessionTree]]
"""A change of the session's value: a pure function, or one that pauses (a generator
yielding :class:`~ptree.stores.Pause` and returning the new value)."""

_PAUSE_EVERY = 32
"""Items an ``add_items`` change builds between two pauses of the loop (~5 ms here)."""


def _changed(change: _Change, tree: SessionTree) -> _Plan[SessionTree]:
    """``change(tree)``, its pauses (if it makes any) passed on."""
    new = change(tree)
    if isinstance(new, Generator):
        new = yield from new
    return new


async def _drive(plan: _Plan[_T], execute: Callable[[Any], Awaitable[Any]]) -> _T:
    """Run ``plan`` to its end, each step by ``execute``; an error a step raises is
    thrown into the plan where it asked for the step.  The one loop of both drivers: a
    blocking ``execute`` never suspends, so the coroutine ends in its first ``send``."""
    reply: Any = None
    error: Exception | None = None
    while True:
        try:
            step = plan.send(reply) if error is None else plan.throw(error)
        except StopIteration as stop:
            return cast("_T", stop.value)
        try:
            reply, error = await execute(step), None
        except Exception as exc:
            reply, error = None, exc


class TreeSession(Closing, AsyncClosing):
    """An OpenAI Agents SDK session kept as a ptree tree: in memory, in a Pi file, or
    in a ptree store.

    It implements the SDK's ``Session`` protocol (``session_id``,
    ``session_settings``, ``get_items``, ``add_items``, ``pop_item``,
    ``clear_session``), so it goes wherever a ``SQLiteSession`` goes::

        session = TreeSession("chat-1", "chat-1.jsonl")
        await Runner.run(agent, "Hello", session=session)

    The items on the current branch (the path from the root to the leaf) are the
    conversation.  Nothing is ever deleted: ``pop_item`` and ``clear_session`` move
    the leaf back, :meth:`branch` moves it to an earlier item, and the next
    ``add_items`` grows a new branch there.  Each ``add_items`` call (however many
    items), ``pop_item``, ``clear_session`` and :meth:`branch` is one step of an
    undo :class:`~ptree.History`: :meth:`undo` and :meth:`redo` move between them.
    :meth:`abranch`, :meth:`aundo`, :meth:`aredo` and :meth:`aclose` are the async
    forms of :meth:`branch`, :meth:`undo`, :meth:`redo` and :meth:`close`.

    Persistence: with ``path``, the tree lives in that Pi session file, created if
    missing and loaded if present, and locked while the session is open (a second
    writer gets :class:`~ptree.SessionLockedError`).  Every change is appended before
    the call returns (``fsync`` says whether it is also flushed to the disk); a file
    only grows, so an undo, a pop or a branch is written as a ``leaf`` record and
    later appends never reuse an id.  Pi's CLI does not know ``leaf`` records: a file
    whose last change was such a move shows the branch before it there, until the
    next item is added.  The undo history itself lives in memory: a reopened session
    starts a new one.  Without ``path`` the tree lives in memory only (``tree=`` can
    give its first value).

    With ``store``, a URL that :func:`ptree.stores.open` takes (``sqlite:``,
    ``postgresql:``, ``jsonl:``), an open :class:`~ptree.stores.AsyncStore` or an
    open :class:`~ptree.stores.Store`, the session is the store's session
    ``session_id``: read on the first call (or by :meth:`connect`), saved on the
    first change.  Every change is one ``update`` of the store (load what is stored,
    apply the change, save; again on a :class:`~ptree.stores.ConflictError`), so
    any number of session objects, tasks and processes may add to one session and
    none of their items is lost; :meth:`get_items` reads what is stored.  Every
    operation is written once, as a plan of store calls: the async methods await
    them on the async store (:func:`ptree.stores.open_async`: PostgreSQL on psycopg's
    async connection, no thread; SQLite and ``jsonl:`` on the store's one worker
    thread), the blocking methods call a blocking store.  A URL opens the store each
    side needs, on first use, owned by the session and closed with it (the
    constructor does no I/O); a store object is shared and left open.

    No method blocks the event loop on I/O, and none starts a thread per call: a
    session whose I/O blocks (a Pi file, written by :class:`~ptree.SessionWriter`
    with ``write`` and ``fsync``; a blocking :class:`~ptree.stores.Store` object)
    runs its async methods on one worker thread of its own, started by the first and
    ended by :meth:`close`.  A session in memory does no I/O: its async methods run
    inline.  A lock makes each blocking call atomic between threads.

    Args:
        session_id: the SDK's session id; a new file's header takes it as its id.
        path: the Pi session file, or ``None`` for a session in memory.
        session_settings: the SDK's settings (``limit`` is the default of
            :meth:`get_items`); a dict is accepted as by the SDK.
        provider: the ``provider`` written into assistant messages with ``model``.
        model: the model name written into assistant messages, so that Pi and
            :func:`~ptree.build_context` know which model spoke; ``None`` writes none.
        tree: the first value of a session in memory (only without ``path``).
        fsync: flush each change to the disk (see :class:`~ptree.SessionWriter`).
        history_limit: how many undo steps to keep (``None``: all).
        store: a store URL, an open async store or an open store keeping the session
            (not with ``path`` or ``tree``).  ``sqlite:///:memory:`` is a database per
            store opened: the async and the blocking methods would each have their
            own; give a store object to share one.

    Raises:
        TypeError: ``session_id`` is not a str, or ``store`` is neither a URL nor a
            store (nothing is opened or stored).
        StoreError: (a ``ValueError``) the store URL has an unknown scheme (the
            message names it).
        SessionLockedError: another writer holds the file.
        SessionFileError: the file exists but cannot be loaded.
        ValueError: more than one of ``path``, ``tree`` and ``store`` was given.
    """

    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str,
        path: StrPath | None = None,
        *,
        session_settings: SessionSettings | Mapping[str, Any] | None = None,
        provider: str = "openai",
        model: str | None = None,
        tree: SessionTree | None = None,
        fsync: bool = True,
        history_limit: int | None = None,
        store: str | AsyncStore | Store | None = None,
    ) -> None:
        if not isinstance(session_id, str):
            raise TypeError(f"session_id must be a str, not {type(session_id).__name__}")
        if sum(x is not None for x in (path, tree, store)) > 1:
            raise ValueError(
                "give one of path (a Pi file), tree (in memory) and store (a store URL)"
            )
        if store is not None and not isinstance(store, str | AsyncStore | Store):
            raise TypeError(f"store must be a URL or a store, not {type(store).__name__}")
        if isinstance(store, str) and urlsplit(store).scheme.lower() not in SCHEMES:
            open_store(store)  # raises the stores' own error, before any I/O
        self.session_id = session_id
        self.session_settings = (
            SessionSettings()
            if session_settings is None
            else coerce_session_settings(
                session_settings
                if isinstance(session_settings, SessionSettings)
                else dict(session_settings)
            )
        )
        self.provider = provider
        self.model = model
        self._lock = threading.RLock()
        self._closed = False
        self._writer: SessionWriter | None = None
        self._in_store = store is not None
        self._url = store if isinstance(store, str) else None
        self._store = store if isinstance(store, Store) else None  # the blocking methods'
        self._async_given = store if isinstance(store, AsyncStore) else None
        self._async_opened: tuple[asyncio.AbstractEventLoop, AsyncStore] | None = None
        self._shared_blocking = isinstance(store, Store)
        self._worker: ThreadPoolExecutor | None = None
        self._history_limit = history_limit
        if self._async_given is not None:
            self._url = self._async_given.url  # a blocking method opens its own store
        if path is not None:
            self._writer = SessionWriter(path, fsync=fsync, header=self._new_header())
            self._tree = self._writer.value
        elif tree is not None:
            self._tree = tree
        else:
            self._tree = SessionTree(header=self._new_header()) if store else SessionTree()
        self._history: History[SessionTree] = History(self._tree, limit=history_limit)
        # A store session's history starts from the value first read (or first changed).
        self._started = not self._in_store
        # The function calls on the branch ending at the leaf named here: an add_items
        # right after another (a run's usual pattern) need not walk the path again.
        self._calls: tuple[str | None, dict[str, tuple[str, str]]] | None = None

    # ------------------------------------------------------------------ reading

    @property
    def tree(self) -> SessionTree:
        """The current value: every entry ever added, the leaf where the session is.

        For a store session, the value as of its last call (:meth:`connect` reads it
        first)."""
        return self._tree

    @property
    def history(self) -> History[SessionTree]:
        """The undo history: the tree after each step; its present is the last step."""
        return self._history

    @property
    def path(self) -> str | None:
        """The Pi session file, or ``None`` for a session in memory or in a store."""
        return None if self._writer is None else self._writer.path

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def item_entry_ids(self, leaf: str | None = None) -> list[str]:
        """The ids of the entries holding the items of a branch, oldest first.

        ``item_entry_ids()[i]`` holds ``get_items()[i]`` (a message that Pi wrote
        may hold several items: its id repeats).  ``leaf`` names the branch
        by an entry of :attr:`tree` (default: the current leaf).  Cost: O(path length).

        Args:
            leaf: an entry of :attr:`tree` ending the branch; the current leaf when ``None``.

        Raises:
            UnknownEntryError: ``leaf`` names no entry.
        """
        tree = self._tree
        leaf = tree.leaf_id if leaf is None else leaf
        ids = [e.id for e, _ in _items_back(tree, leaf, self.provider, self.model)]
        ids.reverse()
        return ids

    def items_at(self, leaf: str | None) -> list[TResponseInputItem]:
        """The items of the branch ending at ``leaf`` (any entry of :attr:`tree`).

        Fresh plain dicts and lists each call, oldest first; ``None`` gives ``[]``.
        Cost: O(path length + size of the items).

        Args:
            leaf: an entry of :attr:`tree` ending the branch, or ``None``.

        Raises:
            UnknownEntryError: ``leaf`` names no entry.
        """
        if leaf is None:
            return []
        return branch_items(self._tree, leaf, provider=self.provider, model=self.model)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The items of the current branch, oldest first, exactly as they were added.

        ``limit`` (default: ``session_settings.limit``) as in the SDK's
        ``SQLiteSession``: ``None`` gives all, a positive number the latest that
        many, ``0`` none, and a negative number all.  The items are fresh plain
        dicts and lists, JSON-equal to those added.  Cost: O(size of the items
        given), plus O(path length) for all of them, or O(entries back to the
        ``limit``-th item from the end) with a limit; a store session reads first
        what was saved since its last call.  Measured on 50,000 small items (a loaded
        2-core machine): all of them 0.7-0.8 s, mostly the copy, as ``SQLiteSession``
        (0.7 s); the latest 10 in 0.1 ms (``SQLiteSession``: 0.1 s).

        Args:
            limit: how many of the latest items; ``session_settings.limit`` when ``None``.

        Raises:
            ValueError: the session is closed.
        """
        return await self._arun(self._getting(limit))

    def _getting(self, limit: int | None) -> _Plan[list[TResponseInputItem]]:
        self._check_open()
        tree = (yield from self._loading()) if self._in_store else self._tree
        wanted = resolve_session_limit(limit, self.session_settings)
        if wanted == 0:
            return []
        found: list[FrozenDict] = []
        if wanted is not None and wanted > 0:
            # The latest few: walk back from the leaf only as far as needed.
            entry = tree.leaf
            pi_items: Mapping[str, tuple[FrozenDict, ...]] = {}
            while entry is not None and len(found) < wanted:
                if _pi_written(entry) and not pi_items:
                    # Pi's messages convert as a whole branch (see _pi_items)
                    path = tree.path(tree.leaf_id)
                    pi_items = _pi_items(path, self.provider, self.model)
                found += reversed(_items_of(entry, pi_items))
                entry = tree.parent(entry.id)
            del found[wanted:]
        else:
            back = _items_back(tree, tree.leaf_id, self.provider, self.model)
            found = [item for _, item in back]
        found.reverse()
        return cast("list[TResponseInputItem]", thaw(found))

    # ------------------------------------------------------------------ changes

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Add items under the current leaf, as one undo step and one write.

        Each item becomes one entry (see the module doc for the Pi message it gets);
        the last one is the new leaf.  An empty list changes nothing.  Cost: O(size of
        the items), plus one walk of the current path to name the tool results; a
        long call lets the event loop run other tasks every 32 items.

        Args:
            items: the SDK's input items, JSON-like mappings.

        Raises:
            InvalidMessageError: (a ``ValueError``) an item is not a JSON-like mapping;
                nothing is added then.
            ValueError: the session is closed.
        """
        await self._arun(self._adding(items))

    def _adding(self, items: list[TResponseInputItem]) -> _Plan[None]:
        self._check_open()
        frozen: list[FrozenDict] = []
        for i, given in enumerate(items):
            if not isinstance(given, Mapping):
                raise InvalidMessageError(
                    f"items[{i}]", f"an item must be a mapping, not {type(given).__name__}"
                )
            frozen.append(freeze(given, where=f"items[{i}]"))
        if frozen:
            yield from self._applying(lambda tree: self._added(tree, frozen))

    def _added(self, tree: SessionTree, frozen: list[FrozenDict]) -> _Plan[SessionTree]:
        """``tree`` with the entries of ``frozen`` under its leaf (pure: may run again),
        pausing every few items so that a long call leaves the loop to other tasks."""
        cached = self._calls
        if cached is not None and cached[0] == tree.leaf_id:
            calls = dict(cached[1])
        else:
            calls = _calls(tree, self.provider, self.model)
        # Consecutive model output items (a turn's reasoning, text and parallel tool
        # calls) share one Pi assistant message, as Pi stores a turn: Pi pairs each
        # tool call with its result only within one message.  The message goes on
        # the run's last entry; the entries before it hold their items only.
        run: list[dict[str, Any]] = []
        for i, item in enumerate(frozen):
            if i and not i % _PAUSE_EVERY:
                yield Pause()
            timestamp = tree.clock()
            blocks = _assistant_blocks(item)
            message: dict[str, Any] | None
            if blocks is not None:
                _note_call(item, calls)
                run += blocks
                following = frozen[i + 1] if i + 1 < len(frozen) else None
                if following is not None and _assistant_blocks(following) is not None:
                    message = None
                else:
                    ms = iso_to_ms(timestamp) or 0
                    message = _assistant(run, ms, self.provider, self.model)
                    run = []
            else:
                message = _input_message(item, calls, iso_to_ms(timestamp) or 0)
            tree = tree.append_entry(_entry(tree, timestamp, item, message))
        self._calls = (tree.leaf_id, calls)
        return tree

    async def pop_item(self) -> TResponseInputItem | None:
        """Take the latest item off the current branch and return it; ``None`` if none.

        The leaf moves to the entry before that item; the item's entry stays in the
        tree (a later :meth:`add_items` grows a sibling branch, :meth:`undo` brings it
        back).  One undo step.  A message that Pi wrote (not through this session) may
        hold several items (an answer with tool calls): it leaves the branch whole,
        and its last item is returned.  Cost: O(entries between the leaf and that item).

        Raises:
            ValueError: the session is closed.
        """
        return await self._arun(self._popping())

    def _popping(self) -> _Plan[TResponseInputItem | None]:
        self._check_open()
        popped: list[FrozenDict] = []

        def pop(tree: SessionTree) -> SessionTree:
            popped.clear()
            for entry, item in _items_back(tree, tree.leaf_id, self.provider, self.model):
                popped.append(item)
                return tree.move_to(entry.parent_id)
            return tree

        yield from self._applying(pop)
        return cast("TResponseInputItem", thaw(popped[0])) if popped else None

    async def clear_session(self) -> None:
        """Empty the current branch: the leaf moves above the roots.  One undo step.

        Nothing is deleted; the next :meth:`add_items` starts a new root, and
        :meth:`undo` brings the branch back.  O(1).

        Raises:
            ValueError: the session is closed.
        """
        await self._arun(self._clearing())

    def _clearing(self) -> _Plan[None]:
        self._check_open()
        yield from self._applying(lambda tree: tree.move_to(None))

    def branch(self, at: int | str) -> None:
        """Go back to an earlier point: the next items grow a new branch from there.

        ``at`` is an index into :meth:`get_items` (negative ones count from the end)
        and keeps ``get_items()[:at + 1]``, item ``at`` included; or it is the id of
        any entry of :attr:`tree`, on any branch, which becomes the leaf.  The old
        branch stays in the tree.  One undo step (none if the leaf is already there).
        Cost: O(path length) for an index, O(1) for an id; a store session's one
        blocking update.

        Args:
            at: an index into :meth:`get_items`, or an entry id.

        Raises:
            IndexError: no item has that index.
            UnknownEntryError: (a ``KeyError``) no entry has that id.
            TypeError: ``at`` is neither an int nor a str.
            ValueError: the session is closed, or item ``at`` is not the last of a
                message that Pi wrote with several items (see :meth:`pop_item`).
        """
        self._run(self._branching(at))

    async def abranch(self, at: int | str) -> None:
        """:meth:`branch`, awaited: the event loop goes on meanwhile.

        Cost: as :meth:`branch` (O(path length) for an index, O(1) for an id), plus a
        store update for a store session.

        Args:
            at: as :meth:`branch`: an index into :meth:`get_items`, or an entry id.

        Raises:
            IndexError: no item has that index.
            UnknownEntryError: (a ``KeyError``) no entry has that id.
            TypeError: ``at`` is neither an int nor a str.
            ValueError: as :meth:`branch`.
        """
        await self._arun(self._branching(at))

    def _branching(self, at: int | str) -> _Plan[None]:
        if isinstance(at, bool) or not isinstance(at, int | str):
            raise TypeError(f"at must be an item index or an entry id, not {at!r}")
        self._check_open()
        yield from self._applying(lambda tree: self._branched(tree, at))

    def _branched(self, tree: SessionTree, at: int | str) -> SessionTree:
        if isinstance(at, int):
            leaf = tree.leaf_id
            back = _items_back(tree, leaf, self.provider, self.model)
            ids = [e.id for e, _ in back]
            ids.reverse()
            if not -len(ids) <= at < len(ids):
                raise IndexError(f"no item {at} on the current branch ({len(ids)} items)")
            target = ids[at]
            if at % len(ids) + 1 < len(ids) and ids[at % len(ids) + 1] == target:
                raise ValueError(
                    f"item {at} is not the last of the items of entry {target!r} "
                    "(a message written by Pi): branch at its last item, or at an entry id"
                )
        else:
            target = tree[at].id
        return tree.move_to(target)

    def undo(self) -> None:
        """Go back one step: the leaf returns to where it was before the last change.

        Items that the undone step added stay in the tree (off the branch); redo
        brings the branch back.  O(1), plus one ``leaf`` record in the file, or one
        store update.

        Raises:
            NothingToUndo: (an ``IndexError``) no earlier step is kept.
            ValueError: the session is closed.
        """
        self._run(self._moving(History.undo))

    async def aundo(self) -> None:
        """:meth:`undo`, awaited: the event loop goes on meanwhile.

        Cost: as :meth:`undo`: O(1) plus one ``leaf`` record in the file, or one store
        update for a store session.

        Raises:
            NothingToUndo: (an ``IndexError``) no earlier step is kept.
            ValueError: the session is closed.
        """
        await self._arun(self._moving(History.undo))

    def redo(self) -> None:
        """Go forward one undone step.  O(1), plus one ``leaf`` record in the file, or
        one store update.

        Raises:
            NothingToRedo: (an ``IndexError``) nothing was undone since the last step.
            ValueError: the session is closed.
        """
        self._run(self._moving(History.redo))

    async def aredo(self) -> None:
        """:meth:`redo`, awaited: the event loop goes on meanwhile.

        Cost: as :meth:`redo`: O(1) plus one ``leaf`` record in the file, or one store
        update for a store session.

        Raises:
            NothingToRedo: (an ``IndexError``) nothing was undone since the last step.
            ValueError: the session is closed.
        """
        await self._arun(self._moving(History.redo))

    def _moving(self, step: Callable[[History[SessionTree]], History[SessionTree]]) -> _Plan[None]:
        """Undo or redo (``step``): the leaf goes where the step leads."""
        self._check_open()
        history = step(self._history)
        leaf = history.present.leaf_id
        # The file (or the store) only grows: the tree keeps every entry, and the step
        # undone or redone to gives only where the leaf goes.
        if self._in_store:
            self._tree = yield from self._saving(lambda stored: stored.move_to(leaf))
        else:
            self._tree = yield _Write(self._tree.move_to(leaf))
        self._history = history

    def close(self) -> None:
        """Release the file (its lock) or the stores the session opened, and refuse
        further calls.  Twice is fine.

        Cost: the file writer's close (one ``fsync`` if a change is not on the disk
        yet) or the stores' close; O(1) in memory.  An async store opened on an event
        loop is closed on that loop, if it still runs (:meth:`aclose` waits for it).

        Raises:
            OSError: the file's final flush fails (it is closed all the same).
        """
        with self._lock:
            self._closed = True
            try:
                if self._writer is not None:
                    self._writer.close()
            finally:
                if self._store is not None and self._url is not None:
                    self._store.close()  # opened by the session from its URL
                opened, self._async_opened = self._async_opened, None
                _let_go(opened)
                if self._worker is not None:
                    self._worker.shutdown(wait=False)

    async def aclose(self) -> None:
        """:meth:`close`, awaited: the file's final flush on the session's worker
        thread, the async store's close awaited.  Twice is fine.

        Cost: as :meth:`close`.

        Raises:
            OSError: the file's final flush fails (it is closed all the same).
        """
        opened = self._async_opened
        if opened is not None and opened[0] is asyncio.get_running_loop():
            self._async_opened = None
        else:
            opened = None
        try:
            if self._io_blocks:
                await self._on_worker(self.close)
            else:
                self.close()
        finally:
            if opened is not None:
                await opened[1].close()

    @classmethod
    async def connect(
        cls, session_id: str, store: str | AsyncStore | Store, **kwargs: Any
    ) -> TreeSession:
        """A store session, its store opened and the session read, awaited: no thread
        for PostgreSQL (the store's worker thread for SQLite and ``jsonl:``).
        Arguments and errors as for :class:`TreeSession`.

        Cost: opening the store (a connection, for PostgreSQL) and loading the
        session, O(size of the session).

        Args:
            session_id: the SDK's session id: the store's session of that id.
            store: a store URL (the session owns the store it opens), or an open
                :class:`~ptree.stores.AsyncStore` or :class:`~ptree.stores.Store`
                (shared, left open).
            **kwargs: the other keyword arguments of :class:`TreeSession`
                (``session_settings``, ``provider``, ``model``, ``history_limit``).

        Raises:
            TypeError: ``session_id`` is not a str (raised before any I/O).
            StoreError: (a ``ValueError``) the store URL has an unknown scheme, or the
                store cannot be opened.
        """
        session = cls(session_id, store=store, **kwargs)
        try:
            await session._arun(session._loading())
        except BaseException:
            await session.aclose()
            raise
        return session

    def __repr__(self) -> str:
        if self._writer is not None:
            where = repr(self._writer.path)
        elif self._in_store:
            where = f"in store {self._url!r}" if self._url else "in a store"
        else:
            where = "in memory"
        state = "closed" if self._closed else repr(self._tree)
        return f"TreeSession({self.session_id!r}, {where}, {state})"

    # ------------------------------------------------------------------ the plans

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"TreeSession {self.session_id!r} is closed")

    def _new_header(self) -> SessionHeader:
        return SessionHeader(id=self.session_id, timestamp=utc_now(), cwd=os.getcwd())

    def _start(self, tree: SessionTree) -> None:
        """A store session's undo history begins at the first value it read."""
        if not self._started:
            self._history = History(tree, limit=self._history_limit)
            self._started = True

    def _loading(self) -> _Plan[SessionTree]:
        """A store session as stored (O(entries added since its last call)); the value
        it has when nothing is stored yet."""
        try:
            tree = yield _Call("refresh", self.session_id)
        except SessionNotFoundError:
            tree = self._tree
        self._start(tree)
        self._tree = tree
        return cast("SessionTree", tree)

    def _saving(self, change: _Change) -> _Plan[SessionTree]:
        """``change`` applied to the stored session and saved, again on a conflict."""
        while True:
            try:
                return cast("SessionTree", (yield _Call("update", self.session_id, change)))
            except SessionNotFoundError:
                pass
            try:  # the first change makes the session
                new = yield from _changed(change, self._tree)
                return cast("SessionTree", (yield _Call("save", new)))
            except ConflictError:
                continue  # another writer made it first: change theirs

    def _applying(self, change: _Change) -> _Plan[None]:
        """One step: ``change`` (pure) applied to the session, written, and recorded."""
        seen: list[SessionTree] = []

        def tracked(tree: SessionTree) -> _Plan[SessionTree]:
            new = yield from _changed(change, tree)
            seen[:] = [tree, new]
            return new

        if self._in_store:
            tree = yield from self._saving(tracked)
        else:
            new = yield from tracked(self._tree)
            if new is self._tree:
                return
            tree = yield _Write(new)
        before, after = seen
        self._start(before)
        self._tree = tree
        if after is not before:
            self._history = self._history.commit(tree)

    # ------------------------------------------------------------------ the drivers

    def _run(self, plan: _Plan[_T]) -> _T:
        """Run a plan blocking: the blocking methods, and the async ones of a session
        whose I/O blocks (on its worker thread)."""
        with self._lock:
            running = _drive(plan, self._blocking)
            try:
                running.send(None)
            except StopIteration as stop:
                return cast("_T", stop.value)
            running.close()
            raise AssertionError("a blocking step suspended")  # pragma: no cover

    @property
    def _io_blocks(self) -> bool:
        """Whether the session's I/O blocks: a Pi file, or a blocking store object."""
        return self._writer is not None or self._shared_blocking

    async def _arun(self, plan: _Plan[_T]) -> _T:
        """Run a plan for an async method: awaiting the async store, or on the
        session's worker thread (a file, a blocking store), or inline (in memory)."""
        if self._closed or not (self._in_store or self._io_blocks):
            return self._run(plan)  # in memory (or closed: it raises at once)
        if self._io_blocks:
            return await self._on_worker(self._run, plan)
        return await _drive(plan, self._awaited)

    async def _on_worker(self, call: Callable[..., _T], *args: Any) -> _T:
        """``call(*args)`` on the session's one worker thread, started by the first."""
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ptree-session")
        return await asyncio.get_running_loop().run_in_executor(self._worker, call, *args)

    async def _blocking(self, step: Any) -> Any:
        """Execute a step blocking (never suspends; a pause goes straight on)."""
        if isinstance(step, Pause):
            return None
        if isinstance(step, _Write):
            return step.tree if self._writer is None else self._writer.commit(step.tree)
        if self._store is None:
            assert self._url is not None
            self._store = open_store(self._url)
        return getattr(self._store, step.name)(*step.args)

    async def _awaited(self, step: _Call | Pause) -> Any:
        """Execute a store call on the async store of the running loop, or pause."""
        if isinstance(step, Pause):
            return await asyncio.sleep(0)
        return await getattr(await self._async_store(), step.name)(*step.args)

    async def _async_store(self) -> AsyncStore:
        """The given async store, or the one the session opened on this loop (a new
        loop opens its own)."""
        if self._async_given is not None:
            return self._async_given
        loop = asyncio.get_running_loop()
        opened = self._async_opened
        if opened is not None and opened[0] is loop:
            return opened[1]
        assert self._url is not None
        store = await open_async(self._url)
        opened = self._async_opened
        if opened is not None and opened[0] is loop:  # another task opened it meanwhile
            await store.close()
            return opened[1]
        _let_go(opened)  # a store of a loop used before
        self._async_opened = (loop, store)
        return store


def _let_go(opened: tuple[asyncio.AbstractEventLoop, AsyncStore] | None) -> None:
    """Close an async store the session opened, on its loop if that still runs (a loop
    that has ended took its connection with it)."""
    if opened is not None and opened[0].is_running():
        asyncio.run_coroutine_threadsafe(opened[1].close(), opened[0])
