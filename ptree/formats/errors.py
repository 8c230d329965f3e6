"""Errors of the formats layer."""

from __future__ import annotations

from ..errors import SessionError, name_public

__all__ = ["ExportFormatError", "ImportFormatError"]


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


class ImportFormatError(SessionError, ValueError):
    """Another tool's session file that cannot be read as the format it was read as.

    Raised by the readers of :mod:`ptree.formats` for a line that is not JSON, not
    UTF-8, cut off (a torn last line), or a record whose fields are not what the
    format has.  ``str()`` reads ``FILE:LINE: reason`` (with the record's id when it
    has one), as compilers report errors.

    Attributes:
        path: the file.
        line: the 1-based line, or ``None`` when the whole file is concerned.
        reason: what is wrong.
        record_id: the record's own id (a Claude Code ``uuid``, …) when it has one.

    >>> str(ImportFormatError("s.jsonl", 3, "not JSON", record_id="u1"))
    "s.jsonl:3: not JSON (record 'u1')"
    """

    def __init__(
        self, path: object, line: int | None, reason: str, *, record_id: object = None
    ) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        self.record_id = record_id
        where = f"{path}" if line is None else f"{path}:{line}"
        suffix = "" if record_id is None else f" (record {record_id!r})"
        super().__init__(f"{where}: {reason}{suffix}")

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_import_error, (self.path, self.line, self.reason, self.record_id))


def _rebuild_import_error(
    path: object, line: int | None, reason: str, record_id: object
) -> ImportFormatError:
    return ImportFormatError(path, line, reason, record_id=record_id)


# Exported by the package: tracebacks and pickles read ``ptree.formats.X``.
name_public(globals(), "ptree.formats")
