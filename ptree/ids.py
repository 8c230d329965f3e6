"""Where new ids and timestamps come from.

An id factory is any callable ``factory(tree) -> str`` that returns an id not yet
used in ``tree``; a clock is any callable ``clock() -> str`` that returns an ISO-8601
timestamp.  Both are set per tree (``SessionTree(id_factory=..., clock=...)``), never
as module state, so two trees never influence each other.
"""

from __future__ import annotations

import time
import uuid
from typing import Protocol

__all__ = ["Clock", "IdFactory", "IdSource", "counter_ids", "counter_of", "random_ids", "utc_now"]

# Longer digit runs are ids like any other: int() refuses past 4,300 digits (a
# ValueError from append), and no counter ever reaches 10**30, so they never collide.
_COUNTER_DIGITS = 30


def counter_of(entry_id: str) -> int:
    """``k`` for an id ``"e<k>"`` (the default ids, up to 30 digits), else 0.  O(1).

    Args:
        entry_id: any entry id.

    >>> counter_of("e12"), counter_of("e012"), counter_of("a1b2c3d4")
    (12, 0, 0)
    """
    if entry_id[:1] == "e" and entry_id[1:2] != "0" and len(entry_id) <= _COUNTER_DIGITS + 1:
        digits = entry_id[1:]
        if digits.isascii() and digits.isdigit():
            return int(digits)
    return 0


class IdSource(Protocol):
    """What an id factory may ask of the tree it makes an id for (a
    :class:`~ptree.SessionTree` is one): whether an id is taken, and the counter of
    the default ids."""

    def __contains__(self, entry_id: object, /) -> bool: ...

    @property
    def counter(self) -> int: ...


class IdFactory(Protocol):
    """Makes the id of the next entry of ``tree``; it must not be in ``tree`` yet."""

    def __call__(self, tree: IdSource, /) -> str: ...


class Clock(Protocol):
    """Returns the timestamp of an entry made now, as an ISO-8601 string."""

    def __call__(self) -> str: ...


def counter_ids(tree: IdSource) -> str:
    """The default ids: ``"e1"``, ``"e2"``, … counted per tree value.

    The next id is ``e<k+1>`` where ``k`` is the largest number among this tree's ids
    of the form ``e<k>``, so the count belongs to the value itself: two independent
    trees both start at ``e1``, and an explicit id such as ``"e7"`` is skipped over.
    Only ``e`` and 1 to 30 ASCII digits without a leading zero count: ``"e07"``,
    ``"e٣"`` and a 40-digit run are ids like any other (no counter gets that far).

    Cost: O(1).

    Args:
        tree: the tree the id is for.

    >>> from ptree import SessionTree
    >>> counter_ids(SessionTree().append({"role": "user", "content": "hi"}))
    'e2'
    """
    return f"e{tree.counter + 1}"


def random_ids(tree: IdSource) -> str:
    """Pi-style ids: 8 random hex characters, a whole UUID if 100 tries collide.

    Cost: O(1) expected.

    Args:
        tree: the tree the id is for (its ids are avoided).

    >>> from ptree import SessionTree
    >>> len(random_ids(SessionTree()))
    8
    """
    for _ in range(100):
        candidate = uuid.uuid4().hex[:8]
        if candidate not in tree:
            return candidate
    return str(uuid.uuid4())  # pragma: no cover - 100 collisions in a row


# One formatted string per millisecond: appends in a burst share it, and the cache
# holds a pure function's result, so it is no state any tree can observe.
_last: tuple[int, str] = (-1, "")


def _utc_text(ms: int) -> str:
    """The clock's text of ``ms`` milliseconds after the epoch (the C clock's rule too)."""
    secs, milli = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{milli:03d}Z"


def _python_utc_now() -> str:
    """utc_now where ``ptree._cfrozen`` is not built."""
    global _last
    ms = time.time_ns() // 1_000_000
    last = _last  # one read of one tuple: safe without a lock
    if ms == last[0]:
        return last[1]
    text = _utc_text(ms)
    _last = (ms, text)
    return text


# The same clock in C where the extension is built (ptree/_cfrozen.c, utc_now: the same
# milliseconds, the same text, also cached per millisecond), which append's common
# case calls without a Python call; tests/test_append_compiled.py checks the two agree.
_clock: Clock
try:
    from ._cfrozen import utc_now as _clock
except ImportError:  # pragma: no cover - built where a C compiler is found
    _clock = _python_utc_now


def utc_now() -> str:
    """The default clock: the current UTC time as Pi writes it, ``2026-01-01T00:00:00.000Z``.

    Cost: O(1); one string per millisecond is formatted, later calls in the same
    millisecond reuse it.

    >>> len(utc_now()), utc_now().endswith("Z")
    (24, True)
    """
    return _clock()
