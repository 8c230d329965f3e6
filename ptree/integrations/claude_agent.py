"""The Claude Agent SDK's session store on any ptree store: :class:`TreeSessionStore`.

The SDK mirrors every transcript the Claude Code process writes (a main transcript and
one per subagent) to a ``SessionStore`` and resumes sessions from it.
``TreeSessionStore(url)`` implements that protocol — ``append``, ``load`` and every
optional method: ``list_sessions``, ``list_session_summaries``, ``delete``,
``list_subkeys`` — over the store a URL opens (:func:`ptree.stores.open`: SQLite,
PostgreSQL, a directory of Pi files), so an agent server keeps its transcripts in the
database it already has, shared by all its processes.

Storage.  Each transcript (a :data:`SessionKey`: project, session, and for a subagent
its ``subpath``) is one stored session, id ``claude/<project>/<session>[/<subpath>]``
(:func:`stored_id`; the parts percent-encoded).  Each SDK entry is one ``custom``
entry (``customType`` :data:`ENTRY_TYPE`) whose ``data`` is the entry as given, so
``load`` gives back equal entries, unknown fields included.  A batch is one atomic
save, checked against concurrent writers (:meth:`ptree.stores.Store.update`): appends
from many processes all land, each batch whole and in order.  An entry whose ``uuid``
is already stored with the same content is a retried batch and is not stored twice
(the SDK's idempotency key); one with the same ``uuid`` and other content is kept.

A main transcript also keeps the SDK's session summary
(``claude_agent_sdk.fold_session_summary``), folded in the same save as the entries, as
a root ``custom`` entry (:data:`SUMMARY_TYPE`) that is the session's leaf, so listing a
project's summaries reads one entry per session and no transcript.

Reading.  :meth:`TreeSessionStore.tree` (and :func:`transcript_tree`, which ``ptree
show``, ``ptree export`` and ``ptree path`` use for a ``URL#claude/...`` session) gives
a main transcript with its subagent transcripts as one Pi tree, through the Claude Code
mapping of :mod:`ptree.formats.claude_code`: :func:`ptree.build_context` on it is what
the model saw.

Every method is a coroutine over the async store (:func:`ptree.stores.open_async`), so
the event loop never waits on the database; under trio they run on a private asyncio
loop in a thread.

Imports: the core, :mod:`ptree.formats`, :mod:`ptree.stores`; ``claude_agent_sdk``
(the extra ``ptree[claude-agent]``) only when a batch is appended to a main transcript,
so reading stored transcripts (the CLI does) needs no SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import tempfile
import threading
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import quote, unquote, urlsplit

from ..closing import AsyncClosing
from ..entries import Custom
from ..errors import InvalidMessageError, SessionError
from ..formats import ImportFormatError, claude_code
from ..frozen import FrozenDict, freeze, thaw
from ..header import SessionHeader
from ..ids import utc_now
from ..stores import (
    SCHEMES,
    AsyncStore,
    ConflictError,
    SessionNotFoundError,
    SessionSummary,
    Store,
    StoreError,
    open_async,
)
from ..stores import open as open_store
from ..tree import SessionTree

if TYPE_CHECKING:
    from claude_agent_sdk import (
        SessionKey,
        SessionListSubkeysKey,
        SessionStoreEntry,
        SessionStoreListEntry,
        SessionSummaryEntry,
    )

__all__ = [
    "ENTRY_TYPE",
    "HEADER_FIELD",
    "PREFIX",
    "SUMMARY_TYPE",
    "SessionKeyError",
    "TranscriptEntryError",
    "TreeSessionStore",
    "stored_id",
    "transcript_tree",
]

PREFIX = "claude/"
"""The start of every stored session id this module writes."""

ENTRY_TYPE = "claude-agent-sdk.entry"
"""The ``customType`` of the entries holding the SDK's transcript entries."""

SUMMARY_TYPE = "claude-agent-sdk.summary"
"""The ``customType`` of the entries holding a main transcript's summary (the SDK's
``SessionSummaryEntry.data``)."""

HEADER_FIELD = "claudeAgentSdk"
"""The header field naming the transcript: ``{"projectKey", "sessionId", "subpath"}``."""

_ATTEMPTS = 1000  # compare-and-swap attempts of one append before it gives up
_T = TypeVar("_T")


