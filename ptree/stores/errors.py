"""The errors of the stores: an unknown session, a conflicting save, a store ptree
cannot use (a bad URL, a schema newer than this ptree, a tree without a session id)."""

from __future__ import annotations

from ..errors import SessionError

__all__ = ["ConflictError", "SessionNotFoundError", "StoreError"]


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
