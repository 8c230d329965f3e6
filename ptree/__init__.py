"""ptree: a conversation's history as a persistent tree.

Every message is an entry with a parent; the leaf marks where the conversation is;
what goes to a language model is the path from the root to the leaf.  Every
operation returns a new :class:`SessionTree` and never changes the old one.
"""

from ._context import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    Context,
    ModelRef,
    bash_execution_text,
    build_context,
    iso_to_ms,
    to_provider_messages,
)
from ._entries import (
    ENTRY_TYPES,
    ActiveToolsChange,
    BranchSummary,
    Compaction,
    Custom,
    CustomMessage,
    Entry,
    Label,
    MessageEntry,
    ModelChange,
    SessionInfo,
    ThinkingLevelChange,
    UnknownEntry,
    entry_from_json,
)
from ._errors import (
    CycleError,
    DuplicateEntryError,
    HistoryError,
    InvalidEntryError,
    InvalidMessageError,
    SessionError,
    SessionFileError,
    SessionFileWarning,
    UnknownEntryError,
)
from ._frozen import FrozenDict, FrozenList, freeze, thaw
from ._header import CURRENT_VERSION, SessionHeader
from ._history import History, NothingToRedo, NothingToUndo
from ._ids import Clock, IdFactory, counter_ids, random_ids, utc_now
from ._importers import (
    ExportFormatError,
    ImportedSession,
    chatgpt_sessions,
    import_chatgpt,
    import_openwebui,
    openwebui_sessions,
)
from ._ref import ReentrantSwapError, SessionRef, Watcher, WatchError
from ._tree import SessionTree

__version__ = "0.1.0"

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "CURRENT_VERSION",
    "ENTRY_TYPES",
    "ActiveToolsChange",
    "BranchSummary",
    "Clock",
    "Compaction",
    "Context",
    "Custom",
    "CustomMessage",
    "CycleError",
    "DuplicateEntryError",
    "Entry",
    "ExportFormatError",
    "FrozenDict",
    "FrozenList",
    "History",
    "HistoryError",
    "IdFactory",
    "ImportedSession",
    "InvalidEntryError",
    "InvalidMessageError",
    "Label",
    "MessageEntry",
    "ModelChange",
    "ModelRef",
    "NothingToRedo",
    "NothingToUndo",
    "ReentrantSwapError",
    "SessionError",
    "SessionFileError",
    "SessionFileWarning",
    "SessionHeader",
    "SessionInfo",
    "SessionRef",
    "SessionTree",
    "ThinkingLevelChange",
    "UnknownEntry",
    "UnknownEntryError",
    "WatchError",
    "Watcher",
    "__version__",
    "bash_execution_text",
    "build_context",
    "chatgpt_sessions",
    "counter_ids",
    "entry_from_json",
    "freeze",
    "import_chatgpt",
    "import_openwebui",
    "iso_to_ms",
    "openwebui_sessions",
    "random_ids",
    "thaw",
    "to_provider_messages",
    "utc_now",
]
