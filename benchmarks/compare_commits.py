"""Two commits of ptree side by side: append, load and build_context, in one run.

    python benchmarks/compare_commits.py BASE [NEW]      # NEW: the work tree (default)
    python benchmarks/compare_commits.py BASE NEW --cases provider_messages,payload

Each commit is checked out into a temporary git worktree (NEW may be ``.``, the work
tree as it is); every measurement runs in a fresh interpreter that imports ptree from
one checkout only (``PYTHONPATH``), and the two commits' runs alternate, so that drift
of the machine hits both alike.  Each case reports the median CPU time of its runs and
the ratio NEW / BASE (below 1.0: NEW is faster).  Messages are the benchmark pool of
real Pi messages (:mod:`messages`).  Only the public API is used, so any two commits
since the layout change can be compared (``ptree.load`` and ``ptree.build_context``
exist in both).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# One case per process; prints one JSON number: CPU seconds per operation.
CASE = r"""
import json, os, sys, time, gc
sys.path.insert(0, {bench!r})
from messages import load_pool
import ptree
n = {n}
pool = load_pool().take(n)
case = {case!r}
if case == "append":
    t = ptree.SessionTree()
    start = time.process_time()
    for m in pool:
        t = t.append(m)
    took = time.process_time() - start
    per = took / n
elif case in ("load", "build_context", "provider_messages", "payload"):
    t = ptree.SessionTree()
    for i, m in enumerate(pool):
        if i % 40 == 39 and t.leaf_id is not None:
            t = t.move_to(t.ids()[len(t) // 2])  # a branch now and then
        t = t.append(m)
    path = {path!r}
    if os.path.exists(path):  # the previous run's: dump no longer replaces a file
        os.remove(path)
    ptree.dump(t, path)
    del t
    gc.collect()
    if case == "load":
        start = time.process_time()
        ptree.load(path)
        per = time.process_time() - start
    elif case == "build_context":
        tree = ptree.load(path)
        start = time.process_time()
        for _ in range(20):
            ptree.build_context(tree)
        per = (time.process_time() - start) / 20
    elif case == "provider_messages":
        from ptree.context import to_provider_messages
        messages = ptree.build_context(ptree.load(path)).messages
        list(messages)  # every message read before the clock (lazy since issue 26)
        start = time.process_time()
        for _ in range(20):
            to_provider_messages(messages)
        per = (time.process_time() - start) / 20
    else:  # one body for each API pi-ai knows, from the same context
        from ptree.providers import payload
        context = ptree.build_context(ptree.load(path))
        list(context.messages)  # every message read before the clock (lazy since issue 26)
        apis = [("openai-completions", "openai", "gpt-5"),
                ("openai-responses", "openai", "gpt-5"),
                ("anthropic-messages", "anthropic", "claude-sonnet-4-5"),
                ("google-generative-ai", "google", "gemini-2.5-pro")]
        start = time.process_time()
        for api, provider, model in apis:
            payload(context, api=api, provider=provider, model=model)
        per = (time.process_time() - start) / len(apis)
print(json.dumps(per))
"""


def _checkout(commit: str, where: Path) -> Path:
    if commit == ".":
        return ROOT
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(where), commit],
        check=True,
    )
    return where


def _run(checkout: Path, case: str, n: int, tmp: Path) -> float:
    code = CASE.format(bench=str(HERE), n=n, case=case, path=str(tmp / f"{case}.jsonl"))
    # In the checkout's folder: ``python -c`` puts the working folder first on sys.path.
    env = dict(os.environ, PYTHONPATH=str(checkout))
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=checkout,
        check=True,
        capture_output=True,
        text=True,
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("base", help="the commit to compare against")
    ap.add_argument("new", nargs="?", default=".", help="the other commit ('.': work tree)")
    ap.add_argument("--runs", type=int, default=7, help="fresh processes per case and commit")
    ap.add_argument("-n", type=int, default=20_000, help="messages per tree")
    ap.add_argument(
        "--cases",
        default="append,load,build_context",
        help="comma-separated, of: append, load, build_context, provider_messages, payload",
    )
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        base = _checkout(args.base, tmp / "base")
        new = _checkout(args.new, tmp / "new")
        try:
            print(f"n = {args.n:,} real messages, {args.runs} fresh processes per cell")
            print(f"| case | {args.base[:10]} | {args.new[:10]} | ratio new/base |")
            print("| --- | ---: | ---: | ---: |")
            for case in args.cases.split(","):
                times: dict[str, list[float]] = {"base": [], "new": []}
                for _ in range(args.runs):
                    times["base"].append(_run(base, case, args.n, tmp))
                    times["new"].append(_run(new, case, args.n, tmp))
                b = statistics.median(times["base"])
                w = statistics.median(times["new"])
                unit, scale = ("µs", 1e6) if case == "append" else ("ms", 1e3)
                print(
                    f"| {case} | {b * scale:.2f} {unit} | {w * scale:.2f} {unit} | {w / b:.3f} |",
                    flush=True,
                )
        finally:
            for path in (base, new):
                if path != ROOT:
                    subprocess.run(
                        ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)],
                        check=False,
                    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
