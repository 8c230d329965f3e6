"""Errors of the formats layer."""

from __future__ import annotations

from ..errors import SessionError

__all__ = ["ExportFormatError"]


class ExportFormatError(SessionError, ValueError):
    """An export file that is not in the format it was read as.

    Attributes:
        path: the file (``None`` when the export was given as data).
        where: where in the export, such as ``conversations[3].mapping``.
        reason: what is wrong there.
    """

    def __init__(self, path: object, where: str, reason: str) -> None:
        self.path = path
        self.where = where
        self.reason = reason
        prefix = "" if path is None else f"{path}: "
        super().__init__(f"{prefix}{where}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.path, self.where, self.reason))
