"""Other tools' files, read into (and written from) ordinary Pi session trees.

One module per tool: :mod:`~ptree.formats.chatgpt` (ChatGPT's ``conversations.json``),
:mod:`~ptree.formats.openwebui` (Open WebUI's chat export),
:mod:`~ptree.formats.claude_code` (a Claude Code session with its subagent files),
:mod:`~ptree.formats.codex` (an OpenAI Codex CLI rollout) and
:mod:`~ptree.formats.librechat` (a LibreChat conversation export).  Every importer
keeps every branch the tool kept and gives a tree Pi itself opens with the same leaf
and context.

The session readers (Claude Code, Codex, LibreChat) are strict about their input (a
bad line is an :class:`~ptree.formats.ImportFormatError` naming the file, the line and the
record), iterative (deeply nested input never exhausts the stack), deterministic
(the same input gives the same tree: no random ids, no clock) and drop nothing
silently: records with no Pi equivalent become ``custom`` entries, and whatever a
reader leaves out is reported through its ``on_report`` callback.

For people: :mod:`~ptree.formats.html` (a self-contained HTML viewer of the whole
tree), :mod:`~ptree.formats.markdown` (Markdown of a path or of every branch), and
:mod:`~ptree.formats.redact` (secrets scrubbed from a tree before it is shared).

Imports: the core and :mod:`ptree.pi`.
"""

from typing import TYPE_CHECKING

from ..lazy import exports

if TYPE_CHECKING:
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

# Each name is imported from its module when first used: the CLI's parser, which only
# needs the list of formats, loads no importer.
__getattr__, __dir__ = exports(
    __name__,
    {
        "ImportedSession": "_chat_export",
        "chatgpt_sessions": "chatgpt",
        "import_chatgpt": "chatgpt",
        "ExportFormatError": "errors",
        "ImportFormatError": "errors",
        "to_html": "html",
        "to_markdown": "markdown",
        "import_openwebui": "openwebui",
        "openwebui_sessions": "openwebui",
        "SECRET_SHAPES": "redact",
        "Redactor": "redact",
        "RedactPatternError": "redact",
        "redact": "redact",
    },
    __all__,
)
