"""Other tools' files, read into (and written from) ordinary Pi session trees.

Importers, one module per tool, each with the same shape: :mod:`~ptree.formats.chatgpt`
(ChatGPT's ``conversations.json``), :mod:`~ptree.formats.openwebui` (Open WebUI's chat
export), :mod:`~ptree.formats.librechat` (a LibreChat conversation export),
:mod:`~ptree.formats.claude_code` (a Claude Code session with its subagent files) and
:mod:`~ptree.formats.codex` (an OpenAI Codex CLI rollout).  Each has

- ``read(src, *, on_report=None, ...) -> ImportedSession``: the one session of a
  file (for a multi-conversation export, its only conversation), and
- ``sessions(src, *, on_report=None, ...) -> Iterator[ImportedSession]``: every
  session a file holds (one for a session file),

and :func:`write_sessions` writes them as Pi files; :data:`IMPORTERS` names them all,
as ``ptree import`` drives them.  Every importer keeps every branch the tool kept and
gives a tree Pi itself opens with the same leaf and context; bad input is an
:class:`ImportFormatError` (a :class:`FormatError`, a ``ValueError``) naming the
file, the line or place and the record; they are iterative (deeply nested input never
exhausts the stack), deterministic (the same input gives the same tree: no random
ids, no clock) and drop nothing silently: what has no Pi equivalent becomes a
``custom`` entry or an entry's own field, and whatever an importer leaves out or keeps
only as text is reported through ``on_report`` (a
:class:`~ptree.pi.SessionFileWarning` when no callback is given).

For people: :mod:`~ptree.formats.html` (a self-contained HTML viewer of the whole
tree), :mod:`~ptree.formats.markdown` (Markdown of a path or of every branch), and
:mod:`~ptree.formats.redaction` (secrets scrubbed from a tree before it is shared).

Imports: the core and :mod:`ptree.pi`.
"""

from typing import TYPE_CHECKING

from ..lazy import exports

if TYPE_CHECKING:
    from ._common import ImportedSession, write_sessions
    from .errors import FormatError, ImportFormatError, RedactPatternError
    from .html import to_html
    from .importers import IMPORTERS, Importer
    from .markdown import to_markdown
    from .redaction import SECRET_SHAPES, Redactor, redact

__all__ = [
    "IMPORTERS",
    "SECRET_SHAPES",
    "FormatError",
    "ImportFormatError",
    "ImportedSession",
    "Importer",
    "RedactPatternError",
    "Redactor",
    "redact",
    "to_html",
    "to_markdown",
    "write_sessions",
]

# Each name is imported from its module when first used: the CLI's parser, which only
# needs the list of formats, loads no importer.
__getattr__, __dir__ = exports(
    __name__,
    {
        "ImportedSession": "_common",
        "write_sessions": "_common",
        "FormatError": "errors",
        "ImportFormatError": "errors",
        "RedactPatternError": "errors",
        "to_html": "html",
        "IMPORTERS": "importers",
        "Importer": "importers",
        "to_markdown": "markdown",
        "SECRET_SHAPES": "redaction",
        "Redactor": "redaction",
        "redact": "redaction",
    },
    __all__,
)
