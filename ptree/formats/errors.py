"""Errors of the formats layer: one family under :class:`FormatError`.

Every error :mod:`ptree.formats` raises for what it was given is a
:class:`FormatError` (a ``ValueError``): a source that is not the format it was read
as (:class:`ImportFormatError`, whichever importer read it) and a redaction pattern
that is not a usable expression (:class:`RedactPatternError`).
"""

from __future__ import annotations

from ..errors import SessionError, name_public

__all__ = ["FormatError", "ImportFormatError", "RedactPatternError"]


class FormatError(SessionError, ValueError):
    """The base of every error of :mod:`ptree.formats`: catch it (or ``ValueError``)
    to catch them all.

    >>> issubclass(ImportFormatError, FormatError), issubclass(FormatError, ValueError)
    (True, True)
    """


class ImportFormatError(FormatError):
    """Another tool's file that cannot be read as the format it was read as.

    Raised by every importer (ChatGPT, Open WebUI, LibreChat, Claude Code, Codex) for
    a file that is not JSON, not UTF-8, cut off (a torn last line), or a record or
    document whose fields are not what the format has.  ``str()`` reads
    ``FILE:LINE: WHERE: reason (record ID)``, as compilers report errors, each part
    present only when known.

    Attributes:
        path: the file (``None`` when the export was given as data).
        line: the 1-based line, or ``None`` when the whole file is concerned.
        reason: what is wrong.
        where: where in a JSON document, such as ``conversations[3].mapping``
            (``None`` for a line of a JSON Lines file).
        record_id: the record's own id (a Claude Code ``uuid``, …) when it has one.

    >>> str(ImportFormatError("s.jsonl", 3, "not JSON", record_id="u1"))
    "s.jsonl:3: not JSON (record 'u1')"
    >>> str(ImportFormatError("c.json", None, "expected an object", where="[0].mapping"))
    'c.json: [0].mapping: expected an object'
    """

    def __init__(
        self,
        path: object,
        line: int | None,
        reason: str,
        *,
        where: str | None = None,
        record_id: object = None,
    ) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        self.where = where
        self.record_id = record_id
        parts = [] if path is None else [f"{path}" if line is None else f"{path}:{line}"]
        if where is not None:
            parts.append(where)
        suffix = "" if record_id is None else f" (record {record_id!r})"
        super().__init__(": ".join([*parts, reason]) + suffix)

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_import_error,
            (self.path, self.line, self.reason, self.where, self.record_id),
        )


def _rebuild_import_error(
    path: object, line: int | None, reason: str, where: str | None, record_id: object
) -> ImportFormatError:
    return ImportFormatError(path, line, reason, where=where, record_id=record_id)


class RedactPatternError(FormatError):
    """A ``--redact-pattern`` that is not a valid regular expression (or matches nothing).

    Attributes:
        pattern: the pattern as given.
        reason: what is wrong with it.

    >>> str(RedactPatternError("(", "missing )"))
    "redaction pattern '(': missing )"
    """

    def __init__(self, pattern: str, reason: str) -> None:
        super().__init__(f"redaction pattern {pattern!r}: {reason}")
        self.pattern = pattern
        self.reason = reason

    def __reduce__(self) -> tuple[type[RedactPatternError], tuple[str, str]]:
        return (type(self), (self.pattern, self.reason))


# Exported by the package: tracebacks and pickles read ``ptree.formats.X``.
name_public(globals(), "ptree.formats")
