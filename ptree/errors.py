"""The exceptions ptree raises.

Every error subclasses :class:`SessionError` and also the built-in exception a caller
would naturally catch: an unknown id is a :class:`KeyError`, a bad file or a bad value
is a :class:`ValueError`, a value of the wrong type is a :class:`TypeError`.  Each
carries the facts (the id, the file, the line) as attributes, not only in its message.
"""

from __future__ import annotations

__all__ = [
    "CycleError",
    "DuplicateEntryError",
    "HistoryError",
    "InvalidEntryError",
    "InvalidMessageError",
    "SessionError",
    "SessionFileError",
    "SessionFileWarning",
    "UnknownEntryError",
]


class SessionError(Exception):
    """Base class of every error ptree raises."""


class UnknownEntryError(SessionError, KeyError):
    """An id that names no entry of the tree.

    Attributes:
        entry_id: the id that was asked for.
    """

    def __init__(self, entry_id: object, message: str | None = None) -> None:
        self.entry_id = entry_id
        self.message = message or f"no entry with id {entry_id!r} in this tree"
        super().__init__(self.message)

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.message

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.entry_id, self.message))


class DuplicateEntryError(SessionError, ValueError):
    """An id that is already used by another entry of the tree.

    Attributes:
        entry_id: the id that is taken.
    """

    def __init__(self, entry_id: str, message: str | None = None) -> None:
        self.entry_id = entry_id
        self.message = message or f"an entry with id {entry_id!r} already exists"
        super().__init__(self.message)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.entry_id, self.message))


class CycleError(SessionError, ValueError):
    """Entries whose ``parent_id`` links form a cycle, so they never reach a root.

    Attributes:
        entry_ids: the ids on the cycle, in parent order.
    """

    def __init__(self, entry_ids: tuple[str, ...]) -> None:
        self.entry_ids = entry_ids
        shown = " -> ".join(entry_ids[:8]) + (" -> ..." if len(entry_ids) > 8 else "")
        super().__init__(f"parent links form a cycle: {shown}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.entry_ids,))


class InvalidMessageError(SessionError, TypeError):
    """A message (or other JSON-like value) that ptree cannot store.

    Attributes:
        where: a path into the value, such as ``message['content'][0]``.
        reason: what is wrong there.
    """

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"{where}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.where, self.reason))


class InvalidEntryError(SessionError, ValueError):
    """An entry whose fields are missing or of the wrong kind.

    Attributes:
        entry_id: the entry's id when it has one, else ``None``.
        field: the offending field (JSON name) when one is to blame, else ``None``.
        reason: what is wrong.
    """

    def __init__(self, reason: str, *, entry_id: object = None, field: str | None = None) -> None:
        self.entry_id = entry_id
        self.field = field
        self.reason = reason
        where = f"entry {entry_id!r}" if entry_id is not None else "entry"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_invalid_entry, (self.reason, self.entry_id, self.field))


def _rebuild_invalid_entry(reason: str, entry_id: object, field: str | None) -> InvalidEntryError:
    return InvalidEntryError(reason, entry_id=entry_id, field=field)


class HistoryError(SessionError, IndexError):
    """Undo with nothing to undo, or redo with nothing to redo."""


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
        return (_rebuild_file_warning,
                (str(self), self.path, self.line, self.reason, self.entry_id))


def _rebuild_file_warning(
    message: str, path: object, line: int | None, reason: str, entry_id: object
) -> SessionFileWarning:
    return SessionFileWarning(message, path=path, line=line, reason=reason, entry_id=entry_id)
