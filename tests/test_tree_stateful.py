"""A Hypothesis state machine: SessionTree against a naive mutable model.

Every version the machine makes is kept together with a deep snapshot of what it
showed when it was made (entries, parents, messages, leaf, path).  After every step,
every retained version must still show exactly that: forks of old values, moves to
unknown ids, and mutation of the caller's dicts never change any earlier tree.
"""

from __future__ import annotations

import copy
import pickle
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import ptree
from ptree import SessionTree
from ptree import arrays as _store

from .strategies import appends, keys, messages

_COUNTER = re.compile(r"e([1-9][0-9]*)\Z")


@dataclass
class Model:
    """The naive reference: a dict of entries, an insertion list and a leaf."""

    order: list[str] = field(default_factory=list)
    parent: dict[str, str | None] = field(default_factory=dict)
    message: dict[str, Any] = field(default_factory=dict)
    leaf: str | None = None

    def copy(self) -> Model:
        return copy.deepcopy(self)

    def next_id(self) -> str:
        numbers = [int(m.group(1)) for i in self.order if (m := _COUNTER.match(i))]
        return f"e{max(numbers, default=0) + 1}"

    def path(self) -> list[str]:
        out: list[str] = []
        at = self.leaf
        while at is not None:
            out.append(at)
            at = self.parent[at]
        return out[::-1]


@dataclass
class Version:
    tree: SessionTree
    model: Model
    # The ends of the stores the tree sees, when it was last _check()ed: stores change
    # only by growing, so while these stay the same the check cannot find anything new.
    checked: tuple[int, ...] = ()

    def check(self) -> None:
        ends = tuple(s.end for s, _limit in _store.chain(self.tree.storage[0], len(self.tree)))
        if ends != self.checked:
            self.tree._check()
            self.checked = ends


