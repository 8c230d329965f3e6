"""The errors of the stores, one family under :class:`StoreError`: an unknown session,
a conflicting save, a store ptree cannot use (a bad URL, a schema newer than this ptree,
a tree without a session id), and the faults of the machine under it: a database
another process keeps locked, a connection lost, a disk full or read-only.

Each is also the built-in a caller would catch: ``KeyError`` for an unknown session,
``RuntimeError`` for a conflict, ``TimeoutError`` for a lock, ``ConnectionError`` for a
lost connection, ``OSError`` for a write the disk refused; and, as every
:class:`StoreError`, a ``ValueError``.  No driver's own exception (``sqlite3``,
``psycopg``) escapes a store.
"""

from __future__ import annotations

import errno as _errno

from ..errors import SessionError

__all__ = [
    "ConflictError",
    "CursorError",
    "SchemaVersionError",
    "SearchQueryError",
    "SessionNotFoundError",
    "StoreError",
    "StoreLockedError",
    "StoreUnavailableError",
    "StoreWriteError",
    "UnknownKeepError",
]


class StoreError(SessionError, ValueError):
    """The base of every store error; raised itself for a store ptree cannot use as
    asked: a bad URL, a newer schema, a tree it cannot save.

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


class SessionNotFoundError(StoreError, KeyError):
    """No session with this id in the store.

    Attributes:
        session_id: the id asked for.
        url: the store's URL.
    """

    def __init__(self, session_id: str, url: str) -> None:
        self.session_id = session_id
        self.url = url
        self.reason = f"no session with id {session_id!r}"
        self.message = f"{url}: {self.reason}"
        Exception.__init__(self, self.message)

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.message

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.session_id, self.url))


class ConflictError(StoreError, RuntimeError):
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
        Exception.__init__(self, f"{url}: session {session_id!r}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.session_id, self.url, self.reason))


class StoreLockedError(StoreError, TimeoutError):
    """Another process kept the store (or the session) locked longer than the timeout.

    The save or load changed nothing; try again later, or open the store with a longer
    ``?timeout=SECONDS``.  A ``TimeoutError`` too.

    Attributes:
        url: the store's URL.
        timeout: the seconds waited.
        path: the file that was locked (the database, the session file), or ``None``.
    """

    def __init__(self, url: str, timeout: float, path: str | None = None) -> None:
        self.timeout = timeout
        self.path = path
        where = f" ({path})" if path is not None else ""
        StoreError.__init__(
            self,
            url,
            f"still locked by another process after {timeout:g} s{where}: nothing was "
            "changed; try again, or open the store with a longer ?timeout=SECONDS",
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.url, self.timeout, self.path))


class StoreUnavailableError(StoreError, ConnectionError):
    """The database could not be reached: the connection was lost (the server restarted,
    the connection was killed) or could not be made.

    An operation that raised it either committed whole or not at all; a save may be
    repeated as it is (a save of a tree already stored writes nothing).  The same store
    object connects again on its next call.  A ``ConnectionError`` too.

    Attributes:
        url: the store's URL.
        reason: what the driver said.
    """

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.url, self.reason))


class StoreWriteError(StoreError, OSError):
    """The store's disk refused a write: full, read-only, not permitted, an I/O error.

    Nothing half-written is visible: the store holds what it held before.  An
    ``OSError`` too, with ``errno`` (``ENOSPC``, ``EROFS``, ``EACCES``, ``EIO``) and
    ``filename`` set.

    Attributes:
        url: the store's URL.
        path: the file or directory concerned (the database, the session file), never
            a temporary file.
        errno: the error number.
        reason: what went wrong.
    """

    def __init__(self, url: str, path: str, errno: int | None, reason: str) -> None:
        StoreError.__init__(self, url, f"{path}: {reason}")
        self.reason = reason
        self.path = path
        self.errno = errno
        self.strerror = reason
        self.filename = path

    def __str__(self) -> str:
        return f"{self.url}: {self.path}: {self.reason}"

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.url, self.path, self.errno, self.reason))


def errno_name(number: int | None) -> str:
    """``ENOSPC`` for 28; ``"an I/O error"`` for ``None`` or an unknown number."""
    return _errno.errorcode.get(number or 0, "an I/O error")


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


class _RefusedArgument(StoreError):
    """A store refused an argument, kept as given in the attribute ``_FIELD`` names."""

    _FIELD = ""

    def __init__(self, url: str, given: object, reason: str) -> None:
        setattr(self, self._FIELD, given)
        super().__init__(url, reason)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.url, getattr(self, self._FIELD), self.reason))


class SearchQueryError(_RefusedArgument):
    """A search query that names nothing to find (no word in it), or a bad limit.

    Attributes:
        query: the query as given.
    """

    _FIELD = "query"
    query: object


class CursorError(_RefusedArgument):
    """A page cursor this store did not give (or given with another ``order``).

    Attributes:
        cursor: the cursor as given.
    """

    _FIELD = "cursor"
    cursor: object


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
