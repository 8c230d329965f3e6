"""Errors of the Pi file layer: a file that cannot be read as asked, a lenient load's
warnings, a file another writer holds, a commit the file refuses."""

from __future__ import annotations

import errno

from ..errors import SessionError

__all__ = ["SessionFileError", "SessionFileWarning", "SessionLockedError"]


class SessionFileError(SessionError, ValueError):
    """A session file that cannot be read as asked.

    Attributes:
        path: the file.
        line: the 1-based line number, or ``None`` when the problem is the whole file.
        entry_id: the entry concerned, when there is one.
        reason: what is wrong.
    """

    def __init__(
        self,
        path: object,
        line: int | None,
        reason: str,
        *,
        entry_id: object = None,
    ) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        self.entry_id = entry_id
        where = f"{path}" if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_file_error, (self.path, self.line, self.reason, self.entry_id))


def _rebuild_file_error(
    path: object, line: int | None, reason: str, entry_id: object
) -> SessionFileError:
    return SessionFileError(path, line, reason, entry_id=entry_id)


class SessionFileWarning(UserWarning):
    """Something a lenient load skipped or repaired (a bad line, a torn tail).

    ``str()`` is the whole message (``FILE:LINE: what was done``); the facts are
    attributes too, so a caller need not parse the text.

    Attributes:
        path: the file, or ``None`` when not given.
        line: the 1-based line number, or ``None`` when no line is concerned.
        reason: what is wrong (without what the load did about it); the message
            itself when not given.
        entry_id: the entry concerned, when there is one.

    >>> w = SessionFileWarning("s.jsonl:3: skipped: malformed JSON", path="s.jsonl",
    ...                        line=3, reason="malformed JSON")
    >>> str(w), w.line, w.reason, w.entry_id
    ('s.jsonl:3: skipped: malformed JSON', 3, 'malformed JSON', None)
    """

    def __init__(
        self,
        message: str,
        *,
        path: object = None,
        line: int | None = None,
        reason: str | None = None,
        entry_id: object = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.reason = message if reason is None else reason
        self.entry_id = entry_id

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_file_warning,
            (str(self), self.path, self.line, self.reason, self.entry_id),
        )


def _rebuild_file_warning(
    message: str, path: object, line: int | None, reason: str, entry_id: object
) -> SessionFileWarning:
    return SessionFileWarning(message, path=path, line=line, reason=reason, entry_id=entry_id)


class SessionLockedError(SessionFileError, BlockingIOError):
    """Another writer holds the file: two writers on one file would interleave lines.

    Both a :class:`~ptree.SessionFileError` (so a ``ValueError``) and a
    ``BlockingIOError``, whichever a caller prefers to catch.

    Attributes:
        path: the file.
    """

    def __init__(self, path: object, reason: str | None = None) -> None:
        SessionFileError.__init__(
            self,
            path,
            None,
            reason
            or "another SessionWriter holds this file (it is locked); "
            "close that writer first, or write to another file",
        )
        self.errno = errno.EWOULDBLOCK

    def __reduce__(self) -> tuple[object, ...]:
        return (SessionLockedError, (self.path, self.reason))
