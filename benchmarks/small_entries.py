"""Many small entries: peak memory of ``ptree.load`` per entry; append against the floor.

    python benchmarks/small_entries.py [--entries 1000000] [--runs 2] [--append 100000]

Generates (once, cached in the system's temp folder) a linear session of small
messages (``{"role": "user", "content": "message N"}``, about 150 bytes of JSON a
line) and loads it in a fresh interpreter per run: CPU time, and peak resident memory
beyond an idle interpreter, per entry and per entry beyond its JSON bytes (issue #17's
"memory per entry beyond its JSON bytes").  ``--append N`` also times N appends of
real messages against the mutable floor (``cases.py``'s chains; medians of 5).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from harness import fresh  # noqa: E402

CASE = r"""
import resource, sys, ptree
import ptree.pi.reader  # the modules a load imports, in the idle interpreter too
case, path = sys.argv[1], sys.argv[2]
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
start = cpu()
if case == "load":
    tree = ptree.load(path)
print(cpu() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def generate(path: Path, n: int) -> None:
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(header, separators=(",", ":")) + "\n")
        parent = None
        for i in range(n):
            eid = f"{i:08x}"
            line = {
                "type": "message",
                "id": eid,
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:00.000Z",
                "message": {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": f"message {i}",
                },
            }
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
            parent = eid


def small_file(n: int) -> Path:
    """The session of ``n`` small entries, generated once and cached in the temp folder
    (written under another name and renamed: a reader never sees half a file)."""
    path = Path(tempfile.gettempdir()) / f"ptree-small-{n}.jsonl"
    if not path.exists():
        part = path.with_name(f"{path.name}.{os.getpid()}.part")
        generate(part, n)
        os.replace(part, path)
    return path


def run_case(case: str, path: Path) -> tuple[float, int]:
    """``load`` (or ``idle``) in a fresh interpreter: its CPU seconds and peak RSS in bytes."""
    out = fresh(
        [sys.executable, "-c", CASE, case, str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,  # python -c puts the working folder first on sys.path
    ).stdout.split()
    return float(out[0]), int(out[1]) * 1024


def append_times(n: int, runs: int = 5) -> tuple[list[float], list[float]]:
    """CPU seconds of ``n`` appends of real messages, each of ``runs`` runs: ptree's and
    the floor's, taking turns."""
    sys.path[:0] = [str(HERE), str(ROOT)]
    from cases import _floor_chain, _ptree_chain
    from messages import load_pool

    messages = load_pool().take(n)
    took: dict[str, list[float]] = {"ptree": [], "floor": []}
    for _ in range(runs):
        for name, chain in (("ptree", _ptree_chain), ("floor", _floor_chain)):
            gc.collect()
            start = time.process_time()
            kept = chain(messages)
            took[name].append(time.process_time() - start)
            del kept
    return took["ptree"], took["floor"]


def append_ratio(n: int) -> str:
    """The medians and each run's ratio, then each run's µs per append on both sides
    (so that a run's ratio can be told a slow ptree run or a fast floor run)."""
    ours, floors = append_times(n)
    p, f = statistics.median(ours) / n, statistics.median(floors) / n
    each = " ".join(f"{a / b:.1f}" for a, b in zip(ours, floors, strict=True))
    runs = ", ".join(
        f"{a / n * 1e6:.2f}/{b / n * 1e6:.2f}" for a, b in zip(ours, floors, strict=True)
    )
    return (
        f"append of real messages, N = {n:,}: ptree {p * 1e6:.2f} µs, "
        f"floor {f * 1e6:.2f} µs: {p / f:.1f}x the floor (each run: {each}; "
        f"µs ptree/floor: {runs})"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--entries", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--append", type=int, metavar="N", help="also time N appends")
    args = ap.parse_args(argv)
    path = small_file(args.entries)
    size, n = path.stat().st_size, args.entries
    idle = run_case("idle", path)[1]
    for _ in range(args.runs):
        took, peak = run_case("load", path)
        extra = peak - idle
        print(
            f"load of {n:,} small entries ({size / 1e6:.1f} MB, {size / n:.0f} B a line): "
            f"{took:.2f} s CPU, peak {extra / 1e6:.0f} MB beyond an idle interpreter = "
            f"{extra / n:.0f} B per entry, {(extra - size) / n:.0f} B beyond its JSON bytes"
        )
    if args.append:
        print(append_ratio(args.append))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
