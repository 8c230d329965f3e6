"""Other tools' files, read into (and written from) ordinary Pi session trees.

One module per tool: :mod:`~ptree.formats.chatgpt` (ChatGPT's ``conversations.json``),
:mod:`~ptree.formats.openwebui` (Open WebUI's chat export),
:mod:`~ptree.formats.claude_code` (a Claude Code session with its subagent files),
:mod:`~ptree.formats.codex` (an OpenAI Codex CLI rollout) and
:mod:`~ptree.formats.librechat` (a LibreChat conversation export).  Every importer
keeps every branch the tool kept and gives a tree Pi itself opens with the same leaf
and context.

The session readers (Claude Code, Codex, LibreChat) are strict about their input (a
bad line is an :class:`~ptree.ImportFormatError` naming the file, the line and the
record), iterative (deeply nested input never exhausts the stack), deterministic
(the same input gives the same tree: no random ids, no clock) and drop nothing
silently: records with no Pi equivalent become ``custom`` entries, and whatever a
reader leaves out is reported through its ``on_report`` callback.

For people: :mod:`~ptree.formats.html` (a self-contained HTML viewer of the whole
tree), :mod:`~ptree.formats.markdown` (Markdown of a path or of every branch), and
:mod:`~ptree.formats.redact` (secrets scrubbed from a tree before it is shared).

Imports: the core and :mod:`ptree.pi`.
"""

from ._chat_export import ImportedSession
from .chatgpt import chatgpt_sessions, import_chatgpt
from .errors import ExportFormatError, ImportFormatError
from .html import to_html
from .markdown import to_markdown
from .openwebui import import_openwebui, openwebui_sessions
from .redact import SECRET_SHAPES, Redactor, RedactPatternError, redact

__all__ = [
    "SECRET_SHAPES",
    "ExportFormatError",
    "ImportFormatError",
    "ImportedSession",
    "RedactPatternError",
    "Redactor",
    "chatgpt_sessions",
    "import_chatgpt",
    "import_openwebui",
    "openwebui_sessions",
    "redact",
    "to_html",
    "to_markdown",
]
