"""The event loop while ``TreeSession``s write to a store: how late is a ticker task?

    python benchmarks/openai_agents_store.py [URL ...] [--writers 4] [--items 50]
        [--big 2000] [--before REV]

For each store URL (default: a new SQLite file, a new JSONL directory and ``pi:DIR``,
sessions in Pi files of their own, ``TreeSession(id, path)`` with ``fsync``; add a
``postgresql://`` URL to include PostgreSQL, whose ptree tables are used as they are),
two cases run on one loop while a ticker task sleeps 5 ms in a loop:

- ``4x50``: ``--writers`` tasks, each with its own ``TreeSession`` on one session, add
  ``--items`` items one call at a time (a Pi file: one task, the file has one writer);
- ``big``: one ``add_items`` call of ``--big`` items (with a tool call and its result
  every 10), then ``get_items``.

Each case runs with the session as it is now (its async methods await the async
store: :func:`ptree.stores.open_async`) and as it was at ``--before`` (default
``7a4360f``, the last commit whose session ran the blocking store in
``asyncio.to_thread``), that commit's module loaded from git beside the current one,
alternating, in one process.  Reports the items kept (all must be), the wall time, the
ticker's gaps (median and maximum: a gap over 5 ms is the loop's lateness) and the
most threads alive at a tick beyond those at the start.  Each URL first runs both once
unreported (first imports, first connections).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OPENAI_API_KEY", "sk-not-used")  # nothing reaches the network

from ptree.integrations import openai_agents as now  # noqa: E402


def module_at(rev: str) -> ModuleType:
    """``ptree.integrations.openai_agents`` as it was at ``rev``, beside today's (its
    relative imports resolve in today's package: it only uses what still exists)."""
    source = subprocess.run(
        ["git", "show", f"{rev}:ptree/integrations/openai_agents.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "openai_agents_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("ptree.integrations._before", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def big_items(n: int) -> list[dict[str, Any]]:
    """``n`` items of a chat: user text, and every 10th a tool call with its output."""
    out: list[dict[str, Any]] = []
    for i in range(n):
        if i % 10 == 9:
            out.append(
                {"type": "function_call", "call_id": f"c{i}", "name": "f", "arguments": "{}"}
            )
            out.append({"type": "function_call_output", "call_id": f"c{i}", "output": "ok"})
        else:
            out.append({"role": "user", "content": f"message {i} " + "x" * 200})
    return out[:n]


async def ticking(work: Callable[[], Awaitable[int]]) -> tuple[int, float, list[float], int]:
    """Run ``work`` while a ticker sleeps 5 ms in a loop: items kept, wall, gaps, and the
    most threads alive at a tick beyond those at the start."""
    gaps: list[float] = []
    done = asyncio.Event()
    start_threads = threading.active_count()
    peak = [start_threads]

    async def ticker() -> None:
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(0.005)
            now = time.monotonic()
            gaps.append(now - last)
            last = now
            peak[0] = max(peak[0], threading.active_count())

    tick = asyncio.create_task(ticker())
    start = time.monotonic()
    kept = await work()
    took = time.monotonic() - start
    done.set()
    await tick
    # No tick at all: the loop was held from start to end (a file written on it).
    return kept, took, gaps or [took], peak[0] - start_threads


async def opened(module: ModuleType, url: str, sid: str) -> Any:
    """The session ``sid`` in the store ``url``, or in a Pi file of ``sid`` in the
    directory ``url`` names as ``pi:DIR`` (fsync on, as by default)."""
    if url.startswith("pi:"):
        return module.TreeSession(sid, Path(url[3:]) / f"{sid}.jsonl")
    return await module.TreeSession.connect(sid, url)


async def writers(module: ModuleType, url: str, sid: str, n: int, items: int) -> int:
    async def writer(k: int) -> None:
        session = await opened(module, url, sid)
        try:
            for i in range(items):
                await session.add_items([{"role": "user", "content": f"{k}-{i}"}])
        finally:
            await session.aclose()

    await asyncio.gather(*(writer(k) for k in range(n)))
    check = await opened(module, url, sid)
    try:
        return len(await check.get_items())
    finally:
        await check.aclose()


async def big(module: ModuleType, url: str, sid: str, n: int) -> int:
    session = await opened(module, url, sid)
    try:
        await session.add_items(big_items(n))
        return len(await session.get_items())
    finally:
        await session.aclose()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("urls", nargs="*", help="store URLs (default: SQLite and JSONL in /tmp)")
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--items", type=int, default=50)
    ap.add_argument("--big", type=int, default=2000)
    ap.add_argument("--before", default="7a4360f", help="the commit to compare with")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp()
    urls = args.urls or [f"sqlite://{tmp}/sessions.db", f"jsonl://{tmp}/sessions", f"pi:{tmp}"]
    sessions = {"now": now, args.before: module_at(args.before)}
    print("| store | case | session | items kept | wall | ticks | median gap | max gap | threads |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    rows: list[dict[str, Any]] = []
    runs = 0  # each case its own session
    for url in urls:
        for reported in (False, True):
            for name, module in sessions.items():
                n = 1 if url.startswith("pi:") else args.writers  # a file has one writer
                cases: dict[str, tuple[int, Callable[[], Awaitable[int]]]] = {}
                for case, want in ((f"{n}x{args.items}", n * args.items), ("big", args.big)):
                    runs += 1
                    sid = f"bench-{os.getpid()}-{runs}"
                    work: Callable[[], Awaitable[int]] = (
                        functools.partial(big, module, url, sid, args.big)
                        if case == "big"
                        else functools.partial(writers, module, url, sid, n, args.items)
                    )
                    cases[case] = (want, work)
                for case, (want, work) in cases.items():
                    kept, took, gaps, threads = asyncio.run(ticking(work))
                    if not reported:
                        continue
                    row = {
                        "store": url.split(":")[0],
                        "case": case,
                        "session": name,
                        "kept": f"{kept}/{want}",
                        "wall_s": took,
                        "ticks": len(gaps),
                        "median_gap_ms": statistics.median(gaps) * 1000,
                        "max_gap_ms": max(gaps) * 1000,
                        "threads": threads,
                    }
                    rows.append(row)
                    print(
                        f"| {row['store']} | {case} | {name} | {row['kept']} | {took:.2f} s | "
                        f"{len(gaps)} | {row['median_gap_ms']:.1f} ms | "
                        f"{row['max_gap_ms']:.0f} ms | {threads} |",
                        flush=True,
                    )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
