"""A Hypothesis state machine: SessionTree against a naive mutable model.

Every version the machine makes is kept together with a model of what it should show,
computed by the model from what the machine asked for, never copied from the tree
(entries, kinds, parents, messages, labels, session name, leaf, path, and which
versions grew from which).  After every step, every retained version must still show
exactly that: forks of old values, moves to unknown ids, and mutation of the caller's
dicts never change any earlier tree.
"""

from __future__ import annotations

import copy
import itertools
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

from .strategies import append_steps, keys, messages

_COUNTER = re.compile(r"e([1-9][0-9]*)\Z")
# ECMAScript's WhiteSpace and LineTerminator code points (ECMA-262, 12.2 and 12.3).
_JS_WHITE_SPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_MADE = itertools.count()  # one number per entry object made: identity in the model


@dataclass
class Model:
    """The naive reference: a dict of entries, an insertion list and a leaf."""

    order: list[str] = field(default_factory=list)
    parent: dict[str, str | None] = field(default_factory=dict)
    kind: dict[str, str] = field(default_factory=dict)
    message: dict[str, Any] = field(default_factory=dict)
    label_set: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    name_set: dict[str, str | None] = field(default_factory=dict)
    # Which entry object each position holds: a version grew from another exactly when
    # the other's objects are the start of its own.
    made: list[int] = field(default_factory=list)
    leaf: str | None = None

    def copy(self) -> Model:
        return copy.deepcopy(self)

    def add(self, entry_id: str, kind: str) -> None:
        """An entry of ``kind`` appended under the leaf, which it becomes."""
        self.order.append(entry_id)
        self.parent[entry_id] = self.leaf
        self.kind[entry_id] = kind
        self.made.append(next(_MADE))
        self.leaf = entry_id

    def remade(self) -> Model:
        """The same value made of new entry objects (pickled, or rebuilt from entries)."""
        out = self.copy()
        out.made = [next(_MADE) for _ in out.made]
        return out

    def labels(self) -> dict[str, str]:
        """Label entries in insertion order over all entries, the latest winning; an
        empty or missing label clears (Pi's rule)."""
        out: dict[str, str] = {}
        for i in self.order:
            if i in self.label_set:
                target, label = self.label_set[i]
                if label:
                    out[target] = label
                else:
                    out.pop(target, None)
        return out

    def session_name(self) -> str | None:
        """The latest session_info entry's name, trimmed; empty or missing: no name."""
        name: str | None = None
        for i in self.order:
            if i in self.name_set:
                # As Pi 1.6 writes a name: runs of CR/LF one space, then JavaScript's
                # trim (its white space, which is not Python's: U+001C..U+001F and
                # U+0085 stay).
                written = re.sub(r"[\r\n]+", " ", self.name_set[i] or "")
                name = written.strip(_JS_WHITE_SPACE) or None
        return name

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
        ends = tuple(s.end for s, _limit in _store.chain(self.tree._storage[0], len(self.tree)))
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
        model.add(entry_id, "message")
        model.message[entry_id] = copy.deepcopy(message)
        self.callers_dicts.append(message)
        self._keep(tree, model)

    @rule(data=st.data())
    def append_label(self, data: st.DataObject) -> None:
        """Labels are nodes too: they move the leaf and never enter current_path."""
        v = self._pick(data)
        if not v.model.order:
            return
        target = data.draw(st.sampled_from(v.model.order))
        label = data.draw(st.sampled_from(["x", "y", ""]))
        tree = v.tree.append_label(target, label)
        model = v.model.copy()
        entry_id = model.next_id()
        model.add(entry_id, "label")
        model.label_set[entry_id] = (target, label)
        self._keep(tree, model)

    @rule(data=st.data())
    def append_any_kind(self, data: st.DataObject) -> None:
        """Every entry kind (unknown ones too) is a node under the leaf with the next id;
        the model records what was asked for (kind, message, label, name)."""
        v = self._pick(data)
        step = data.draw(append_steps(tuple(v.model.order)))
        tree = step.apply(v.tree)
        model = v.model.copy()
        entry_id = model.next_id()
        assert tree.leaf_id == entry_id
        model.add(entry_id, step.kind)
        if step.kind == "message":
            model.message[entry_id] = copy.deepcopy(step.args[0])
        elif step.kind == "label":
            model.label_set[entry_id] = (step.args[0], step.args[1])
        elif step.kind == "session_info":
            model.name_set[entry_id] = step.args[0]
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
            model.add(entry_id, "message")
            model.message[entry_id] = {"role": "assistant", "content": "fork"}
        self._keep(tree, model)

    @rule(data=st.data())
    def pickle_round_trip(self, data: st.DataObject) -> None:
        """A version pickles to an equal value (same hash) that grows like the original."""
        v = self._pick(data)
        copy_ = pickle.loads(pickle.dumps(v.tree))
        assert copy_ == v.tree
        assert hash(copy_) == hash(v.tree)
        self._keep(copy_, v.model.remade())

    @rule(data=st.data())
    def rebuild_from_entries(self, data: st.DataObject) -> None:
        """from_entries of a version's (already linked) entries gives an equal value and
        leaves the version's own entries as they were."""
        v = self._pick(data)
        rebuilt = SessionTree.from_entries(v.tree.entries(), leaf_id=v.tree.leaf_id)
        assert rebuilt == v.tree
        assert hash(rebuilt) == hash(v.tree)
        v.tree._check()
        self._keep(rebuilt, v.model.remade())

    @rule(data=st.data())
    def added_since(self, data: st.DataObject) -> None:
        """added_since agrees with the model: a version grew from another exactly when
        the other's entry objects are the start of its own, and then the rest is added."""
        older, newer = self._pick(data), self._pick(data)
        n = len(older.model.made)
        grew = older.model.made == newer.model.made[:n]
        got = newer.tree.added_since(older.tree)
        if grew:
            assert got is not None
            assert [e.id for e in got] == newer.model.order[n:]
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
                assert entry.type == model.kind[entry.id]
                if entry.id in model.message:
                    assert isinstance(entry, ptree.MessageEntry)
                    assert ptree.thaw(entry.message) == model.message[entry.id]
            assert [e.id for e in tree.path()] == model.path()
            assert tree.labels() == model.labels()
            assert tree.session_name == model.session_name()
            assert list(tree.current_path()) == [
                model.message[i] for i in model.path() if i in model.message
            ]


TestTreeMachine = TreeMachine.TestCase
