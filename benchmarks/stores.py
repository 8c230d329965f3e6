"""The stores' benchmarks (issue 15): incremental saves, loads, path loads, many writers.

    python benchmarks/stores.py           # full sizes (10^5 entries); prints the table
    python benchmarks/stores.py --smoke   # small sizes, a few seconds (CI); with
                                          # store_scale.py's cases (paging, search, prune)

PostgreSQL is measured when ``PTREE_BENCH_POSTGRES_URL`` (or
``PTREE_TEST_POSTGRES_URL``) names a server (its ptree tables are dropped first) (``eval
$(.ci/postgres start)`` starts a throwaway one).  Every figure is the median of several
runs, in wall time (the disk and the database server are part of the cost); each case
is timed beside its baseline in the same run, and the ratio is what is reported.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ptree
from ptree import SessionHeader, SessionTree, stores

TS = "2026-01-01T00:00:00.000Z"


def clock() -> str:
    return TS


def message(i: int) -> dict[str, object]:
    if i % 2:
        return {
            "role": "assistant",
            "content": [{"type": "text", "text": f"answer {i} " + "lorem ipsum " * 12}],
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": {"input": 120, "output": 80},
        }
    return {"role": "user", "content": f"question {i} " + "dolor sit amet " * 6}


def session(sid: str, n: int) -> SessionTree:
    tree = SessionTree(header=SessionHeader(id=sid, timestamp=TS, cwd="/bench"), clock=clock)
    for i in range(n):
        tree = tree.append(message(i))
    return tree


def deep_leaf_session(sid: str, n: int, depth: int) -> SessionTree:
    """n entries: a chain of ``depth`` (where the leaf is), then another root's chain."""
    tree = session(sid, depth).move_to(None)
    for i in range(n - depth):
        tree = tree.append(message(i))
    return tree.move_to(f"e{depth}")


def median_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def urls(tmp: Path) -> dict[str, str]:
    out = {"SQLite": f"sqlite://{tmp}/bench.db", "jsonl": f"jsonl://{tmp}/jsonl"}
    pg = os.environ.get("PTREE_BENCH_POSTGRES_URL") or os.environ.get("PTREE_TEST_POSTGRES_URL")
    if pg:
        import psycopg

        with psycopg.connect(pg, autocommit=True) as conn:
            conn.execute(
                "DROP TABLE IF EXISTS ptree_entries, ptree_sessions, ptree_schema,"
                " ptree_search, ptree_pruned"
            )
        out["PostgreSQL"] = pg
    return out


def incremental(url: str, sizes: list[int], saves: int, repeat: int) -> dict[int, float]:
    """Seconds per save of one more entry into a session of n entries.

    The sizes take turns, round after round, so a machine busy at one moment slows
    every size alike and the ratio stays honest."""
    per: dict[int, list[float]] = {n: [] for n in sizes}
    with stores.open(url) as store:
        trees = {n: store.save(session(f"inc-{n}", n)) for n in sizes}
        for _ in range(repeat):
            for n in sizes:
                tree = trees[n]
                start = time.perf_counter()
                for i in range(saves):
                    tree = store.save(tree.append(message(i)))
                per[n].append((time.perf_counter() - start) / saves)
                trees[n] = tree
    return {n: statistics.median(times) for n, times in per.items()}


def rewrite(url: str, n: int, repeat: int) -> float:
    """Seconds to write a whole session of n entries again (delete, save all)."""
    tree = session("rewrite", n)
    with stores.open(url) as store:
        store.save(tree)

        def again() -> None:
            store.delete("rewrite")
            store.save(tree)

        return median_time(again, repeat)


def loads(url: str, n: int, depth: int, repeat: int, tmp: Path) -> tuple[float, float, float]:
    """Seconds to load a session of n entries, its path (leaf at ``depth``), and
    ``ptree.load`` of the same session as a file (the three taking turns)."""
    tree = deep_leaf_session("load", n, depth)
    file = tmp / "load.jsonl"
    ptree.dump(tree, file, overwrite=True)  # one per store: the same file, written again
    with stores.open(url) as store:
        store.save(tree)
    del tree
    full: list[float] = []
    path: list[float] = []
    from_file: list[float] = []
    with stores.open(url) as store:  # a fresh object: nothing remembered
        for _ in range(repeat):
            full.append(median_time(lambda: store.load("load"), 1))
            path.append(median_time(lambda: store.load_path("load"), 5))
            from_file.append(median_time(lambda: ptree.load(file), 1))
        assert len(store.load_path("load")) == depth
    return statistics.median(full), statistics.median(path), statistics.median(from_file)


