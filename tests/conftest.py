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

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
PI_FIXTURES = SHARED / "fixtures" / "pi"


@pytest.fixture
def pi_fixtures() -> Path:
    """The folder of real Pi session files (read-only)."""
    if not PI_FIXTURES.is_dir():  # pragma: no cover - the folder is present in CI
        pytest.skip(f"the shared Pi fixtures are not at {PI_FIXTURES}")
    return PI_FIXTURES
