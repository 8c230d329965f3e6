"""ptree: a conversation's history as a persistent tree.

Every message is an entry with a parent; the leaf marks where the conversation is;
what goes to a language model is the path from the root to the leaf.  Every
operation returns a new :class:`SessionTree` and never changes the old one.

The layers, innermost first (each imports only the ones before it):

- the core, modules directly in this package: :mod:`~ptree.frozen` (JSON values that
  refuse mutation), :mod:`~ptree.entries` (the entry kinds), :mod:`~ptree.arrays` (the
  append-only arrays tree versions share), :mod:`~ptree.tree` (:class:`SessionTree`),
  :mod:`~ptree.context` (what a model sees), :mod:`~ptree.branching`,
  :mod:`~ptree.history` (undo/redo), :mod:`~ptree.ref` (a value shared by threads),
  :mod:`~ptree.ids`, :mod:`~ptree.header`, :mod:`~ptree.names` (session names),
  :mod:`~ptree.errors`;
- :mod:`ptree.pi`: Pi's session files;
- :mod:`ptree.providers`: LLM request bodies (core only);
- :mod:`ptree.formats`: other tools' files; :mod:`ptree.stores`: databases;
- :mod:`ptree.integrations`: agent frameworks (optional extras);
- :mod:`ptree.cli`: the ``ptree`` command.

This module is the front door: every name most users need, from every layer.
"""

from .branching import (
    BranchDiff,
    BranchOrigin,
    MoveResult,
    TreeDiff,
    branch_origin,
    clear_label,
    diff,
    diff_branches,
    editable_text,
    fork,
    labelled,
    move_with_summary,
    set_label,
    summary_entries,
)
from .context import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    Context,
    ModelRef,
    PiVersion,
    bash_execution_text,
    build_context,
    current_system_message,
    iso_to_ms,
    to_provider_messages,
)
from .entries import (
    ENTRY_TYPES,
    ActiveToolsChange,
    AnyEntry,
    BranchSummary,
    Compaction,
    ContextEdit,
    Custom,
    CustomMessage,
    Entry,
    Label,
    MessageEntry,
    ModelChange,
    SessionInfo,
    ThinkingLevelChange,
    UnknownEntry,
    Usage,
    entry_from_json,
)
from .errors import (
    CycleError,
    DuplicateEntryError,
    EntryKindError,
    HistoryError,
    InvalidEntryError,
    InvalidMessageError,
    SessionError,
    TooDeepError,
    UnknownEntryError,
)
from .formats import (
    ExportFormatError,
    ImportedSession,
    ImportFormatError,
    Redactor,
    RedactPatternError,
    chatgpt_sessions,
    import_chatgpt,
    import_openwebui,
    openwebui_sessions,
    redact,
    to_html,
    to_markdown,
)
from .frozen import MAX_DEPTH, FrozenDict, FrozenList, JSONValue, Message, freeze, thaw
from .header import CURRENT_VERSION, SessionHeader
from .history import History, NothingToRedo, NothingToUndo
from .ids import Clock, IdFactory, counter_ids, random_ids, utc_now
from .names import js_trim, sanitize_session_name
from .pi import (
    CommitError,
    SessionChangedError,
    SessionExistsError,
    SessionFileError,
    SessionFileWarning,
    SessionLockedError,
    SessionWriteError,
    SessionWriter,
    UnsupportedVersionError,
    dump,
    load,
    pi16_features,
)
from .providers import ProviderError
from .ref import ReentrantSwapError, SessionRef, Watcher, WatchError
from .stores import ConflictError, SessionNotFoundError, StoreError
from .tree import SessionTree

__version__ = "0.1.0"


def _public_errors() -> None:
    # Tracebacks and reprs read ``ptree.UnknownEntryError``, wherever the class lives;
    # pickle finds them here too, since every one is exported below.
    for value in list(globals().values()):
        if isinstance(value, type) and issubclass(value, (SessionError, Warning)):
            value.__module__ = "ptree"


_public_errors()

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "CURRENT_VERSION",
    "ENTRY_TYPES",
    "MAX_DEPTH",
    "ActiveToolsChange",
    "AnyEntry",
    "BranchDiff",
    "BranchOrigin",
    "BranchSummary",
    "Clock",
    "CommitError",
    "Compaction",
    "ConflictError",
    "Context",
    "ContextEdit",
    "Custom",
    "CustomMessage",
    "CycleError",
    "DuplicateEntryError",
    "Entry",
    "EntryKindError",
    "ExportFormatError",
    "FrozenDict",
    "FrozenList",
    "History",
    "HistoryError",
    "IdFactory",
    "ImportFormatError",
    "ImportedSession",
    "InvalidEntryError",
    "InvalidMessageError",
    "JSONValue",
    "Label",
    "Message",
    "MessageEntry",
    "ModelChange",
    "ModelRef",
    "MoveResult",
    "NothingToRedo",
    "NothingToUndo",
    "PiVersion",
    "ProviderError",
    "RedactPatternError",
    "Redactor",
    "ReentrantSwapError",
    "SessionChangedError",
    "SessionError",
    "SessionExistsError",
    "SessionFileError",
    "SessionFileWarning",
    "SessionHeader",
    "SessionInfo",
    "SessionLockedError",
    "SessionNotFoundError",
    "SessionRef",
    "SessionTree",
    "SessionWriteError",
    "SessionWriter",
    "StoreError",
    "ThinkingLevelChange",
    "TooDeepError",
    "TreeDiff",
    "UnknownEntry",
    "UnknownEntryError",
    "UnsupportedVersionError",
    "Usage",
    "WatchError",
    "Watcher",
    "__version__",
    "bash_execution_text",
    "branch_origin",
    "build_context",
    "chatgpt_sessions",
    "clear_label",
    "counter_ids",
    "current_system_message",
    "diff",
    "diff_branches",
    "dump",
    "editable_text",
    "entry_from_json",
    "fork",
    "freeze",
    "import_chatgpt",
    "import_openwebui",
    "iso_to_ms",
    "js_trim",
    "labelled",
    "load",
    "move_with_summary",
    "openwebui_sessions",
    "pi16_features",
    "random_ids",
    "redact",
    "sanitize_session_name",
    "set_label",
    "summary_entries",
    "thaw",
    "to_html",
    "to_markdown",
    "to_provider_messages",
    "utc_now",
]
