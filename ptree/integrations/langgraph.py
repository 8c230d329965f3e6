"""LangGraph checkpoints in a ptree store: :class:`TreeSaver`.

A LangGraph *thread* is one ptree session (its id is the thread id) in any store
:func:`ptree.stores.open` takes.  Every checkpoint is one ``custom`` entry (type
``langgraph.checkpoint``) under its parent checkpoint, so a run resumed from a past
checkpoint, or an ``update_state`` on one, grows a branch; ``ptree show`` and the HTML
viewer draw them.

A channel holding a list of LangChain messages (the ``messages`` of a
``MessagesState``, grown with ``add_messages``) is not stored whole at every step, as
other savers do: each checkpoint names how many of its parent's messages it keeps and
which messages follow, and each message is a Pi ``message`` entry.  The path to a
checkpoint's entry holds exactly the messages of its messages channel
(:attr:`TreeSaver.messages_channel`), in order, so :func:`ptree.build_context` at any
checkpoint's entry is the conversation of its state: a checkpoint's new messages go
before it, its parent's writes and their messages come between the two as long as
they are its next messages, and other messages (a run's input, before the step that
adds it) go after it.  LangChain's types map onto Pi's:

- ``HumanMessage`` → ``user``; ``AIMessage`` → ``assistant`` (text blocks, its tool
  calls as ``toolCall`` blocks, ``usage_metadata`` as ``usage``, ``model_name`` as
  ``model``); ``ToolMessage`` → ``toolResult`` (``isError`` when its status is
  ``"error"``); ``SystemMessage`` → Pi 1.6's ``system`` message; any other type a
  message of role ``langchain`` (never sent to a model).
- The original, as the saver's serializer writes it (without its id, which is kept
  beside it), is kept whole in the entry's ``langchain`` field: loading gives back
  messages ``==`` to those saved.  A message written by a node (a pending write)
  before ``add_messages`` gave it an id is the same entry: the checkpoint that holds
  it names the id.

So a thread's storage grows with the length of its conversation, not its square. A
checkpoint's entry leaves out what most checkpoints say: channel versions as changed
since its parent's (not even named when they are one more than the parent's highest, for
the channels it stores), the metadata items ``source: "loop"``, ``parents: {}`` and a
``step`` one more than the parent's, and the rest of the checkpoint when it is
LangGraph's usual one (format 4, its updated channels those given a value). Other
channels, checkpoint metadata and pending writes are stored as the saver's serializer
gives them; messages inside them (the input of a run, a node's write) are references to
the message entries (a ``RemoveMessage``, an instruction to ``add_messages``, is stored
as the serializer writes it). A checkpoint whose list drops one of its parent's messages
(removed, replaced) branches off above that message: the messages after it are stored
again, on that branch.

Imports: the core, :mod:`ptree.stores`, and ``langgraph`` (the extra
``ptree[langgraph]``).
"""

from __future__ import annotations

import asyncio
import base64
import builtins
import contextlib
import functools
import inspect
import json
import math
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from ..entries import Custom, MessageEntry
from ..frozen import FrozenList, thaw
from ..header import SessionHeader
from ..ids import counter_ids, utc_now
from ..stores import ConflictError, SessionNotFoundError, Store
from ..stores import open as open_store
from ..tree import SessionTree

__all__ = [
    "CHECKPOINT_TYPE",
    "DELETED_TYPE",
    "MESSAGE_FIELD",
    "WRITES_TYPE",
    "CheckpointSerializationError",
    "ThreadIdError",
    "TreeSaver",
    "pi_message",
]

CHECKPOINT_TYPE = "langgraph.checkpoint"
"""The ``customType`` of a checkpoint's entry."""
WRITES_TYPE = "langgraph.writes"
"""The ``customType`` of an entry holding one task's pending writes to a checkpoint."""
DELETED_TYPE = "langgraph.deleted"
"""The ``customType`` of an entry hiding checkpoints (``delete_for_runs``, ``prune``)."""
MESSAGE_FIELD = "langchain"
"""The message entry field keeping the LangChain original, ``[kind, data, id]``: kind
``"lc:<type>"`` with the message's fields as JSON (its ``content`` left out when it is
the Pi message's text), or the serializer's type with its bytes in base64."""

_T = TypeVar("_T")
_P = ParamSpec("_P")


class CheckpointSerializationError(TypeError):
    """A value of a checkpoint (or of a pending write) the serializer cannot write.

    Nothing of that ``put`` or ``put_writes`` was stored.  A ``TypeError``, as
    ``json.dumps`` raises for a value it cannot write.

    Attributes:
        thread_id: the thread.
        checkpoint_id: the checkpoint being written (or the one the writes belong to).
        channel: the channel whose value failed (``None`` for metadata).
        reason: why it failed: the serializer's error, as ``"Type: message"``.
    """

    def __init__(self, thread_id: str, checkpoint_id: str, channel: str | None, reason: str):
        self.thread_id = thread_id
        self.checkpoint_id = checkpoint_id
        self.channel = channel
        self.reason = reason
        what = "the metadata" if channel is None else f"channel {channel!r}"
        super().__init__(
            f"thread {thread_id!r}, checkpoint {checkpoint_id!r}: {what} cannot be "
            f"serialized: {reason}"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.thread_id, self.checkpoint_id, self.channel, self.reason))


class ThreadIdError(TypeError):
    """A thread id that is not a non-empty string (a ptree session id is one).

    Attributes:
        thread_id: what was given.
    """

    def __init__(self, thread_id: object):
        self.thread_id = thread_id
        super().__init__(
            f"a thread id is a non-empty str, not {type(thread_id).__name__} {thread_id!r}"
        )


# ---------------------------------------------------------------------- Pi messages


def _text_blocks(content: str | list[Any]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, str):
            blocks.append({"type": "text", "text": part})
        elif isinstance(part, Mapping) and part.get("type") == "text":
            text = part.get("text")
            if isinstance(text, str):
                blocks.append({"type": "text", "text": text})
    return blocks


