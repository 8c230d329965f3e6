"""SessionRef: one current value, read without locks, changed atomically by many threads."""

from __future__ import annotations

import copy
import itertools
import pickle
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ptree
from ptree import History, SessionError, SessionRef, SessionTree
from ptree.ref import ReentrantSwapError, WatchError


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Make the interpreter switch threads very often, to provoke races."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


class TestValue:
    def test_holds_the_value_it_was_given(self) -> None:
        """value is the value the ref was made with."""
        t = SessionTree()
        assert SessionRef(t).value is t

    def test_value_cannot_be_assigned(self) -> None:
        """Changes go through swap, reset or compare_and_set, never assignment."""
        ref = SessionRef(1)
        with pytest.raises(AttributeError):
            ref.value = 2  # type: ignore[misc]

    def test_is_exported(self) -> None:
        """The public names come from the package."""
        assert ptree.SessionRef is SessionRef
        assert issubclass(ReentrantSwapError, SessionError)
        assert issubclass(WatchError, RuntimeError)


class TestSwap:
    def test_applies_the_function_and_returns_the_new_value(self) -> None:
        """swap(fn, *args, **kwargs) stores and returns fn(value, *args, **kwargs)."""
        ref = SessionRef(SessionTree())
        new = ref.swap(SessionTree.append, user("hi"), id="u1")
        assert ref.value is new
        assert new.leaf_id == "u1"

    def test_runs_the_function_once(self) -> None:
        """The function runs exactly once per swap (it is called with the ref locked)."""
        calls: list[int] = []

        def bump(n: int) -> int:
            calls.append(n)
            return n + 1

        ref = SessionRef(0)
        ref.swap(bump)
        assert calls == [0]

    def test_a_failing_function_changes_nothing(self) -> None:
        """If fn raises, the error propagates and the value stays as it was."""
        ref = SessionRef(1)

        def boom(n: int) -> int:
            raise ValueError("no")

        with pytest.raises(ValueError, match="no"):
            ref.swap(boom)
        assert ref.value == 1
        assert ref.swap(lambda n: n + 1) == 2  # the lock was released

    def test_swap_inside_swap_is_a_clear_error(self) -> None:
        """An update function that swaps its own ref gets ReentrantSwapError, not a hang."""
        ref = SessionRef(0)
        with pytest.raises(ReentrantSwapError, match="must not change the ref"):
            ref.swap(lambda n: ref.swap(lambda m: m + 1))
        assert ref.value == 0

    def test_other_refs_may_be_changed_inside(self) -> None:
        """Only the same ref is refused: a function may change another ref."""
        a, b = SessionRef(0), SessionRef(0)
        a.swap(lambda n: b.swap(lambda m: m + 5) + n)
        assert (a.value, b.value) == (5, 5)

    def test_returning_the_same_value_changes_nothing(self) -> None:
        """fn returning its argument is a no-op: no watcher is called."""
        ref = SessionRef(SessionTree())
        seen: list[object] = []
        ref.add_watch("w", lambda old, new: seen.append(new))
        before = ref.value
        assert ref.swap(lambda t: t) is before
        assert seen == []


