"""Errors of the providers layer."""

from __future__ import annotations

from ..errors import SessionError

__all__ = ["ProviderError"]


class ProviderError(SessionError, ValueError):
    """A value ``ptree.providers`` cannot turn into a request body or a message.

    Attributes:
        api: the API asked for.
        where: what was wrong, e.g. ``"api"`` or ``"messages[3]"``.
        reason: what is wrong there.
    """

    def __init__(self, api: str, where: str, reason: str) -> None:
        self.api = api
        self.where = where
        self.reason = reason
        super().__init__(reason)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.api, self.where, self.reason))
