"""The cases: each times ptree and its baselines side by side, in the same run."""

from __future__ import annotations

import gc
import random
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from baselines import CopyTree, FloorTree, PmapTree, ValueLike
from harness import Results, Run, looped, per_op, side_by_side
from messages import Pool

import ptree
from ptree import SessionTree, freeze
from ptree import arrays as store_mod
from ptree import entries as entries_mod
from ptree import ids as ids_mod
from ptree import tree as tree_mod

__all__ = ["Plan", "append_cases", "structure_cases"]

FLOOR = "(a) floor"
COPY = "(b) deepcopy"
PMAP = "(c) pmap"


@dataclass
class Plan:
    """Sizes and repeats of one run (full or smoke)."""

    append: list[int]
    append_big: list[int]  # sizes where only the cheap designs run (no deepcopy)
    keep: list[int]
    keep_pmap: list[int]
    memory: int
    structure: list[int]
    depths: list[int]
    parts: list[int]
    repeat: int
    repeat_big: int
    load: int
    context: list[int]


# ---------------------------------------------------------------------- builders


def _ptree_chain(messages: list[Any]) -> SessionTree:
    t = SessionTree()
    for m in messages:
        t = t.append(m)
    return t


def _floor_chain(messages: list[Any]) -> FloorTree:
    f = FloorTree()
    for m in messages:
        f.append(m)
    return f


def _frozen(pool: Pool, n: int) -> list[Any]:
    """``n`` messages already frozen: the structural cases build with them, so that
    building a 10^6-entry tree costs neither minutes nor gigabytes."""
    frozen = [freeze(m) for m in pool.messages]
    k = len(frozen)
    return [frozen[i % k] for i in range(n)]


# ---------------------------------------------------------------------- append


def append_cases(r: Results, pool: Pool, plan: Plan) -> None:
    """append; append keeping every version; memory per kept version; append's parts."""
    case = r.case("append", "append (old versions dropped)")
    case.note = (
        "Each append is given a plain dict from the pool of real Pi messages: ptree "
        "freezes it, (b) deep-copies it, (a) and (c) keep the caller's dict as it is."
    )
    for i, n in enumerate(plan.append + plan.append_big):
        big = n in plan.append_big
        repeat = plan.repeat_big if n >= 100_000 else plan.repeat
        messages = pool.take(n)

        def run_ptree(messages: list[Any] = messages) -> tuple[int, object]:
            return len(messages), _ptree_chain(messages)

        def run_floor(messages: list[Any] = messages) -> tuple[int, object]:
            return len(messages), _floor_chain(messages)

        def run_copy(messages: list[Any] = messages) -> tuple[int, object]:
            c = CopyTree()
            for m in messages:
                c.append(m)
            return len(messages), c

        def run_pmap(messages: list[Any] = messages) -> tuple[int, object]:
            p = PmapTree()
            for m in messages:
                p = p.append(m)
            return len(messages), p

        runs: dict[str, Run] = {
            "ptree": run_ptree,
            FLOOR: run_floor,
            COPY: run_copy,
            PMAP: run_pmap,
        }
        if big:  # minutes per run for the copying and the pmap designs: left out
            del runs[COPY], runs[PMAP]
            repeat = 1
        case.add_all(n, side_by_side(runs, repeat, warmup=i == 0))
        del messages, runs

    keep = r.case("append_keep", "append, every version kept")
    keep.note = (
        "All N versions are kept in a list (an undo history), with the garbage collector "
        "on.  ptree's cost stays flat; a pmap per version is walked whole by the cyclic "
        "collector each time a collection examines it, so its cost grows with N."
    )
    for i, n in enumerate(sorted(set(plan.keep) | set(plan.keep_pmap))):
        messages = pool.take(n)
        repeat = plan.repeat if n <= 10_000 else plan.repeat_big

        def keep_ptree(messages: list[Any] = messages) -> tuple[int, object]:
            t = SessionTree()
            versions = [t]
            for m in messages:
                t = t.append(m)
                versions.append(t)
            return len(messages), versions

        def keep_pmap(messages: list[Any] = messages) -> tuple[int, object]:
            p = PmapTree()
            versions = [p]
            for m in messages:
                p = p.append(m)
                versions.append(p)
            return len(messages), versions

        if n in plan.keep:
            keep.add("ptree", n, per_op(keep_ptree, repeat, i == 0))
        if n in plan.keep_pmap:
            keep.add(PMAP, n, per_op(keep_pmap, 1 if n > 10_000 else repeat, i == 0))
        del messages

    _memory(r, pool, plan.memory)
    r.facts["append_parts"] = {}
    for n in plan.parts:
        _append_parts(r, pool, n)
    _gc_share(
        r,
        pool,
        sorted({plan.append[0], plan.parts[-1]}),
        sorted({plan.keep[0], plan.keep[-2] if len(plan.keep) > 1 else plan.keep[0]}),
    )


def _keep_all(messages: list[Any]) -> list[SessionTree]:
    t = SessionTree()
    versions = [t]
    for m in messages:
        t = t.append(m)
        versions.append(t)
    return versions


