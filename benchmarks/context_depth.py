"""build_context at depth N against a bare walk of the path, for one or more checkouts.

    python benchmarks/context_depth.py [--depths 10000,100000] [--rounds 3] [CHECKOUT ...]

Runs ``cases_io.context_cases`` (the case behind run.py's "build_context, depth"
rows) in a fresh interpreter per checkout and round, the checkouts taking turns, and
prints for each the ratio of ``build_context`` (without and with a compaction) to the
bare walk measured in the same process.  A CHECKOUT is a folder holding ``ptree/``
(with its C extensions built, as ``pip install -e .`` leaves them); by default this
work tree.  Issue 26's target: at most 2x at depth 10^5.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys
sys.path.insert(0, {bench!r}); sys.path.insert(0, {root!r})
from cases import Plan
from cases_io import context_cases
from harness import Results
from messages import load_pool
import ptree
assert ptree.__file__.startswith({root!r}), ptree.__file__
depths = {depths!r}
plan = Plan(append=[], append_big=[], keep=[], keep_pmap=[], memory=0, structure=[],
            depths=[], parts=[], repeat=5, repeat_big=3, load=0, context=depths)
r = Results("context", {{}})
context_cases(r, load_pool(), plan)
bc = r.cases["build_context"]
print(json.dumps({{d: [bc.get(who, d) for who in {who!r}] for d in depths}}))
"""

WHO = ("ptree", "ptree, with a compaction", "bare walk of the path")


def measure(checkout: str, depths: list[int]) -> dict[int, dict[str, float]]:
    """Seconds per ``build_context`` call (plain, with a compaction) and per bare walk of
    the path, at each depth, in one fresh interpreter running ``checkout``'s ptree."""
    root = str(Path(checkout).resolve())
    code = CHILD.format(bench=str(HERE), root=root, depths=depths, who=WHO)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, check=True, capture_output=True, text=True
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return {int(d): dict(zip(WHO, times, strict=True)) for d, times in got.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("checkouts", nargs="*", default=[str(HERE.parent)])
    ap.add_argument("--depths", default="10000,100000")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    depths = [int(d) for d in args.depths.split(",")]
    got: dict[str, list[dict[int, list[float]]]] = {c: [] for c in args.checkouts}
    for _ in range(args.rounds):
        for checkout in args.checkouts:
            times = measure(checkout, depths)
            walks = {d: t["bare walk of the path"] for d, t in times.items()}
            got[checkout].append({d: [t[w] / walks[d] for w in WHO[:2]] for d, t in times.items()})
    print(f"build_context / bare walk, medians of {args.rounds} fresh processes each")
    print("| checkout | depth | plain | with a compaction | runs (plain) |")
    print("| --- | ---: | ---: | ---: | --- |")
    for checkout, runs in got.items():
        for d in depths:
            plain = [run[d][0] for run in runs]
            compacted = [run[d][1] for run in runs]
            print(
                f"| {checkout} | {d:,} | {statistics.median(plain):.2f}x "
                f"| {statistics.median(compacted):.2f}x "
                f"| {', '.join(f'{x:.2f}' for x in plain)} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
