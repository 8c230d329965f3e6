"""The exceptions ptree raises.

Every error subclasses :class:`SessionError` and also the built-in exception a caller
would naturally catch: an unknown id is a :class:`KeyError`, a bad file or a bad value
is a :class:`ValueError` (a bad message is also a :class:`TypeError`, as it was first).  Each
carries the facts (the id, the file, the line) as attributes, not only in its message.
"""

from __future__ import annotations

__all__ = [
    "CycleError",
    "DuplicateEntryError",
    "EntryKindError",
    "HistoryError",
    "InvalidEntryError",
    "InvalidMessageError",
    "SessionError",
    "TooDeepError",
    "UnknownEntryError",
    "name_public",
]


class SessionError(Exception):
    """Base class of every error ptree raises."""


class UnknownEntryError(SessionError, KeyError):
    """An id that names no entry of the tree.

    Attributes:
        entry_id: the id that was asked for.
        message: the error's text (default: it names the id).
    """

    def __init__(self, entry_id: object, message: str | None = None) -> None:
        self.entry_id = entry_id
        self.message = message or f"no entry with id {entry_id!r} in this tree"
        super().__init__(self.message)

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.message

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.entry_id, self.message))


class EntryKindError(SessionError, KeyError):
    """An id that names an entry of another kind than the one asked for.

    Raised by the typed accessors (``tree.message(id)`` for an id that names a label,
    say).  A :class:`KeyError`, like :class:`UnknownEntryError`: there is no entry *of
    that kind* with the id, so ``except KeyError`` handles both.

    Attributes:
        entry_id: the id that was asked for.
        expected: the ``type`` asked for (``"message"``).
        actual: the ``type`` of the entry the id names (``"label"``).
    """

    def __init__(self, entry_id: str, expected: str, actual: str) -> None:
        self.entry_id = entry_id
        self.expected = expected
        self.actual = actual
        self.message = f"entry {entry_id!r} is a {actual} entry, not a {expected} entry"
        super().__init__(self.message)

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.message

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.entry_id, self.expected, self.actual))


class DuplicateEntryError(SessionError, ValueError):
    """An id that is already used by another entry of the tree.

    Attributes:
        entry_id: the id that is taken.
        message: the error's text (default: it names the id).
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


class InvalidMessageError(SessionError, ValueError, TypeError):
    """A message (or other JSON-like value) that ptree cannot store.

    A :class:`ValueError`, since what is wrong is a value; also a :class:`TypeError`,
    as it was before, so that code catching that still catches it.

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


class TooDeepError(InvalidMessageError, ValueError):
    """A JSON value nested deeper than ptree stores (:data:`~ptree.frozen.MAX_DEPTH`).

    Refused where the value comes in (``append``, ``freeze``, an entry's constructor),
    so that nothing ptree holds is too deep to pickle, compare, print, write or read
    back.  A ``ValueError`` (a bad value) and, like every refused message, an
    :class:`InvalidMessageError`.

    Attributes:
        where: the path to the container that goes too deep, such as
            ``message['content'][0]…``.
        reason: what is wrong there.
        limit: the number of levels allowed.
    """

    def __init__(self, where: str, reason: str, limit: int = 100) -> None:
        self.limit = limit
        super().__init__(where, reason)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.where, self.reason, self.limit))


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


def name_public(namespace: dict[str, object], module: str) -> None:
    """Give each error and warning class a public module its ``__all__`` exports.

    Tracebacks, reprs and pickles then read ``module.Name`` (``ptree.UnknownEntryError``,
    ``ptree.stores.ConflictError``) wherever the class is defined; pickle finds the class
    there again, since the module exports it.  Called by the front door and by each
    layer's package for the errors it exports.  O(number of names).

    Args:
        namespace: the module's globals (its ``__all__`` says which names are exported).
        module: the public module's name, as tracebacks should read it.

    >>> class DemoError(SessionError):
    ...     pass
    >>> name_public({"__all__": ["DemoError"], "DemoError": DemoError}, "ptree.demo")
    >>> DemoError.__module__
    'ptree.demo'
    """
    names = namespace.get("__all__", ())
    assert isinstance(names, (list, tuple))
    for name in names:
        value = namespace.get(name)  # a name loaded on first use is named where it lives
        if isinstance(value, type) and issubclass(value, (SessionError, Warning)):
            value.__module__ = module
