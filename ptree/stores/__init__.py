"""Where many sessions live: SQLite, PostgreSQL and a directory of Pi files, behind one
protocol (:class:`Store`).

>>> from ptree import SessionHeader, SessionTree, stores
>>> header = SessionHeader(id="chat-1", timestamp="2026-01-01T00:00:00Z", cwd="/srv")
>>> with stores.open("sqlite:///:memory:") as store:
...     t = store.save(SessionTree(header=header).append({"role": "user", "content": "hi"}))
...     t = store.update("chat-1", lambda t: t.append({"role": "assistant", "content": "hello"}))
...     [(s.id, s.entry_count) for s in store.sessions()], len(store.load("chat-1"))
([('chat-1', 2)], 2)

Each save writes only the entries the store lacks, in one transaction, and refuses
(:class:`ConflictError`) a tree that lacks entries the store has: nothing is ever lost.

Imports: the core and :mod:`ptree.pi`; a database driver only as an optional extra
(psycopg 3, ``ptree[postgres]``), imported when a store of that kind is opened.
"""

from __future__ import annotations

import functools
from urllib.parse import unquote, urlsplit

from ..errors import name_public
from ._async import AsyncStore, ThreadedStore
from ._base import SessionSummary, Store
from ._paging import SessionPage
from ._plan import Pause
from ._prune import Keep, PruneReport
from ._schema import SCHEMA_VERSION
from ._search import SearchHit
from .errors import (
    ConflictError,
    CursorError,
    SchemaVersionError,
    SearchQueryError,
    SessionNotFoundError,
    StoreError,
    StoreLockedError,
    StoreUnavailableError,
    StoreWriteError,
    UnknownKeepError,
)
from .jsonl import JsonlStore
from .postgres import AsyncPostgresStore, PostgresStore
from .sqlite import SqliteStore

__all__ = [
    "SCHEMA_VERSION",
    "AsyncPostgresStore",
    "AsyncStore",
    "ConflictError",
    "CursorError",
    "JsonlStore",
    "Keep",
    "Pause",
    "PostgresStore",
    "PruneReport",
    "SchemaVersionError",
    "SearchHit",
    "SearchQueryError",
    "SessionNotFoundError",
    "SessionPage",
    "SessionSummary",
    "SqliteStore",
    "Store",
    "StoreError",
    "StoreLockedError",
    "StoreUnavailableError",
    "StoreWriteError",
    "UnknownKeepError",
    "open",
    "open_async",
]

SCHEMES = ("sqlite", "postgresql", "postgres", "jsonl")
"""The URL schemes :func:`open` takes."""


def open(url: str) -> Store:  # noqa: A001 - stores.open, as the module's one entry point
    """Open the store a URL names.

    - ``sqlite:///ABS/PATH.db``: a SQLite file (created if missing; the path is
      percent-decoded); ``sqlite:///:memory:`` is a store of its own, gone on close;
    - ``postgresql://user@host:5432/db`` (or ``postgres://``): a PostgreSQL database,
      through psycopg 3 (``pip install 'ptree[postgres]'``);
    - ``jsonl:///ABS/DIR``: a directory of Pi session files (created if missing);
      ``jsonl:///ABS/DIR?fsync=false`` hands each save to the operating system
      without waiting for the disk: it survives the process being killed, not a
      power cut, and is several times faster.

    ``sqlite:`` and ``jsonl:`` URLs take ``?timeout=SECONDS`` (default 10): how long
    a save waits for another process's lock (a write transaction, a save to the same
    file) before :class:`StoreLockedError`.  Options combine with ``&``.

    The tables (or the directory) are created on first use.  Cost: one connection
    (or directory scan, for ``jsonl:``), and creating the tables the first time.

    Args:
        url: the store's URL, as above.

    Raises:
        StoreError: (a ``ValueError``) an unknown scheme (the message names the
            schemes), a relative path, or a database whose schema is newer than
            this ptree.

    >>> open("redis://localhost")
    Traceback (most recent call last):
    ...
    ptree.stores.StoreError: redis://localhost: unknown store scheme 'redis': use one of sqlite, \
postgresql, postgres, jsonl
    """
    parts = urlsplit(_checked(url))
    scheme = parts.scheme.lower()
    if scheme in ("postgresql", "postgres"):
        return PostgresStore(url)
    if scheme not in SCHEMES:
        raise StoreError(url, f"unknown store scheme {scheme!r}: use one of {', '.join(SCHEMES)}")
    options = _options(url, scheme, parts.query)
    fsync = options.get("fsync", "true") in ("true", "1")
    timeout = float(options.get("timeout", DEFAULT_TIMEOUT))
    if parts.netloc not in ("", "localhost") or parts.fragment:
        raise StoreError(
            url, f"a {scheme} URL is {scheme}:///ABSOLUTE/PATH, without host or fragment"
        )
    path = unquote(parts.path, errors="strict")
    if scheme == "sqlite" and path in ("/:memory:", ":memory:"):
        return SqliteStore(url, ":memory:", timeout=timeout)
    if not path.startswith("/"):
        raise StoreError(url, f"the path must be absolute: {scheme}:///ABSOLUTE/PATH")
    if scheme == "sqlite":
        return SqliteStore(url, path, timeout=timeout)
    return JsonlStore(url, path, fsync=fsync, timeout=timeout)


