"""Listing sessions a page at a time: the page, its cursor, and the order.

A walk by cursor is *keyset* paging: the cursor holds the last listed session's sort
key (its last change time and id, or its id), and the next page is the sessions past
that key.  So a walk stays correct while others save, delete and add sessions: it
never lists a session twice, and lists every session that nobody changed during the
walk.  (A session saved during a walk ordered by ``updated`` moves to the front: if
the walk had not reached it yet, this walk does not list it; it was not there to list
when the page it belonged to was read.  Order by ``"id"`` to list every session that
exists throughout the walk exactly once.)

The cursor is text (URL-safe base64 of a small JSON array) to pass back as ``after``;
it is not a secret and not a promise: a session it names may be gone meanwhile.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, TypeAlias

from .errors import CursorError

if TYPE_CHECKING:
    from ._base import SessionSummary

__all__ = ["ORDERS", "Order", "Position", "SessionPage", "decode_cursor", "encode_cursor"]

Order: TypeAlias = Literal["updated", "id"]
ORDERS = ("updated", "id")

Position: TypeAlias = tuple[datetime | None, str]
"""Where a page starts: past this (updated, id) key (``updated`` is ``None`` when the
order is by id)."""


class SessionPage(tuple["SessionSummary", ...]):
    """One page of :meth:`~ptree.stores.Store.sessions`: a tuple of summaries, and
    :attr:`next_cursor` to pass as ``after`` for the next page (``None`` on the last).
    """

    next_cursor: str | None

    def __new__(
        cls, items: Iterable[SessionSummary], next_cursor: str | None = None
    ) -> SessionPage:
        page = super().__new__(cls, items)
        page.next_cursor = next_cursor
        return page

    def __repr__(self) -> str:
        return f"SessionPage({list(self)!r}, next_cursor={self.next_cursor!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (tuple(self), self.next_cursor))


def encode_cursor(order: Order, summary: SessionSummary) -> str:
    """The cursor of the page after ``summary``."""
    key: list[object] = (
        ["u", summary.updated.astimezone(UTC).isoformat(timespec="microseconds"), summary.id]
        if order == "updated"
        else ["i", summary.id]
    )
    raw = json.dumps(key, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(url: str, order: Order, cursor: object) -> Position:
    """Where the page after ``cursor`` starts.

    Raises:
        CursorError: not a cursor of this order.
    """
    if not isinstance(cursor, str) or len(cursor) > 10_000:
        raise CursorError(url, cursor, "a page cursor is the str a page's next_cursor gave")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        key = json.loads(raw)
        if order == "updated":
            tag, when, sid = key
            if tag == "u" and isinstance(when, str) and isinstance(sid, str):
                stamp = datetime.fromisoformat(when)
                if stamp.tzinfo is not None:
                    return stamp.astimezone(UTC), sid
        else:
            tag, sid = key
            if tag == "i" and isinstance(sid, str):
                return None, sid
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        pass
    raise CursorError(
        url, cursor, f"not a page cursor of order={order!r} (pass a page's next_cursor)"
    )


def check_page_args(url: str, limit: object, order: object) -> None:
    """Refuse a limit that is no positive int and an unknown order (``ValueError``s
    of the store: :class:`~ptree.stores.StoreError`)."""
    if order not in ORDERS:
        raise CursorError(url, None, f"order is 'updated' or 'id', not {order!r}")
    if limit is not None and (type(limit) is not int or limit < 1):
        raise CursorError(url, None, f"limit is a positive int or None, not {limit!r}")


def page_of(
    url: str,
    summaries: list[SessionSummary],
    order: Order,
    limit: int | None,
    after: Position | None,
) -> SessionPage:
    """A page cut from every session's summary, in Python (the ``jsonl:`` store)."""
    if order == "updated":
        summaries.sort(key=lambda s: (s.updated, s.id), reverse=True)
        if after is not None:
            summaries = [s for s in summaries if (s.updated, s.id) < after]
    else:
        summaries.sort(key=lambda s: s.id)
        if after is not None:
            summaries = [s for s in summaries if s.id > after[1]]
    return cut(order, summaries, limit)


def cut(order: Order, rows: list[SessionSummary], limit: int | None) -> SessionPage:
    """The page of the first ``limit`` rows, given up to ``limit + 1`` (the extra
    one says there is a next page)."""
    if limit is None or len(rows) <= limit:
        return SessionPage(rows)
    rows = rows[:limit]
    return SessionPage(rows, encode_cursor(order, rows[-1]))
