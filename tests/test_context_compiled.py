"""build_context's walk in C (ptree/_cfrozen.c, ``walk_plain``): the same contexts as
the Python walk.

The reference is ``build_context`` with the compiled walk switched off (the Python
loops the rest of the suite tests against a naive reference and against Pi), never the
compiled code itself.  Contexts are compared item by item: the same entry objects
standing for stored messages, equal synthesised messages, the same model, thinking
level, active tools and leaf, or the same error.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptree
from ptree import MessageEntry, SessionTree, build_context, frozen
from ptree import context as context_mod
from ptree.entries import SHAPE_ASSISTANT, SHAPE_NO_CONTENT, SHAPE_OTHER, LazyMessageEntry

from .frozen_values import same_value
from .helpers import missing
from .strategies import trees

if context_mod._compiled_walk is None:  # pragma: no cover - the extension is built by pip
    if frozen.COMPILED:  # built, yet the walk refused the classes' layout
        pytest.fail(context_mod._WALK_REFUSED, pytrace=False)
    missing(context_mod._WALK_REFUSED, module_level=True)

# Any: the tests hand it what the walk never does (a tuple, too few arguments).
walk_plain: Any = context_mod._compiled_walk
VERSIONS = ("1.6", "0.73.1")
# Sized for CI; a bigger run: PTREE_CONTEXT_COMPILED_EXAMPLES=5000.
EXAMPLES = int(os.environ.get("PTREE_CONTEXT_COMPILED_EXAMPLES", "200"))


@contextmanager
def python_walk() -> Iterator[None]:
    """build_context with the compiled walk switched off."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(context_mod, "_compiled_walk", None)
        yield


def outcome(run: Callable[[], ptree.Context]) -> Any:
    try:
        ctx = run()
    except Exception as exc:
        return ("error", type(exc), str(exc))
    return ("ok", ctx)


def same_outcome(compiled: Any, python: Any) -> None:
    """The same context, item by item (entries by identity), or the same error."""
    assert compiled[0] == python[0]
    if compiled[0] == "error":
        assert compiled == python
        return
    a, b = compiled[1], python[1]
    mine, theirs = a.messages.sources(), b.messages.sources()
    assert len(mine) == len(theirs)
    for x, y in zip(mine, theirs, strict=True):
        if isinstance(x, MessageEntry) or isinstance(y, MessageEntry):
            assert x is y
        else:
            assert same_value(x, y)
    assert (a.model, a.thinking_level, a.active_tools, a.leaf_id) == (
        b.model,
        b.thinking_level,
        b.active_tools,
        b.leaf_id,
    )
    assert a == b


def both(tree: SessionTree, leaf: str | None, pi: Any) -> None:
    """The compiled walk first (a fresh tree's shapes are still unread: it meets empty
    shape slots), then the Python walk, at ``leaf``."""
    compiled = outcome(lambda: build_context(tree, leaf, pi=pi))
    with python_walk():
        python = outcome(lambda: build_context(tree, leaf, pi=pi))
    same_outcome(compiled, python)


