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
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

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
from ..stores import ConflictError, SessionNotFoundError, Store
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


class TreeSession(Closing, AsyncClosing):
    """An OpenAI Agents SDK session kept as a ptree tree, optionally in a Pi file.

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
    ``postgresql:``, ``jsonl:``) or an open :class:`~ptree.stores.Store`, the
    session is the store's session ``session_id``: loaded when it exists, saved on
    the first change.  Every change is one ``Store.update`` (load what is stored,
    apply the change, save; again on a :class:`~ptree.stores.ConflictError`), so
    any number of session objects, tasks and processes may add to one session and
    none of their items is lost; :meth:`get_items` reads what is stored.  The
    store's calls block, so the async methods run them in a worker thread
    (``asyncio.to_thread``) and the event loop goes on; :meth:`abranch`,
    :meth:`aundo` and :meth:`aredo` do the same for :meth:`branch`, :meth:`undo`
    and :meth:`redo`.  A URL opens a store of the session's own, closed with it; a
    store object is shared and left open.  :meth:`connect` builds one off the loop.

    Without a store, the methods are quick (O(size of the items) plus the path
    walk described on each), so the async ones do their work inline, without a
    thread; with ``fsync=True`` a change waits for the disk.  A lock makes each
    call atomic between threads.

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
        store: a store URL or an open store keeping the session (not with ``path``
            or ``tree``).  Opening it connects (PostgreSQL) and loads the session:
            blocking work, which :meth:`connect` does off the event loop.

    Raises:
        TypeError: ``session_id`` is not a str (nothing is opened or stored).
        StoreError: (a ``ValueError``) the store URL has an unknown scheme (the
            message names it) or the store cannot be opened.
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
        store: str | Store | None = None,
    ) -> None:
        if not isinstance(session_id, str):
            raise TypeError(f"session_id must be a str, not {type(session_id).__name__}")
        if sum(x is not None for x in (path, tree, store)) > 1:
            raise ValueError(
                "give one of path (a Pi file), tree (in memory) and store (a store URL)"
            )
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
        self._store: Store | None = None
        self._own_store = False
        if store is not None:
            self._store = open_store(store) if isinstance(store, str) else store
            self._own_store = isinstance(store, str)
            try:
                self._tree = self._stored() or SessionTree(header=self._new_header())
            except BaseException:
                self.close()
                raise
        elif path is not None:
            self._writer = SessionWriter(path, fsync=fsync, header=self._new_header())
            self._tree = self._writer.value
        else:
            self._tree = SessionTree() if tree is None else tree
        self._history: History[SessionTree] = History(self._tree, limit=history_limit)
        # The function calls on the branch ending at the leaf named here: an add_items
        # right after another (a run's usual pattern) need not walk the path again.
        self._calls: tuple[str | None, dict[str, tuple[str, str]]] | None = None

    # ------------------------------------------------------------------ reading

    @property
    def tree(self) -> SessionTree:
        """The current value: every entry ever added, the leaf where the session is."""
        return self._tree

    @property
    def history(self) -> History[SessionTree]:
        """The undo history: the tree after each step; its present is the last step."""
        return self._history

    @property
    def path(self) -> str | None:
        """The Pi session file, or ``None`` for a session in memory."""
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
        ``limit``-th item from the end) with a limit.  Measured on 50,000 small items
        (a loaded 2-core machine): all of them 0.7-0.8 s, mostly the copy, as
        ``SQLiteSession`` (0.7 s); the latest 10 in 0.1 ms (``SQLiteSession``: 0.1 s).

        Raises:
            ValueError: the session is closed.
        """
        if self._store is not None:
            return await asyncio.to_thread(self._get_items, limit)
        return self._get_items(limit)

    def _get_items(self, limit: int | None) -> list[TResponseInputItem]:
        with self._lock:
            self._check_open()
            if self._store is not None:
                self._tree = self._stored() or self._tree
            wanted = resolve_session_limit(limit, self.session_settings)
            if wanted == 0:
                return []
            tree = self._tree
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
        """Add items under the current leaf, as one undo step and one file write.

        Each item becomes one entry (see the module doc for the Pi message it gets);
        the last one is the new leaf.  An empty list changes nothing.  Cost: O(size of
        the items), plus one walk of the current path to name the tool results.

        Raises:
            InvalidMessageError: (a ``ValueError``) an item is not a JSON-like mapping;
                nothing is added then.
            ValueError: the session is closed.
        """
        if self._store is not None:
            await asyncio.to_thread(self._add_items, items)
        else:
            self._add_items(items)

    def _add_items(self, items: list[TResponseInputItem]) -> None:
        with self._lock:
            self._check_open()
            if not items:
                return
            frozen: list[FrozenDict] = []
            for i, given in enumerate(items):
                if not isinstance(given, Mapping):
                    raise InvalidMessageError(
                        f"items[{i}]", f"an item must be a mapping, not {type(given).__name__}"
                    )
                frozen.append(freeze(given, where=f"items[{i}]"))
            self._apply(lambda tree: self._added(tree, frozen))

    def _added(self, tree: SessionTree, frozen: list[FrozenDict]) -> SessionTree:
        """``tree`` with the entries of ``frozen`` under its leaf (pure: may run again)."""
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
        if self._store is not None:
            return await asyncio.to_thread(self._pop_item)
        return self._pop_item()

    def _pop_item(self) -> TResponseInputItem | None:
        popped: list[FrozenDict] = []

        def pop(tree: SessionTree) -> SessionTree:
            popped.clear()
            for entry, item in _items_back(tree, tree.leaf_id, self.provider, self.model):
                popped.append(item)
                return tree.move_to(entry.parent_id)
            return tree

        with self._lock:
            self._check_open()
            self._apply(pop)
            return cast("TResponseInputItem", thaw(popped[0])) if popped else None

    async def clear_session(self) -> None:
        """Empty the current branch: the leaf moves above the roots.  One undo step.

        Nothing is deleted; the next :meth:`add_items` starts a new root, and
        :meth:`undo` brings the branch back.  O(1).

        Raises:
            ValueError: the session is closed.
        """
        if self._store is not None:
            await asyncio.to_thread(self._clear)
        else:
            self._clear()

    def _clear(self) -> None:
        with self._lock:
            self._check_open()
            self._apply(lambda tree: tree.move_to(None))

    def branch(self, at: int | str) -> None:
        """Go back to an earlier point: the next items grow a new branch from there.

        ``at`` is an index into :meth:`get_items` (negative ones count from the end)
        and keeps ``get_items()[:at + 1]``, item ``at`` included; or it is the id of
        any entry of :attr:`tree`, on any branch, which becomes the leaf.  The old
        branch stays in the tree.  One undo step (none if the leaf is already there).
        Cost: O(path length) for an index, O(1) for an id.

        Raises:
            IndexError: no item has that index.
            UnknownEntryError: (a ``KeyError``) no entry has that id.
            TypeError: ``at`` is neither an int nor a str.
            ValueError: the session is closed, or item ``at`` is not the last of a
                message that Pi wrote with several items (see :meth:`pop_item`).
        """
        if isinstance(at, bool) or not isinstance(at, int | str):
            raise TypeError(f"at must be an item index or an entry id, not {at!r}")
        with self._lock:
            self._check_open()
            self._apply(lambda tree: self._branched(tree, at))

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
        brings the branch back.  O(1), plus one ``leaf`` record in the file.

        Raises:
            NothingToUndo: (an ``IndexError``) no earlier step is kept.
            ValueError: the session is closed.
        """
        self._move(History.undo)

    def redo(self) -> None:
        """Go forward one undone step.  O(1), plus one ``leaf`` record in the file.

        Raises:
            NothingToRedo: (an ``IndexError``) nothing was undone since the last step.
            ValueError: the session is closed.
        """
        self._move(History.redo)

    def close(self) -> None:
        """Release the file (its lock) and refuse further calls.  Twice is fine.

        Cost: the file writer's close (one ``fsync`` if a change is not on the disk
        yet) or, for a store the session opened itself, the store's close; O(1) in
        memory.

        Raises:
            OSError: the file's final flush fails (it is closed all the same).
        """
        with self._lock:
            self._closed = True
            if self._writer is not None:
                self._writer.close()
            if self._store is not None and self._own_store:
                self._store.close()

    async def abranch(self, at: int | str) -> None:
        """:meth:`branch`, off the event loop (in a worker thread) for a store session.

        Cost: as :meth:`branch` (O(path length) for an index, O(1) for an id), plus a
        store update for a store session.  Raises what :meth:`branch` raises.

        Args:
            at: as :meth:`branch`: an index into :meth:`get_items`, or an entry id.
        """
        await self._off_loop(self.branch, at)

    async def aundo(self) -> None:
        """:meth:`undo`, off the event loop (in a worker thread) for a store session.

        Cost: as :meth:`undo`: O(1) plus one ``leaf`` record in the file, or one store
        update for a store session.  Raises what :meth:`undo` raises.
        """
        await self._off_loop(self.undo)

    async def aredo(self) -> None:
        """:meth:`redo`, off the event loop (in a worker thread) for a store session.

        Cost: as :meth:`redo`: O(1) plus one ``leaf`` record in the file, or one store
        update for a store session.  Raises what :meth:`redo` raises.
        """
        await self._off_loop(self.redo)

    async def aclose(self) -> None:
        """:meth:`close`, off the event loop (in a worker thread) for a store session.

        Cost: as :meth:`close`.  Raises what :meth:`close` raises.
        """
        await self._off_loop(self.close)

    @classmethod
    async def connect(cls, session_id: str, store: str | Store, **kwargs: Any) -> TreeSession:
        """A store session built in a worker thread: opening the store and loading the
        session do not block the event loop.  Arguments and errors as for
        :class:`TreeSession`.

        Cost: opening the store (a connection, for PostgreSQL) and loading the
        session, O(size of the session), all in the worker thread.

        Args:
            session_id: the SDK's session id: the store's session of that id.
            store: a store URL (the session owns the store it opens) or an open
                :class:`~ptree.stores.Store` (shared, left open).
            **kwargs: the other keyword arguments of :class:`TreeSession`
                (``session_settings``, ``provider``, ``model``, ``history_limit``).

        Raises:
            TypeError: ``session_id`` is not a str (raised before any thread starts).
            StoreError: (a ``ValueError``) the store URL has an unknown scheme, or the
                store cannot be opened.
        """
        if not isinstance(session_id, str):
            raise TypeError(f"session_id must be a str, not {type(session_id).__name__}")
        return await asyncio.to_thread(lambda: cls(session_id, store=store, **kwargs))

    def __repr__(self) -> str:
        where = "in memory" if self._writer is None else repr(self._writer.path)
        state = "closed" if self._closed else repr(self._tree)
        return f"TreeSession({self.session_id!r}, {where}, {state})"

    # ------------------------------------------------------------------ internals

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"TreeSession {self.session_id!r} is closed")

    async def _off_loop(self, call: Callable[..., None], *args: Any) -> None:
        if self._store is not None:
            await asyncio.to_thread(call, *args)
        else:
            call(*args)

    def _new_header(self) -> SessionHeader:
        return SessionHeader(id=self.session_id, timestamp=utc_now(), cwd=os.getcwd())

    def _stored(self) -> SessionTree | None:
        """The session as stored (incremental after the first read), or ``None``."""
        assert self._store is not None
        try:
            return self._store.update(self.session_id, lambda tree: tree)
        except SessionNotFoundError:
            return None

    def _saved(self, change: Callable[[SessionTree], SessionTree]) -> SessionTree:
        """``change`` applied to the stored session and saved, again on a conflict."""
        assert self._store is not None
        while True:
            try:
                return self._store.update(self.session_id, change)
            except SessionNotFoundError:
                pass
            try:  # the first change makes the session
                return self._store.save(change(self._tree))
            except ConflictError:
                continue  # another writer made it first: change theirs

    def _apply(self, change: Callable[[SessionTree], SessionTree]) -> None:
        """One step: ``change`` (pure) applied to the session, written, and recorded."""
        if self._store is None:
            self._step(change(self._tree))
            return
        changed: list[bool] = []

        def tracked(tree: SessionTree) -> SessionTree:
            new = change(tree)
            changed[:] = [new is not tree]
            return new

        tree = self._saved(tracked)
        self._tree = tree
        if changed == [True]:
            self._history = self._history.commit(tree)

    def _commit(self, tree: SessionTree) -> SessionTree:
        if self._writer is not None:
            tree = self._writer.commit(tree)
        elif self._store is not None:
            leaf = tree.leaf_id
            tree = self._saved(lambda stored: stored.move_to(leaf))
        self._tree = tree
        return tree

    def _step(self, tree: SessionTree) -> None:
        if tree is self._tree:
            return
        self._history = self._history.commit(self._commit(tree))

    def _move(self, step: Callable[[History[SessionTree]], History[SessionTree]]) -> None:
        """Undo or redo (``step``): the leaf goes where the step leads."""
        with self._lock:
            self._check_open()
            history = step(self._history)
            # The file only grows: the tree keeps every entry, and the step undone or
            # redone to gives only where the leaf goes.
            self._commit(self._tree.move_to(history.present.leaf_id))
            self._history = history
