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

This module is the front door: the values (the tree, its entries, frozen JSON, the
context, history and a shared reference), Pi files (:func:`load`, :func:`dump`,
:class:`SessionWriter`) and the errors a caller catches from them.  Everything else is
imported from its package (``from ptree.stores import open``, ``from ptree.branching
import fork``), and the outer layers are loaded only when first used, so ``import
ptree`` costs little more than its dependencies.

>>> import ptree
>>> t = ptree.SessionTree().append({"role": "user", "content": "hi"})
>>> [m["content"] for m in ptree.build_context(t).messages]
['hi']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    name_public,
)
from .lazy import exports

if TYPE_CHECKING:  # loaded on first use (__getattr__ below); named here for type checkers
    from . import arrays as arrays
    from . import branching as branching
    from . import building as building
    from . import cli as cli
    from . import context as context
    from . import entries as entries
    from . import errors as errors
    from . import formats as formats
    from . import frozen as frozen
    from . import header as header
    from . import history as history
    from . import ids as ids
    from . import integrations as integrations
    from . import js as js
    from . import names as names
    from . import pi as pi
    from . import providers as providers
    from . import ref as ref
    from . import stores as stores
    from . import tree as tree
    from .context import Context, Messages, build_context
    from .entries import (
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
    )
    from .frozen import FrozenDict, FrozenList, JSONValue, Message, freeze, thaw
    from .header import SessionHeader
    from .history import History, NothingToRedo, NothingToUndo
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
    )
    from .ref import SessionRef
    from .tree import SessionTree

__version__ = "0.1.0"

__all__ = [
    "ActiveToolsChange",
    "AnyEntry",
    "BranchSummary",
    "CommitError",
    "Compaction",
    "Context",
    "ContextEdit",
    "Custom",
    "CustomMessage",
    "CycleError",
    "DuplicateEntryError",
    "Entry",
    "EntryKindError",
    "FrozenDict",
    "FrozenList",
    "History",
    "HistoryError",
    "InvalidEntryError",
    "InvalidMessageError",
    "JSONValue",
    "Label",
    "Message",
    "MessageEntry",
    "Messages",
    "ModelChange",
    "NothingToRedo",
    "NothingToUndo",
    "SessionChangedError",
    "SessionError",
    "SessionExistsError",
    "SessionFileError",
    "SessionFileWarning",
    "SessionHeader",
    "SessionInfo",
    "SessionLockedError",
    "SessionRef",
    "SessionTree",
    "SessionWriteError",
    "SessionWriter",
    "ThinkingLevelChange",
    "TooDeepError",
    "UnknownEntry",
    "UnknownEntryError",
    "UnsupportedVersionError",
    "Usage",
    "build_context",
    "dump",
    "freeze",
    "load",
    "thaw",
]

name_public(globals(), "ptree")


# Every name above but the errors lives in a module loaded when the name is first
# used: ``import ptree`` costs next to nothing, and a command pays only for the layers
# it touches (``ptree --help`` reads no session, so it loads no tree).  Module by
# module, the names imported under TYPE_CHECKING above.
_MODULES = {
    "context": "Context Messages build_context",
    "entries": "ActiveToolsChange AnyEntry BranchSummary Compaction ContextEdit Custom"
    " CustomMessage Entry Label MessageEntry ModelChange SessionInfo ThinkingLevelChange"
    " UnknownEntry Usage",
    "frozen": "FrozenDict FrozenList JSONValue Message freeze thaw",
    "header": "SessionHeader",
    "history": "History NothingToRedo NothingToUndo",
    "pi": "CommitError SessionChangedError SessionExistsError SessionFileError"
    " SessionFileWarning SessionLockedError SessionWriteError SessionWriter"
    " UnsupportedVersionError dump load",
    "ref": "SessionRef",
    "tree": "SessionTree",
}

__getattr__, __dir__ = exports(
    __name__,
    {name: module for module, names in _MODULES.items() for name in names.split()},
    __all__,
)
