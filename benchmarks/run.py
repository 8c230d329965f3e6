"""Run ptree's benchmark suite: every case beside its baselines, in one run.

    python benchmarks/run.py            # full run: results.json, plot.png, README tables
    python benchmarks/run.py --smoke    # small sizes, a few seconds, writes nothing (CI)

See ``benchmarks/README.md`` for the method and the latest figures.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from cases import Plan, append_cases, structure_cases  # noqa: E402
from cases_io import context_cases, history_cases, io_cases  # noqa: E402
from harness import Results, machine  # noqa: E402
from messages import load_pool  # noqa: E402

FULL = Plan(
    append=[1_000, 10_000, 100_000],
    append_big=[1_000_000],
    keep=[1_000, 5_000, 10_000, 50_000, 100_000],
    keep_pmap=[1_000, 5_000, 10_000, 20_000],
    memory=100_000,
    structure=[1_000, 10_000, 100_000, 1_000_000],
    depths=[1_000, 10_000, 100_000, 1_000_000],
    parts=[10_000, 100_000],
    repeat=5,
    repeat_big=3,
    load=100_000,
    context=[1_000, 10_000, 100_000],
)

SMOKE = Plan(
    append=[100, 1_000],
    append_big=[],
    keep=[100, 1_000],
    keep_pmap=[100, 1_000],
    memory=1_000,
    structure=[100, 1_000],
    depths=[100, 1_000],
    parts=[1_000],
    repeat=1,
    repeat_big=1,
    load=1_000,
    context=[100, 1_000],
)

README = HERE / "README.md"
START, END = "<!-- results:start -->", "<!-- results:end -->"


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a / b


def _target(
    r: Results, case: str, target: str, value: float | None, limit: float, fmt: str = "{:.2f}x"
) -> None:
    r.targets.append(
        {
            "case": case,
            "target": target,
            "measured": "not measured" if value is None else fmt.format(value),
            "ok": None if value is None or limit == float("inf") else value <= limit,
        }
    )


def evaluate(r: Results) -> None:
    """Check the issue's targets against this run's medians."""
    r.targets.clear()
    c = r.cases
    ap = c.get("append")
    big = max(ap.series["ptree"]) if ap else 0
    n5 = 100_000 if ap and 100_000 in ap.series["ptree"] else big
    if ap:
        _target(
            r,
            f"append, N = {n5:,}",
            "<= 1.0x (b) deepcopy",
            _ratio(ap.get("ptree", n5), ap.get("(b) deepcopy", n5)),
            1.0,
        )
        _target(
            r,
            f"append, N = {n5:,}",
            "<= 6x (a) floor",
            _ratio(ap.get("ptree", n5), ap.get("(a) floor", n5)),
            6.0,
        )
    keep = c.get("append_keep")
    if keep:
        pts = keep.series["ptree"]
        hi = 50_000 if 50_000 in pts else max(pts)
        _target(
            r,
            f"append, every version kept: N = {hi:,} vs {min(pts):,}",
            "<= 2x (flat)",
            _ratio(pts[hi], pts[min(pts)]),
            2.0,
        )
        pm = keep.series.get("(c) pmap", {})
        if len(pm) > 1:
            _target(
                r,
                f"  (c) pmap, same: N = {max(pm):,} vs {min(pm):,}",
                "(for contrast)",
                _ratio(pm[max(pm)], pm[min(pm)]),
                float("inf"),
            )
    mem = r.facts.get("memory")
    if mem:
        for who in ("ptree", "ptree in a History"):
            _target(
                r,
                f"memory per kept version ({who}), N = {mem['n']:,}",
                "<= 1,536 B beyond the message",
                mem["bytes_per_version"].get(who),
                1536.0,
                "{:.0f} B",
            )
    cp = c.get("current_path")
    if cp:
        d = 10_000 if 10_000 in cp.series["ptree"] else max(cp.series["ptree"])
        _target(
            r,
            f"current_path, depth {d:,}",
            "<= 2x the floor's walk",
            _ratio(cp.get("ptree", d), cp.get("(a) floor", d)),
            2.0,
        )
    mv = c.get("move_to")
    if mv:
        pts = mv.series["ptree"]
        hi = max(pts)
        _target(
            r,
            f"move_to, N = {hi:,}",
            "<= 3x a dict lookup + new value",
            _ratio(pts[hi], mv.get("dict lookup + new value", hi)),
            3.0,
        )
        # Random lookups in a big heap miss the caches, a dict's as much as ptree's:
        # O(log n) shows as ptree's cost growing no faster than a dict lookup's.
        ref = mv.series.get("dict lookup + new value", {})
        lo = min(pts)
        growth = _ratio(_ratio(pts[hi], ref.get(hi)), _ratio(pts[lo], ref.get(lo)))
        _target(
            r,
            f"move_to, N = {hi:,} vs {lo:,}, relative to the dict lookup",
            "O(log n): <= 2x",
            growth,
            2.0,
        )
    ch = c.get("children")
    if ch:
        pts = ch.series["ptree"]
        _target(
            r,
            f"children (10), N = {max(pts):,} vs {min(pts):,}",
            "O(children): <= 2x",
            _ratio(pts[max(pts)], pts[min(pts)]),
            2.0,
        )
    bc = c.get("build_context")
    if bc:
        pts = bc.series["ptree"]
        d = 100_000 if 100_000 in pts else max(pts)
        _target(
            r,
            f"build_context, depth {d:,}",
            "<= 2x a bare walk of the path (issue 26)",
            _ratio(pts[d], bc.get("bare walk of the path", d)),
            2.0,
        )
        _target(
            r,
            f"build_context with a compaction, depth {d:,}",
            "<= 2x a bare walk of the path (issue 26)",
            _ratio(bc.get("ptree, with a compaction", d), bc.get("bare walk of the path", d)),
            2.0,
        )
    ld = c.get("load")
    if ld:
        pts = ld.series["ptree.load"]
        n = max(pts)
        _target(
            r,
            f"load, {n:,} entries",
            "<= 2.5x bare json.loads",
            _ratio(pts[n], ld.get("(d) json.loads", n)),
            2.5,
        )
        pi = ld.get("(e) Pi SessionManager.open", n)
        _target(
            r,
            f"load, {n:,} entries",
            "ratio to Pi's loader (report)",
            _ratio(pts[n], pi),
            float("inf"),
        )


def update_readme(r: Results) -> None:
    """Put this run's tables between the markers of ``benchmarks/README.md``."""
    if not README.exists():
        return
    text = README.read_text()
    if START not in text or END not in text:
        return
    head, rest = text.split(START, 1)
    _old, tail = rest.split(END, 1)
    m = r.machine
    body = [
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['os']}; Python {m['python']}; "
        f"pyrsistent {m.get('pyrsistent', '?')}; Node.js {m.get('node', 'absent')}.  ",
        f"Messages: {r.facts['pool']}.",
        "",
        "### Targets",
        "",
        r.target_table(),
        "",
        "### Where the time of `append` goes",
        "",
        _parts_table(r),
        "",
        "### The garbage collector's share of append",
        "",
        _gc_table(r),
        "",
        "### Every case",
        "",
        r.tables(),
    ]
    README.write_text(head + START + "\n".join(body) + "\n" + END + tail)


