"""History: undo and redo as an immutable value, against a list-of-values model."""

from __future__ import annotations

import copy
import pickle
from dataclasses import dataclass
from typing import Any
from unittest import mock

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

import ptree
from ptree import History, HistoryError, NothingToRedo, NothingToUndo, SessionTree
from ptree import history as _history


def grown(n: int) -> list[SessionTree]:
    """``n + 1`` versions of a growing tree: empty, then one more message each."""
    trees = [SessionTree()]
    for k in range(n):
        trees.append(trees[-1].append({"role": "user", "content": f"m{k}"}))
    return trees


def committed(values: list[Any], *, limit: int | None = None) -> History[Any]:
    """A history that committed ``values[1:]`` after starting at ``values[0]``."""
    h = History(values[0], limit=limit)
    for v in values[1:]:
        h = h.commit(v)
    h._check()
    return h


class TestConstruct:
    def test_starts_with_the_value_and_nothing_to_undo_or_redo(self) -> None:
        """A new history holds its value as the present, with no past and no future."""
        t = SessionTree().append({"role": "user", "content": "hi"})
        h = History(t)
        assert h.present is t
        assert (h.can_undo, h.can_redo, h.undo_count, h.redo_count) == (False, False, 0, 0)
        assert (h.past(), h.future(), len(h), h.limit) == ((), (), 1, None)
        h._check()

    @pytest.mark.parametrize("limit", [1.5, "3", True])
    def test_a_limit_of_the_wrong_type_is_a_type_error(self, limit: Any) -> None:
        """A limit must be an int (not a bool) or None."""
        with pytest.raises(TypeError, match="limit must be an int"):
            History(1, limit=limit)

    def test_a_negative_limit_is_a_value_error(self) -> None:
        """A negative limit makes no sense."""
        with pytest.raises(ValueError, match="0 or more"):
            History(1, limit=-1)

    def test_is_exported(self) -> None:
        """The public names come from the package."""
        assert ptree.History is History
        assert issubclass(NothingToUndo, HistoryError)
        assert issubclass(NothingToRedo, IndexError)


class TestCommit:
    def test_makes_the_value_present_and_the_old_one_undoable(self) -> None:
        """After a commit the old present is the newest past value."""
        a, b = grown(1)
        h = History(a).commit(b)
        assert h.present is b
        assert h.past() == (a,)
        assert h.can_undo
        h._check()

    def test_leaves_the_old_history_unchanged(self) -> None:
        """Commit returns a new history; the one it was called on is as it was."""
        a, b = grown(1)
        h = History(a)
        h.commit(b)
        assert h.present is a
        assert not h.can_undo

    def test_after_undo_drops_the_redo_branch(self) -> None:
        """A commit after an undo starts a new line: nothing is left to redo."""
        a, b, c = grown(2)
        d = a.append({"role": "user", "content": "other"})
        h = History(a).commit(b).commit(c).undo().commit(d)
        assert (h.past(), h.present, h.future(), h.can_redo) == ((a, b), d, (), False)
        with pytest.raises(NothingToRedo):
            h.redo()

    def test_committing_the_present_returns_self(self) -> None:
        """Committing the very same value is a no-op."""
        a, b = grown(1)
        h = History(a).commit(b)
        assert h.commit(b) is h

    def test_committing_an_equal_but_other_value_is_a_step(self) -> None:
        """Only the same object is a no-op; an equal copy is a new step."""
        h = History([1])
        assert h.commit([1]).undo_count == 1

    def test_shares_the_past_with_the_history_it_came_from(self) -> None:
        """A commit makes one cell: the older cells are shared, not copied."""
        a, b, c = grown(2)
        h1 = History(a).commit(b)
        h2 = h1.commit(c)
        assert h2._past is not None
        assert h2._past.next is h1._past


class TestUndo:
    def test_goes_back_one_value(self) -> None:
        """Undo makes the newest past value present and the present redoable."""
        a, b, c = grown(2)
        h = committed([a, b, c]).undo()
        assert (h.past(), h.present, h.future()) == ((a,), b, (c,))
        h._check()

    def test_nothing_to_undo_is_a_clear_error(self) -> None:
        """Undo on the oldest value raises NothingToUndo, a HistoryError and IndexError."""
        with pytest.raises(NothingToUndo, match="nothing to undo") as info:
            History("a").undo()
        assert isinstance(info.value, HistoryError)
        assert isinstance(info.value, IndexError)
        assert info.value.limit is None

    def test_nothing_to_undo_mentions_the_limit(self) -> None:
        """When a limit dropped older values, the error says so."""
        h = History("a", limit=1).commit("b").commit("c").undo()
        with pytest.raises(NothingToUndo, match="at most 1 past values") as info:
            h.undo()
        assert info.value.limit == 1

    def test_undo_all_the_way_back(self) -> None:
        """Undo can be repeated as many times as values were committed."""
        trees = grown(20)
        h = committed(trees)
        for k in range(20, 0, -1):
            assert h.present is trees[k]
            h = h.undo()
        assert h.present is trees[0]
        assert h.future() == tuple(trees[1:])
        assert not h.can_undo