def _gc_share(r: Results, pool: Pool, sizes: list[int], keep_sizes: list[int]) -> None:
    """CPU time per append spent in the garbage collector: ptree and the floor with old
    versions dropped, and ptree keeping every version."""
    spent = [0.0]
    started = [0.0]

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.process_time()
        else:
            spent[0] += time.process_time() - started[0]

    out: dict[str, dict[str, list[float]]] = {}
    gc.callbacks.append(watch)
    try:
        builders: list[tuple[int, str, Callable[[list[Any]], object]]] = [
            (n, who, build)
            for n in sizes
            for who, build in (("ptree", _ptree_chain), (FLOOR, _floor_chain))
        ] + [(n, "ptree, every version kept", _keep_all) for n in keep_sizes]
        for n, who, build in builders:
            messages = pool.take(n)
            gc.collect()
            spent[0] = 0.0
            t0 = time.process_time()
            kept = build(messages)
            total = time.process_time() - t0
            del kept
            out.setdefault(who, {})[str(n)] = [total / n, spent[0] / n]
            print(
                f"  gc share           {who:<28} N={n:<9,} {total / n * 1e6:8.3f} µs, "
                f"of which the collector {spent[0] / n * 1e6:8.3f} µs",
                flush=True,
            )
    finally:
        gc.callbacks.remove(watch)
    r.facts["gc_share"] = out


def _traced(build: Callable[[], object]) -> int:
    """Bytes still allocated by ``build``'s result (tracemalloc), GC paused."""
    gc.collect()
    gc.disable()
    try:
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        kept = build()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        del kept
    finally:
        gc.enable()
    return after - before


def _memory(r: Results, pool: Pool, n: int) -> None:
    """Bytes retained per kept version, the messages not counted (frozen beforehand)."""
    frozen = _frozen(pool, n)

    def ptree_all() -> object:
        t = SessionTree()
        versions = [t]
        for m in frozen:
            t = t.append(m)
            versions.append(t)
        return versions

    def pmap_all() -> object:
        p = PmapTree()
        versions = [p]
        for m in frozen:
            p = p.append(m)
            versions.append(p)
        return versions

    def floor_one() -> object:
        return _floor_chain(frozen)

    def frozen_copies() -> object:
        return [freeze(m) for m in pool.take(n)]

    mem = {
        "ptree": _traced(ptree_all) / n,
        PMAP: _traced(pmap_all) / n,
        FLOOR + " (one mutable value)": _traced(floor_one) / n,
    }
    message_bytes = _traced(frozen_copies) / n
    r.facts["memory"] = {"n": n, "bytes_per_version": mem, "frozen_message_bytes": message_bytes}
    for who, b in mem.items():
        print(f"  memory             {who:<28} N={n:<9,} {b:12.0f} B per version", flush=True)
    print(f"  memory             a frozen message itself       {message_bytes:12.0f} B")


def _append_parts(r: Results, pool: Pool, n: int) -> None:
    """Each step of ``append`` timed alone, on ``n`` real messages, in µs per append."""
    messages = pool.take(n)
    frozen = [freeze(m) for m in messages]
    ks = list(range(1, n + 1))
    unchecked = ptree.MessageEntry.unchecked
    link = entries_mod._link  # the core builders' own step, timed alone
    utc_now = ids_mod.utc_now

    def make_entries() -> list[Any]:
        out: list[Any] = []
        prev = None
        for i, m in enumerate(frozen):
            e = unchecked(
                f"e{i + 1}", None if prev is None else prev.id, "2026-01-01T00:00:00.000Z", m
            )
            link(e, prev, i)
            out.append(e)
            prev = e
        return out

    entries = make_entries()

    def p_id() -> tuple[int, object]:
        return n, [f"e{k}" for k in ks]

    def p_time() -> tuple[int, object]:
        return n, [utc_now() for _ in ks]

    def p_freeze() -> tuple[int, object]:
        return n, [freeze(m) for m in messages]

    def p_check() -> tuple[int, object]:
        ok = 0
        for m in frozen:
            if type(m) is ptree.FrozenDict and type(m.get("role")) is str:
                ok += 1
        return n, ok

    def p_entry() -> tuple[int, object]:
        out: list[Any] = []
        for m in frozen:
            out.append(unchecked("e1", "e0", "2026-01-01T00:00:00.000Z", m))
        return n, out

    def p_link() -> tuple[int, object]:
        prev = entries[0]
        for i, e in enumerate(entries):
            link(e, prev, i)
        return n, None

    def p_index() -> tuple[int, object]:
        s = store_mod.Store()
        for i, e in enumerate(entries):
            s.claim(i, e)
        return n, s

    def p_value() -> tuple[int, object]:
        s = store_mod.Store()
        new = SessionTree._new  # the core's own constructor, timed alone
        config = tree_mod._DEFAULT_CONFIG
        out = None
        for i, e in enumerate(entries):
            out = new(s, i, e, i, None, config)
        return n, out

    def p_whole_frozen() -> tuple[int, object]:
        return n, _ptree_chain(frozen)

    def p_whole() -> tuple[int, object]:
        return n, _ptree_chain(messages)

    def p_floor() -> tuple[int, object]:
        return n, _floor_chain(messages)

    parts: dict[str, float] = {}
    for name, run in [
        ("id (f-string)", p_id),
        ("timestamp (utc_now)", p_time),
        ("protect the message (freeze)", p_freeze),
        ("check the message", p_check),
        ("entry construction", p_entry),
        ("links (parent, depth, seq)", p_link),
        ("store indexing (claim)", p_index),
        ("the new value (_new)", p_value),
        ("whole append, message already frozen", p_whole_frozen),
        ("whole append, plain dict", p_whole),
        ("the floor's append, for scale", p_floor),
    ]:
        parts[name] = per_op(run, 3)
        print(f"  append part        {name:<40} N={n:<9,} {parts[name] * 1e6:8.3f} µs", flush=True)
    r.facts["append_parts"][str(n)] = parts


