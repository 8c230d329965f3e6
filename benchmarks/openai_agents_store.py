"""The event loop while ``TreeSession``s write to a store: does a ticker keep ticking?

    python benchmarks/openai_agents_store.py [URL ...] [--writers 4] [--items 50]

For each store URL (default: a new SQLite file and a new JSONL directory; add a
``postgresql://`` URL to include PostgreSQL, whose ptree tables are used as they are),
``--writers`` tasks on one loop each open their own ``TreeSession`` on one session and
add ``--items`` items one call at a time, while a ticker task sleeps 5 ms in a loop.
Reports the items kept (all must be), the wall time, and the ticker's gaps: median and
maximum.  Each URL runs twice in one process: the first run pays one-off first-use costs.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("OPENAI_API_KEY", "sk-not-used")  # nothing reaches the network

from ptree.integrations.openai_agents import TreeSession


async def one(url: str, session_id: str, writers: int, items: int) -> str:
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(0.005)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    async def writer(n: int) -> None:
        session = await TreeSession.connect(session_id, url)
        try:
            for i in range(items):
                await session.add_items([{"role": "user", "content": f"{n}-{i}"}])
        finally:
            await session.aclose()

    tick = asyncio.create_task(ticker())
    start = time.monotonic()
    await asyncio.gather(*(writer(n) for n in range(writers)))
    took = time.monotonic() - start
    done.set()
    await tick
    check = await TreeSession.connect(session_id, url)
    kept = len(await check.get_items())
    await check.aclose()
    return (
        f"| {url.split(':')[0]} | {kept}/{writers * items} | {took:.1f} s | {len(gaps)} | "
        f"{statistics.median(gaps) * 1000:.1f} ms | {max(gaps) * 1000:.0f} ms |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("urls", nargs="*", help="store URLs (default: SQLite and JSONL in /tmp)")
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--items", type=int, default=50)
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp()
    urls = args.urls or [f"sqlite://{tmp}/sessions.db", f"jsonl://{tmp}/sessions"]
    print("| store | items kept | wall | ticks | median gap | max gap |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for url in urls:
        for run in range(2):
            sid = f"ticker-{os.getpid()}-{run}"
            print(asyncio.run(one(url, sid, args.writers, args.items)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