def _plain_text(content: str | list[Any]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in _text_blocks(content))


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def pi_message(message: BaseMessage, timestamp_ms: int = 0) -> dict[str, Any]:
    """The Pi message that stands for a LangChain message (see the module doc).

    Cost: O(size of the message).

    Args:
        message: a LangChain message (human, AI, tool, system, chat or any other type).
        timestamp_ms: the Pi message's ``timestamp``, in Unix milliseconds.

    >>> from langchain_core.messages import AIMessage
    >>> m = AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1}, "id": "c1"}])
    >>> pi_message(m)["content"]
    [{'type': 'toolCall', 'id': 'c1', 'name': 'add', 'arguments': {'a': 1}}]
    """
    if isinstance(message, HumanMessage) or (
        isinstance(message, ChatMessage) and message.role in ("user", "human")
    ):
        content = message.content
        if isinstance(content, str):
            return {"role": "user", "content": content, "timestamp": timestamp_ms}
        return {"role": "user", "content": _text_blocks(content), "timestamp": timestamp_ms}
    if isinstance(message, SystemMessage) or (
        isinstance(message, ChatMessage) and message.role == "system"
    ):
        return {
            "role": "system",
            "content": _plain_text(message.content),
            "timestamp": timestamp_ms,
        }
    if isinstance(message, ToolMessage):
        return {
            "role": "toolResult",
            "toolCallId": message.tool_call_id,
            "toolName": message.name or "",
            "content": [{"type": "text", "text": _plain_text(message.content)}],
            "isError": message.status == "error",
            "timestamp": timestamp_ms,
        }
    if isinstance(message, AIMessage) or (
        isinstance(message, ChatMessage) and message.role in ("assistant", "ai")
    ):
        blocks = _text_blocks(message.content)
        calls = getattr(message, "tool_calls", None) or []
        for call in calls:
            blocks.append(
                {
                    "type": "toolCall",
                    "id": call.get("id") or "",
                    "name": call["name"],
                    "arguments": call.get("args", {}),
                }
            )
        meta = message.response_metadata
        usage = getattr(message, "usage_metadata", None) or {}
        tokens_in, tokens_out = _int(usage.get("input_tokens")), _int(usage.get("output_tokens"))
        details = usage.get("input_token_details") or {}
        return {
            "role": "assistant",
            "content": blocks,
            "api": "langchain",
            "provider": str(meta.get("model_provider") or "langchain"),
            "model": str(meta.get("model_name") or meta.get("model") or "unknown"),
            "usage": {
                "input": tokens_in,
                "output": tokens_out,
                "cacheRead": _int(details.get("cache_read")),
                "cacheWrite": _int(details.get("cache_creation")),
                "totalTokens": _int(usage.get("total_tokens")) or tokens_in + tokens_out,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "toolUse" if calls else "stop",
            "timestamp": timestamp_ms,
        }
    return {
        "role": "langchain",
        "type": message.type,
        "content": _text_blocks(message.content),
        "timestamp": timestamp_ms,
    }


# ---------------------------------------------------------------------- encoding


def _is_plain_json(value: object) -> bool:
    """Whether ``value`` is JSON that reads back as itself (dicts with str keys, lists,
    str, int, finite float, bool, None; no tuples).  Iterative, O(size)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if v is None or isinstance(v, (str, bool, int)):
            continue
        if type(v) is float:
            if not math.isfinite(v):
                return False
        elif type(v) is dict:
            for k, item in v.items():
                if type(k) is not str:
                    return False
                stack.append(item)
        elif type(v) is list:
            stack.extend(v)
        else:
            return False
    return True


def _is_message(value: object) -> bool:
    """A message stored as a message entry: not a ``RemoveMessage``, which is an
    instruction to ``add_messages`` (stored as the serializer writes it)."""
    return isinstance(value, BaseMessage) and not isinstance(value, RemoveMessage)


def _is_message_list(value: object) -> bool:
    return type(value) is list and all(_is_message(m) for m in value)


@dataclass
class _Ckpt:
    """What a thread's checkpoint entry says, read once."""

    entry_id: str
    ns: str
    checkpoint_id: str
    parent: str | None
    data: Any  # the entry's frozen data
    timestamp: str  # the entry's: the checkpoint's ts, unless its data has another


@dataclass
class _Thread:
    """What the saver knows of one stored thread, kept in step with its tree."""

    tree: SessionTree
    checkpoints: dict[tuple[str, str], _Ckpt] = field(default_factory=dict)
    tails: dict[tuple[str, str], str] = field(default_factory=dict)
    writes: dict[tuple[str, str], dict[tuple[str, int], tuple[str, Any, str, int]]] = field(
        default_factory=dict
    )
    deleted: set[tuple[str, str]] = field(default_factory=set)
    latest: dict[str, str] = field(default_factory=dict)
    # message entry id -> its LangChain fields, read once
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    # checkpoint entry id -> the step of its metadata
    steps: dict[str, Any] = field(default_factory=dict)
    # checkpoint entry id -> its whole (channel versions, versions seen)
    fulls: dict[str, tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=dict)
    # ns -> the last entry of the namespace's current run: where its next entries go
    frontier: dict[str, str] = field(default_factory=dict)
    # (serializer type, base64 of the message without id) -> [(entry id, stored id)]
    messages: dict[tuple[str, str], list[tuple[str, str | None]]] = field(default_factory=dict)
    # message entry id -> the checkpoint it follows directly (a run's input, put after it)
    follows: dict[str, tuple[str, str]] = field(default_factory=dict)
    order: int = 0

    def absorb(self, entries: Sequence[Any]) -> None:
        for entry in entries:
            self.order += 1
            if isinstance(entry, MessageEntry):
                original = entry.extra.get(MESSAGE_FIELD)
                if original is not None:
                    key = _stored_key(original, entry.message)
                    self.messages.setdefault(key, []).append((entry.id, original[2]))
                self.follow(entry)
                continue
            if not isinstance(entry, Custom):
                continue
            data = entry.data
            if entry.custom_type in (CHECKPOINT_TYPE, WRITES_TYPE):
                ns = data.get("ns", "")
                here = self.frontier.get(ns)
                if (
                    here is None
                    or entry.custom_type == CHECKPOINT_TYPE
                    or self.tree.is_ancestor(here, entry.id)
                ):
                    self.frontier[ns] = entry.id
            if entry.custom_type == CHECKPOINT_TYPE:
                cid = data["id"]
                parent = data["parent"] if "parent" in data else self.above(entry, ns)
                self.checkpoints[(ns, cid)] = _Ckpt(
                    entry.id, ns, cid, parent, data, entry.timestamp
                )
                self.tails[(ns, cid)] = entry.id
                if (ns, cid) not in self.deleted and cid > self.latest.get(ns, ""):
                    self.latest[ns] = cid
            elif entry.custom_type == WRITES_TYPE:
                key2 = (ns, data["checkpoint"] if "checkpoint" in data else self.above(entry, ns))
                bucket = self.writes.setdefault(key2, {})
                for idx, channel, value in data["writes"]:
                    slot = (data["task"], idx)
                    if idx >= 0 and slot in bucket:
                        continue
                    bucket[slot] = (channel, value, data.get("path", ""), self.order)
                self.tails[key2] = entry.id
            elif entry.custom_type == DELETED_TYPE:
                touched: set[str] = set()
                for ns, cid in data["checkpoints"]:
                    self.deleted.add((ns, cid))
                    touched.add(ns)
                for ns in touched:
                    live = [
                        c for (n, c) in self.checkpoints if n == ns and (n, c) not in self.deleted
                    ]
                    if live:
                        self.latest[ns] = max(live)
                    else:
                        self.latest.pop(ns, None)

    def follow(self, entry: MessageEntry) -> None:
        """A message entry right after a checkpoint (or after such a message) is where
        the checkpoint's writes and its next checkpoint go: they hold it."""
        parent = entry.parent_id
        if parent is None:
            return
        above = self.tree.get(parent)
        if isinstance(above, Custom) and above.custom_type == CHECKPOINT_TYPE:
            key: tuple[str, str] | None = (above.data.get("ns", ""), above.data["id"])
        else:
            key = self.follows.get(parent)
        if key is None or self.tails.get(key) != parent:
            return
        self.tails[key] = entry.id
        self.follows[entry.id] = key
        if self.frontier.get(key[0]) == parent:
            self.frontier[key[0]] = entry.id

    def above(self, entry: Any, ns: str) -> Any:
        """The id of the nearest checkpoint of ``ns`` above ``entry``, what an entry
        whose parent (or checkpoint) is that one leaves out."""
        return (
            None if entry.parent_id is None else _nearest_checkpoint(self.tree, entry.parent_id, ns)
        )

    def full(self, ckpt: _Ckpt) -> tuple[dict[str, Any], dict[str, Any]]:
        """The checkpoint's channel versions and versions seen, whole: its entry keeps
        what changed since its parent's.  O(checkpoints since one already built)."""
        chain: list[_Ckpt] = []
        current: _Ckpt | None = ckpt
        while current is not None and current.entry_id not in self.fulls:
            chain.append(current)
            if current.data.get("full"):
                current = None
            else:
                current = self.checkpoints.get((current.ns, current.parent or ""))
        base = ({}, {}) if current is None else self.fulls[current.entry_id]
        for c in reversed(chain):
            versions, seen = dict(base[0]), dict(base[1])
            # Without "versions", the bumped channels are those of the values.
            bumped = c.data.get("bumped", () if "versions" in c.data else c.data["values"])
            versions.update(dict.fromkeys(bumped, _next_version(versions)))
            versions.update(thaw(c.data.get("versions", {})))
            for channel in c.data.get("dropped", ()):
                versions.pop(channel, None)
            seen.update(thaw(c.data["seen"]))
            for node in c.data.get("unseen", ()):
                seen.pop(node, None)
            base = self.fulls[c.entry_id] = (versions, seen)
        return base

    def live(self, ns: str, cid: str) -> _Ckpt | None:
        if (ns, cid) in self.deleted:
            return None
        return self.checkpoints.get((ns, cid))


_Where = tuple[str, str, str | None]
"""Where a value is being written: thread, checkpoint, channel (``None``: metadata)."""


@dataclass
class _Build:
    """A change being made to a thread: its state, the tree so far, the message entries
    made so far (not in ``state`` until saved)."""

    state: _Thread
    tree: SessionTree
    messages: dict[tuple[str, str], list[tuple[str, str | None]]] = field(default_factory=dict)


def _ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _on_worker_thread(
    method: Callable[Concatenate[TreeSaver, _P], _T],
) -> Callable[Concatenate[TreeSaver, _P], Coroutine[Any, Any, _T]]:
    """The async twin of a blocking :class:`TreeSaver` method (``put`` gives ``aput``):
    the same call, through :meth:`TreeSaver._in_thread` so it does not block the loop.
    The method is looked up on the instance at each call, as a subclass may replace it."""
    name = method.__name__

    async def twin(self: TreeSaver, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        blocking = cast(Callable[_P, _T], getattr(self, name))
        return await self._in_thread(blocking, *args, **kwargs)

    functools.update_wrapper(twin, method)  # the signature the documentation shows
    twin.__name__ = f"a{name}"
    twin.__qualname__ = f"TreeSaver.a{name}"
    params = list(inspect.signature(method).parameters)[1:]
    twin.__doc__ = (
        f":meth:`{name}` on a worker thread: the event loop does not wait on the store.\n\n"
        f"Cost: as :meth:`{name}`, plus a hand-over to the thread pool.  Raises what "
        f":meth:`{name}` raises.\n\nArgs:\n"
        + "".join(f"    {p}: as :meth:`{name}`.\n" for p in params)
        + _raises_section(method)
    )
    return twin


def _raises_section(method: Callable[..., Any]) -> str:
    """The ``Raises:`` section of ``method``'s docstring (dedented), or ``""``."""
    lines = inspect.cleandoc(method.__doc__ or "").splitlines()
    try:
        start = lines.index("Raises:")
    except ValueError:
        return ""
    section = [lines[start]]
    for line in lines[start + 1 :]:
        if line and not line.startswith(" "):
            break
        section.append(line)
    return "\n" + "\n".join(section).rstrip() + "\n"


class TreeSaver(BaseCheckpointSaver[int]):
    """A LangGraph checkpointer keeping each thread as a ptree tree in a store.

    Args:
        store: a store URL (``sqlite:///abs/path.db``, ``postgresql://…``,
            ``jsonl:///abs/dir``; see :func:`ptree.stores.open`) or an open
            :class:`~ptree.stores.Store` (then :meth:`close` leaves it open).
        serde: the serializer for channel values, metadata and writes (LangGraph's
            default ``JsonPlusSerializer`` if not given).

    The blocking methods (``put``, ``get_tuple``, …) are the store's calls; the async
    ones (``aput``, ``aget_tuple``, …) run them on a worker thread, so the event loop
    never waits on the database.  One saver may be shared by threads and tasks; any
    number of processes may share one store (a lost race is retried).

    Cost: ``put`` and ``put_writes`` append O(new messages + changed channels)
    entries; reading a checkpoint walks its ancestors (O(depth)) and decodes its
    messages, O(length of the conversation).  The saver keeps each thread it used
    (up to ``threads_kept``) in memory, and brings it up to date by reading only what
    other writers added since.

    Raises:
        StoreError: (a ``ValueError``) a store URL of an unknown scheme, naming it.

    >>> from langgraph.graph import StateGraph, MessagesState, START
    >>> from langchain_core.messages import AIMessage
    >>> builder = StateGraph(MessagesState)
    >>> _ = builder.add_node("bot", lambda state: {"messages": [AIMessage("Hello!")]})
    >>> _ = builder.add_edge(START, "bot")
    >>> config = {"configurable": {"thread_id": "t1"}}
    >>> with TreeSaver("sqlite:///:memory:") as saver:
    ...     graph = builder.compile(checkpointer=saver)
    ...     out = graph.invoke({"messages": [("user", "hi")]}, config)
    ...     tree = saver.thread("t1")
    >>> [m.content for m in out["messages"]]
    ['hi', 'Hello!']
    >>> [m["role"] for m in tree.current_path() if "role" in m]
    ['user', 'assistant']
    """

    threads_kept = 64
    messages_channel = "messages"
    """The channel whose messages a checkpoint's path holds (``MessagesState``'s):
    ``build_context`` at a checkpoint's entry gives exactly them."""

    def __init__(self, store: str | Store, *, serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        if isinstance(store, Store):
            self._store, self._owns = store, False
        else:
            self._store, self._owns = open_store(store), True
        self._lock = threading.RLock()
        self._threads: OrderedDict[str, _Thread] = OrderedDict()
        # (thread, ns, checkpoint id) -> writes to a checkpoint not stored yet
        self._deferred: dict[tuple[str, str, str], list[tuple[Any, str, str]]] = {}
        # (thread, ns, channel) -> (checkpoint id, the message list put, its refs)
        self._recent: dict[tuple[str, str, str], tuple[str, list[Any], list[Any]]] = {}

    @property
    def store(self) -> Store:
        """The store the threads are kept in."""
        return self._store

    def close(self) -> None:
        """Close the store, if the saver opened it.

        Cost: the store's ``close`` (releasing its connection), O(1) otherwise.
        """
        if self._owns:
            self._store.close()

    def __enter__(self) -> TreeSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> TreeSaver:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._in_thread(self.close)

    # ------------------------------------------------------------------ the async seam

    @staticmethod
    async def _in_thread(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """Run a blocking store call off the event loop: the one place an async store
        would replace."""
        return await asyncio.to_thread(fn, *args, **kwargs)

    # ------------------------------------------------------------------ threads

    def thread(self, thread_id: str) -> SessionTree:
        """The thread's tree as stored now (for ``ptree`` tools, ``build_context``).

        Cost: the store's :meth:`~ptree.stores.Store.refresh` (a SQL store reads only
        the entries added since the saver last read the thread), then O(entries
        added) to bring the saver's view up to date (O(entries of the thread) for a
        thread it does not keep in memory).

        Args:
            thread_id: the LangGraph thread id (the session's id).

        Raises:
            SessionNotFoundError: (a ``KeyError``) no such thread.
            ThreadIdError: (a ``TypeError``) ``thread_id`` is not a non-empty string.
        """
        return self._sync(_thread_id(thread_id), self._store.refresh(thread_id)).tree

    def _sync(self, thread_id: str, tree: SessionTree) -> _Thread:
        """The thread's state for ``tree``, from the kept one when ``tree`` grew from it."""
        with self._lock:
            state = self._threads.get(thread_id)
            if state is not None:
                self._threads.move_to_end(thread_id)
                if state.tree is tree:
                    return state
                added = tree.added_since(state.tree)
                if added is not None:
                    state.tree = tree
                    state.absorb(added)
                    return state
            state = _Thread(tree)
            state.absorb(tree.entries())
            self._threads[thread_id] = state
            while len(self._threads) > self.threads_kept:
                self._threads.popitem(last=False)
            return state

    def _read(self, thread_id: str) -> _Thread | None:
        try:
            tree = self._store.refresh(thread_id)
        except SessionNotFoundError:
            with self._lock:
                self._threads.pop(thread_id, None)
            return None
        return self._sync(thread_id, tree)

    def _change(self, thread_id: str, fn: Callable[[_Thread], SessionTree]) -> None:
        """Apply ``fn`` to the stored thread and save, as one compare-and-swap."""

        def step(tree: SessionTree) -> SessionTree:
            return fn(self._sync(thread_id, tree))

        for _ in range(64):
            try:
                saved = self._store.update(thread_id, step)
            except SessionNotFoundError:
                # A new thread: its header and first entries in one save (nothing
                # stored if fn fails); another writer making it first is a conflict.
                header = SessionHeader(id=thread_id, timestamp=utc_now(), cwd="/")
                try:
                    saved = self._store.save(step(SessionTree(header=header)))
                except ConflictError:
                    continue
            self._sync(thread_id, saved)
            return
        raise ConflictError(thread_id, self._store.url, "the thread kept changing")

    # ------------------------------------------------------------------ encoding

    def _typed(self, value: Any, why: _Where) -> list[str]:
        try:
            kind, data = self.serde.dumps_typed(value)
        except Exception as exc:  # the serializer's own errors vary
            raise CheckpointSerializationError(
                why[0], why[1], why[2], f"{type(exc).__name__}: {exc}"
            ) from exc
        return [kind, base64.b64encode(data).decode("ascii")]

    def _untyped(self, value: Sequence[str]) -> Any:
        return self.serde.loads_typed((value[0], base64.b64decode(value[1])))

    def _encode_value(self, value: Any, build: _Build, why: _Where) -> Any:
        """A channel's or write's value: messages in it as references to message
        entries (made when new), the rest as the serializer writes it."""
        if _is_message(value):
            return {"r": self._intern(value, build, why, None)}
        if _is_message_list(value) and value:
            return {"rl": [self._intern(m, build, why, None) for m in value]}
        if (
            type(value) is dict
            and all(type(k) is str for k in value)
            and any(_is_message(v) or (_is_message_list(v) and v) for v in value.values())
        ):
            return {"rd": {k: self._encode_value(v, build, why) for k, v in value.items()}}
        typed = self._typed(value, why)
        return typed if typed[1] else typed[:1]

    def _decode_value(self, value: Any, state: _Thread) -> Any:
        if isinstance(value, (list, FrozenList)):
            return self._untyped([value[0], value[1] if len(value) > 1 else ""])
        if "r" in value:
            return self._message(value["r"], state)
        if "rl" in value:
            return [self._message(r, state) for r in value["rl"]]
        return {k: self._decode_value(v, state) for k, v in value["rd"].items()}

    def _intern(
        self, message: BaseMessage, build: _Build, why: _Where, avoid: set[str] | None
    ) -> Any:
        """A reference to a message entry holding ``message``: ``entry_id``, or
        ``[entry_id, id]`` when the message's id is not the stored one.

        Without ``avoid`` (writes, other channels), an entry holding exactly this
        message.  With it (a messages channel), also one stored without id (a node's
        write, before ``add_messages`` gave it one), and never one in ``avoid`` (the
        parent's messages): so each message of the list has an entry of its own, on
        the path.  Otherwise a new entry under the build's leaf.
        """
        now = utc_now()
        pi = pi_message(message, _ms(now))
        compact = _compact(message, pi)
        data: Any
        key: tuple[str, str]
        if compact is not None:
            kind, data, key = compact
        else:
            blank = message if message.id is None else message.model_copy(update={"id": None})
            kind, data = self._typed(blank, why)
            key = (kind, data)
        candidates = [*build.state.messages.get(key, ()), *build.messages.get(key, ())]
        tree = build.tree
        usable = [
            c
            for c in reversed(candidates)
            if avoid is None
            or (
                c[0] not in avoid
                and tree.leaf_id is not None
                and (c in build.messages.get(key, ()) or tree.is_ancestor(c[0], tree.leaf_id))
            )
        ]
        for entry_id, stored_id in usable:
            if stored_id == message.id:
                return entry_id
        for entry_id, stored_id in usable:
            if stored_id is None:
                return [entry_id, message.id]
        entry = MessageEntry(
            id=counter_ids(tree),
            parent_id=tree.leaf_id,
            timestamp=now,
            message=pi,
            extra={MESSAGE_FIELD: [kind, data, message.id]},
        )
        build.tree = tree.append_entry(entry)
        build.messages.setdefault(key, []).append((entry.id, message.id))
        return entry.id

    def _message(self, ref: Any, state: _Thread) -> BaseMessage:
        entry_id = _ref_entry(ref)
        entry = state.tree[entry_id]
        assert isinstance(entry, MessageEntry)
        kind, data, stored_id = entry.extra[MESSAGE_FIELD]
        wanted = stored_id if isinstance(ref, str) else ref[1]
        if kind.startswith("lc:"):
            fields = state.fields.get(entry_id)
            if fields is None:
                fields = state.fields[entry_id] = thaw(data)
            return _restore(kind, {**fields, "id": wanted}, entry.message)
        message: BaseMessage = self._untyped([kind, data])
        if wanted is not None:
            message.id = wanted
        return message

    # ------------------------------------------------------------------ reading

    def _locate(self, state: _Thread, ckpt: _Ckpt | None, channel: str) -> _Ckpt | None:
        """The checkpoint that stored ``channel``'s value as ``ckpt`` has it: the
        nearest one up its parents (itself included) holding it at ``ckpt``'s version
        of it, else the nearest holding it at all.  O(depth)."""
        if ckpt is None:
            return None
        version = str(state.full(ckpt)[0].get(channel))
        current: _Ckpt | None = ckpt
        nearest = None
        while current is not None:
            if channel in current.data["values"]:
                if str(state.full(current)[0].get(channel)) == version:
                    return current
                if nearest is None:
                    nearest = current
            parent = current.parent
            current = None if parent is None else state.checkpoints.get((ckpt.ns, parent))
        return nearest

    def _parent(self, state: _Thread, ckpt: _Ckpt) -> _Ckpt | None:
        return None if ckpt.parent is None else state.checkpoints.get((ckpt.ns, ckpt.parent))

    def _channel(self, state: _Thread, ckpt: _Ckpt, channel: str) -> tuple[Any, list[Any] | None]:
        """``channel``'s stored value at ``ckpt``: ``(encoded, None)``, or
        ``(None, refs)`` for a message list, or ``(None, None)`` when it has none."""
        holder = self._locate(state, ckpt, channel)
        if holder is None or holder.data["values"][channel] is None:
            return None, None
        stored = holder.data["values"][channel]
        if "m" not in stored:
            return stored, None
        deltas = [stored["m"]]
        while deltas[-1]["keep"] > 0:
            holder = self._locate(state, self._parent(state, holder), channel)
            if holder is None:
                break
            stored = holder.data["values"][channel]
            if stored is None or "m" not in stored:
                break
            deltas.append(stored["m"])
        refs: list[Any] = []
        for delta in reversed(deltas):
            refs = refs[: delta["keep"]] + list(delta["add"])
        return None, refs

    def _tuple(self, thread_id: str, state: _Thread, ckpt: _Ckpt) -> CheckpointTuple:
        rest = ckpt.data.get("checkpoint")
        if rest is None:
            skeleton = _usual_rest(ckpt.data["values"])
        else:
            skeleton = self._untyped(rest["typed"]) if "typed" in rest else thaw(rest)
        versions, seen = state.full(ckpt)
        skeleton["id"] = ckpt.checkpoint_id
        skeleton.setdefault("ts", ckpt.timestamp)
        skeleton["channel_versions"] = dict(versions)
        skeleton["versions_seen"] = {node: dict(v) for node, v in seen.items()}
        values: dict[str, Any] = {}
        for channel in skeleton["channel_versions"]:
            encoded, refs = self._channel(state, ckpt, channel)
            if refs is not None:
                values[channel] = [self._message(r, state) for r in refs]
            elif encoded is not None:
                values[channel] = self._decode_value(encoded, state)
        checkpoint = cast(Checkpoint, {**skeleton, "channel_values": values})
        config: RunnableConfig = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ckpt.ns,
                "checkpoint_id": ckpt.checkpoint_id,
            }
        }
        parent: RunnableConfig | None = None
        if ckpt.parent is not None:
            parent = {
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": ckpt.ns,
                    "checkpoint_id": ckpt.parent,
                }
            }
        bucket = state.writes.get((ckpt.ns, ckpt.checkpoint_id), {})
        ordered = sorted(bucket.items(), key=lambda kv: writes_sort_key(kv[1][2], *kv[0]))
        pending: list[PendingWrite] = [
            (task, channel, self._decode_value(value, state))
            for (task, _idx), (channel, value, _path, _order) in ordered
        ]
        return CheckpointTuple(config, checkpoint, self._metadata(state, ckpt), parent, pending)

    def _metadata(self, state: _Thread, ckpt: _Ckpt) -> Any:
        """The checkpoint's metadata.  O(size), plus O(checkpoints up to one whose
        step is known) for a step left out."""
        data = ckpt.data
        if "metadataTyped" in data:
            return self._untyped(data["metadataTyped"])
        if "metadata" in data:  # a thread written before the usual items were left out
            return thaw(data["metadata"])
        # The usual items left out, and the step when it is one more than the parent's.
        absent = data.get("metaAbsent", ())
        usual = {k: v for k, v in _usual_meta().items() if k not in absent}
        meta = {**usual, **thaw(data.get("meta", {}))}
        if "step" not in meta and "step" not in absent:
            meta["step"] = self._step(state, ckpt)
        return meta

    def _step(self, state: _Thread, ckpt: _Ckpt) -> Any:
        """The ``step`` of the checkpoint's metadata: the nearest parent saying its
        own, plus one for each checkpoint since.  O(checkpoints since one known)."""
        chain: builtins.list[_Ckpt] = []
        current = ckpt
        while current.entry_id not in state.steps:
            data = current.data
            derived = not ("metadata" in data or "metadataTyped" in data) and not (
                "step" in data.get("meta", {}) or "step" in data.get("metaAbsent", ())
            )
            if derived:
                chain.append(current)
                parent = self._parent(state, current)
                assert parent is not None  # left out only under a parent
                current = parent
                continue
            state.steps[current.entry_id] = self._metadata(state, current).get("step")
        step = state.steps[current.entry_id]
        for c in reversed(chain):
            step = state.steps[c.entry_id] = step + 1
        return step

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (its ``checkpoint_id``, else the thread's
        latest in its namespace), or ``None``.  O(depth + size of its values).

        Args:
            config: the run's config: its ``configurable`` names the thread, the
                namespace and, optionally, the checkpoint.
        """
        with self._lock:
            found = self._named(config)
            return None if found is None else self._tuple(*found)

    def entry_id(self, config: RunnableConfig) -> str | None:
        """The id of the entry of the thread's tree that stores the checkpoint
        ``config`` names (its ``checkpoint_id``, else the thread's latest in its
        namespace), or ``None`` (no such thread or checkpoint).

        ``build_context(saver.thread(thread_id), saver.entry_id(config))`` is the
        conversation of that checkpoint: its ``messages`` channel.  Cost: as
        :meth:`get_tuple` without building the tuple (a store refresh, then O(1)).

        Args:
            config: a config as :meth:`get_tuple` takes it (a ``StateSnapshot``'s
                ``config``, or the run's).

        Raises:
            ThreadIdError: (a ``TypeError``) no thread id, or not a non-empty string.

        >>> with TreeSaver("sqlite:///:memory:") as saver:
        ...     saver.entry_id({"configurable": {"thread_id": "nobody"}}) is None
        True
        """
        with self._lock:
            found = self._named(config)
            return None if found is None else found[2].entry_id

    def _named(self, config: RunnableConfig) -> tuple[str, _Thread, _Ckpt] | None:
        """The thread and live checkpoint ``config`` names (its ``checkpoint_id``, else
        the namespace's latest), or ``None``.  Called holding the lock."""
        configurable = config["configurable"]
        thread_id = _thread_id(configurable.get("thread_id"))
        ns = configurable.get("checkpoint_ns", "")
        state = self._read(thread_id)
        if state is None:
            return None
        cid = get_checkpoint_id(config) or state.latest.get(ns)
        ckpt = None if cid is None else state.live(ns, cid)
        return None if ckpt is None else (thread_id, state, ckpt)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,  # noqa: A002 - LangGraph's name
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """The checkpoints ``config``'s thread has (every thread's without one), newest
        first, whose metadata has every ``filter`` item, older than ``before``.

        Cost: O(checkpoints of the thread) to select; a thread-less listing reads
        every session of the store.

        Args:
            config: names the thread (``thread_id``), and optionally a namespace
                (``checkpoint_ns``) and one checkpoint (``checkpoint_id``) to list;
                ``None`` lists every thread's.
            filter: metadata items a listed checkpoint has, each equal.
            before: a config whose ``checkpoint_id`` the listed ones are older than.
            limit: at most this many checkpoints in all (every one if ``None``).

        Raises:
            ThreadIdError: (a ``TypeError``) ``config``'s thread id is not a non-empty
                string.
        """
        if config is not None:
            configurable = config["configurable"]
            thread_ids = [_thread_id(configurable.get("thread_id"))]
            ns_wanted = configurable.get("checkpoint_ns")
            cid_wanted = get_checkpoint_id(config)
        else:
            thread_ids = [s.id for s in self._store.sessions()]
            ns_wanted = cid_wanted = None
        before_id = None if before is None else get_checkpoint_id(before)
        left = limit
        for thread_id in thread_ids:
            if left is not None and left <= 0:
                return
            with self._lock:
                state = self._read(thread_id)
                if state is None:
                    continue
                chosen = sorted(
                    (
                        c
                        for (ns, cid), c in state.checkpoints.items()
                        if (ns, cid) not in state.deleted
                        and (ns_wanted is None or ns == ns_wanted)
                        and (cid_wanted is None or cid == cid_wanted)
                        and (before_id is None or cid < before_id)
                    ),
                    key=lambda c: c.checkpoint_id,
                    reverse=True,
                )
                found: builtins.list[CheckpointTuple] = []
                for ckpt in chosen:
                    if left is not None and left <= 0:
                        break
                    if filter:
                        metadata = self._metadata(state, ckpt)
                        if not all(metadata.get(k) == v for k, v in filter.items()):
                            continue
                    found.append(self._tuple(thread_id, state, ckpt))
                    if left is not None:
                        left -= 1
            yield from found

    # ------------------------------------------------------------------ writing

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint under its parent (``config``'s ``checkpoint_id``).

        Stores the channels of ``new_versions`` only; a message list as the messages it
        adds to its parent's.  Cost: O(new messages + size of the changed values), plus
        O(length of the list) compared by identity with the last one put.

        Args:
            config: names the thread (``thread_id``), the namespace
                (``checkpoint_ns``) and the parent checkpoint (``checkpoint_id``, none
                for a thread's first).
            checkpoint: LangGraph's checkpoint (its ``id``, ``ts``, channel values and
                versions).
            metadata: the checkpoint's metadata (``source``, ``step``, ...); string and
                number items of ``config``'s ``metadata`` and ``configurable`` are
                added, as LangGraph's own savers do.
            new_versions: the channels whose values changed since the parent: only
                these are stored.

        Returns:
            The config of the stored checkpoint (thread, namespace, its id).

        Raises:
            CheckpointSerializationError: (a ``TypeError``) a value the serializer
                cannot write; nothing is stored.
            ThreadIdError: (a ``TypeError``) the thread id is not a string.
            ConflictError: (a ``RuntimeError``) other writers kept changing the
                thread, 64 times in a row; nothing is stored.
        """
        configurable = config["configurable"]
        thread_id = _thread_id(configurable.get("thread_id"))
        ns = configurable.get("checkpoint_ns", "")
        parent_id = configurable.get("checkpoint_id")
        cid = checkpoint["id"]
        values = checkpoint["channel_values"]
        # The id, versions and ts are said elsewhere: the data, deltas, the entry's timestamp.
        ts = checkpoint.get("ts")
        omitted = {"channel_values", "id", "channel_versions", "versions_seen"}
        if type(ts) is str:
            omitted.add("ts")
        rest = {k: v for k, v in checkpoint.items() if k not in omitted}
        versions = dict(checkpoint["channel_versions"])
        seen = {node: dict(v) for node, v in checkpoint["versions_seen"].items()}
        meta = get_checkpoint_metadata(config, metadata)
        recents: dict[str, tuple[str, builtins.list[Any], builtins.list[Any]]] = {}

        def build(state: _Thread) -> SessionTree:
            recents.clear()
            parent = None if parent_id is None else state.checkpoints.get((ns, parent_id))
            b = _Build(state, state.tree)
            stored: dict[str, Any] = {}
            # The messages channel first: the checkpoint goes where the path holds the
            # messages it keeps, after its new ones (see _place).
            talk = self.messages_channel
            value = values.get(talk)
            why: _Where = (thread_id, cid, talk)
            if talk in new_versions and talk in values and _is_message_list(value):
                said = cast(builtins.list[BaseMessage], value)
                delta, refs = self._place(b, thread_id, ns, parent, said, why)
                stored[talk] = {"m": delta}
                recents[talk] = (cid, list(said), refs)
            else:  # unchanged (the parent's list), or no list
                unchanged = talk in versions and talk not in new_versions
                self._place(b, thread_id, ns, parent, None if unchanged else [], why)
            mark = b.tree
            # The other channels' messages (a run's input, another list) go after the
            # checkpoint, off its path: its context is its messages channel's alone.
            for channel in new_versions:
                why = (thread_id, cid, channel)
                if channel in stored:
                    continue
                if channel not in values:
                    stored[channel] = None
                    continue
                value = values[channel]
                if _is_message_list(value):
                    delta, refs = self._message_delta(b, thread_id, ns, parent, channel, value, why)
                    stored[channel] = {"m": delta}
                    recents[channel] = (cid, list(value), refs)
                else:
                    stored[channel] = self._encode_value(value, b, why)
            stored = {channel: stored[channel] for channel in new_versions}
            data: dict[str, Any] = {"id": cid}
            leaf = mark.leaf_id
            if parent_id != (None if leaf is None else _nearest_checkpoint(b.tree, leaf, ns)):
                data["parent"] = parent_id  # else the nearest checkpoint above says it
            if ns:
                data["ns"] = ns
            # Versions as changed since the parent's (most stay the same each step).
            old_versions, old_seen = ({}, {}) if parent is None else state.full(parent)
            if parent is None:
                data["full"] = 1
            changed = {k: v for k, v in versions.items() if old_versions.get(k) != v}
            # A step's versions are one more than the parent's highest: named only, and
            # not even named when they are those of the stored values (new_versions).
            bump = _next_version(old_versions)
            bumped = [k for k, v in changed.items() if type(v) is int and v == bump]
            others = {k: v for k, v in changed.items() if k not in bumped}
            if others or set(bumped) != set(new_versions):
                if bumped:
                    data["bumped"] = bumped
                data["versions"] = others
            dropped = [k for k in old_versions if k not in versions]
            if dropped:
                data["dropped"] = dropped
            data["seen"] = {k: v for k, v in seen.items() if old_seen.get(k) != v}
            unseen = [k for k in old_seen if k not in seen]
            if unseen:
                data["unseen"] = unseen
            if not (_is_plain_json(versions) and _is_plain_json(seen)):
                raise CheckpointSerializationError(
                    thread_id, cid, "channel_versions", "versions are str, int or float"
                )
            if rest == _usual_rest(stored):
                pass  # said by the stored values: nothing to keep
            elif _is_plain_json(rest):
                data["checkpoint"] = rest
            else:
                data["checkpoint"] = {"typed": self._typed(rest, (thread_id, cid, None))}
            if _is_plain_json(meta):
                # The items most checkpoints have are left out ("meta", not "metadata"),
                # the step too when it is one more than the parent's.
                usual = _usual_meta()
                kept = {k: v for k, v in meta.items() if k not in usual or usual[k] != v}
                absent = [k for k in (*usual, "step") if k not in meta]
                step = kept.get("step")
                if (
                    parent is not None
                    and type(step) is int
                    and type(before := self._metadata(state, parent).get("step")) is int
                    and step == before + 1
                ):
                    del kept["step"]
                if kept:
                    data["meta"] = kept
                if absent:
                    data["metaAbsent"] = absent
            else:
                data["metadataTyped"] = self._typed(meta, (thread_id, cid, None))
            data["values"] = stored
            stamp = ts if type(ts) is str else None
            moved = b.tree.added_since(mark) or ()
            entry_id = b.tree.id_factory(b.tree)  # an id none of the moved entries has
            b.tree = mark.append_custom(CHECKPOINT_TYPE, data, id=entry_id, timestamp=stamp)
            for entry in moved:
                b.tree = b.tree.append_entry(entry)
            taken: set[tuple[str, int]] = set()
            for writes, task_id, task_path in self._deferred.get((thread_id, ns, cid), ()):
                self._writes_entry(b, thread_id, ns, cid, writes, task_id, task_path, taken)
            return b.tree

        with self._lock:
            self._change(thread_id, build)
            self._deferred.pop((thread_id, ns, cid), None)
            for channel, recent in recents.items():
                self._recent[(thread_id, ns, channel)] = recent
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cid}}

    def _parent_list(
        self, state: _Thread, thread_id: str, ns: str, parent: _Ckpt | None, channel: str
    ) -> tuple[builtins.list[BaseMessage], builtins.list[Any]]:
        """The parent's message list on ``channel`` and its refs (``[]`` when it has
        none): the list put last when the parent is that checkpoint (O(1)), else read
        from the thread (O(length))."""
        if parent is None:
            return [], []
        recent = self._recent.get((thread_id, ns, channel))
        if recent is not None and recent[0] == parent.checkpoint_id:
            return recent[1], recent[2]
        _encoded, refs = self._channel(state, parent, channel)
        if refs is None:
            return [], []
        return [self._message(r, state) for r in refs], refs

    def _message_delta(
        self,
        build: _Build,
        thread_id: str,
        ns: str,
        parent: _Ckpt | None,
        channel: str,
        value: builtins.list[BaseMessage],
        why: _Where,
    ) -> tuple[dict[str, Any], builtins.list[Any]]:
        """How ``value`` grows from the parent's list: ``({"keep": k, "add": refs},
        every ref of the list)``, its new messages under the build's leaf."""
        old, old_refs = self._parent_list(build.state, thread_id, ns, parent, channel)
        return self._grow(build, old_refs, _common_prefix(old, value), [], value, why)

    def _grow(
        self,
        build: _Build,
        old_refs: builtins.list[Any],
        keep: int,
        matched: builtins.list[Any],
        value: builtins.list[BaseMessage],
        why: _Where,
    ) -> tuple[dict[str, Any], builtins.list[Any]]:
        """The delta of ``value``: the parent's first ``keep`` messages, the entries
        ``matched`` already holds, then the rest (new entries under the build's leaf)."""
        avoid = {_ref_entry(r) for r in [*old_refs[:keep], *matched]}
        add = list(matched)
        for m in value[keep + len(matched) :]:
            ref = self._intern(m, build, why, avoid)
            avoid.add(_ref_entry(ref))
            add.append(ref)
        return {"keep": keep, "add": add}, old_refs[:keep] + add

    def _place(
        self,
        build: _Build,
        thread_id: str,
        ns: str,
        parent: _Ckpt | None,
        value: builtins.list[BaseMessage] | None,
        why: _Where,
    ) -> tuple[dict[str, Any], builtins.list[Any]]:
        """Move the build's leaf to where a checkpoint goes whose messages channel holds
        ``value`` (``None``: its parent's list, unchanged), with its new messages under
        it, so that its path holds exactly that list.  Returns ``value``'s delta from
        the parent's and every ref of it, as :meth:`_message_delta`.

        Where: under the parent, after the entries below it (its writes and their
        messages) as long as their messages are the list's next ones, so a run goes
        on down its line and a fork (a time travel, a step that did not take a
        write) branches off where they differ.  A list that drops one of the
        parent's messages (a removal, a replacement) branches off above that
        message's entry: the messages after it are stored again, on that branch.

        Cost: O(new messages + entries since the parent), plus O(length) to read the
        parent's list when it is not the one put last.
        """
        state = build.state
        old, old_refs = self._parent_list(state, thread_id, ns, parent, self.messages_channel)
        wanted = old if value is None else value
        keep = _common_prefix(old, wanted)
        matched: builtins.list[Any] = []
        start: str | None
        if parent is None:
            start = None
        elif keep < len(old_refs):
            gone = state.tree.get(_ref_entry(old_refs[keep]))
            start = parent.entry_id if gone is None else gone.parent_id
        else:
            start, matched = self._follow(state, ns, parent, wanted[keep:])
        # On down through entries that hold the next messages (a replacement put by
        # its write, an earlier fork's same messages).
        while keep + len(matched) < len(wanted):
            found = self._child_holding(state, start, wanted[keep + len(matched)])
            if found is None:
                break
            start, ref = found
            matched.append(ref)
        build.tree = state.tree.move_to(start)
        return self._grow(build, old_refs, keep, matched, wanted, why)

    def _child_holding(
        self, state: _Thread, entry_id: str | None, message: BaseMessage
    ) -> tuple[str, Any] | None:
        """A message entry under ``entry_id`` (a root for ``None``) standing for
        ``message``, and the reference to it.  O(children)."""
        for child in state.tree.children(entry_id):
            if isinstance(child, MessageEntry):
                ref = self._held(child, message, state)
                if ref is not None:
                    return child.id, ref
        return None

    def _follow(
        self, state: _Thread, ns: str, parent: _Ckpt, wanted: Sequence[BaseMessage]
    ) -> tuple[str, builtins.list[Any]]:
        """The last entry below ``parent`` (on the line to the run's latest entry, or
        to its last writes) before a message that is not the next of ``wanted``, and
        the refs of those that are.  O(entries since the parent)."""
        chain: builtins.list[Any] = []
        for end in (state.frontier.get(ns), state.tails.get((ns, parent.checkpoint_id))):
            walked = []
            entry = None if end is None else state.tree.get(end)
            while entry is not None and not _is_checkpoint(entry, ns):
                walked.append(entry)
                entry = state.tree.parent(entry.id)
            if entry is not None and entry.id == parent.entry_id:
                chain = walked[::-1]
                break
        start: str = parent.entry_id
        matched: builtins.list[Any] = []
        for entry in chain:
            if isinstance(entry, MessageEntry):
                ref = (
                    None
                    if len(matched) == len(wanted)
                    else self._held(entry, wanted[len(matched)], state)
                )
                if ref is None:
                    break
                matched.append(ref)
            start = entry.id
        return start, matched

    def _held(self, entry: MessageEntry, message: BaseMessage, state: _Thread) -> Any:
        """A reference to ``entry`` standing for ``message``, if it loads back as it
        (stored with its id, or without one), else ``None``.  O(size of the message)."""
        original = entry.extra.get(MESSAGE_FIELD)
        if original is None or original[2] not in (None, message.id):
            return None
        ref = entry.id if original[2] == message.id else [entry.id, message.id]
        return ref if self._message(ref, state) == message else None

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes to a checkpoint; a write already stored (same
        task, same index) is kept, a special channel's (errors, interrupts) replaced.

        Writes to a checkpoint not stored yet (LangGraph stores a step's writes before
        its checkpoint) are encoded at once, so a bad value is reported now, and kept
        in memory until :meth:`put` stores the checkpoint, in the same save.

        Cost: O(size of the values written) plus one store read
        (:meth:`~ptree.stores.Store.refresh`), and one save when the checkpoint is
        stored.

        Args:
            config: names the thread (``thread_id``), the namespace
                (``checkpoint_ns``) and the checkpoint (``checkpoint_id``) the writes
                belong to.
            writes: the task's ``(channel, value)`` pairs, in order.
            task_id: the task that wrote them.
            task_path: the task's path, LangGraph's order of the writes of a step.

        Raises:
            CheckpointSerializationError: (a ``TypeError``) a value the serializer
                cannot write; nothing is stored.
            ThreadIdError: (a ``TypeError``) the thread id is not a string.
            KeyError: ``config`` names no ``checkpoint_id``.
            ConflictError: (a ``RuntimeError``) other writers kept changing the
                thread, 64 times in a row; nothing is stored.
        """
        configurable = config["configurable"]
        thread_id = _thread_id(configurable.get("thread_id"))
        ns = configurable.get("checkpoint_ns", "")
        cid = configurable["checkpoint_id"]

        with self._lock:
            state = self._read(thread_id)
            if state is None or (ns, cid) not in state.checkpoints:
                # LangGraph stores a step's writes without waiting for the checkpoint
                # they belong to, which is of no use to anyone before it is stored:
                # they are kept until it is, and stored after it, in its transaction.
                # Encoding them now (and throwing that away) reports bad values now.
                # (on a tree of its own: appending to the thread's would make its
                # next version branch its storage)
                known = _Thread(SessionTree()) if state is None else state
                trial = _Build(known, SessionTree())
                self._writes_entry(trial, thread_id, ns, cid, writes, task_id, task_path, set())
                self._deferred.setdefault((thread_id, ns, cid), []).append(
                    (list(writes), task_id, task_path)
                )
                return

            def build(state: _Thread) -> SessionTree:
                # At the end of the run when the checkpoint is on it, else beside the
                # checkpoint's earlier writes.
                ckpt = state.checkpoints[(ns, cid)]
                here = state.frontier.get(ns)
                if here is not None and state.tree.is_ancestor(ckpt.entry_id, here):
                    start = here
                else:
                    start = state.tails[(ns, cid)]
                b = _Build(state, state.tree.move_to(start))
                if not self._writes_entry(b, thread_id, ns, cid, writes, task_id, task_path, set()):
                    return state.tree
                return b.tree

            self._change(thread_id, build)

    def _writes_entry(
        self,
        b: _Build,
        thread_id: str,
        ns: str,
        cid: str,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
        taken: set[tuple[str, int]],
    ) -> bool:
        """Append one task's writes to ``cid`` under the build's leaf (the message
        entries they need first); ``False`` if every one is stored already."""
        bucket = b.state.writes.get((ns, cid), {})
        rows = []
        for idx, (channel, value) in enumerate(writes):
            slot = WRITES_IDX_MAP.get(channel, idx)
            if slot >= 0 and ((task_id, slot) in bucket or (task_id, slot) in taken):
                continue
            taken.add((task_id, slot))
            if channel == self.messages_channel:
                self._replacing(b, thread_id, ns, cid, value, (thread_id, cid, channel))
            rows.append([slot, channel, self._encode_value(value, b, (thread_id, cid, channel))])
        if not rows:
            return False
        data: dict[str, Any] = {"task": task_id}
        leaf = b.tree.leaf_id
        if leaf is None or _nearest_checkpoint(b.tree, leaf, ns) != cid:
            data["checkpoint"] = cid
        if ns:
            data["ns"] = ns
        if task_path:
            data["path"] = task_path
        data["writes"] = rows
        b.tree = b.tree.append_custom(WRITES_TYPE, data)
        return True

    def _replacing(
        self, b: _Build, thread_id: str, ns: str, cid: str, value: Any, why: _Where
    ) -> None:
        """A write to the messages channel replacing one of the checkpoint's messages
        (an ``update_state`` editing it): its entry where the list that takes it will
        branch off, above the message it replaces (see :meth:`_place`), rather than
        after the checkpoint, whose line keeps the old one.  The first such message
        only (the others follow messages not stored yet).  O(length of the list)."""
        written = [value] if _is_message(value) else value if _is_message_list(value) else []
        if not any(m.id is not None for m in written):
            return
        ckpt = b.state.checkpoints.get((ns, cid))
        if ckpt is None:
            return
        # The list's ids from its references (no message decoded: LangGraph's writes
        # often reach a checkpoint after its child, when it is no longer the last put).
        state = b.state
        recent = self._recent.get((thread_id, ns, self.messages_channel))
        if recent is not None and recent[0] == cid:
            refs = recent[2]
        else:
            refs = self._channel(state, ckpt, self.messages_channel)[1] or []
        at = {_ref_id(r, state): k for k, r in enumerate(refs)}
        replacing = [(at[m.id], m) for m in written if m.id is not None and m.id in at]
        for k, message in sorted(replacing, key=lambda pair: pair[0]):
            if self._message(refs[k], state) != message:
                break
        else:
            return
        gone = state.tree.get(_ref_entry(refs[k]))
        if gone is None or self._child_holding(state, gone.parent_id, message) is not None:
            return
        here = b.tree.leaf_id
        b.tree = b.tree.move_to(gone.parent_id)
        self._intern(message, b, why, set())
        b.tree = b.tree.move_to(here)

    def delete_thread(self, thread_id: str) -> None:
        """Delete the thread (its session) with all its checkpoints and writes.

        A thread that does not exist is no error.  Cost: the store's
        :meth:`~ptree.stores.Store.delete` (O(entries of the thread) in a database, one
        file for ``jsonl:``).

        Args:
            thread_id: the LangGraph thread id (the session's id).

        Raises:
            ThreadIdError: (a ``TypeError``) ``thread_id`` is not a non-empty string.
        """
        thread_id = _thread_id(thread_id)
        with self._lock:
            self._threads.pop(thread_id, None)
            for key in [k for k in self._recent if k[0] == thread_id]:
                del self._recent[key]
            for key2 in [k for k in self._deferred if k[0] == thread_id]:
                del self._deferred[key2]
            with contextlib.suppress(SessionNotFoundError):
                self._store.delete(thread_id)

    def _hide(
        self, thread_id: str, pick: Callable[[_Thread], builtins.list[tuple[str, str]]]
    ) -> None:
        def build(state: _Thread) -> SessionTree:
            chosen = pick(state)
            if not chosen:
                return state.tree
            return state.tree.append_custom(
                DELETED_TYPE, {"checkpoints": [list(c) for c in chosen]}
            )

        with self._lock:
            if thread_id in self._store:
                self._change(thread_id, build)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Hide every checkpoint (and its writes) whose metadata's ``run_id`` is one of
        ``run_ids``, in every thread.

        The checkpoints stay in the tree (later checkpoints are built from them) but
        are no longer listed or returned.  Cost: reads every session of the store
        (only what changed since, for the threads the saver keeps in memory) and the
        metadata of each of its checkpoints; one save of one small entry per thread
        that has such a checkpoint.

        Args:
            run_ids: the run ids whose checkpoints go (none: nothing is read).
        """
        wanted = set(run_ids)
        if not wanted:
            return
        for summary in self._store.sessions():

            def pick(state: _Thread) -> builtins.list[tuple[str, str]]:
                return [
                    key
                    for key, c in state.checkpoints.items()
                    if key not in state.deleted and self._metadata(state, c).get("run_id") in wanted
                ]

            self._hide(summary.id, pick)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread, every checkpoint and write, to a new thread.

        A missing source copies nothing.  Cost: O(entries of the source thread): one
        read of it, a copy of its entries, one save.

        Args:
            source_thread_id: the thread to copy.
            target_thread_id: the new thread's id; no thread may have it yet.

        Raises:
            ConflictError: (a ``RuntimeError``) the target thread already exists.
            ThreadIdError: (a ``TypeError``) an id that is not a non-empty string.
        """
        source = _thread_id(source_thread_id)
        target = _thread_id(target_thread_id)
        try:
            tree = self._store.refresh(source)
        except SessionNotFoundError:
            return
        header = SessionHeader(id=target, timestamp=utc_now(), cwd="/")
        copy = SessionTree.from_entries(tree.entries(), leaf_id=tree.leaf_id, header=header)
        if target in self._store:
            raise ConflictError(target, self._store.url, "copy_thread: the target thread exists")
        self._store.save(copy)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``"delete"``: delete the threads; ``"keep_latest"``: hide every checkpoint
        but the latest of each namespace.

        Hidden checkpoints stay in the tree: the latest is built from them.  Cost, per
        thread: as :meth:`delete_thread` for ``"delete"``; for ``"keep_latest"``, one
        read of the thread, O(its checkpoints), and one save of one small entry.

        Args:
            thread_ids: the threads to prune (one that does not exist is skipped).
            strategy: ``"keep_latest"`` (the default) or ``"delete"``.

        Raises:
            ValueError: an unknown strategy.
            ThreadIdError: (a ``TypeError``) an id that is not a non-empty string.
        """
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}: use 'keep_latest' or 'delete'")
        for thread_id in thread_ids:
            if strategy == "delete":
                self.delete_thread(thread_id)
                continue

            def pick(state: _Thread) -> builtins.list[tuple[str, str]]:
                return [
                    key
                    for key in state.checkpoints
                    if key not in state.deleted and state.latest.get(key[0]) != key[1]
                ]

            self._hide(_thread_id(thread_id), pick)

    # ------------------------------------------------------------------ async

    # Each twin's docstring is made from its method's (see _on_worker_thread); the
    # string after it is what the documentation site, which reads the source, shows.
    aget_tuple = _on_worker_thread(get_tuple)
    """:meth:`get_tuple` on a worker thread: arguments, result, errors and cost as its."""
    aentry_id = _on_worker_thread(entry_id)
    """:meth:`entry_id` on a worker thread: arguments, result, errors and cost as its."""

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,  # noqa: A002
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """:meth:`list` on a worker thread: the event loop does not wait on the store.

        The whole listing is made on the thread, then yielded.  Cost: as :meth:`list`,
        O(checkpoints of the thread) (every session of the store without a thread).
        Raises what :meth:`list` raises.

        Args:
            config: as :meth:`list`: the thread (``None``: every thread).
            filter: as :meth:`list`: metadata items each listed checkpoint has.
            before: as :meth:`list`: list only checkpoints older than this one.
            limit: as :meth:`list`: at most this many (every one if ``None``).
        """
        found = await self._in_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in found:
            yield item

    aput = _on_worker_thread(put)
    """:meth:`put` on a worker thread: arguments, result, errors and cost as its."""
    aput_writes = _on_worker_thread(put_writes)
    """:meth:`put_writes` on a worker thread: arguments, result, errors and cost as its."""
    adelete_thread = _on_worker_thread(delete_thread)
    """:meth:`delete_thread` on a worker thread: arguments, result, errors and cost as its."""
    adelete_for_runs = _on_worker_thread(delete_for_runs)
    """:meth:`delete_for_runs` on a worker thread: arguments, result, errors and cost as its."""
    acopy_thread = _on_worker_thread(copy_thread)
    """:meth:`copy_thread` on a worker thread: arguments, result, errors and cost as its."""
    aprune = _on_worker_thread(prune)
    """:meth:`prune` on a worker thread: arguments, result, errors and cost as its."""


_CLASSES: dict[str, type[BaseMessage]] = {
    "human": HumanMessage,
    "ai": AIMessage,
    "tool": ToolMessage,
    "system": SystemMessage,
    "chat": ChatMessage,
}


def _pi_text(pi: Mapping[str, Any]) -> str | None:
    """The text a Pi message holds, when it holds at most one text (else ``None``)."""
    content = pi.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, (list, FrozenList)):
        texts = [b["text"] for b in content if isinstance(b, Mapping) and b.get("type") == "text"]
        if len(texts) <= 1:
            return texts[0] if texts else ""
    return None


def _usual_meta() -> dict[str, Any]:
    """Metadata items most checkpoints have (a new dict): a checkpoint's entry leaves
    them out."""
    return {"source": "loop", "parents": {}}


def _usual_rest(values: Mapping[str, Any]) -> dict[str, Any]:
    """The rest of a checkpoint (but its values, versions, id and ts) as LangGraph 1.x
    makes it: format 4, its updated channels those given a value this step (a channel
    whose new version stores ``None`` was emptied).  A checkpoint's entry whose rest
    is this leaves it out."""
    return {"v": 4, "updated_channels": sorted(k for k, v in values.items() if v is not None)}


def _next_version(versions: Mapping[str, Any]) -> int:
    """The version LangGraph gives the channels a step changes: one more than the
    highest integer version so far (1 for a thread's first)."""
    ints = [v for v in versions.values() if type(v) is int]
    return max(ints, default=0) + 1


def _canonical(fields: Any) -> str:
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _compact(
    message: BaseMessage, pi: Mapping[str, Any]
) -> tuple[str, dict[str, Any], tuple[str, str]] | None:
    """A message of one of LangChain's own types as ``("lc:<type>", fields, key)``: its
    fields but the id as JSON, without the content when the Pi message holds it; the
    key names the message without its id.  ``None`` when that would not load back
    ``==`` (another class, values that are not JSON): the serializer keeps it."""
    cls = _CLASSES.get(message.type)
    if cls is None or type(message) is not cls:
        return None
    fields = message.model_dump(exclude_defaults=True, exclude={"id", "type"})
    if not _is_plain_json(fields):
        return None
    kind = "lc:" + message.type
    key = (kind, _canonical(fields))
    if isinstance(message.content, str) and _pi_text(pi) == message.content:
        del fields["content"]
    try:
        back = _restore(kind, {**fields, "id": message.id}, pi)
    except Exception:  # a validator that does not take its own dump back
        return None
    if back != message:
        return None
    return kind, fields, key


def _restore(kind: str, fields: dict[str, Any], pi: Mapping[str, Any]) -> BaseMessage:
    """The message of stored fields (validation copies their containers: ``fields``
    is not shared with it)."""
    if "content" not in fields:
        fields["content"] = _pi_text(pi)
    return _CLASSES[kind[3:]](**fields)


def _stored_key(original: Any, pi: Mapping[str, Any]) -> tuple[str, str]:
    kind, data = original[0], original[1]
    if not kind.startswith("lc:"):
        return (kind, data)
    fields = thaw(data)
    if "content" not in fields:
        fields["content"] = _pi_text(pi)
    return (kind, _canonical(fields))


def _is_checkpoint(entry: Any, ns: str) -> bool:
    return (
        isinstance(entry, Custom)
        and entry.custom_type == CHECKPOINT_TYPE
        and entry.data.get("ns", "") == ns
    )


def _nearest_checkpoint(tree: SessionTree, entry_id: str, ns: str) -> str | None:
    """The id of the nearest checkpoint of ``ns`` at or above ``entry_id``.  O(distance)."""
    entry = tree.get(entry_id)
    while entry is not None:
        if _is_checkpoint(entry, ns):
            return entry.data["id"]  # type: ignore[union-attr,no-any-return]
        entry = tree.parent(entry.id)
    return None


def _ref_entry(ref: Any) -> str:
    """The entry id of a message reference (``entry_id`` or ``[entry_id, id]``)."""
    return ref if isinstance(ref, str) else ref[0]


def _ref_id(ref: Any, state: _Thread) -> str | None:
    """The message id a reference gives its message.  O(1)."""
    if not isinstance(ref, str):
        return ref[1]  # type: ignore[no-any-return]
    entry = state.tree[ref]
    assert isinstance(entry, MessageEntry)
    return entry.extra[MESSAGE_FIELD][2]  # type: ignore[no-any-return]


def _common_prefix(old: Sequence[BaseMessage], new: Sequence[BaseMessage]) -> int:
    """How many of ``old``'s first messages ``new`` starts with (the same object, or
    ``==``).  O(that many)."""
    keep = 0
    for a, b in zip(old, new, strict=False):
        if a is not b and a != b:
            break
        keep += 1
    return keep


def _thread_id(value: object) -> str:
    if type(value) is not str or not value:
        raise ThreadIdError(value)
    return value