class TestThreads:
    def test_concurrent_swaps_lose_no_update(self, fast_switching: None) -> None:
        """8 writers swap in 1,500 appends each while readers read: nothing is lost.

        The final tree holds all 12,000 entries on one chain, each writer's appends in
        its order; no reader ever sees a value whose path disagrees with its entries,
        and each reader sees the tree only grow.
        """
        writers, per_writer = 8, 1500
        ref = SessionRef(SessionTree())
        done = threading.Event()
        problems: list[str] = []
        reads = [0]
        start = threading.Barrier(writers)

        def write(w: int) -> None:
            start.wait()
            for i in range(per_writer):
                message = {"role": "user", "content": f"{w}:{i}", "writer": w, "i": i}
                ref.swap(SessionTree.append, message)
                if i % 8 == 0:
                    time.sleep(0)  # let the other writers in: interleave the chain

        def read() -> None:
            last = 0
            n = 0
            while not done.is_set() or n == 0:
                v = ref.value
                entries = v.entries()
                path = v.path()
                if len(v) < last:
                    problems.append(f"the tree shrank from {last} to {len(v)}")
                last = len(v)
                if [e.id for e in path] != [e.id for e in entries]:
                    problems.append(f"path disagrees with entries at size {len(v)}")
                if len(entries) != len(v):
                    problems.append(f"{len(entries)} entries in a tree of {len(v)}")
                for prev, e in itertools.pairwise(entries):
                    if e.parent_id != prev.id:
                        problems.append(f"{e.id}'s parent is not {prev.id}")
                        break
                if n % 64 == 0:
                    try:
                        v._check()
                    except AssertionError as exc:
                        problems.append(f"_check failed: {exc}")
                n += 1
            reads[0] += n

        readers = [threading.Thread(target=read) for _ in range(3)]
        threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
        for th in readers + threads:
            th.start()
        for th in threads:
            th.join()
        done.set()
        for th in readers:
            th.join()

        assert problems == []
        final = ref.value
        final._check()
        assert len(final) == writers * per_writer
        path = final.path()
        assert len(path) == len(final)  # one chain: the leaf's path is every entry
        order: dict[int, list[int]] = {w: [] for w in range(writers)}
        messages = final.current_path()  # every entry is a message
        assert len(messages) == len(path)
        for msg in messages:
            order[msg["writer"]].append(msg["i"])
        assert order == {w: list(range(per_writer)) for w in range(writers)}
        assert reads[0] >= len(readers)
        # The writers really took turns (else the test proves nothing about races).
        by: list[int] = [msg["writer"] for msg in messages]
        switches = sum(x != y for x, y in itertools.pairwise(by))
        assert switches >= 10 * writers

    def test_compare_and_set_retry_loops_lose_nothing(self, fast_switching: None) -> None:
        """Callers that read, compute and compare_and_set, retrying, lose no update."""
        ref = SessionRef(0)

        def add(k: int) -> None:
            for _ in range(k):
                while True:
                    seen = ref.value
                    if ref.compare_and_set(seen, seen + 1):
                        break

        threads = [threading.Thread(target=add, args=(500,)) for _ in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert ref.value == 3000

    def test_watchers_see_every_change_in_order(self, fast_switching: None) -> None:
        """Under concurrent swaps, each change reaches a watcher once, in order."""
        ref = SessionRef(0)
        seen: list[tuple[int, int]] = []
        ref.add_watch("log", lambda old, new: seen.append((old, new)))

        def work() -> None:
            for _ in range(300):
                ref.swap(lambda n: n + 1)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert seen == [(k, k + 1) for k in range(1200)]


class TestCompareAndSet:
    def test_succeeds_when_the_value_is_the_expected_one(self) -> None:
        """With the current value as expected, the new value is stored; True."""
        t = SessionTree()
        ref = SessionRef(t)
        new = t.append(user("hi"))
        assert ref.compare_and_set(t, new) is True
        assert ref.value is new

    def test_fails_when_another_change_came_first(self) -> None:
        """With a stale expected value, nothing changes; False."""
        t = SessionTree()
        ref = SessionRef(t)
        ref.swap(SessionTree.append, user("first"))
        current = ref.value
        assert ref.compare_and_set(t, t.append(user("late"))) is False
        assert ref.value is current

    def test_compares_by_identity_not_equality(self) -> None:
        """An equal but other value is not the expected one."""
        t = SessionTree().append(user("hi"))
        twin = SessionTree.from_entries(t.entries())
        assert twin == t
        ref = SessionRef(t)
        assert ref.compare_and_set(twin, SessionTree()) is False
        assert ref.value is t

    def test_calls_watchers_only_on_success(self) -> None:
        """A failed compare_and_set tells no watcher."""
        ref = SessionRef("a")
        seen: list[tuple[str, str]] = []
        ref.add_watch("w", lambda old, new: seen.append((old, new)))
        ref.compare_and_set("x", "b")
        ref.compare_and_set("a", "b")
        assert seen == [("a", "b")]


class TestReset:
    def test_sets_the_value_whatever_it_was(self) -> None:
        """reset stores the given value, tells the watchers and returns it."""
        ref = SessionRef(1)
        seen: list[tuple[int, int]] = []
        ref.add_watch("w", lambda old, new: seen.append((old, new)))
        assert ref.reset(2) == 2
        assert (ref.value, seen) == (2, [(1, 2)])


class TestWatches:
    def test_called_with_old_and_new_after_the_change(self) -> None:
        """A watcher gets (old, new) and already sees the new value in the ref."""
        ref = SessionRef(SessionTree())
        calls: list[tuple[int, int, int]] = []
        ref.add_watch("w", lambda old, new: calls.append((len(old), len(new), len(ref.value))))
        ref.swap(SessionTree.append, user("a"))
        ref.swap(SessionTree.append, user("b"))
        assert calls == [(0, 1, 1), (1, 2, 2)]

    def test_called_in_the_order_they_were_added(self) -> None:
        """Watchers run in insertion order; re-adding a key keeps its place."""
        ref = SessionRef(0)
        order: list[str] = []
        ref.add_watch("a", lambda old, new: order.append("a"))
        ref.add_watch("b", lambda old, new: order.append("b"))
        ref.add_watch("a", lambda old, new: order.append("a2"))
        ref.reset(1)
        assert order == ["a2", "b"]
        assert ref.watches == ("a", "b")

    def test_removed_watchers_are_not_called(self) -> None:
        """remove_watch stops the calls; an unknown key is a KeyError."""
        ref = SessionRef(0)
        seen: list[int] = []
        ref.add_watch("w", lambda old, new: seen.append(new))
        ref.reset(1)
        ref.remove_watch("w")
        ref.reset(2)
        assert seen == [1]
        with pytest.raises(KeyError):
            ref.remove_watch("w")

    def test_a_watcher_must_be_callable(self) -> None:
        """add_watch refuses what cannot be called."""
        with pytest.raises(TypeError, match="callable"):
            SessionRef(0).add_watch("w", 3)  # type: ignore[arg-type]

    def test_a_failing_watcher_does_not_undo_the_change_or_silence_others(self) -> None:
        """Every watcher runs; then WatchError says which failed; the change stands."""
        ref = SessionRef(0)
        seen: list[int] = []

        def bad(old: int, new: int) -> None:
            raise OSError("disk full")

        ref.add_watch("disk", bad)
        ref.add_watch("log", lambda old, new: seen.append(new))
        with pytest.raises(WatchError, match="disk full") as info:
            ref.swap(lambda n: n + 1)
        assert (ref.value, seen) == (1, [1])
        err = info.value
        assert (err.old, err.new, [k for k, _ in err.errors]) == (0, 1, ["disk"])
        assert isinstance(err.__cause__, OSError)
        ref.remove_watch("disk")
        assert ref.swap(lambda n: n + 1) == 2  # the lock was released

    def test_a_watcher_changing_its_ref_is_a_clear_error(self) -> None:
        """A watcher that swaps the same ref is refused (reported as a WatchError)."""
        ref = SessionRef(0)
        ref.add_watch("loop", lambda old, new: ref.swap(lambda n: n + 1))
        with pytest.raises(WatchError) as info:
            ref.reset(1)
        assert isinstance(info.value.errors[0][1], ReentrantSwapError)
        assert ref.value == 1

    def test_a_watcher_may_add_or_remove_watches(self) -> None:
        """Watch lists are replaced whole, so a watcher can change them without a hang."""
        ref = SessionRef(0)
        ref.add_watch("once", lambda old, new: ref.remove_watch("once"))
        ref.reset(1)
        assert ref.watches == ()

    def test_a_watcher_is_never_called_after_remove_watch_returns(self) -> None:
        """remove_watch waits for a change being notified in another thread.

        So after it returns the watcher is done with: a writer hooked there can be
        closed.  (Had it returned at once, the change under way would still call it.)
        """
        ref = SessionRef(0)
        log: list[str] = []
        entered, release = threading.Event(), threading.Event()

        def slow(old: int, new: int) -> None:
            entered.set()
            release.wait(5)
            log.append("slow")

        ref.add_watch("slow", slow)
        ref.add_watch("disk", lambda old, new: log.append("disk"))
        changer = threading.Thread(target=ref.reset, args=(1,))
        changer.start()
        entered.wait(5)

        def remove() -> None:
            ref.remove_watch("disk")
            log.append("removed")

        remover = threading.Thread(target=remove)
        remover.start()
        remover.join(0.2)  # had remove_watch not waited, it would be done by now
        release.set()
        for th in (changer, remover):
            th.join()
        assert log == ["slow", "disk", "removed"]
        ref.reset(2)
        assert log == ["slow", "disk", "removed", "slow"]

    def test_a_watcher_or_update_function_may_change_the_watches(self) -> None:
        """Changing the watches from inside a change does not wait for the ref's lock.

        A watch added during a change is called from the next change on.
        """
        ref = SessionRef(0)
        seen: list[tuple[str, int]] = []

        def add_more(old: int, new: int) -> None:
            ref.add_watch("more", lambda o, n: seen.append(("more", n)))

        ref.add_watch("adder", add_more)
        ref.reset(1)
        assert seen == []

        def remove_and_bump(n: int) -> int:
            ref.remove_watch("adder")
            return n + 1

        ref.swap(remove_and_bump)
        assert (seen, ref.watches) == ([("more", 2)], ("more",))

    def test_a_history_in_a_ref_with_a_writer_watch(self) -> None:
        """The intended use: a History in a ref, a watcher that persists each present."""
        ref = SessionRef(History(SessionTree()))
        written: list[int] = []
        ref.add_watch("disk", lambda old, new: written.append(len(new.present)))
        ref.swap(lambda h: h.commit(h.present.append(user("a"))))
        ref.swap(lambda h: h.commit(h.present.append(user("b"))))
        ref.swap(History.undo)
        assert written == [1, 2, 1]
        assert ref.value.can_redo


class TestWriterWatch:
    def test_a_writer_watch_puts_every_concurrent_change_on_disk(
        self, tmp_path: Path, fast_switching: None
    ) -> None:
        """Threads swapping a ref whose watcher commits to a SessionWriter: the file
        ends up holding exactly the ref's final value, every change in order."""
        path = tmp_path / "shared.jsonl"
        with ptree.SessionWriter(path, fsync=False) as writer:
            ref = SessionRef(writer.value)
            ref.add_watch("disk", lambda old, new: writer.commit(new))

            def work(w: int) -> None:
                for i in range(100):
                    ref.swap(SessionTree.append, user(f"{w}:{i}"))

            threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            assert writer.value == ref.value
        again = ptree.load(path)
        assert again == ref.value
        assert len(again) == 400


class TestManners:
    def test_repr_shows_the_value(self) -> None:
        """The repr shows what the ref holds."""
        assert repr(SessionRef(SessionTree())) == "SessionRef(SessionTree(0 entries, leaf=None))"

    def test_repr_survives_recursion(self) -> None:
        """A ref that holds itself through a list does not recurse forever."""
        box: list[Any] = []
        ref = SessionRef(box)
        box.append(ref)
        assert repr(ref) == "SessionRef([...])"

    def test_cannot_be_pickled_or_copied(self) -> None:
        """A ref is shared state: pickling or copying it is a clear TypeError."""
        ref = SessionRef(1)
        with pytest.raises(TypeError, match=r"pickle its \.value"):
            pickle.dumps(ref)
        with pytest.raises(TypeError, match="cannot be pickled or copied"):
            copy.copy(ref)

    def test_equality_is_identity(self) -> None:
        """Two refs to the same value are still two refs."""
        t = SessionTree()
        a, b = SessionRef(t), SessionRef(t)
        assert a.value is b.value
        assert a != b
        assert {a: "a", b: "b"}[a] == "a"
        assert len({a, b}) == 2

    def test_errors_pickle(self) -> None:
        """The errors survive pickling."""
        e = pickle.loads(pickle.dumps(ReentrantSwapError()))
        assert type(e) is ReentrantSwapError
        w = pickle.loads(pickle.dumps(WatchError(0, 1, (("k", ValueError("x")),))))
        assert (w.old, w.new, w.errors[0][0]) == (0, 1, "k")


class TestReadersDuringWrites:
    """What a ref's readers rely on: a value's view never moves under them."""

    def test_children_found_before_a_later_append_stay_as_they_were(self) -> None:
        """The store's child lists grow in place; what a reader was given must not.

        ``children`` of an old value, read just before another thread appends one
        more child to the same parent (extending the shared store in place), must
        not gain that child afterwards: the store hands out copies, never its live
        lists.
        """
        from ptree import arrays as _store

        t = SessionTree().append(user("root")).append(user("a"))
        t = t.move_to("e1").append(user("b"))  # e1 now has a list of two children
        seen = _store.visible(t._storage[0].children["e1"], len(t))  # a reader, mid-call
        t.move_to("e1").append(user("c"))  # a writer extends the same store
        assert [e.id for e in seen] == ["e2", "e3"]

    def test_labels_can_be_read_while_another_thread_adds_labels(
        self, fast_switching: None
    ) -> None:
        """Reading labels() of a value never trips over a label being added elsewhere.

        Labels aimed at new targets add keys to the store's shared label index; a
        reader iterating that index must not fail with "dictionary changed size".
        """
        t = SessionTree()
        for _ in range(1000):
            t = t.append(user("m"))
        ref = SessionRef(t)
        done = threading.Event()
        failures: list[BaseException] = []

        def write() -> None:
            for i in range(1, 1001):
                ref.swap(SessionTree.append_label, f"e{i}", "seen")

        def read() -> None:
            while not done.is_set():
                v = ref.value
                try:
                    labels = v.labels()
                except RuntimeError as exc:
                    failures.append(exc)
                    return
                if len(labels) != len(v) - 1000:
                    failures.append(AssertionError(f"{len(labels)} labels in {len(v)}"))
                    return

        readers = [threading.Thread(target=read) for _ in range(3)]
        writer = threading.Thread(target=write)
        for th in [*readers, writer]:
            th.start()
        writer.join()
        done.set()
        for th in readers:
            th.join()
        assert failures == []
        assert len(ref.value.labels()) == 1000