def _saver(url: str, worker: int, saves: int, go: object) -> None:
    go.wait()  # type: ignore[attr-defined]
    with stores.open(url) as store:
        tree = store.save(session(f"w{worker}", 1))
        for i in range(saves):
            tree = store.save(tree.append(message(i)))


def many_writers(url: str, procs: int, saves: int) -> float:
    """Saves per second of ``procs`` processes, each growing its own session."""
    ctx = multiprocessing.get_context("fork")
    go = ctx.Event()
    workers = [ctx.Process(target=_saver, args=(url, w, saves, go)) for w in range(procs)]
    for p in workers:
        p.start()
    time.sleep(0.2)
    start = time.perf_counter()
    go.set()
    for p in workers:
        p.join()
    assert all(p.exitcode == 0 for p in workers)
    return procs * saves / (time.perf_counter() - start)


class _Rows:
    """The results table, printed row by row as the cases finish."""

    def __init__(self) -> None:
        print("| case | target | measured |")
        print("| --- | --- | --- |", flush=True)

    def append(self, row: tuple[str, str, str]) -> None:
        print("| " + " | ".join(row) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="small sizes, for CI")
    args = parser.parse_args()
    small, big, mid = (100, 1_000, 300) if args.smoke else (1_000, 100_000, 10_000)
    repeat = 1 if args.smoke else 3
    saves = 20 if args.smoke else 200
    depth = 100
    rows = _Rows()
    tmp = Path(tempfile.mkdtemp(prefix="ptree-bench-"))
    try:
        for name, url in urls(tmp).items():
            inc = incremental(url, [small, mid, big], saves, repeat)
            rows.append(
                (
                    f"{name}: save of 1 more entry, {big:,} stored vs {small:,} stored",
                    "flat (<= 1.5x)",
                    f"{inc[big] / inc[small]:.2f}x ({inc[small] * 1e3:.2f} ms vs "
                    f"{inc[big] * 1e3:.2f} ms)",
                )
            )
            whole = rewrite(url, mid, repeat)
            rows.append(
                (
                    f"{name}: save of 1 more entry into {mid:,} vs writing all {mid:,} again",
                    "report",
                    f"{inc[mid] / whole:.5f}x ({inc[mid] * 1e3:.2f} ms vs {whole * 1e3:.0f} ms)",
                )
            )
            full, path, file_load = loads(url, big, depth, repeat, tmp)
            rows.append(
                (
                    f"{name}: load of {big:,} entries vs ptree.load of the file",
                    "<= 1.5x",
                    f"{full / file_load:.2f}x ({full * 1e3:.0f} ms vs {file_load * 1e3:.0f} ms)",
                )
            )
            rows.append(
                (
                    f"{name}: load_path (depth {depth}) vs full load, {big:,} entries",
                    "<= 0.05x",
                    f"{path / full:.4f}x ({path * 1e3:.2f} ms vs {full * 1e3:.0f} ms)",
                )
            )
            if name == "SQLite":
                one = many_writers(f"sqlite://{tmp}/writers.db", 1, saves)
                eight = many_writers(f"sqlite://{tmp}/writers8.db", 8, saves)
                rows.append(
                    (
                        "SQLite: 8 processes saving to one file, saves/s vs 1 process",
                        "report",
                        f"{eight / one:.2f}x ({eight:.0f}/s vs {one:.0f}/s)",
                    )
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.smoke:
        # Issue 25's cases (paging, search, prune) at small sizes; their full table
        # is benchmarks/store_scale.py's own.
        import store_scale

        store_scale.run(smoke=True, rows=rows)


if __name__ == "__main__":
    main()