class TestSameContexts:
    """Property: on random trees of every kind the two walks give the same contexts."""

    @settings(max_examples=EXAMPLES)
    @given(trees(max_steps=40, pi16=True), st.sampled_from(VERSIONS))
    def test_at_every_entry(self, tree: SessionTree, pi: Any) -> None:
        """Compactions (kept ranges, checkpoints, older ones inside), branch summaries,
        custom and contentless messages, model, thinking and tools changes, edits and
        branches: at the leaf and at every entry, with either Pi release's rules."""
        both(tree, None, pi)
        for entry_id in tree.ids():
            both(tree, entry_id, pi)

    @settings(max_examples=max(1, EXAMPLES // 4))
    @given(trees(max_steps=30, pi16=True))
    def test_loaded_trees(self, tree: SessionTree) -> None:
        """A loaded session's entries (the reader's lazy message entries, their
        shapes given by the scanner) walk alike, at every entry."""
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "s.jsonl"
            ptree.dump(tree, path)
            loaded = ptree.load(path)
        both(loaded, None, "1.6")
        for entry_id in loaded.ids():
            both(loaded, entry_id, "1.6")

    def test_unknown_leaf(self) -> None:
        """An unknown leaf raises the same error either way."""
        t = SessionTree().append({"role": "user", "content": "hi"})
        both(t, "nowhere", "1.6")

    def test_long_chain_with_everything(self) -> None:
        """A 20,000-deep path whose runs of plain messages are broken by every kind of
        entry, with a compaction keeping a range that holds system messages."""
        t = SessionTree()
        for i in range(20_000):
            step = i % 97
            if step == 5:
                t = t.append_model_change("p", f"m{i}")
            elif step == 11:
                t = t.append_custom_message("note", f"c{i}")
            elif step == 13:
                t = t.append_branch_summary("e1", f"b{i}")
            elif step == 17:
                t = t.append({"role": "system", "content": f"s{i}"})
            elif step == 19:
                t = t.append({"role": "user"})  # no content: Pi 1.6 fills it in
            elif step == 23:
                t = t.append_thinking_level_change("high")
            elif step == 29:
                t = t.append_context_edit(f"e{len(t)}", "edited")
            elif i % 2:
                t = t.append({"role": "assistant", "content": [], "provider": "p", "model": "m"})
            else:
                t = t.append({"role": "user", "content": f"u{i}"})
            if i == 15_000:
                t = t.append_compaction("summary", "e9000", 1)
        for pi in VERSIONS:
            both(t, None, pi)
            both(t, "e12000", pi)


class TestWalkPlain:
    """walk_plain itself: it collects only plain message entries and stops at anything
    else, leaving it to the Python walk."""

    def chain(self) -> SessionTree:
        t = SessionTree().append({"role": "user", "content": "a"})
        t = t.append_thinking_level_change("high")
        t = t.append({"role": "user", "content": "b"})
        t = t.append({"role": "assistant", "content": "c"})
        return t.append({"role": "user", "content": "d"})

    def test_collects_a_run_and_stops_at_another_kind(self) -> None:
        t = self.chain()
        build_context(t)  # fills the shapes in
        out: list[Any] = []
        stop = walk_plain(out, t.leaf, None, SHAPE_OTHER)
        assert [e.id for e in out] == ["e5", "e4", "e3"]
        assert stop is t["e2"]

    def test_stops_where_the_mask_says(self) -> None:
        t = self.chain()
        build_context(t)
        out: list[Any] = []
        assert walk_plain(out, t.leaf, None, SHAPE_OTHER | SHAPE_ASSISTANT) is t["e4"]
        assert [e.id for e in out] == ["e5"]

    def test_runs_to_the_end_given(self) -> None:
        t = SessionTree()
        for i in range(5):
            t = t.append({"role": "user", "content": str(i)})
        build_context(t)
        out: list[Any] = []
        assert walk_plain(out, t.leaf, t["e2"], SHAPE_OTHER) is t["e2"]
        assert [e.id for e in out] == ["e5", "e4", "e3"]
        assert walk_plain(None, t.leaf, None, SHAPE_OTHER) is None
        assert walk_plain(out, None, None, SHAPE_OTHER) is None

    def test_stops_at_an_unread_shape(self) -> None:
        """A fresh entry's shape slot is empty until read: the Python walk reads it."""
        t = SessionTree().append({"role": "user"})
        t = t.append({"role": "user", "content": "x"})
        out: list[Any] = []
        assert walk_plain(out, t.leaf, None, SHAPE_OTHER) is t.leaf
        assert out == []
        assert t.leaf.shape == 0
        assert walk_plain(out, t.leaf, None, SHAPE_OTHER | SHAPE_NO_CONTENT) is t["e1"]
        assert out == [t.leaf]

    def test_stops_at_an_unlinked_entry(self) -> None:
        """An entry no tree holds has no parent link: the Python walk raises for it."""
        e = MessageEntry(
            id="x", parent_id=None, timestamp="t", message={"role": "user", "content": "x"}
        )
        assert e.shape == 0
        assert walk_plain([], e, None, SHAPE_OTHER) is e

    def test_stops_at_a_kind_with_its_own_shape(self) -> None:
        """A subclass that defines ``shape`` itself, even after a walk has met it, is
        not read from the slot."""

        class Kind(MessageEntry):
            __slots__ = ()

        t = SessionTree().insert(
            Kind(id="k", parent_id=None, timestamp="t", message={"role": "user", "content": "x"})
        )
        t = t.append({"role": "user", "content": "y"})
        build_context(t)
        out: list[Any] = []
        assert walk_plain(out, t.leaf, None, SHAPE_OTHER) is None
        assert len(out) == 2
        Kind.shape = SHAPE_OTHER  # type: ignore[assignment, method-assign]
        out = []
        assert walk_plain(out, t.leaf, None, SHAPE_OTHER) is t["k"]
        assert out == [t.leaf]

    def test_does_not_decode_a_loaded_message(self, tmp_path: Path) -> None:
        """The walk reads shapes, never messages: a loaded session's messages stay
        undecoded but for the latest assistant message (the model)."""
        t = SessionTree()
        for i in range(50):
            t = t.append({"role": "user", "content": str(i)})
            t = t.append({"role": "assistant", "content": str(i), "provider": "p", "model": "m"})
        ptree.dump(t, tmp_path / "s.jsonl")
        loaded = ptree.load(tmp_path / "s.jsonl")
        entries = [e for e in loaded.entries() if isinstance(e, LazyMessageEntry)]
        assert len(entries) == 100
        ctx = build_context(loaded)
        assert len(ctx.messages) == 100
        assert [e.id for e in entries if e.undecoded() is None] == [loaded.leaf_id]

    def test_refuses_what_is_not_a_list(self) -> None:
        t = self.chain()
        with pytest.raises(TypeError):
            walk_plain((), t.leaf, None, SHAPE_OTHER)
        with pytest.raises(TypeError):
            walk_plain([], t.leaf, None)