class TestRedo:
    def test_goes_forward_again(self) -> None:
        """Redo brings back the value last undone."""
        a, b, c = grown(2)
        h = committed([a, b, c])
        assert h.undo().redo() == h
        assert h.undo().undo().redo().present is b
        h.undo().undo().redo()._check()

    def test_nothing_to_redo_is_a_clear_error(self) -> None:
        """Redo without an undo raises NothingToRedo, a HistoryError and IndexError."""
        with pytest.raises(NothingToRedo, match="nothing to redo"):
            History("a").commit("b").redo()
        assert issubclass(NothingToRedo, HistoryError)

    def test_redo_everything_after_undoing_everything(self) -> None:
        """Undo n times then redo n times gives an equal history back."""
        trees = grown(10)
        h = committed(trees)
        x = h
        for _ in range(10):
            x = x.undo()
        for _ in range(10):
            x = x.redo()
        assert x == h
        assert x.present is h.present


class TestPastAndFuture:
    def test_past_is_oldest_first_and_future_in_redo_order(self) -> None:
        """past() reads back in time order; future() in the order redo visits."""
        h = committed([1, 2, 3, 4, 5]).undo().undo()
        assert (h.past(), h.present, h.future()) == ((1, 2), 3, (4, 5))

    def test_iteration_gives_every_kept_value_in_time_order(self) -> None:
        """Iterating a history gives past, present, future; len counts them."""
        h = committed([1, 2, 3, 4, 5]).undo()
        assert list(h) == [1, 2, 3, 4, 5]
        assert len(h) == 5
        assert (h.undo_count, h.redo_count) == (3, 1)


class TestLimit:
    def test_keeps_at_most_limit_past_values(self) -> None:
        """The oldest values are dropped past the limit; undo stops there."""
        h = committed(list(range(10)), limit=3)
        assert (h.past(), h.present, h.undo_count) == ((6, 7, 8), 9, 3)
        h = h.undo().undo().undo()
        assert (h.present, h.can_undo, h.future()) == (6, False, (7, 8, 9))

    def test_a_limit_of_zero_keeps_no_past(self) -> None:
        """limit=0: commits work, nothing can be undone."""
        h = committed([1, 2, 3], limit=0)
        assert (h.present, h.can_undo) == (3, False)

    def test_redo_never_goes_beyond_the_limit(self) -> None:
        """Undo then redo moves within the kept window."""
        h = committed(list(range(6)), limit=2).undo().undo()
        assert (h.past(), h.present, h.future()) == ((), 3, (4, 5))
        h = h.redo().redo()
        assert (h.past(), h.present) == ((3, 4), 5)

    def test_dropped_values_are_freed_in_batches(self) -> None:
        """Memory holds at most limit + slack past cells, whatever the number of commits."""
        limit = 10
        h: History[int] = History(0, limit=limit)
        most = 0
        for k in range(1, 1000):
            h = h.commit(k)
            most = max(most, h._past_cells)
        h._check()
        # The documented bound (README): up to limit // 4 + 32 dropped values wait.
        assert most <= 10 + 10 // 4 + 32
        assert most > limit  # dropping does happen in batches, not one by one
        assert h.past() == tuple(range(989, 999))

    def test_commits_to_one_history_about_to_trim_copy_once(self) -> None:
        """Branching many times from a history due for a trim copies its cells once.

        The kept cells do not depend on the committed value, so the first such
        commit keeps its copy: the others are O(1), not O(limit) each.
        """
        limit = 50
        base = committed(list(range(limit + _history._slack(limit) + 1)), limit=limit)
        assert base._past_cells == limit + _history._slack(limit)  # one short of a trim
        with mock.patch.object(_history, "_build", wraps=_history._build) as build:
            branches = [base.commit(f"try {k}") for k in range(100)]
        assert build.call_count == 1
        for k, h in enumerate(branches):
            h._check()
            assert (h.present, h.undo_count, h._past_cells) == (f"try {k}", limit, limit)
            assert h.past() == (*range(base.present - limit + 1, base.present), base.present)
        assert branches[0]._past is branches[1]._past

    def test_trimming_keeps_old_histories_intact(self) -> None:
        """A trim copies cells: histories made before it still see all they kept."""
        h = committed(list(range(50)), limit=40)
        before = h.past()
        later = h
        for k in range(50, 200):
            later = later.commit(k)
        assert h.past() == before
        h._check()
        later._check()

    def test_limit_takes_no_part_in_equality(self) -> None:
        """Like a deque's maxlen, the limit is configuration, not value."""
        assert committed([1, 2, 3], limit=5) == committed([1, 2, 3])


