"""The event loop while a store saves (issue 24 part 1): ``open_async`` vs the blocking store.

    python benchmarks/async_stores.py             # every store; PostgreSQL if configured
    python benchmarks/async_stores.py --smoke     # 10^3 entries, a few seconds

PostgreSQL is measured when ``PTREE_BENCH_POSTGRES_URL`` (or ``PTREE_TEST_POSTGRES_URL``)
names a server (its ptree tables are dropped first).

One task saves 10^4 entries in the pattern of an agent server: a session grown turn
by turn (1,000 saves of 5 entries each: a user message, an assistant message, tool
calls and results of about 200 bytes to 1 KB each) and one big save (an imported
session of 5,000 entries).  Meanwhile a ticker task on the same loop sleeps 1 ms in a
loop and records how late each wake-up is.  Each store is measured through
``await stores.open_async(url)`` and, as the baseline, through the blocking
``stores.open(url)`` called on the loop (what code without the async API does).
Reported: the ticker's worst and 99th-percentile lateness, and the saving task's
time.  The target: the worst lateness at most 20 ms with the async API.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptree import SessionHeader, SessionTree, stores

TS = "2026-01-01T00:00:00.000Z"


def message(i: int) -> dict[str, Any]:
    """The i-th message of a turn-by-turn session (user, assistant with a tool call,
    the tool's result, an answer)."""
    kind = i % 4
    if kind == 0:
        return {"role": "user", "content": f"step {i}: look at the parser and its tests " * 4}
    if kind == 1:
        return {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading the file first. " * 5},
                {"type": "toolCall", "id": f"c{i}", "name": "read", "arguments": {"p": "a.py"}},
            ],
        }
    if kind == 2:
        return {
            "role": "toolResult",
            "toolCallId": f"c{i - 1}",
            "toolName": "read",
            "content": [{"type": "text", "text": "def parse(text):\n    ...\n" * 20}],
            "isError": False,
        }
    return {"role": "assistant", "content": [{"type": "text", "text": "Done: it parses. " * 8}]}


def tree(sid: str) -> SessionTree:
    return SessionTree(header=SessionHeader(id=sid, timestamp=TS, cwd="/srv"), clock=lambda: TS)


def big(n: int) -> SessionTree:
    t = tree("imported")
    for i in range(n):
        t = t.append(message(i))
    return t


async def saves_async(store: Any, turns: int, per_turn: int, imported: SessionTree) -> None:
    t = tree("live")
    for turn in range(turns):
        for i in range(per_turn):
            t = t.append(message(turn * per_turn + i))
        t = await store.save(t)
        await asyncio.sleep(0)  # the request handler returns to the loop between turns
    await store.save(imported)


async def saves_blocking(store: Any, turns: int, per_turn: int, imported: SessionTree) -> None:
    t = tree("live")
    for turn in range(turns):
        for i in range(per_turn):
            t = t.append(message(turn * per_turn + i))
        t = store.save(t)
        await asyncio.sleep(0)
    store.save(imported)


async def measure(
    url: str, api: str, turns: int, per_turn: int, n_big: int, idle_seconds: float = 0.0
) -> dict[str, float]:
    imported = big(n_big)  # built before the clock starts: only saving is measured
    late: list[float] = []
    done = False

    async def tick() -> None:
        while not done:
            start = time.perf_counter()
            await asyncio.sleep(0.001)
            late.append(time.perf_counter() - start - 0.001)

    if api == "idle":  # the ticker alone, as long: what the machine itself costs
        ticker = asyncio.create_task(tick())
        await asyncio.sleep(idle_seconds)
        done = True
        await ticker
        return summary(late, idle_seconds)
    store: Any = await stores.open_async(url) if api == "async" else stores.open(url)
    try:
        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0.02)
        start = time.perf_counter()
        if api == "async":
            await saves_async(store, turns, per_turn, imported)
        else:
            await saves_blocking(store, turns, per_turn, imported)
        elapsed = time.perf_counter() - start
        done = True
        await ticker
    finally:
        if api == "async":
            await store.close()
        else:
            store.close()
    return summary(late, elapsed)


def summary(late: list[float], seconds: float) -> dict[str, float]:
    late.sort()
    return {
        "max": late[-1],
        "p99": late[int(len(late) * 0.99)],
        "median": statistics.median(late),
        "seconds": seconds,
    }


URLS = {
    "sqlite file": "sqlite://{d}/s{n}.db",
    "sqlite memory": "sqlite:///:memory:",
    "jsonl": "jsonl://{d}/j{n}",
}


def fresh(kind: str, d: Path, n: int) -> str:
    """A URL of an empty store of this kind (PostgreSQL: its sessions deleted)."""
    if kind in URLS:
        return URLS[kind].format(d=d, n=n)
    url = os.environ.get("PTREE_BENCH_POSTGRES_URL") or os.environ["PTREE_TEST_POSTGRES_URL"]
    with stores.open(url) as store:
        for summary in store.sessions():
            store.delete(summary.id)
    return url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="10^3 entries (CI)")
    parser.add_argument("--kinds", default="", help="comma-separated subset of the stores")
    args = parser.parse_args()
    turns, per_turn, n_big = (100, 5, 500) if args.smoke else (1000, 5, 5000)
    kinds = ["sqlite file", "sqlite memory", "jsonl"]
    if os.environ.get("PTREE_BENCH_POSTGRES_URL") or os.environ.get("PTREE_TEST_POSTGRES_URL"):
        kinds.append("postgresql")
    if args.kinds:
        kinds = [k for k in kinds if k in args.kinds.split(",")]
    total = turns * per_turn + n_big
    print(f"{total:,} entries saved: {turns:,} saves of {per_turn} and one of {n_big:,}")
    print("| store | API | ticker worst | ticker p99 | saving took |")
    print("| --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        n = 0
        for kind in kinds:
            took = 1.0
            for api in ("blocking", "async", "idle"):
                n += 1
                url = "" if api == "idle" else fresh(kind, d, n)
                r = asyncio.run(measure(url, api, turns, per_turn, n_big, took))
                took = r["seconds"]
                label = {
                    "blocking": "stores.open (baseline)",
                    "async": "stores.open_async",
                    "idle": "none: the ticker alone, as long (the machine)",
                }[api]
                print(
                    f"| {kind} | {label} | {r['max'] * 1e3:.1f} ms | {r['p99'] * 1e3:.2f} ms"
                    f" | {r['seconds']:.2f} s |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
