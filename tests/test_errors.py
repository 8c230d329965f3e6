"""Every exception ptree exports: named ``ptree.X``, a ``SessionError`` and the right
built-in, and pickled with its attributes intact.

The examples below are written by hand, one per exported exception class; a class
exported from ``ptree`` without an example here fails ``test_every_exported_error_has_an_example``,
so a new error gets these checks too.
"""

from __future__ import annotations

import importlib
import pickle
from typing import Any

import pytest

import ptree
import ptree.pi
import ptree.stores

# class -> (an instance, the built-in bases a caller would catch, its attributes, str())
EXAMPLES: dict[type[BaseException], tuple[BaseException, tuple[type, ...], dict[str, Any], str]] = {
    ptree.SessionError: (ptree.SessionError("boom"), (Exception,), {}, "boom"),
    ptree.UnknownEntryError: (
        ptree.UnknownEntryError("e9"),
        (KeyError,),
        {"entry_id": "e9"},
        "no entry with id 'e9' in this tree",
    ),
    ptree.EntryKindError: (
        ptree.EntryKindError("e2", "message", "label"),
        (KeyError,),
        {"entry_id": "e2", "expected": "message", "actual": "label"},
        "entry 'e2' is a label entry, not a message entry",
    ),
    ptree.DuplicateEntryError: (
        ptree.DuplicateEntryError("e1"),
        (ValueError,),
        {"entry_id": "e1"},
        "an entry with id 'e1' already exists",
    ),
    ptree.CycleError: (
        ptree.CycleError(("a", "b")),
        (ValueError,),
        {"entry_ids": ("a", "b")},
        "parent links form a cycle: a -> b",
    ),
    ptree.InvalidMessageError: (
        ptree.InvalidMessageError("message['x']", "set is not a JSON value"),
        (ValueError, TypeError),
        {"where": "message['x']", "reason": "set is not a JSON value"},
        "message['x']: set is not a JSON value",
    ),
    ptree.TooDeepError: (
        ptree.TooDeepError("message['content'][0]", "nested deeper than 100 levels"),
        (ValueError, TypeError),
        {"where": "message['content'][0]", "reason": "nested deeper than 100 levels", "limit": 100},
        "message['content'][0]: nested deeper than 100 levels",
    ),
    ptree.InvalidEntryError: (
        ptree.InvalidEntryError("must be a string", entry_id="e3", field="provider"),
        (ValueError,),
        {"entry_id": "e3", "field": "provider", "reason": "must be a string"},
        "entry 'e3', field 'provider': must be a string",
    ),
    ptree.HistoryError: (ptree.HistoryError("no"), (IndexError,), {}, "no"),
    ptree.NothingToUndo: (
        ptree.NothingToUndo(),
        (IndexError,),
        {"limit": None},
        "nothing to undo: this is the oldest value",
    ),
    ptree.NothingToRedo: (
        ptree.NothingToRedo(),
        (IndexError,),
        {},
        "nothing to redo: no value was undone since the last commit",
    ),
    ptree.ref.ReentrantSwapError: (
        ptree.ref.ReentrantSwapError(),
        (RuntimeError,),
        {},
        "this SessionRef is being changed by this very thread: an update function or a "
        "watcher must not change the ref it belongs to",
    ),
    ptree.ref.WatchError: (
        ptree.ref.WatchError(1, 2, (("disk", ValueError("full")),)),
        (RuntimeError,),
        {"old": 1, "new": 2},
        "1 watcher(s) failed after the change ('disk'); the ref holds the new value: "
        "ValueError('full')",
    ),
    ptree.SessionFileError: (
        ptree.SessionFileError("s.jsonl", 3, "malformed JSON", entry_id="e1"),
        (ValueError,),
        {"path": "s.jsonl", "line": 3, "reason": "malformed JSON", "entry_id": "e1"},
        "s.jsonl:3: malformed JSON",
    ),
    ptree.SessionChangedError: (
        ptree.SessionChangedError("s.jsonl", "changed since this tree was read from it"),
        (ValueError,),
        {"path": "s.jsonl", "line": None, "reason": "changed since this tree was read from it"},
        "s.jsonl: changed since this tree was read from it",
    ),
    ptree.UnsupportedVersionError: (
        ptree.UnsupportedVersionError("s.jsonl", 1, 4),
        (ValueError,),
        {"path": "s.jsonl", "line": 1, "version": 4},
        "s.jsonl:1: session format version 4 is newer than this ptree reads "
        "(versions 1 to 3); upgrade ptree to read it",
    ),
    ptree.SessionLockedError: (
        ptree.SessionLockedError("s.jsonl", "held by another writer"),
        (ValueError, BlockingIOError),
        {"path": "s.jsonl", "line": None, "reason": "held by another writer"},
        "s.jsonl: held by another writer",
    ),
    ptree.SessionWriteError: (
        ptree.SessionWriteError("s.jsonl", 28, "the disk is full: nothing was written"),
        (ValueError, OSError),
        {
            "path": "s.jsonl",
            "errno": 28,
            "filename": "s.jsonl",
            "reason": "the disk is full: nothing was written",
        },
        "s.jsonl: the disk is full: nothing was written",
    ),
    ptree.SessionExistsError: (
        ptree.SessionExistsError("s.jsonl"),
        (ValueError, FileExistsError),
        {"path": "s.jsonl", "errno": 17, "filename": "s.jsonl"},
        "s.jsonl: a file exists here; overwrite=True replaces it (ptree's command line: --force)",
    ),
    ptree.CommitError: (
        ptree.CommitError("s.jsonl", "the tree did not grow from the committed value"),
        (ValueError,),
        {"path": "s.jsonl", "reason": "the tree did not grow from the committed value"},
        "s.jsonl: the tree did not grow from the committed value",
    ),
    ptree.formats.FormatError: (
        ptree.formats.FormatError("c.json: not an export"),
        (ValueError,),
        {},
        "c.json: not an export",
    ),
    ptree.formats.RedactPatternError: (
        ptree.formats.RedactPatternError("(", "missing ), unterminated subpattern"),
        (ValueError,),
        {"pattern": "(", "reason": "missing ), unterminated subpattern"},
        "redaction pattern '(': missing ), unterminated subpattern",
    ),
    ptree.formats.ImportFormatError: (
        ptree.formats.ImportFormatError(
            "c.json", None, "expected an object", where="[0].mapping", record_id="u7"
        ),
        (ValueError,),
        {
            "path": "c.json",
            "line": None,
            "reason": "expected an object",
            "where": "[0].mapping",
            "record_id": "u7",
        },
        "c.json: [0].mapping: expected an object (record 'u7')",
    ),
    ptree.stores.SchemaVersionError: (
        ptree.stores.SchemaVersionError("sqlite:///s.db", 3, 2),
        (ValueError,),
        {"url": "sqlite:///s.db", "found": 3, "supported": 2},
        "sqlite:///s.db: the database has ptree schema version 3, newer than this "
        "ptree's (2): upgrade ptree to use it",
    ),
    ptree.stores.SearchQueryError: (
        ptree.stores.SearchQueryError("sqlite:///s.db", '"*"', "the query has no word to find"),
        (ValueError,),
        {"url": "sqlite:///s.db", "query": '"*"', "reason": "the query has no word to find"},
        "sqlite:///s.db: the query has no word to find",
    ),
    ptree.stores.CursorError: (
        ptree.stores.CursorError("sqlite:///s.db", "zz", "not a cursor this store gave"),
        (ValueError,),
        {"url": "sqlite:///s.db", "cursor": "zz", "reason": "not a cursor this store gave"},
        "sqlite:///s.db: not a cursor this store gave",
    ),
    ptree.stores.UnknownKeepError: (
        ptree.stores.UnknownKeepError("sqlite:///s.db", "chat-1", ("e9",)),
        (ValueError, KeyError),
        {"url": "sqlite:///s.db", "session_id": "chat-1", "entry_ids": ("e9",)},
        "sqlite:///s.db: session 'chat-1' has no entry 'e9': nothing pruned",
    ),
    ptree.stores.StoreError: (
        ptree.stores.StoreError("mysql://db", "unknown scheme 'mysql'"),
        (ValueError,),
        {"url": "mysql://db", "reason": "unknown scheme 'mysql'"},
        "mysql://db: unknown scheme 'mysql'",
    ),
    ptree.stores.SessionNotFoundError: (
        ptree.stores.SessionNotFoundError("s9", "sqlite:///chats.db"),
        (KeyError,),
        {"session_id": "s9", "url": "sqlite:///chats.db"},
        "sqlite:///chats.db: no session with id 's9'",
    ),
    ptree.stores.ConflictError: (
        ptree.stores.ConflictError(
            "s1", "sqlite:///chats.db", "the stored session has entries e5, e6"
        ),
        (RuntimeError,),
        {
            "session_id": "s1",
            "url": "sqlite:///chats.db",
            "reason": "the stored session has entries e5, e6",
        },
        "sqlite:///chats.db: session 's1': the stored session has entries e5, e6",
    ),
    ptree.stores.StoreLockedError: (
        ptree.stores.StoreLockedError("sqlite:///chats.db", 10.0, "/srv/chats.db"),
        (ValueError, TimeoutError),
        {"url": "sqlite:///chats.db", "timeout": 10.0, "path": "/srv/chats.db"},
        "sqlite:///chats.db: still locked by another process after 10 s (/srv/chats.db): "
        "nothing was changed; try again, or open the store with a longer ?timeout=SECONDS",
    ),
    ptree.stores.StoreUnavailableError: (
        ptree.stores.StoreUnavailableError(
            "postgresql://db", "the connection is lost: server closed the connection"
        ),
        (ValueError, ConnectionError),
        {
            "url": "postgresql://db",
            "reason": "the connection is lost: server closed the connection",
        },
        "postgresql://db: the connection is lost: server closed the connection",
    ),
    ptree.stores.StoreWriteError: (
        ptree.stores.StoreWriteError(
            "sqlite:///chats.db", "/srv/chats.db", 28, "the disk is full: nothing was saved"
        ),
        (ValueError, OSError),
        {
            "url": "sqlite:///chats.db",
            "path": "/srv/chats.db",
            "errno": 28,
            "filename": "/srv/chats.db",
            "reason": "the disk is full: nothing was saved",
        },
        "sqlite:///chats.db: /srv/chats.db: the disk is full: nothing was saved",
    ),
    ptree.providers.ProviderError: (
        ptree.providers.ProviderError(
            "openai-chat", "messages[3]", "a tool result needs a call id"
        ),
        (ValueError,),
        {"api": "openai-chat", "where": "messages[3]", "reason": "a tool result needs a call id"},
        "a tool result needs a call id",
    ),
}