class SessionKeyError(SessionError, ValueError, TypeError):
    """A session key the SDK's protocol does not allow: not a mapping, a part that is not
    a string, or an empty ``subpath``.  Nothing is stored.

    A ``ValueError`` (a bad value) and a ``TypeError`` (usually a part of the wrong type).

    Attributes:
        key: the key as given.
        field: the offending part (``"project_key"``, ``"session_id"``, ``"subpath"``),
            or ``None`` for the key itself.
        reason: what is wrong.

    >>> str(SessionKeyError({"session_id": 7}, "session_id", "must be a string, not int"))
    "session key {'session_id': 7}: session_id must be a string, not int"
    """

    def __init__(self, key: object, field: str | None, reason: str) -> None:
        self.key = key
        self.field = field
        self.reason = reason
        part = "" if field is None else f"{field} "
        super().__init__(f"session key {key!r}: {part}{reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.key, self.field, self.reason))


class TranscriptEntryError(SessionError, ValueError, TypeError):
    """A transcript entry that cannot be stored as JSON (not an object; a set, bytes,
    ``NaN`` or a non-string key inside; nested too deeply).  Nothing of its batch is
    stored.

    Attributes:
        stored_id: the transcript's stored session id (:func:`stored_id`).
        index: the entry's position in the batch.
        where: the path to the culprit, such as ``entries[2]['message']``.
        reason: what is wrong there.

    >>> str(TranscriptEntryError("claude/p/s", 2, "entries[2]['x']", "set is not a JSON value"))
    "claude/p/s: entries[2]['x']: set is not a JSON value"
    """

    def __init__(self, stored_id: str, index: int, where: str, reason: str) -> None:
        self.stored_id = stored_id
        self.index = index
        self.where = where
        self.reason = reason
        super().__init__(f"{stored_id}: {where}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.stored_id, self.index, self.where, self.reason))


# ---------------------------------------------------------------------------- keys


def _key_parts(key: object, *, subpath_allowed: bool = True) -> tuple[str, str, str | None]:
    """``(project_key, session_id, subpath or None)`` of a key, checked."""
    if not isinstance(key, Mapping):
        raise SessionKeyError(key, None, f"must be a mapping, not {type(key).__name__}")
    parts: list[str] = []
    for field in ("project_key", "session_id"):
        if field not in key:
            raise SessionKeyError(key, field, "is missing")
        value = key[field]
        if type(value) is not str:
            raise SessionKeyError(key, field, f"must be a string, not {type(value).__name__}")
        parts.append(value)
    subpath = key.get("subpath")
    if subpath is not None:
        if not subpath_allowed:
            raise SessionKeyError(key, "subpath", "is not taken here")
        if type(subpath) is not str:
            raise SessionKeyError(key, "subpath", f"must be a string, not {type(subpath).__name__}")
        if not subpath:
            raise SessionKeyError(key, "subpath", "must not be empty (leave it out instead)")
    return parts[0], parts[1], subpath


def _part(text: str) -> str:
    return quote(text, safe="", errors="surrogatepass")


def stored_id(key: SessionKey | Mapping[str, Any]) -> str:
    """The id of the stored session holding a transcript: what ``ptree show
    URL#ID`` takes.

    ``claude/<project_key>/<session_id>`` for a main transcript, with ``/<subpath>``
    for a subagent's; each part percent-encoded (``/`` too, except inside the
    subpath), so different keys never share an id.  O(length of the key).

    Args:
        key: a session key: ``project_key``, ``session_id`` and, for a subagent,
            ``subpath``.

    Raises:
        SessionKeyError: not a valid session key.

    >>> stored_id({"project_key": "-srv-app", "session_id": "s1"})
    'claude/-srv-app/s1'
    >>> stored_id({"project_key": "a/b", "session_id": "s1", "subpath": "subagents/agent-x"})
    'claude/a%2Fb/s1/subagents/agent-x'
    """
    project, session, subpath = _key_parts(key)
    out = f"{PREFIX}{_part(project)}/{_part(session)}"
    if subpath is not None:
        out += "/" + quote(subpath, safe="/", errors="surrogatepass")
    return out


def _parse_id(text: str) -> tuple[str, str, str | None] | None:
    """The key parts of a stored id, or ``None`` if it is not one (the inverse of
    :func:`stored_id`)."""
    if not text.startswith(PREFIX):
        return None
    parts = text[len(PREFIX) :].split("/", 2)
    if len(parts) < 2:
        return None
    project, session = (unquote(p, errors="surrogatepass") for p in parts[:2])
    subpath = unquote(parts[2], errors="surrogatepass") if len(parts) == 3 else None
    return project, session, subpath


def _key_of(project: str, session: str, subpath: str | None) -> dict[str, str]:
    key = {"project_key": project, "session_id": session}
    if subpath is not None:
        key["subpath"] = subpath
    return key


# ---------------------------------------------------------------------------- the blocking half


class _Records:
    """One batch, checked and frozen before anything is stored."""

    __slots__ = ("entries", "uuids")

    def __init__(self, sid: str, entries: object) -> None:
        if not isinstance(entries, Sequence) or isinstance(entries, (str, bytes)):
            raise TranscriptEntryError(
                sid, -1, "entries", f"must be a list of entries, not {type(entries).__name__}"
            )
        self.entries: list[FrozenDict] = []
        self.uuids: list[str | None] = []
        for i, entry in enumerate(entries):
            where = f"entries[{i}]"
            if not isinstance(entry, Mapping):
                raise TranscriptEntryError(
                    sid, i, where, f"an entry is a JSON object, not {type(entry).__name__}"
                )
            try:
                frozen = freeze(entry, where=where)
            except InvalidMessageError as exc:
                raise TranscriptEntryError(sid, i, exc.where, exc.reason) from None
            self.entries.append(frozen)
            uuid = frozen.get("uuid")
            self.uuids.append(uuid if type(uuid) is str and uuid else None)


def _entry_id(tree: SessionTree, uuid: str | None, data: FrozenDict) -> str | None:
    """The id a record gets in ``tree``, or ``None`` if ``tree`` has it already.

    ``u:<uuid>`` for a record with a ``uuid``; ``d<n>:<uuid>`` for the n-th record with
    that ``uuid`` and other content; ``n:<position>`` for a record without one.  The
    kinds never share an id, so a record can never be taken for another.
    """
    if uuid is None:
        return f"n:{len(tree)}"
    candidate = f"u:{uuid}"
    n = 0
    while True:
        found = tree.get(candidate)
        if found is None:
            return candidate
        if isinstance(found, Custom) and found.data == data:
            return None  # a retried batch: stored already
        n += 1
        candidate = f"d{n}:{uuid}"


class _Transcripts:
    """The protocol over an :class:`~ptree.stores.AsyncStore`, opened on first use on
    the running asyncio loop (a loop of its own for each loop that uses it).

    Any number of tasks may append at once: appends are compare-and-swap updates, so
    tasks (and processes) sharing a transcript all land.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._stores: dict[asyncio.AbstractEventLoop, AsyncStore] = {}
        self._closed = False

    async def store(self) -> AsyncStore:
        loop = asyncio.get_running_loop()
        store = self._stores.get(loop)
        if store is None:
            if self._closed:
                raise StoreError(self.url, "the store is closed")
            store = await open_async(self.url)
            if loop in self._stores:  # another task opened it meanwhile
                await store.close()
            store = self._stores.setdefault(loop, store)
        return store

    async def close(self) -> None:
        self._closed = True
        store = self._stores.pop(asyncio.get_running_loop(), None)
        if store is not None:
            await store.close()

    # ------------------------------------------------------------------ writing

    async def append(self, key: object, entries: object) -> None:
        project, session, subpath = _key_parts(key)
        sid = stored_id(_key_of(project, session, subpath))
        batch = _Records(sid, entries)
        # An empty batch still creates a transcript never written (empty, as the SDK's
        # InMemorySessionStore does); on an existing one it changes nothing.
        fold = _summary_fold() if subpath is None else None
        key_dict = _key_of(project, session, subpath)

        def grow(tree: SessionTree) -> SessionTree:
            return _grow(tree, batch, key_dict, fold)

        store = await self.store()
        while True:
            try:
                await store.update(sid, grow, attempts=_ATTEMPTS)
                return
            except SessionNotFoundError:
                pass
            try:
                await store.save(grow(SessionTree(header=_header(sid, key_dict, batch))))
                return
            except ConflictError:
                continue  # another writer created it meanwhile: update it instead

    # ------------------------------------------------------------------ reading

    async def load(self, key: object) -> list[dict[str, Any]] | None:
        sid = stored_id(key)  # type: ignore[arg-type]  # checked there
        try:
            tree = await (await self.store()).load(sid)
        except SessionNotFoundError:
            return None
        return _records(tree)

    async def list_sessions(self, project_key: object) -> list[dict[str, Any]]:
        return [
            {"session_id": session, "mtime": mtime}
            for session, _sid, mtime in await self._mains(project_key)
        ]

    async def list_session_summaries(self, project_key: object) -> list[dict[str, Any]]:
        store = await self.store()
        out: list[dict[str, Any]] = []
        for session, sid, mtime in await self._mains(project_key):
            try:
                leaf = (await store.load_path(sid)).leaf
            except SessionNotFoundError:
                continue  # deleted since the listing
            if isinstance(leaf, Custom) and leaf.custom_type == SUMMARY_TYPE:
                out.append({"session_id": session, "mtime": mtime, "data": thaw(leaf.data)})
        return out

    async def _mains(self, project_key: object) -> list[tuple[str, str, int]]:
        """``(session_id, stored id, mtime in ms)`` of a project's main transcripts."""
        if type(project_key) is not str:
            raise SessionKeyError(
                project_key, "project_key", f"must be a string, not {type(project_key).__name__}"
            )
        out = []
        for summary in await (await self.store()).sessions():
            parsed = _parse_id(summary.id)
            if parsed is not None and parsed[0] == project_key and parsed[2] is None:
                out.append((parsed[1], summary.id, _ms(summary.updated.timestamp())))
        return out

    async def list_subkeys(self, key: object) -> list[str]:
        project, session, _ = _key_parts(key, subpath_allowed=False)
        summaries = await (await self.store()).sessions()
        return sorted(sub for sub, _sid in _subkeys(summaries, project, session))

    async def delete(self, key: object) -> None:
        project, session, subpath = _key_parts(key)
        store = await self.store()
        doomed = [stored_id(_key_of(project, session, subpath))]
        if subpath is None:
            doomed.extend(sid for _sub, sid in _subkeys(await store.sessions(), project, session))
        for sid in doomed:
            with contextlib.suppress(SessionNotFoundError):
                await store.delete(sid)

    async def tree(self, key: object) -> SessionTree | None:
        sid = stored_id(key)  # type: ignore[arg-type]  # checked there
        project, session, subpath = _transcript_parts(self.url, sid)
        store = await self.store()
        try:
            main = _records(await store.load(sid))
        except SessionNotFoundError:
            return None
        subagents: list[tuple[str, str, list[dict[str, Any]]]] = []
        if subpath is None:
            for sub_path, sub_id in sorted(_subkeys(await store.sessions(), project, session)):
                with contextlib.suppress(SessionNotFoundError):  # deleted since the listing
                    subagents.append((sub_path, sub_id, _records(await store.load(sub_id))))
        return _transcript(self.url, sid, session, subpath, main, subagents)


def _subkeys(
    summaries: Iterable[SessionSummary], project: str, session: str
) -> list[tuple[str, str]]:
    """``(subpath, stored id)`` of a session's subagent transcripts.  O(sessions)."""
    out = []
    for summary in summaries:
        parsed = _parse_id(summary.id)
        if parsed is not None and parsed[:2] == (project, session) and parsed[2] is not None:
            out.append((parsed[2], summary.id))
    return out


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def _summary_fold() -> Callable[..., Any]:
    from claude_agent_sdk import fold_session_summary

    return fold_session_summary


def _header(sid: str, key: dict[str, str], batch: _Records) -> SessionHeader:
    first = batch.entries[0] if batch.entries else FrozenDict()
    stamp = first.get("timestamp")
    cwd = first.get("cwd")
    return SessionHeader(
        id=sid,
        timestamp=stamp if type(stamp) is str and stamp else utc_now(),
        cwd=cwd if type(cwd) is str else "",
        extra={
            HEADER_FIELD: {
                "projectKey": key["project_key"],
                "sessionId": key["session_id"],
                "subpath": key.get("subpath"),
            }
        },
    )


def _grow(
    tree: SessionTree,
    batch: _Records,
    key: dict[str, str],
    fold: Callable[..., Any] | None,
) -> SessionTree:
    """``tree`` with the batch's new records and, for a main transcript, the summary
    folded over them, written only when it changed.

    Every entry is a root: the transcript's order is the order its entries were added,
    and the leaf, kept on the latest summary, is then a path of one entry, which
    :meth:`~ptree.stores.Store.load_path` reads without the transcript.  O(batch).

    Pure: :meth:`~ptree.stores.Store.update` may call it again on a newer tree.
    """
    previous = tree.leaf
    added: list[FrozenDict] = []
    for uuid, data in zip(batch.uuids, batch.entries, strict=True):
        entry_id = _entry_id(tree, uuid, data)
        if entry_id is None:
            continue
        stamp = data.get("timestamp")
        tree = tree.insert(
            Custom(
                id=entry_id,
                parent_id=None,
                timestamp=stamp if type(stamp) is str and stamp else utc_now(),
                custom_type=ENTRY_TYPE,
                data=data,
            )
        )
        added.append(data)
    if fold is None:
        return tree
    prev = None
    if isinstance(previous, Custom) and previous.custom_type == SUMMARY_TYPE:
        if not added:
            return tree
        prev = {"session_id": key["session_id"], "mtime": 0, "data": thaw(previous.data)}
    summary = fold(prev, key, added)
    if prev is not None and summary["data"] == prev["data"]:
        return tree.move_to(previous.id)  # type: ignore[union-attr]  # prev: previous is one
    return tree.insert(
        Custom(
            id=f"s:{len(tree)}",
            parent_id=None,
            timestamp=utc_now(),
            custom_type=SUMMARY_TYPE,
            data=summary["data"],
        )
    )


def _records(tree: SessionTree) -> list[dict[str, Any]]:
    """The SDK entries of a stored transcript, in the order they were appended.  O(n)."""
    return [
        thaw(e.data)
        for e in tree.entries()
        if isinstance(e, Custom) and e.custom_type == ENTRY_TYPE
    ]


# ---------------------------------------------------------------------------- the Claude Code view


def transcript_tree(store: Store, session_id: str) -> SessionTree:
    """A stored transcript as one Pi tree, through the Claude Code mapping.

    For a main transcript, its subagent transcripts are read with it, as Claude Code's
    subagent files are (:mod:`ptree.formats.claude_code`): one tree whose leaf is the
    end of the main conversation, each subagent on a branch of its own.  For a
    subagent's transcript, that transcript alone.  Cost: O(size of the transcripts),
    plus a listing of the store's sessions for a main transcript.

    Args:
        store: an open store.
        session_id: the stored id (:func:`stored_id`, or as ``ptree sessions`` lists it).

    Raises:
        SessionNotFoundError: (a ``KeyError``) no such session.
        ValueError: the session is not a transcript this module stored.
        ImportFormatError: a record that is not Claude Code's (the path names the
            store and the session, the line the record's 1-based position).
    """
    project, session, subpath = _transcript_parts(store.url, session_id)
    main = _records(store.load(session_id))
    subagents: list[tuple[str, str, list[dict[str, Any]]]] = []
    if subpath is None:
        for sub_path, sub_id in sorted(_subkeys(store.sessions(), project, session)):
            with contextlib.suppress(SessionNotFoundError):  # deleted since the listing
                subagents.append((sub_path, sub_id, _records(store.load(sub_id))))
    return _transcript(store.url, session_id, session, subpath, main, subagents)


def _transcript_parts(url: str, session_id: str) -> tuple[str, str, str | None]:
    parsed = _parse_id(session_id)
    if parsed is None:
        raise ValueError(f"{url}#{session_id}: not a Claude Agent SDK transcript")
    return parsed


def _transcript(
    url: str,
    session_id: str,
    session: str,
    subpath: str | None,
    main: list[dict[str, Any]],
    loaded: list[tuple[str, str, list[dict[str, Any]]]],
) -> SessionTree:
    """The tree of a transcript's records and its subagents' (``(subpath, stored id,
    records)``, sorted by subpath), in Claude Code's layout."""
    subagents: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    for sub_path, sub_id, records in loaded:
        subagents[_file_name(sub_path, subagents)] = (sub_id, records)
    if subpath is None:
        name = f"{session}.jsonl" if _SAFE.fullmatch(session) else "session.jsonl"
    else:
        name = _file_name(subpath, {})
    return _convert(url, session_id, name, main, subagents)


_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def _file_name(subpath: str, taken: Mapping[str, object]) -> str:
    """The file name a subagent's transcript gets in Claude Code's layout:
    ``agent-<id>.jsonl`` for ``subagents/agent-<id>`` (the name the importer reads the
    agent's id from); for other subpaths, or a name taken, ``agent-`` and a hash."""
    last = subpath.rsplit("/", 1)[-1]
    name = f"{last}.jsonl"
    if _SAFE.fullmatch(last) and last.startswith("agent-") and name not in taken:
        return name
    digest = hashlib.sha256(subpath.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"agent-{digest}.jsonl"


def _convert(
    url: str,
    session_id: str,
    name: str,
    main: list[dict[str, Any]],
    subagents: Mapping[str, tuple[str, list[dict[str, Any]]]],
) -> SessionTree:
    """The Claude Code mapping of a main transcript's records and its subagents'.

    The records are written in Claude Code's layout in a temporary folder and read by
    :func:`ptree.formats.claude_code.read`: the importer's one conversion, through its
    public entry point.
    """
    with tempfile.TemporaryDirectory(prefix="ptree-claude-") as tmp:
        root = Path(tmp)
        main_path = root / name
        where = {main_path: f"{url}#{session_id}"}
        _write_lines(main_path, main)
        sub_dir = root / Path(name).stem / "subagents"
        for file_name, (sub_id, records) in subagents.items():
            where[sub_dir / file_name] = f"{url}#{sub_id}"
            _write_lines(sub_dir / file_name, records)
        try:
            result: Any = claude_code.read(main_path)
        except ImportFormatError as exc:
            path = where.get(Path(str(exc.path)), exc.path)
            raise ImportFormatError(path, exc.line, exc.reason, record_id=exc.record_id) from None
    tree = getattr(result, "tree", result)
    assert isinstance(tree, SessionTree)
    return tree


def _write_lines(path: Path, records: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, separators=(",", ":")))
            f.write("\n")


# ---------------------------------------------------------------------------- the async front


def _on_asyncio() -> bool:
    """Whether the caller runs on an asyncio loop (the SDK may run on trio, via anyio)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class _Elsewhere:
    """An asyncio loop in a thread of its own, for callers on another event loop
    (trio): the async stores need asyncio, so their calls run there, and the caller's
    loop waits in one of anyio's worker threads."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


class TreeSessionStore(AsyncClosing):
    """The Claude Agent SDK's ``SessionStore`` on the ptree store ``url`` names.

    Pass it as ``ClaudeAgentOptions(session_store=TreeSessionStore(url))``.  The store
    is opened on first use (:func:`ptree.stores.open_async`); an unknown URL scheme is
    refused here.  Each method is a coroutine that never blocks the event loop: on
    asyncio it awaits the async store (PostgreSQL without a thread, SQLite and Pi files
    in the store's worker thread); on another loop (trio, which the SDK's anyio
    allows) the calls run on a private asyncio loop in a thread of their own.  Use one object per
    process (it may be shared by all its tasks and threads); close it with
    :meth:`close` or ``async with``.

    Args:
        url: a store URL, as :func:`ptree.stores.open` takes it.

    Raises:
        StoreError: (a ``ValueError``) a URL of an unknown scheme.
        TypeError: ``url`` is not a string.

    >>> import asyncio
    >>> async def demo():
    ...     async with TreeSessionStore("sqlite:///:memory:") as store:
    ...         key = {"project_key": "p", "session_id": "s"}
    ...         await store.append(key, [{"type": "user", "uuid": "u1", "n": 1}])
    ...         return await store.load(key)
    >>> asyncio.run(demo())
    [{'type': 'user', 'uuid': 'u1', 'n': 1}]
    """

    def __init__(self, url: str) -> None:
        if not isinstance(url, str):
            raise TypeError(f"a store URL is a str, not {type(url).__name__}")
        scheme = urlsplit(url).scheme.lower() if "://" in url else ""
        if scheme not in SCHEMES:
            open_store(url).close()  # raises the store's own error, before any I/O
        self._transcripts = _Transcripts(url)
        self._elsewhere: _Elsewhere | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """The store's URL."""
        return self._transcripts.url

    async def _call(self, method: Callable[..., Coroutine[Any, Any, _T]], *args: Any) -> _T:
        """``await method(*args)`` on this asyncio loop, or on the private one."""
        if _on_asyncio():
            return await method(*args)
        import anyio.to_thread  # anyio comes with the SDK

        with self._lock:
            if self._elsewhere is None:
                self._elsewhere = _Elsewhere()
            elsewhere = self._elsewhere
        return await anyio.to_thread.run_sync(elsewhere.run, method(*args))

    async def append(self, key: SessionKey, entries: Sequence[Mapping[str, Any]]) -> None:
        """Append a batch of transcript entries, atomically: all or nothing.

        ``entries`` are any JSON objects, as the SDK's ``SessionStoreEntry`` means them
        (its ``type``, ``uuid`` and ``timestamp`` and every other field of a transcript
        line), which that closed ``TypedDict`` cannot say: a transcript line written out
        (``{"type": "user", "message": ...}``) type-checks here.

        Entries already stored (same ``uuid``, same content: a retried batch) are
        skipped.  Cost: O(size of the batch) when this object wrote the transcript
        last; otherwise the entries added since are read first.

        Args:
            key: the transcript's session key.
            entries: the transcript entries, JSON objects, in order.

        Raises:
            SessionKeyError: not a valid key.
            TranscriptEntryError: an entry that is not a JSON object; nothing stored.
            ConflictError: other writers kept winning for 1,000 attempts.
        """
        await self._call(self._transcripts.append, key, entries)

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """The transcript's entries in append order, equal to those appended;
        ``None`` for a key never written (or deleted).  Cost: O(size of the transcript).

        Args:
            key: the transcript's session key.
        """
        loaded = await self._call(self._transcripts.load, key)
        return cast("list[SessionStoreEntry] | None", loaded)

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The project's main transcripts: ``session_id`` and ``mtime`` (the last
        append, Unix milliseconds).  Cost: O(sessions in the store).

        Args:
            project_key: the SDK's project key (the key's ``project_key``).

        Raises:
            SessionKeyError: ``project_key`` is not a string.
        """
        listed = await self._call(self._transcripts.list_sessions, project_key)
        return cast("list[SessionStoreListEntry]", listed)

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """The SDK's summary of each of the project's main transcripts, as folded when
        it was appended (``mtime`` as :meth:`list_sessions` gives it).  Cost:
        O(sessions in the store), plus one short read per session of the project.

        Args:
            project_key: the SDK's project key (the key's ``project_key``).

        Raises:
            SessionKeyError: ``project_key`` is not a string.
        """
        listed = await self._call(self._transcripts.list_session_summaries, project_key)
        return cast("list[SessionSummaryEntry]", listed)

    async def delete(self, key: SessionKey) -> None:
        """Delete a transcript; a main transcript's subagent transcripts with it.
        A key never written is fine.  Cost: O(sessions in the store) to find them.

        Args:
            key: the transcript's session key.
        """
        await self._call(self._transcripts.delete, key)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The subpaths of the session's subagent transcripts, sorted.  Cost:
        O(sessions in the store).

        Args:
            key: the session's key (``project_key`` and ``session_id``, no
                ``subpath``).

        Raises:
            SessionKeyError: not a valid key (or one with a ``subpath``).
        """
        return await self._call(self._transcripts.list_subkeys, key)

    async def tree(self, key: SessionKey) -> SessionTree | None:
        """The transcript as one Pi tree (see :func:`transcript_tree`), or ``None``
        for a key never written.  Cost: O(size of the transcripts).

        Args:
            key: the transcript's session key.
        """
        return await self._call(self._transcripts.tree, key)

    async def close(self) -> None:
        """Close the store (if it was opened).  Closing twice is fine.
        Cost: the store's close (releasing its connection).  A later call that needs
        the store raises :class:`~ptree.stores.StoreError`.
        """
        await self._call(self._transcripts.close)
        with self._lock:
            elsewhere, self._elsewhere = self._elsewhere, None
        if elsewhere is not None:
            elsewhere.stop()

    async def aclose(self) -> None:
        """:meth:`close`, by the name ``async with`` and :func:`contextlib.aclosing`
        call.  Cost: that of :meth:`close`."""
        await self.close()

    def __repr__(self) -> str:
        return f"TreeSessionStore({self.url!r})"
