"""Other tools' files, read into (and written from) ordinary Pi session trees.

One module per tool: :mod:`~ptree.formats.chatgpt` (ChatGPT's ``conversations.json``)
and :mod:`~ptree.formats.openwebui` (Open WebUI's chat export).  Every importer keeps
every branch the tool kept and makes the tool's current message the leaf.

Imports: the core and :mod:`ptree.pi`.
"""

from ._chat_export import ImportedSession
from .chatgpt import chatgpt_sessions, import_chatgpt
from .errors import ExportFormatError
from .openwebui import import_openwebui, openwebui_sessions

__all__ = [
    "ExportFormatError",
    "ImportedSession",
    "chatgpt_sessions",
    "import_chatgpt",
    "import_openwebui",
    "openwebui_sessions",
]
