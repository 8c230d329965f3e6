"""TreeSessionStore (the Claude Agent SDK's session store on ptree stores), issue 24 part 3.

    python benchmarks/claude_agent_store.py           # prints the table
    python benchmarks/claude_agent_store.py --smoke   # small sizes, a few seconds

PostgreSQL is measured when ``PTREE_BENCH_POSTGRES_URL`` (or ``PTREE_TEST_POSTGRES_URL``)
names a server (its ptree tables are dropped first).  Wall time, medians of 3 rounds; in
each round the cases compared take turns.  Records are synthetic Claude Code records
(a user prompt, an assistant text block with usage, a tool call and its result: 500 B
to 1 KB of JSON each), the SDK mirrors them in batches of 10.

Cases:

- one batch appended to a transcript of 100 entries vs one of 10,000 (flat?), and beside
  the SDK's own ``InMemorySessionStore`` (the floor: a list append), taking turns batch
  by batch, 20 batches a round;
- ``load`` of 10,000 entries vs ``json.loads`` of their JSONL lines (what the SDK's file
  path costs);
- the event loop while 100 batches are appended: the longest a 1 ms ticker waits, beside
  the same ticker while the loop only sleeps (what the shared machine itself costs);
- 4 processes appending to one transcript at once: batches per second vs 1 process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from claude_agent_sdk import InMemorySessionStore

from ptree.integrations.claude_agent import TreeSessionStore

BATCH = 10
KEY: Any = {"project_key": "-srv-bench", "session_id": "8d1c3f0e-1b7a-4c53-9a57-6f1e7c8b2d40"}


def record(i: int, tag: str = "") -> dict[str, Any]:
    """The i-th record of a synthetic transcript (uuid made unique by ``tag``)."""
    base = {
        "uuid": f"{tag}r{i}",
        "parentUuid": f"{tag}r{i - 1}" if i else None,
        "sessionId": KEY["session_id"],
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/srv/bench",
        "version": "2.1.0",
        "gitBranch": "main",
        "isSidechain": False,
        "userType": "external",
    }
    kind = i % 4
    if kind == 0:
        return {
            **base,
            "type": "user",
            "message": {
                "role": "user",
                "content": f"step {i}: " + "please look at the parser and the tests " * 3,
            },
        }
    if kind == 1:
        return {
            **base,
            "type": "assistant",
            "requestId": f"req{i}",
            "message": {
                "id": f"msg{i}",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "Reading the file first. " * 6}],
                "stop_reason": None,
                "usage": {
                    "input_tokens": 1200,
                    "output_tokens": 80,
                    "cache_read_input_tokens": 9000,
                    "cache_creation_input_tokens": 0,
                },
            },
        }
    if kind == 2:
        return {
            **base,
            "type": "assistant",
            "requestId": f"req{i - 1}",
            "message": {
                "id": f"msg{i - 1}",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{i}",
                        "name": "Read",
                        "input": {"file_path": "/srv/bench/parser.py"},
                    }
                ],
                "stop_reason": "tool_use",
            },
        }
    return {
        **base,
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": f"toolu_{i - 1}",
                    "content": "def parse(text):\n    ...\n" * 8,
                }
            ],
        },
        "toolUseResult": {"type": "text", "file": {"filePath": "/srv/bench/parser.py"}},
    }


def batches(n: int, tag: str = "") -> list[list[Any]]:
    records = [record(i, tag) for i in range(n)]
    return [records[i : i + BATCH] for i in range(0, n, BATCH)]


def median(xs: list[float]) -> float:
    return statistics.median(xs)


async def fill(store: Any, n: int, tag: str) -> None:
    for batch in batches(n, tag):
        await store.append(KEY, batch)


async def time_one_more(store: Any, tag: str) -> float:
    batch = batches(BATCH, tag)[0]
    start = time.perf_counter()
    await store.append(KEY, batch)
    return time.perf_counter() - start


def fresh_url(kind: str, d: Path, n: int) -> str:
    if kind == "sqlite":
        return f"sqlite://{d}/s{n}.db"
    url = os.environ.get("PTREE_BENCH_POSTGRES_URL") or os.environ["PTREE_TEST_POSTGRES_URL"]
    import psycopg

    # Every table of the current schema (a leftover search table would fail the open).
    tables = ("ptree_entries", "ptree_sessions", "ptree_schema", "ptree_search", "ptree_pruned")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {', '.join(tables)}")
    return url


async def append_cases(kind: str, d: Path, small: int, big: int, rounds: int) -> dict[str, float]:
    """Median time of one more batch: the two transcripts and the SDK's in-memory store
    take turns, batch by batch, so a busy moment of the machine slows each alike."""
    times: dict[str, list[float]] = {"small": [], "big": [], "memory": []}
    for r in range(rounds):
        async with (
            TreeSessionStore(fresh_url(kind, d, 2 * r)) as first,
            TreeSessionStore(first.url) as second,
        ):
            # Both transcripts in one database, under two session ids.
            small_key: Any = {**KEY, "session_id": f"small{r}"}
            big_key: Any = {**KEY, "session_id": f"big{r}"}
            memory = InMemorySessionStore()
            for ours, key, n in ((first, small_key, small), (second, big_key, big)):
                for batch in batches(n, f"{r}{n}"):
                    await ours.append(key, batch)
            for batch in batches(big, "m"):
                await memory.append(big_key, batch)
            contenders: tuple[tuple[str, Any, Any], ...] = (
                ("small", first, small_key),
                ("big", second, big_key),
                ("memory", memory, big_key),
            )
            for k in range(20):
                for name, store, key in contenders:
                    batch = batches(BATCH, f"{r}x{k}{name}")[0]
                    start = time.perf_counter()
                    await store.append(key, batch)
                    times[name].append(time.perf_counter() - start)
    return {k: median(v) for k, v in times.items()}


async def load_case(kind: str, d: Path, n: int, rounds: int) -> tuple[float, float]:
    url = fresh_url(kind, d, 100)
    async with TreeSessionStore(url) as store:
        await fill(store, n, "l")
    lines = "\n".join(json.dumps(r) for b in batches(n, "l") for r in b)
    ours, floor = [], []
    for _ in range(rounds):
        async with TreeSessionStore(url) as store:
            await store.list_subkeys(KEY)  # opens the store: not part of a load
            start = time.perf_counter()
            loaded = await store.load(KEY)
            ours.append(time.perf_counter() - start)
            assert loaded is not None
            assert len(loaded) == n
        start = time.perf_counter()
        parsed = [json.loads(x) for x in lines.split("\n")]
        floor.append(time.perf_counter() - start)
        assert len(parsed) == n
    return median(ours), median(floor)


async def ticker_case(kind: str, d: Path, n_batches: int, *, idle: bool = False) -> float:
    """The longest wait of a task ticking every 1 ms while batches are appended (or,
    with ``idle``, while the loop only sleeps as long: the machine's own share)."""
    url = fresh_url(kind, d, 200)
    worst = 0.0
    done = False

    async def tick() -> None:
        nonlocal worst
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            worst = max(worst, now - last - 0.001)
            last = now

    async with TreeSessionStore(url) as store:
        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0.01)
        for batch in batches(n_batches * BATCH, "t"):
            if idle:
                await asyncio.sleep(0.02)
            else:
                await store.append(KEY, batch)
        done = True
        await ticker
    return worst