WARNINGS: dict[type[Warning], tuple[Warning, dict[str, Any]]] = {
    ptree.SessionFileWarning: (
        ptree.SessionFileWarning(
            "s.jsonl:2: skipped", path="s.jsonl", line=2, reason="skipped", strict_too=True
        ),
        {"path": "s.jsonl", "line": 2, "reason": "skipped", "entry_id": None, "strict_too": True},
    ),
}


PUBLIC_MODULES = (
    "ptree",
    "ptree.pi",
    "ptree.stores",
    "ptree.formats",
    "ptree.providers",
    "ptree.ref",
    "ptree.history",
)
"""Every module whose ``__all__`` may export an error: the front door and each layer."""


def _exporters(cls: type[BaseException]) -> list[str]:
    return [
        m for m in PUBLIC_MODULES if getattr(importlib.import_module(m), cls.__name__, None) is cls
    ]


def _exported(base: type[BaseException]) -> set[type[BaseException]]:
    found: set[type[BaseException]] = set()
    for module in PUBLIC_MODULES:
        namespace = importlib.import_module(module)
        for name in namespace.__all__:
            value = getattr(namespace, name)
            if isinstance(value, type) and issubclass(value, base):
                found.add(value)
    return found


def test_every_exported_error_has_an_example() -> None:
    """Each exception class exported by ptree or a layer is checked below (add new ones)."""
    assert _exported(BaseException) == set(EXAMPLES) | set(WARNINGS)


