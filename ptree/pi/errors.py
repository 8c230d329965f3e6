"""Errors of the Pi file layer: a file that cannot be read as asked, a lenient load's
warnings, a file another writer holds, a commit the file refuses, a file that exists
or that the disk refuses to write."""

from __future__ import annotations

import errno
from typing import ClassVar

from ..errors import SessionError

__all__ = [
    "SessionChangedError",
    "SessionExistsError",
    "SessionFileError",
    "SessionFileWarning",
    "SessionLockedError",
    "SessionWriteError",
    "UnsupportedVersionError",
]


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


class _WholeFileError(SessionFileError):
    # What the errors about a whole file share: made from ``(path, reason=None)``, the
    # class's own reason when none is given, and pickled as they were made.
    _REASON: ClassVar[str]

    def __init__(self, path: object, reason: str | None = None) -> None:
        SessionFileError.__init__(self, path, None, reason or self._REASON)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.path, self.reason))


class SessionChangedError(_WholeFileError):
    """The file changed since the tree was read from it: replacing it would lose
    what was written meanwhile (a :class:`~ptree.SessionWriter`'s commits, say).

    Load the file again and redo the change on that tree, or write to a new file.
    """

    _REASON = (
        "changed since this tree was read from it (another writer added to it "
        "or replaced it): overwriting it would drop those changes; load it again, "
        "or dump to a new file"
    )


class UnsupportedVersionError(SessionFileError):
    """A session file of a version newer than ptree knows (it reads 1 to 3).

    Read as version 3, its lines could mean something else, and writing it back
    would label it version 3: so it is refused, in lenient mode too.

    Attributes:
        version: the version the header states.
    """

    def __init__(self, path: object, line: int | None, version: int) -> None:
        self.version = version
        super().__init__(
            path,
            line,
            f"session format version {version} is newer than this ptree reads "
            "(versions 1 to 3); upgrade ptree to read it",
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (UnsupportedVersionError, (self.path, self.line, self.version))


class SessionFileWarning(UserWarning):
    """Something a load skipped or repaired (a bad line, a torn tail).

    ``str()`` is the whole message (``FILE:LINE: what was done``); the facts are
    attributes too, so a caller need not parse the text.

    Attributes:
        path: the file, or ``None`` when not given.
        line: the 1-based line number, or ``None`` when no line is concerned.
        reason: what is wrong (without what the load did about it); the message
            itself when not given.
        entry_id: the entry concerned, when there is one.
        strict_too: a strict load does the same (a torn line left by a crash, a
            second header from an old Pi bug): a recovery, not a problem of the
            file.  ``False`` for what only a lenient load skips or repairs.

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
        strict_too: bool = False,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.reason = message if reason is None else reason
        self.entry_id = entry_id
        self.strict_too = strict_too

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_file_warning,
            (str(self), self.path, self.line, self.reason, self.entry_id, self.strict_too),
        )


def _rebuild_file_warning(
    message: str,
    path: object,
    line: int | None,
    reason: str,
    entry_id: object,
    strict_too: bool = False,
) -> SessionFileWarning:
    return SessionFileWarning(
        message, path=path, line=line, reason=reason, entry_id=entry_id, strict_too=strict_too
    )


class SessionLockedError(_WholeFileError, BlockingIOError):
    """Another writer holds the file: two writers on one file would interleave lines.

    Both a :class:`~ptree.SessionFileError` (so a ``ValueError``) and a
    ``BlockingIOError``, whichever a caller prefers to catch.

    Attributes:
        path: the file.
    """

    _REASON = (
        "another SessionWriter holds this file (it is locked); "
        "close that writer first, or write to another file"
    )

    def __init__(self, path: object, reason: str | None = None) -> None:
        super().__init__(path, reason)
        self.errno = errno.EWOULDBLOCK


class SessionWriteError(SessionFileError, OSError):
    """A session file that could not be written: the disk is full, the directory or
    the file is read-only, an I/O error.

    Nothing half-written is left: the file holds what it held before (a
    :class:`~ptree.SessionWriter` refuses further commits until it is reopened).  Both
    a :class:`SessionFileError` (so a ``ValueError``) and an ``OSError``, with
    ``errno`` and ``filename`` set.

    Attributes:
        path: the session file (never a temporary file beside it).
        errno: the error number (``ENOSPC``, ``EACCES``, ``EROFS``, ``EFBIG``, ...).
        reason: what went wrong.
    """

    def __init__(self, path: object, errno: int | None, reason: str) -> None:
        SessionFileError.__init__(self, path, None, reason)
        self.errno = errno
        self.strerror = reason
        self.filename = path

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"

    def __reduce__(self) -> tuple[object, ...]:
        return (SessionWriteError, (self.path, self.errno, self.reason))


class SessionExistsError(_WholeFileError, FileExistsError):
    """A file is already at the path a new session file was to be written to.

    Nothing was written.  ``dump(tree, path, overwrite=True)`` replaces it (the CLI:
    ``--force``).  Both a :class:`SessionFileError` and a ``FileExistsError``.

    Attributes:
        path: the file that exists.
    """

    _REASON = "a file exists here; overwrite=True replaces it (ptree's command line: --force)"

    def __init__(self, path: object, reason: str | None = None) -> None:
        super().__init__(path, reason)
        self.errno = errno.EEXIST
        self.strerror = self.reason
        self.filename = path

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"
