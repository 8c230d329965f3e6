"""The errors of the stores: an unknown session, a conflicting save, a store ptree
cannot use (a bad URL, a schema newer than this ptree, a tree without a session id)."""

from __future__ import annotations

from ..errors import SessionError

__all__ = [
    "ConflictError",
    "CursorError",
    "SchemaVersionError",
    "SearchQueryError",
    "SessionNotFoundError",
    "StoreError",
    "UnknownKeepError",
]


class StoreError(SessionError, ValueError):
    """A store ptree cannot use as asked: a bad URL, a newer schema, a tree it cannot save.

    Attributes:
        url: the store's URL (or what was given as one).
        reason: what is wrong.
    """

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"{url}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.url, self.reason))


class SessionNotFoundError(SessionError, KeyError):
    """No session with this id in the store.

    Attributes:
        session_id: the id asked for.
        url: the store's URL.
    """

    def __init__(self, session_id: str, url: str) -> None:
        self.session_id = session_id
        self.url = url
        self.message = f"{url}: no session with id {session_id!r}"
        super().__init__(self.message)

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.message

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.session_id, self.url))


class ConflictError(SessionError, RuntimeError):
    """A save refused because the stored session has entries the tree lacks.

    A ``RuntimeError``, as a change made by someone else meanwhile is in Python (a
    dict changed during iteration): the call was right, the moment was not.

    Another writer saved since the tree was loaded (or the tree is not a later version
    of the stored one): saving would lose that writer's entries, so nothing was
    changed.  Load the session again, apply the change again, save again — which is
    what :meth:`~ptree.stores.Store.update` does.

    Attributes:
        session_id: the session.
        url: the store's URL.
        reason: what differs.
    """

    def __init__(self, session_id: str, url: str, reason: str) -> None:
        self.session_id = session_id
        self.url = url
        self.reason = reason
        super().__init__(f"{url}: session {session_id!r}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.session_id, self.url, self.reason))


class SchemaVersionError(StoreError):
    """A database written by a newer ptree: its schema version is one this ptree does
    not know, so it is left untouched.

    Attributes:
        found: the database's schema version.
        supported: the newest version this ptree reads and writes.
    """

    def __init__(self, url: str, found: int, supported: int) -> None:
        self.found = found
        self.supported = supported
        super().__init__(
            url,
            f"the database has ptree schema version {found}, newer than this ptree's "
            f"({supported}): upgrade ptree to use it",
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.url, self.found, self.supported))


class SearchQueryError(StoreError):
    """A search query that names nothing to find (no word in it), or a bad limit.

    Attributes:
        query: the query as given.
    """

    def __init__(self, url: str, query: object, reason: str) -> None:
        self.query = query
        super().__init__(url, reason)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.url, self.query, self.reason))


class CursorError(StoreError):
    """A page cursor this store did not give (or given with another ``order``).

    Attributes:
        cursor: the cursor as given.
    """

    def __init__(self, url: str, cursor: object, reason: str) -> None:
        self.cursor = cursor
        super().__init__(url, reason)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.url, self.cursor, self.reason))


class UnknownKeepError(StoreError, KeyError):
    """A prune asked to keep entries the session does not have: nothing was pruned
    (a typo in an id must not cost the entries it meant to keep).

    A ``KeyError`` too, as for any id that names nothing.

    Attributes:
        session_id: the session.
        entry_ids: the ids naming no entry of it.
    """

    def __init__(self, url: str, session_id: str, entry_ids: tuple[str, ...]) -> None:
        self.session_id = session_id
        self.entry_ids = entry_ids
        shown = ", ".join(repr(i) for i in entry_ids[:5])
        more = f" and {len(entry_ids) - 5} more" if len(entry_ids) > 5 else ""
        super().__init__(url, f"session {session_id!r} has no entry {shown}{more}: nothing pruned")

    def __str__(self) -> str:  # KeyError would repr() the message
        return f"{self.url}: {self.reason}"

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.url, self.session_id, self.entry_ids))