def process_worker(url: str, w: int, n_batches: int, go: Any) -> None:
    async def work() -> None:
        async with TreeSessionStore(url) as store:
            for batch in batches(n_batches * BATCH, f"p{w}-"):
                await store.append(KEY, batch)

    go.wait()
    asyncio.run(work())


def processes_case(kind: str, d: Path, workers: int, n_batches: int) -> float:
    """Batches per second with ``workers`` processes appending to one transcript."""
    url = fresh_url(kind, d, 300 + workers)
    ctx = multiprocessing.get_context("fork")
    go = ctx.Event()
    procs = [
        ctx.Process(target=process_worker, args=(url, w, n_batches, go)) for w in range(workers)
    ]
    for p in procs:
        p.start()
    time.sleep(0.5)
    start = time.perf_counter()
    go.set()
    for p in procs:
        p.join()
    elapsed = time.perf_counter() - start
    assert all(p.exitcode == 0 for p in procs)

    async def count() -> int:
        async with TreeSessionStore(url) as store:
            loaded = await store.load(KEY)
            return len(loaded or [])

    assert asyncio.run(count()) == workers * n_batches * BATCH
    return workers * n_batches / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="small sizes (CI)")
    args = parser.parse_args()
    small, big, rounds = (20, 200, 1) if args.smoke else (100, 10_000, 3)
    kinds = ["sqlite"]
    if os.environ.get("PTREE_BENCH_POSTGRES_URL") or os.environ.get("PTREE_TEST_POSTGRES_URL"):
        kinds.append("postgresql")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for kind in kinds:
            a = asyncio.run(append_cases(kind, d, small, big, rounds))
            rows.append(
                (
                    f"{kind}: append of 10 entries, {big:,} stored vs {small:,} stored",
                    "flat (<= 1.5x)",
                    f"{a['big'] / a['small']:.2f}x ({a['big'] * 1e3:.2f} ms vs "
                    f"{a['small'] * 1e3:.2f} ms)",
                )
            )
            rows.append(
                (
                    f"{kind}: append of 10 entries vs the SDK's InMemorySessionStore",
                    "report",
                    f"{a['big'] / a['memory']:.0f}x ({a['big'] * 1e3:.2f} ms vs "
                    f"{a['memory'] * 1e6:.1f} µs)",
                )
            )
            ours, floor = asyncio.run(load_case(kind, d, big, rounds))
            rows.append(
                (
                    f"{kind}: load of {big:,} entries vs json.loads of their lines",
                    "report",
                    f"{ours / floor:.2f}x ({ours * 1e3:.0f} ms vs {floor * 1e3:.0f} ms)",
                )
            )
            n = 10 if args.smoke else 100
            worst = asyncio.run(ticker_case(kind, d, n))
            idle = asyncio.run(ticker_case(kind, d, n, idle=True))
            rows.append(
                (
                    f"{kind}: longest wait of a 1 ms ticker while {n} batches append "
                    "(vs the loop only sleeping)",
                    "<= 20 ms",
                    f"{worst * 1e3:.1f} ms (idle: {idle * 1e3:.1f} ms)",
                )
            )
            n_batches = 5 if args.smoke else 50
            one = processes_case(kind, d, 1, n_batches)
            four = processes_case(kind, d, 4, n_batches)
            rows.append(
                (
                    f"{kind}: 4 processes appending to one transcript, batches/s vs 1 process",
                    "report (nothing lost: checked)",
                    f"{four / one:.2f}x ({four:.0f}/s vs {one:.0f}/s)",
                )
            )
    print("| case | target | measured |")
    print("| --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
