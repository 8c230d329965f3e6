"""Shared test setup: Hypothesis profiles, and where the shared fixtures live.

Profiles: ``dev`` (the default, quick), ``ci`` (chosen when the ``CI`` environment
variable is set, as CI does: at least 1,000 examples for the state machines).
``HYPOTHESIS_PROFILE`` picks one by name.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers import PI_FIXTURES, missing, require_shared

settings.register_profile(
    "dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci",
    max_examples=1000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


@pytest.fixture
def pi_fixtures() -> Path:
    """The folder of real Pi session files (read-only)."""
    return require_shared(PI_FIXTURES)


# ---------------------------------------------------------------------------- stores

STORE_KINDS = ["sqlite-file", "sqlite-memory", "jsonl", "postgres"]
"""Every kind of store the shared store suite runs against."""
SHARED_STORE_KINDS = ["sqlite-file", "jsonl", "postgres"]
"""The kinds that several store objects (connections, processes) can open at once."""


def postgres_url() -> str:
    """The test server's URL (``.ci/run`` starts one), with the ptree tables dropped.

    Skips when no server is configured, unless ``CI`` is set: then it fails.
    """
    url = os.environ.get("PTREE_TEST_POSTGRES_URL")
    if not url:
        reason = (
            "no PostgreSQL server: set PTREE_TEST_POSTGRES_URL "
            "(eval $(.ci/postgres start) starts a throwaway one)"
        )
        missing(reason)
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "DROP TABLE IF EXISTS ptree_entries, ptree_sessions, ptree_schema, ptree_search,"
            " ptree_pruned"
        )
    return url


def store_url_of(kind: str, tmp_path: Path) -> str:
    """A URL for a new, empty store of this kind."""
    if kind == "sqlite-file":
        return f"sqlite://{tmp_path}/sessions.db"
    if kind == "sqlite-memory":
        return "sqlite:///:memory:"
    if kind == "jsonl":
        return f"jsonl://{tmp_path}/sessions"
    assert kind == "postgres"
    return postgres_url()


@pytest.fixture(params=STORE_KINDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty store of each kind."""
    return store_url_of(request.param, tmp_path)


@pytest.fixture(params=SHARED_STORE_KINDS)
def shared_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty store of each kind that many store objects can share."""
    return store_url_of(request.param, tmp_path)


# ---------------------------------------------------------------------------- both APIs

STORE_APIS = ["sync", "async"]
"""The store suite runs through both protocols: the blocking one, and the async one."""


class AwaitedStore:
    """An :class:`~ptree.stores.AsyncStore` used through blocking calls, so that the
    one contract suite runs against it unchanged: each call is awaited on the store's
    own event loop, in a thread of its own (so a call made from inside ``update``'s
    ``fn``, which runs on the loop or in the store's worker, waits on another loop).
    """

    def __init__(self, url: str) -> None:
        from ptree import stores

        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        try:
            self.awaited = self._wait(stores.open_async(url))
        except BaseException:
            self._stop()
            raise

    def _wait(self, coro: Coroutine[Any, Any, Any]) -> Any:
        if self._loop.is_closed():  # a call after close: it only raises, on a loop of its own
            return asyncio.run(coro)
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def _stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.awaited, name)
        if not inspect.iscoroutinefunction(found):
            return found  # url, closed, schema_version

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._wait(found(*args, **kwargs))

        return call

    def __contains__(self, session_id: object) -> bool:
        return bool(self._wait(self.awaited.contains(session_id)))

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._wait(self.awaited.close())
        self._stop()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_with(api: str, url: str) -> Any:
    """A store opened through ``api`` (``"sync"``: :func:`ptree.stores.open`; ``"async"``:
    :func:`ptree.stores.open_async`, seen through :class:`AwaitedStore`)."""
    from ptree import stores

    return stores.open(url) if api == "sync" else AwaitedStore(url)


@pytest.fixture(params=STORE_APIS)
def open_store(request: pytest.FixtureRequest) -> Callable[[str], Any]:
    """Opens a store through each API (see :func:`open_with`)."""
    return functools.partial(open_with, request.param)