class TestValueManners:
    def test_equal_histories_are_equal_and_hash_alike(self) -> None:
        """Histories with equal past, present and future compare and hash equal."""
        trees = grown(3)
        h1 = committed(trees).undo()
        h2 = committed([SessionTree.from_entries(t.entries()) for t in trees]).undo()
        assert h1 == h2
        assert hash(h1) == hash(h2)
        assert h1 != h1.undo()
        assert h1 != h1.redo()

    def test_histories_with_a_different_split_differ(self) -> None:
        """The same values with a different present are different histories."""
        h = committed([1, 2, 3])
        assert h.undo() != h
        assert h.undo() != committed([1, 2])
        assert History(1) != 1

    def test_pickles(self) -> None:
        """A history survives pickling with its past, present, future and limit."""
        trees = grown(4)
        h = committed(trees, limit=3).undo()
        back = pickle.loads(pickle.dumps(h))
        assert back == h
        assert back.limit == 3
        assert back.redo().present == trees[4]
        back._check()

    def test_copies_are_itself(self) -> None:
        """An immutable value is its own copy."""
        h = committed([1, 2])
        assert copy.copy(h) is h
        assert copy.deepcopy(h) is h

    def test_repr_reads_well(self) -> None:
        """The repr shows the present and how far one can undo and redo."""
        h = committed(grown(2), limit=5).undo()
        assert repr(h) == "History(SessionTree(1 entry, leaf='e1'), undo=1, redo=1, limit=5)"

    def test_repr_survives_recursion(self) -> None:
        """A history holding itself (through a list) does not recurse forever."""
        box: list[Any] = []
        h = History(box)
        box.append(h)
        assert repr(h) == "History([...], undo=0, redo=0)"

    def test_errors_pickle(self) -> None:
        """The errors keep their facts through pickling."""
        e = pickle.loads(pickle.dumps(NothingToUndo(3)))
        assert (type(e), e.limit, str(e)) == (NothingToUndo, 3, str(NothingToUndo(3)))
        assert type(pickle.loads(pickle.dumps(NothingToRedo()))) is NothingToRedo


# ---------------------------------------------------------------------- state machine


@dataclass(frozen=True)
class Model:
    """The naive reference: every kept value in time order, and which one is present."""

    values: tuple[Any, ...]
    at: int


@dataclass(frozen=True)
class Version:
    history: History[SessionTree]
    model: Model