# ---------------------------------------------------------------------- structure


def structure_cases(r: Results, pool: Pool, plan: Plan) -> None:
    """move_to, current_path, children and common_ancestor on trees of each size."""
    rng = random.Random(6)
    move = r.case("move_to", "move_to (a random entry)")
    move.note = (
        "'dict lookup + new value' is one dict lookup and one six-field value "
        "built as ptree builds its trees: the least a persistent move_to costs."
    )
    path = r.case("current_path", "current_path (a chain)", x_label="depth", unit="per call")
    kids = r.case("children", "children (10 children)", unit="per call")
    kids.note = "(a) keeps no index of children (the chapter's design): it scans."
    anc = r.case("common_ancestor", "common_ancestor (distance N/4 each)", unit="per call")
    for n in plan.structure:
        frozen = _frozen(pool, n)
        t = _ptree_chain(frozen)
        f = _floor_chain(frozen)
        sample = [f"e{rng.randrange(1, n + 1)}" for _ in range(1000)]

        def ptree_moves(t: SessionTree = t, sample: list[str] = sample) -> tuple[int, object]:
            for i in sample:
                t.move_to(i)
            return len(sample), None

        def floor_moves(f: FloorTree = f, sample: list[str] = sample) -> tuple[int, object]:
            for i in sample:
                f.move_to(i)
            return len(sample), None

        by_id = dict(f.entries)
        store = object()  # a stand-in: the reference only carries it into each value

        def ref_moves(
            by_id: dict[str, Any] = by_id,
            sample: list[str] = sample,
            store: object = store,
            n: int = n,
        ) -> tuple[int, object]:
            make = ValueLike.make
            for i in sample:
                make(store, n, by_id[i], n, None, None)
            return len(sample), None

        move.add_all(
            n,
            side_by_side(
                {"ptree": ptree_moves, FLOOR: floor_moves, "dict lookup + new value": ref_moves},
                plan.repeat,
            ),
        )
        del t, f, by_id, store

        # children: a chain of n - 10 entries, then 10 children of its middle entry
        t = _ptree_chain(frozen[: n - 10])
        f = _floor_chain(frozen[: n - 10])
        mid = f"e{(n - 10) // 2}"
        for m in frozen[n - 10 :]:
            t = t.move_to(mid).append(m)
            f.move_to(mid)
            f.append(m)
        assert len(t.children(mid)) == len(f.children(mid)) == 11
        kids.add_all(
            n,
            side_by_side(
                {
                    "ptree": looped(partial(t.children, mid)),
                    FLOOR: looped(partial(f.children, mid)),
                },
                plan.repeat,
                warmup=False,
            ),
        )
        del t, f

        # common_ancestor: a trunk of n/2, two branches of n/4 from its end
        half, quarter = n // 2, n // 4
        t = _ptree_chain(frozen[:half])
        f = _floor_chain(frozen[:half])
        fork = t.leaf_id
        assert fork is not None
        ends: list[str] = []
        for _branch in range(2):
            t = t.move_to(fork)
            f.move_to(fork)
            for m in frozen[:quarter]:
                t = t.append(m)
                f.append(m)
            assert t.leaf_id is not None
            ends.append(t.leaf_id)
        a, b = ends
        assert t.common_ancestor(a, b) == f.common_ancestor(a, b) == fork
        anc.add_all(
            n,
            side_by_side(
                {
                    "ptree": looped(partial(t.common_ancestor, a, b)),
                    FLOOR: looped(partial(f.common_ancestor, a, b)),
                },
                plan.repeat,
                warmup=False,
            ),
        )
        del t, f, frozen

    for depth in plan.depths:
        frozen = _frozen(pool, depth)
        t = _ptree_chain(frozen)
        f = _floor_chain(frozen)
        assert t.current_path() == tuple(f.current_path())
        path.add_all(
            depth,
            side_by_side(
                {"ptree": looped(t.current_path), FLOOR: looped(f.current_path)},
                plan.repeat,
                warmup=False,
            ),
        )
        del t, f, frozen


def time_it(fn: Callable[[], object]) -> float:
    """Seconds of one call (for one-off steps such as building a file)."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0