def _gc_table(r: Results) -> str:
    share: dict[str, dict[str, list[float]]] = r.facts.get("gc_share", {})
    if not share:
        return "(not measured)"
    rows = [
        "CPU µs per append (real messages; one run each), and the part of it "
        "spent in CPython's cyclic garbage collector (measured with `gc.callbacks`).",
        "",
        "| who | N | µs per append | of which the collector |",
        "| --- | ---: | ---: | ---: |",
    ]
    for who, by_n in share.items():
        for n, (total, in_gc) in by_n.items():
            rows.append(f"| {who} | {int(n):,} | {total * 1e6:.2f} | {in_gc * 1e6:.2f} |")
    return "\n".join(rows)


def _parts_table(r: Results) -> str:
    parts: dict[str, dict[str, float]] = r.facts.get("append_parts", {})
    if not parts or "n" in parts:
        return "(not measured)"
    sizes = sorted(parts, key=int)
    rows = [
        "µs per append of real messages, each step timed alone over N appends (medians "
        "of 3).  At N = 10^5 every step that creates objects also pays the collector's "
        "full collections (see the next table); at 10^4 it hardly runs.",
        "",
        "| step | " + " | ".join(f"N = {int(n):,}" for n in sizes) + " |",
        "| --- |" + " ---: |" * len(sizes),
    ]
    for name in parts[sizes[0]]:
        cells = [f"{parts[n][name] * 1e6:.3f}" for n in sizes]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument(
        "--smoke", action="store_true", help="tiny sizes, one run each, nothing written (for CI)"
    )
    ap.add_argument(
        "--only",
        nargs="*",
        default=None,
        help="run only these groups (append, structure), merging into "
        "the results.json already there",
    )
    ap.add_argument("--no-plot", action="store_true", help="skip the plot")
    args = ap.parse_args(argv)
    plan = SMOKE if args.smoke else FULL
    if not args.smoke and not args.no_plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            ap.error("the plot needs matplotlib: pip install -e '.[bench]' (or --no-plot)")
    pool = load_pool()
    out = HERE / "results.json"
    if args.only is not None and out.exists() and not args.smoke:
        r = Results.load(out)
        r.machine = machine()
    else:
        r = Results("smoke" if args.smoke else "full", machine())
    r.facts["pool"] = f"{pool.source}, {pool.mean_json_bytes:,.0f} bytes of JSON each on average"
    print(f"ptree benchmarks ({r.mode}); messages: {r.facts['pool']}", flush=True)
    groups = {
        "append": append_cases,
        "history": history_cases,
        "structure": structure_cases,
        "context": context_cases,
        "io": io_cases,
    }
    t0 = time.perf_counter()
    for name, fn in groups.items():
        if args.only is None or name in args.only:
            fn(r, pool, plan)
    evaluate(r)
    print()
    print(r.target_table())
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    if args.smoke:
        return 0
    r.save(out)
    update_readme(r)
    if not args.no_plot:
        r.plot(HERE / "plot.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