def test_every_store_error_is_a_store_error() -> None:
    """Issue 23 item 5: every error ``ptree.stores`` exports is a StoreError (before:
    SessionNotFoundError and ConflictError were not)."""
    errors = [
        value
        for name in ptree.stores.__all__
        if isinstance(value := getattr(ptree.stores, name), type)
        and issubclass(value, BaseException)
    ]
    assert len(errors) == 10, errors  # the six of issue 23 and 27, four of issue 25
    for cls in errors:
        assert issubclass(cls, ptree.stores.StoreError), cls


@pytest.mark.parametrize("cls", list(EXAMPLES), ids=lambda c: c.__name__)
class TestPublicError:
    def test_named_where_exported(self, cls: type[BaseException]) -> None:
        """Tracebacks name it by the first public module exporting it (``ptree.X``,
        ``ptree.stores.X``), and that module's ``X`` is the class itself."""
        exporters = _exporters(cls)
        assert exporters, f"{cls.__name__} is exported by no public module"
        assert (cls.__module__, cls.__qualname__) == (exporters[0], cls.__name__)

    def test_bases(self, cls: type[BaseException]) -> None:
        """A ``SessionError``, and each built-in a caller would catch."""
        _, builtins, _, _ = EXAMPLES[cls]
        assert issubclass(cls, ptree.SessionError)
        for b in builtins:
            assert issubclass(cls, b), b

    def test_str_and_attributes(self, cls: type[BaseException]) -> None:
        """The message says what and where; the facts are attributes."""
        err, _, attributes, text = EXAMPLES[cls]
        assert type(err) is cls
        assert str(err) == text
        assert {k: getattr(err, k) for k in attributes} == attributes

    def test_pickles(self, cls: type[BaseException]) -> None:
        """A pickled error comes back as the same class, message and attributes."""
        err, _, attributes, text = EXAMPLES[cls]
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is cls
        assert str(back) == text
        assert {k: getattr(back, k) for k in attributes} == attributes


