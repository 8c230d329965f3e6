"""append's common case in C (ptree/_cfrozen.c, ``append_message``): the same trees
as the Python path.

The reference is ``SessionTree.append`` with the compiled path switched off (the
Python path the rest of the suite tests), never the compiled code itself.  Timestamps
come from the clock, so they are compared by form and order, everything else exactly:
entries, links, ids, counters, and each store's indexes.
"""

from __future__ import annotations

import gc
import re
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptree import FrozenDict, SessionTree, freeze, frozen, ids
from ptree import arrays as store_mod
from ptree import tree as tree_mod
from ptree.header import SessionHeader

from .frozen_values import same_value
from .helpers import missing
from .strategies import json_values, keys, messages

if tree_mod._compiled_append is None:  # pragma: no cover - the extension is built by pip
    if frozen.COMPILED:  # built, yet append's common case refused the classes' layout
        pytest.fail(tree_mod._APPEND_REFUSED, pytrace=False)
    missing(tree_mod._APPEND_REFUSED, module_level=True)

compiled = tree_mod._compiled_append
assert compiled is not None
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


@pytest.fixture
def python_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """append with the compiled path switched off."""
    monkeypatch.setattr(tree_mod, "_compiled_append", None)


def layout(t: SessionTree) -> Any:
    """Everything a tree value holds but the timestamps, its stores' indexes included."""
    entries = [
        (type(e), e.id, e.parent_id, e.extra, e.depth, e.seq, getattr(e.parent_entry, "id", None))
        for e in t.entries()
    ]
    stores = [
        (
            s.base,
            limit,
            [e.id for e in s.entries],
            list(s.by_id),
            {k: [c.id for c in v] if isinstance(v, list) else v.id for k, v in s.children.items()},
            s.chain,
        )
        for s, limit in store_mod.chain(*t._storage)
    ]
    return entries, stores, t.counter, t.leaf_id, t.header


def same_trees(a: SessionTree, b: SessionTree) -> None:
    assert layout(a) == layout(b)
    for x, y in zip(a.entries(), b.entries(), strict=True):
        assert same_value(getattr(x, "message", None), getattr(y, "message", None))
        assert ISO.fullmatch(x.timestamp)
    a._check()


def outcome(run: Callable[[], SessionTree]) -> Any:
    try:
        return ("ok", run())
    except Exception as exc:
        return ("error", type(exc), str(exc))


# A step: append a message to the value at ``version`` (an index into the versions so
# far, modulo their number: older ones branch the storage), or move its leaf first.
bad_messages = st.one_of(
    st.dictionaries(keys, json_values(4), max_size=3),  # mostly without a role
    st.fixed_dictionaries({"role": st.integers() | st.none()}),
    st.fixed_dictionaries({"role": st.just("user"), "content": st.just(float("nan"))}),
    st.fixed_dictionaries({"role": st.just("user"), "x": st.sets(st.integers(), max_size=1)}),
    st.fixed_dictionaries({"role": st.just("user")}).map(lambda m: {**m, 1: "int key"}),
)
steps = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=40),
        st.sampled_from(["append", "append", "append", "frozen", "move", "label"]),
        messages | bad_messages,
    ),
    max_size=30,
)


def play(script: list[tuple[int, str, Any]], start: SessionTree) -> list[Any]:
    versions = [start]
    out: list[Any] = []
    for version, what, message in script:
        t = versions[version % len(versions)]
        if what == "move" and len(t):
            t = t.move_to(t.ids()[version % len(t)])
        elif what == "label" and len(t):
            t = t.append_label(t.ids()[version % len(t)], "x")
        m = message
        if what == "frozen" and outcome(partial(freeze, message))[0] == "ok":
            m = freeze(message)
        result = outcome(partial(t.append, m))
        out.append(result)
        if result[0] == "ok":
            versions.append(result[1])
    return out


def python_play(script: list[tuple[int, str, Any]], start: SessionTree) -> list[Any]:
    saved = tree_mod._compiled_append
    tree_mod._compiled_append = None
    try:
        return play(script, start)
    finally:
        tree_mod._compiled_append = saved