class HistoryMachine(RuleBasedStateMachine):
    """Random commits, undos and redos, from the newest history or from old ones."""

    def __init__(self) -> None:
        super().__init__()
        self.versions: list[Version] = []
        self.limit: int | None = None
        self.trees: list[SessionTree] = []

    @initialize(limit=st.none() | st.integers(0, 6))
    def start(self, limit: int | None) -> None:
        self.limit = limit
        tree = SessionTree()
        self.trees = [tree]
        self.versions = [Version(History(tree, limit=limit), Model((tree,), 0))]

    @property
    def current(self) -> Version:
        return self.versions[-1]

    def _keep(self, history: History[SessionTree], model: Model) -> None:
        history._check()
        self.versions.append(Version(history, model))
        if len(self.versions) > 20:  # keep the per-step check affordable
            del self.versions[0]

    def _committed(self, model: Model, value: SessionTree) -> Model:
        if value is model.values[model.at]:
            return model
        values = (*model.values[: model.at + 1], value)
        at = model.at + 1
        if self.limit is not None and at > self.limit:
            values = values[at - self.limit :]
            at = self.limit
        return Model(values, at)

    @rule(n=st.integers(1, 3))
    def commit_grown(self, n: int) -> None:
        """Commit the present grown by a few messages (the usual case)."""
        h, model = self.current.history, self.current.model
        tree = h.present
        for _ in range(n):
            tree = tree.append({"role": "user", "content": f"m{len(self.trees)}"})
            self.trees.append(tree)
        self._keep(h.commit(tree), self._committed(model, tree))

    @rule(data=st.data())
    def commit_any(self, data: st.DataObject) -> None:
        """Commit any value seen before, perhaps the present itself (a no-op)."""
        h, model = self.current.history, self.current.model
        tree = data.draw(st.sampled_from(self.trees), label="tree")
        new = h.commit(tree)
        if tree is h.present:
            assert new is h
        self._keep(new, self._committed(model, tree))

    @rule()
    def undo(self) -> None:
        """Undo, or get NothingToUndo exactly when the model has no earlier value."""
        h, model = self.current.history, self.current.model
        if model.at == 0:
            with pytest.raises(NothingToUndo):
                h.undo()
            return
        self._keep(h.undo(), Model(model.values, model.at - 1))

    @rule()
    def redo(self) -> None:
        """Redo, or get NothingToRedo exactly when the model has no later value."""
        h, model = self.current.history, self.current.model
        if model.at == len(model.values) - 1:
            with pytest.raises(NothingToRedo):
                h.redo()
            return
        self._keep(h.redo(), Model(model.values, model.at + 1))

    @rule(data=st.data())
    def go_back_to_an_old_history(self, data: st.DataObject) -> None:
        """Carry on from an older history value (a branch of the undo history itself)."""
        old = data.draw(st.sampled_from(self.versions), label="old")
        self._keep(old.history, old.model)

    @rule()
    def pickle_round_trip(self) -> None:
        """A pickled history comes back equal and behaves the same."""
        h, model = self.current.history, self.current.model
        back = pickle.loads(pickle.dumps(h))
        assert back == h
        assert hash(back) == hash(h)
        # Equal but new tree objects: the model follows them, since a commit of the
        # very present object is a no-op and of an equal copy is a step.
        self._keep(back, Model(tuple(back), model.at))

    @invariant()
    def every_kept_history_matches_its_model(self) -> None:
        """Every history made so far still shows exactly what its model says."""
        for version in self.versions:
            h, model = version.history, version.model
            values, at = model.values, model.at
            assert h.present == values[at]
            assert h.past() == values[:at]
            assert h.future() == values[at + 1 :]
            assert tuple(h) == values
            assert (h.undo_count, h.redo_count, len(h)) == (at, len(values) - at - 1, len(values))
            assert (h.can_undo, h.can_redo) == (at > 0, at < len(values) - 1)
            assert h.limit == self.limit

    @invariant()
    def equal_models_make_equal_histories(self) -> None:
        """Histories are equal exactly when their models are."""
        first = self.versions[0]
        for version in self.versions[-3:]:
            assert (version.history == first.history) == (version.model == first.model)


class TestHistoryMachine:
    def test_against_the_model(self) -> None:
        """Undo/redo/commit sequences agree with a list-of-values model."""
        run_state_machine_as_test(HistoryMachine, settings=settings(stateful_step_count=60))

    def test_against_the_model_with_frequent_trims(self) -> None:
        """The same, with a tiny trim slack so that batched trims happen constantly."""
        with mock.patch.object(_history, "_slack", return_value=1):
            # The same machine as above: a third of its examples covers the trims.
            run_state_machine_as_test(
                HistoryMachine,
                settings=settings(
                    stateful_step_count=60, max_examples=min(settings().max_examples, 300)
                ),
            )


class TestPickleSize:
    def test_a_growing_history_pickles_in_linear_size(self) -> None:
        """Each version travels as the entries it added, not as a whole tree again."""
        n = 400
        trees = grown(n)
        h = committed(trees)
        whole = len(pickle.dumps(trees[-1]))
        data = pickle.dumps(h)
        assert len(data) < 2 * whole + 100 * n  # whole trees each time: ~n/2 * whole
        back = pickle.loads(data)
        assert back == h
        back.present._check()
        assert back.past()[n // 2] == trees[n // 2]

    def test_every_kind_of_step_round_trips(self) -> None:
        """Moves, header changes, other configs, unrelated trees and non-trees all survive."""
        a = SessionTree().append({"role": "user", "content": "q"})
        b = a.append({"role": "assistant", "content": "A"})
        c = b.move_to("e1")
        d = c.append({"role": "assistant", "content": "B"})
        e = d.with_header(ptree.SessionHeader(id="s1", timestamp="2026-01-01T00:00:00Z", cwd="/"))
        f = e.with_config(id_factory=ptree.ids.random_ids)
        g = f.append({"role": "user", "content": "more"})
        other = SessionTree().append({"role": "user", "content": "unrelated"})
        values: list[Any] = [SessionTree(), a, b, c, d, e, f, g, other, a, 7, b]
        h = committed(values).undo().undo().undo()
        back = pickle.loads(pickle.dumps(h))
        assert back == h
        assert [type(v) for v in back] == [type(v) for v in h]
        for old, new in zip(h, back, strict=True):
            assert new == old
            if isinstance(new, SessionTree):
                new._check()
                assert (new.leaf_id, new.header, new.id_factory) == (
                    old.leaf_id,
                    old.header,
                    old.id_factory,
                )
        grown_again = back.past()[-1].append({"role": "user", "content": "after"})
        assert len(grown_again) == len(values[-5]) + 1