class TreeMachine(RuleBasedStateMachine):
    """Random appends, moves, forks of old values and caller mutations."""

    def __init__(self) -> None:
        super().__init__()
        self.versions: list[Version] = [Version(SessionTree(), Model())]
        # Dicts the caller passed to append, which the machine later mutates.
        self.callers_dicts: list[dict[str, Any]] = []

    def _pick(self, data: st.DataObject) -> Version:
        return data.draw(st.sampled_from(self.versions), label="version")

    def _keep(self, tree: SessionTree, model: Model) -> None:
        # (The invariant runs tree._check() on every retained version after each step.)
        self.versions.append(Version(tree, model))
        if len(self.versions) > 40:  # keep the per-step check affordable
            del self.versions[1:2]

    @rule(data=st.data(), message=messages, explicit=st.booleans(), new_id=keys)
    def append(
        self, data: st.DataObject, message: dict[str, Any], explicit: bool, new_id: str
    ) -> None:
        """Append to any retained version: the newest, or an old one (a fork)."""
        v = self._pick(data)
        model = v.model.copy()
        if explicit:
            if new_id in model.parent:
                with pytest.raises(ptree.DuplicateEntryError) as info:
                    v.tree.append(message, id=new_id)
                assert info.value.entry_id == new_id
                return
            tree = v.tree.append(message, id=new_id)
            entry_id = new_id
        else:
            tree = v.tree.append(message)
            entry_id = model.next_id()
        assert tree.leaf_id == entry_id
        model.order.append(entry_id)
        model.parent[entry_id] = model.leaf
        model.message[entry_id] = copy.deepcopy(message)
        model.leaf = entry_id
        self.callers_dicts.append(message)
        self._keep(tree, model)

    @rule(data=st.data())
    def append_label(self, data: st.DataObject) -> None:
        """Labels are nodes too: they move the leaf and never enter current_path."""
        v = self._pick(data)
        if not v.model.order:
            return
        target = data.draw(st.sampled_from(v.model.order))
        tree = v.tree.append_label(target, "x")
        model = v.model.copy()
        entry_id = model.next_id()
        model.order.append(entry_id)
        model.parent[entry_id] = model.leaf
        model.leaf = entry_id
        self._keep(tree, model)

    @rule(data=st.data())
    def append_any_kind(self, data: st.DataObject) -> None:
        """Every entry kind (unknown ones too) is a node under the leaf with the next id."""
        v = self._pick(data)
        tree = data.draw(appends(v.tree))
        model = v.model.copy()
        entry_id = model.next_id()
        assert tree.leaf_id == entry_id
        model.order.append(entry_id)
        model.parent[entry_id] = model.leaf
        if isinstance(tree.leaf, ptree.MessageEntry):
            model.message[entry_id] = ptree.thaw(tree.leaf.message)
        model.leaf = entry_id
        self._keep(tree, model)

    @rule(data=st.data(), forks=st.integers(1, _store.MAX_CHAIN + 4))
    def fork_deeply(self, data: st.DataObject, forks: int) -> None:
        """Edit an old version again and again: each edit branches the storage, and
        chains longer than MAX_CHAIN are collapsed.  Every fork is checked."""
        v = self._pick(data)
        tree, model = v.tree, v.model.copy()
        for _ in range(forks):
            tree.append({"role": "user", "content": "taken"})  # claims the store's end
            tree = tree.append({"role": "assistant", "content": "fork"})  # so this branches
            entry_id = model.next_id()
            assert tree.leaf_id == entry_id
            model.order.append(entry_id)
            model.parent[entry_id] = model.leaf
            model.message[entry_id] = {"role": "assistant", "content": "fork"}
            model.leaf = entry_id
        self._keep(tree, model)

    @rule(data=st.data())
    def pickle_round_trip(self, data: st.DataObject) -> None:
        """A version pickles to an equal value (same hash) that grows like the original."""
        v = self._pick(data)
        copy_ = pickle.loads(pickle.dumps(v.tree))
        assert copy_ == v.tree
        assert hash(copy_) == hash(v.tree)
        self._keep(copy_, v.model.copy())

    @rule(data=st.data())
    def rebuild_from_entries(self, data: st.DataObject) -> None:
        """from_entries of a version's (already linked) entries gives an equal value and
        leaves the version's own entries as they were."""
        v = self._pick(data)
        rebuilt = SessionTree.from_entries(v.tree.entries(), leaf_id=v.tree.leaf_id)
        assert rebuilt == v.tree
        assert hash(rebuilt) == hash(v.tree)
        v.tree._check()
        self._keep(rebuilt, v.model.copy())

    @rule(data=st.data())
    def added_since(self, data: st.DataObject) -> None:
        """added_since agrees with its definition: the older version's entries, the very
        same objects, are the start of the newer's."""
        older = self._pick(data).tree
        newer = self._pick(data).tree
        old_entries, new_entries = older.entries(), newer.entries()
        grew = len(old_entries) <= len(new_entries) and all(
            a is b for a, b in zip(old_entries, new_entries, strict=False)
        )
        got = newer.added_since(older)
        if grew:
            assert got == new_entries[len(old_entries) :]
            assert got is not None
            assert all(a is b for a, b in zip(got, new_entries[len(old_entries) :], strict=True))
        else:
            assert got is None

    @rule(data=st.data())
    def move_to_existing(self, data: st.DataObject) -> None:
        """Move the leaf to any entry, or above the roots."""
        v = self._pick(data)
        target = data.draw(st.sampled_from([None, *v.model.order]))
        tree = v.tree.move_to(target)
        model = v.model.copy()
        model.leaf = target
        self._keep(tree, model)

    @rule(data=st.data(), unknown=keys)
    def move_to_unknown(self, data: st.DataObject, unknown: str) -> None:
        """An unknown id raises SessionError, a KeyError that carries the id."""
        v = self._pick(data)
        if unknown in v.model.parent:
            return
        with pytest.raises(ptree.SessionError) as info:
            v.tree.move_to(unknown)
        assert isinstance(info.value, KeyError)
        assert info.value.entry_id == unknown  # type: ignore[attr-defined]

    @precondition(lambda self: bool(self.callers_dicts))
    @rule(data=st.data())
    def mutate_callers_dict(self, data: st.DataObject) -> None:
        """Change, deeply, a dict the caller passed to append earlier."""
        d = data.draw(st.sampled_from(self.callers_dicts))
        d["role"] = "mutated"
        d["injected"] = [1, 2]
        content = d.get("content")
        if isinstance(content, list):
            content.append({"type": "text", "text": "injected"})
            if content and isinstance(content[0], dict):
                content[0]["text"] = "changed"

    @rule(data=st.data())
    def mutate_what_the_api_returns(self, data: st.DataObject) -> None:
        """What the API hands out refuses changes; a thawed copy changes nothing."""
        v = self._pick(data)
        path = v.tree.current_path()
        if not path:
            return
        with pytest.raises(TypeError):
            path[0]["role"] = "x"
        plain = ptree.thaw(path[-1])
        plain["role"] = "thawed-and-changed"

    @invariant()
    def every_version_is_unchanged(self) -> None:
        for v in self.versions:
            tree, model = v.tree, v.model
            # Children, labels and the name of old versions, after their stores grew.
            v.check()
            assert len(tree) == len(model.order)
            assert tree.ids() == tuple(model.order)
            assert tree.leaf_id == model.leaf
            for entry in tree.entries():
                assert entry.parent_id == model.parent[entry.id]
                if entry.id in model.message:
                    assert isinstance(entry, ptree.MessageEntry)
                    assert ptree.thaw(entry.message) == model.message[entry.id]
            assert [e.id for e in tree.path()] == model.path()
            assert list(tree.current_path()) == [
                model.message[i] for i in model.path() if i in model.message
            ]


TestTreeMachine = TreeMachine.TestCase