def test_every_format_error_is_a_format_error() -> None:
    """One base for the formats layer: each of its errors is a ``FormatError``."""
    exported = [getattr(ptree.formats, name) for name in ptree.formats.__all__]
    errors = [c for c in exported if isinstance(c, type) and issubclass(c, BaseException)]
    assert {c.__name__ for c in errors} == {
        "FormatError",
        "ImportFormatError",
        "RedactPatternError",
    }
    assert all(issubclass(c, ptree.formats.FormatError) for c in errors)


def test_watch_error_pickles_its_errors() -> None:
    """WatchError's ``errors`` hold exceptions, which compare by identity: check them apart."""
    err = pickle.loads(pickle.dumps(EXAMPLES[ptree.ref.WatchError][0]))
    assert isinstance(err, ptree.ref.WatchError)
    [(key, exc)] = err.errors
    assert (key, type(exc), exc.args) == ("disk", ValueError, ("full",))


def test_session_file_warning() -> None:
    """The warning is ``ptree.SessionFileWarning``, a UserWarning, and pickles with its facts."""
    w, attributes = WARNINGS[ptree.SessionFileWarning]
    assert type(w).__module__ == "ptree"
    assert isinstance(w, UserWarning)
    back = pickle.loads(pickle.dumps(w))
    assert type(back) is ptree.SessionFileWarning
    assert str(back) == str(w) == "s.jsonl:2: skipped"
    assert {k: getattr(back, k) for k in attributes} == attributes


def test_invalid_message_error_is_caught_as_value_error_and_type_error() -> None:
    """A bad value in a message is a ValueError now, and still a TypeError for old callers."""
    for caught in (ValueError, TypeError, ptree.SessionError):
        with pytest.raises(caught, match=r"message\['x'\]: set is not a JSON value"):
            ptree.SessionTree().append({"role": "user", "x": {1}})
