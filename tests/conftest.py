"""Shared test setup: Hypothesis profiles, and where the shared fixtures live.

Profiles: ``dev`` (the default, quick), ``ci`` (chosen when the ``CI`` environment
variable is set, as CI does: at least 1,000 examples for the state machines).
``HYPOTHESIS_PROFILE`` picks one by name.
"""

from __future__ import annotations

import os
from pathlib import Path

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