async def open_async(url: str) -> AsyncStore:
    """Open the store a URL names, for an asyncio event loop: :func:`open`'s URLs,
    :class:`Store`'s contract awaited (:class:`AsyncStore`).

    A PostgreSQL store talks to the server through psycopg's ``AsyncConnection``
    (:class:`AsyncPostgresStore`: no thread).  A ``sqlite:`` or ``jsonl:`` store gets a
    worker thread of its own, where the blocking store runs each operation: the event
    loop never waits on the disk.  Cost: as :func:`open`.

    Args:
        url: the store's URL, as :func:`open` takes it.

    Raises:
        StoreError: (a ``ValueError``) as :func:`open`.
        StoreUnavailableError: the PostgreSQL server cannot be reached.

    >>> import asyncio
    >>> from ptree import SessionHeader, SessionTree
    >>> async def main():
    ...     async with await open_async("sqlite:///:memory:") as store:
    ...         header = SessionHeader(id="chat-1", timestamp="2026-01-01T00:00:00Z", cwd="/")
    ...         tree = SessionTree(header=header).append({"role": "user", "content": "hi"})
    ...         await store.save(tree)
    ...         return len(await store.load("chat-1"))
    >>> asyncio.run(main())
    1
    """
    if urlsplit(_checked(url)).scheme.lower() in ("postgresql", "postgres"):
        return await AsyncPostgresStore.connect(url)
    return await ThreadedStore.open(functools.partial(open, url))


def _checked(url: object) -> str:
    if not isinstance(url, str):
        raise TypeError(f"a store URL is a str, not {type(url).__name__}")
    return url


DEFAULT_TIMEOUT = 10.0
"""Seconds a save waits for another process's lock before :class:`StoreLockedError`."""

_OPTIONS = {"sqlite": ("timeout",), "jsonl": ("fsync", "timeout")}


def _options(url: str, scheme: str, query: str) -> dict[str, str]:
    """The URL's options (``a=1&b=2``), each checked: known for the scheme, a valid value."""
    known = _OPTIONS.get(scheme, ())
    out: dict[str, str] = {}
    for part in query.split("&") if query else ():
        key, _, value = part.partition("=")
        if key not in known:
            takes = " and ".join(known) or "no options"
            raise StoreError(url, f"unknown option {part!r} (a {scheme} URL takes {takes})")
        if key == "fsync" and value not in ("true", "1", "false", "0"):
            raise StoreError(url, f"fsync must be true or false, not {value!r}")
        if key == "timeout":
            try:
                seconds = float(value)
            except ValueError:
                seconds = -1.0
            if not 0 <= seconds < float("inf"):
                raise StoreError(url, f"timeout must be a number of seconds, not {value!r}")
        out[key] = value
    return out


name_public(globals(), "ptree.stores")