class TestSameAsPython:
    @settings(max_examples=150)
    @given(steps)
    def test_any_script_of_appends(self, script: list[tuple[int, str, Any]]) -> None:
        """Appends, branches (appends to older values), moves and labels: the compiled
        path gives the same tree after every step, or the same error."""
        got = play(script, SessionTree())
        expected = python_play(script, SessionTree())
        for g, e in zip(got, expected, strict=True):
            assert g[0] == e[0]
            if g[0] == "ok":
                same_trees(g[1], e[1])
            else:
                assert g[1:] == e[1:]

    def test_a_header_and_a_counter_are_kept(self) -> None:
        """The new value keeps the header, and counts on from an explicit ``e7``."""
        header = SessionHeader(id="s1", timestamp="2026-01-01T00:00:00.000Z", cwd="/")
        t = SessionTree(header=header).append({"role": "user", "content": "a"}, id="e7")
        t = t.append({"role": "user", "content": "b"})
        assert (t.header, t.leaf_id, t.counter) == (header, "e8", 8)

    def test_a_counter_past_64_bits_takes_the_python_path(self) -> None:
        """A counter C cannot hold (``e`` and 25 digits): the next id is still one more."""
        t = SessionTree().append({"role": "user", "content": "a"}, id="e" + "9" * 25)
        assert compiled(t, {"role": "user", "content": "b"}) is None
        assert t.append({"role": "user", "content": "b"}).leaf_id == "e1" + "0" * 25

    def test_other_configurations_take_the_python_path(self) -> None:
        """A tree with its own clock or ids is never appended to in C."""
        t = SessionTree(clock=lambda: "2026-01-01T00:00:00.000Z")
        assert compiled(t, {"role": "user", "content": "a"}) is None
        leaf = t.append({"role": "user", "content": "a"}).leaf
        assert leaf is not None
        assert leaf.timestamp == "2026-01-01T00:00:00.000Z"

    def test_the_message_is_the_frozen_copy(self) -> None:
        """The caller's dict is copied (changing it changes no tree); a FrozenDict is
        kept as it is; the entry's shape is read from the message."""
        m: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": "x"}]}
        t = compiled(SessionTree(), m)
        assert t is not None
        m["content"].append("more")
        assert t.message("e1") == {"role": "assistant", "content": [{"type": "text", "text": "x"}]}
        assert type(t.message("e1")) is FrozenDict
        frozen = freeze(m)
        assert t.append(frozen).message("e2") is frozen
        assert t.leaf is not None
        assert t.leaf.shape == 4  # SHAPE_ASSISTANT

    def test_the_collector_never_walks_what_it_makes(self) -> None:
        """The new entry and value are untracked (they cannot be on a cycle), as frozen
        messages are; a value whose header is of a subclass (which could hold anything)
        stays tracked."""
        t = compiled(SessionTree(), {"role": "user", "content": "a"})
        assert t is not None
        assert not gc.is_tracked(t)
        assert not gc.is_tracked(t["e1"])

        class Header(SessionHeader):
            pass

        header = Header(id="s1", timestamp="2026-01-01T00:00:00.000Z", cwd="/")
        t = compiled(SessionTree(header=header), {"role": "user", "content": "a"})
        assert t is not None
        assert gc.is_tracked(t)
        assert not gc.is_tracked(t["e1"])

    def test_python_path_fixture_switches_it_off(self, python_path: None) -> None:
        """The fixture the other tests compare with really takes the Python path."""
        assert tree_mod._compiled_append is None
        assert SessionTree().append({"role": "user"}).leaf_id == "e1"


