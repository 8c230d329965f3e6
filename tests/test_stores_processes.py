"""Stores shared by many processes: concurrent ``update``s lose nothing, and a process
killed in the middle of saves leaves a store that loads to some saved version."""

from __future__ import annotations

import functools
import multiprocessing
import os
import random
import signal
import time
from collections import Counter
from typing import Any

from ptree import SessionHeader, SessionTree, stores

TS = "2026-01-01T00:00:00.000Z"
WORKERS = 8
UPDATES = 100

# fork: the children start at once, with ptree already imported (the store each one
# opens is its own: nothing open is carried across the fork).
FORK = multiprocessing.get_context("fork")


def fixed_clock() -> str:
    return TS


def base(session_id: str) -> SessionTree:
    header = SessionHeader(id=session_id, timestamp=TS, cwd="/work")
    return SessionTree(header=header, clock=fixed_clock).append(
        {"role": "user", "content": "start"}
    )


def add(text: str, tree: SessionTree) -> SessionTree:
    return tree.append({"role": "user", "content": text})


def updater(url: str, session_id: str, worker: int, go: Any) -> None:
    go.wait()
    with stores.open(url) as store:
        for j in range(UPDATES):
            store.update(session_id, functools.partial(add, f"w{worker}-{j}"), attempts=1000)


class TestConcurrentUpdates:
    def test_eight_processes_lose_no_update(self, shared_store_url: str) -> None:
        """8 processes x 100 updates of one session: exactly 800 entries more, each
        once, each process's in its own order, all on one path."""
        if shared_store_url.startswith("jsonl:"):
            # The locking is the same without fsync; waiting ~5 disk flushes per save
            # would make this test take a minute on CI's disk (the kill test below
            # runs with fsync).
            shared_store_url += "?fsync=false"
        with stores.open(shared_store_url) as store:
            store.save(base("s1"))
        go = FORK.Event()
        procs = [
            FORK.Process(target=updater, args=(shared_store_url, "s1", w, go))
            for w in range(WORKERS)
        ]
        for p in procs:
            p.start()
        go.set()
        for p in procs:
            p.join(120)
        assert [p.exitcode for p in procs] == [0] * WORKERS
        with stores.open(shared_store_url) as store:
            tree = store.load("s1")
        texts = [m["content"] for m in tree.current_path()]
        assert len(tree) == 1 + WORKERS * UPDATES
        assert len(texts) == len(tree)  # one chain: every update grew the latest value
        counts = Counter(texts[1:])
        assert set(counts.values()) == {1}
        assert set(counts) == {f"w{w}-{j}" for w in range(WORKERS) for j in range(UPDATES)}
        for w in range(WORKERS):
            mine = [t for t in texts if t.startswith(f"w{w}-")]
            assert mine == [f"w{w}-{j}" for j in range(UPDATES)]


def version(session_id: str, k: int) -> SessionTree:
    """The k-th version the saver writes: k // 2 + 1 entries, leaf moved to e1 on odd k."""
    tree = base(session_id)
    for i in range(k // 2):
        tree = add(f"entry {i} " + "x" * 2000, tree)
    return tree.move_to("e1") if k % 2 else tree


def saver(url: str, session_id: str, saving: Any) -> None:
    # Goes on from the stored version; the parent kills this process at a random moment
    # after it has said it is saving.
    with stores.open(url) as store:
        try:
            tree = store.load(session_id).with_config(clock=fixed_clock)
        except stores.SessionNotFoundError:
            tree = store.save(base(session_id))
        k = version_number(tree)
        saving.set()
        while True:
            k += 1
            tree = store.save(next_version(tree, k))


def version_number(tree: SessionTree) -> int:
    """Which version ``tree`` is (see :func:`version`)."""
    n = len(tree)
    return 2 * (n - 1) + (1 if tree.leaf_id == "e1" and n > 1 else 0)


def next_version(tree: SessionTree, k: int) -> SessionTree:
    """Version k made from version k - 1, as a writer would: a leaf move or an append."""
    if k % 2:
        return tree.move_to("e1")
    return add(f"entry {k // 2 - 1} " + "x" * 2000, tree.move_to(tree.ids()[-1]))


class TestKilledWriters:
    TRIALS = 50

    def test_a_killed_saver_leaves_a_saved_version(self, shared_store_url: str) -> None:
        """SIGKILL at random moments of a stream of saves of one session (50 trials,
        each going on from where the last was killed): the session always loads to
        exactly one of the saved versions, and the next saver goes on from it."""
        rng = random.Random(15)
        seen: list[int] = []
        for _ in range(self.TRIALS):
            saving = FORK.Event()
            proc = FORK.Process(target=saver, args=(shared_store_url, "s1", saving))
            proc.start()
            assert saving.wait(60), "the saver did not start"
            time.sleep(rng.uniform(0.0, 0.05))
            assert proc.pid is not None
            os.kill(proc.pid, signal.SIGKILL)
            proc.join()
            with stores.open(shared_store_url) as store:
                try:
                    tree = store.load("s1")
                except stores.SessionNotFoundError:
                    continue  # killed before its first save
            k = version_number(tree)
            assert tree == version("s1", k)
            seen.append(k)
        assert seen == sorted(seen), "a later load never goes back to an older version"
        # A sanity check that the kills are spread (not all before the first save):
        # how far each saver gets depends on how busy the machine is.
        assert len(set(seen)) > 5, "the kills should land at many points of the stream"


def test_the_saved_versions_are_the_expected_ones() -> None:
    """The stream of versions the saver makes is the list the kill test checks against."""
    tree = base("x")
    for k in range(1, 9):
        tree = next_version(tree, k)
        assert tree == version("x", k)