class TestClock:
    """The default clock in C (``ptree._cfrozen.utc_now``, which ``ids.utc_now`` calls
    and append's common case calls directly) keeps ids.py's rule: the same text of the
    same millisecond."""

    def test_utc_now_is_the_compiled_clock(self) -> None:
        from ptree import _cfrozen

        assert ids._clock is _cfrozen.utc_now
        assert tree_mod._DEFAULT_CONFIG.clock is ids.utc_now

    @pytest.mark.parametrize(
        ("ms", "text"),
        [
            (0, "1970-01-01T00:00:00.000Z"),
            (999, "1970-01-01T00:00:00.999Z"),
            (951_782_400_999, "2000-02-29T00:00:00.999Z"),
            (1_798_761_599_001, "2026-12-31T23:59:59.001Z"),
            (4_102_444_799_123, "2099-12-31T23:59:59.123Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
        ],
    )
    def test_both_clocks_write_a_millisecond_alike(self, ms: int, text: str) -> None:
        from ptree._cfrozen import utc_text

        assert (utc_text(ms), ids._utc_text(ms)) == (text, text)

    def test_both_clocks_read_the_same_time(self) -> None:
        """The C clock's reading lies between two of the Python clock's, and equals
        them when they fall in one millisecond."""
        from ptree._cfrozen import utc_now

        same = 0
        for _ in range(200):
            before, now, after = ids._python_utc_now(), utc_now(), ids._python_utc_now()
            assert ISO.fullmatch(now)
            assert before <= now <= after
            if before == after:
                assert now == before
                same += 1
        assert same > 0

    def test_an_append_in_c_is_stamped_by_the_clock(self) -> None:
        before = ids._python_utc_now()
        t = compiled(SessionTree(), {"role": "user", "content": "a"})
        after = ids._python_utc_now()
        assert t is not None
        assert t.leaf is not None
        assert before <= t.leaf.timestamp <= after


class TestThreads:
    def test_a_held_lock_sends_append_to_the_python_path(self) -> None:
        """While another thread holds the store's lock (claiming its end the Python
        way), the compiled path adds nothing: it leaves the append to tree.py, which
        waits for the lock."""
        t = SessionTree().append({"role": "user", "content": "a"})
        store = t._store
        with store.lock:
            assert compiled(t, {"role": "user", "content": "b"}) is None
            assert len(store.entries) == 1
        t2 = compiled(t, {"role": "user", "content": "b"})
        assert t2 is not None
        assert t2.leaf_id == "e2"
        assert not store.lock.locked()

    def test_the_collectors_switch_is_left_as_it_was(self) -> None:
        """A second child of the leaf makes a list in the store's index, allocated with
        the collector kept off: afterwards the collector is on or off as before."""
        for enabled in (True, False):
            t = SessionTree().append({"role": "user", "content": "a"})
            t = t.append({"role": "user", "content": "b"}).move_to("e1")
            (gc.enable if enabled else gc.disable)()
            try:
                t2 = compiled(t, {"role": "user", "content": "c"})
                assert gc.isenabled() is enabled
            finally:
                gc.enable()
            assert t2 is not None
            assert [c.id for c in t2.children("e1")] == ["e2", "e3"]
            assert t2._store.children["e1"] == [t2["e2"], t2["e3"]]

    def test_a_lock_of_another_type_is_taken_and_released(self) -> None:
        """A store whose lock is not a threading.Lock (an RLock here): the compiled
        path acquires it without waiting, and releases it."""
        t = SessionTree().append({"role": "user", "content": "a"})
        t._store.lock = threading.RLock()  # type: ignore[assignment]
        t2 = compiled(t, {"role": "user", "content": "b"})
        assert t2 is not None
        assert t2.leaf_id == "e2"
        assert t._store.lock.acquire(blocking=False)  # free again
        t._store.lock.release()
        held = threading.Event()
        done = threading.Event()

        def hold() -> None:
            with t._store.lock:
                held.set()
                done.wait()

        th = threading.Thread(target=hold)
        th.start()
        held.wait()
        try:
            assert compiled(t2, {"role": "user", "content": "c"}) is None
        finally:
            done.set()
            th.join()
        t2._check()

    def test_compiled_and_python_appends_to_one_value_never_collide(self) -> None:
        """Threads appending to one value, some in C and some the Python way (an
        explicit id), each get a consistent value: one extends the store, the others
        branch it, never two at one place."""
        base = SessionTree()
        for i in range(10):
            base = base.append({"role": "user", "content": f"m{i}"})
        results: list[SessionTree] = []
        lock = threading.Lock()

        def work(n: int) -> None:
            local = []
            for i in range(300):
                m = {"role": "user", "content": f"t{n}-{i}"}
                local.append(base.append(m, id=f"x{n}-{i}") if n % 2 else base.append(m))
            with lock:
                results.extend(local)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert len(results) == 2400
        assert len({r.message(r.leaf_id)["content"] for r in results if r.leaf_id}) == 2400
        for r in results[::29]:
            r._check()
            assert len(r) == 11
        base._check()
