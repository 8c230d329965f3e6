"""Growth: issue 26's cases at 10^3, 10^4 and 10^5 items, each beside its baseline.

    python benchmarks/growth.py             # full run: growth.json, growth.png, README table
    python benchmarks/growth.py --smoke     # 10^2 and 10^3, one run each, writes nothing (CI)
    python benchmarks/growth.py --only open,small --sizes 1000,10000 --no-plot

Each case of issue 26's table is measured at every size with the function of the
script that measures it at one size, so the method is the same: a Pi session of N
real messages (``big_session.py``: ``ptree.load`` + ``build_context`` against Pi 1.6
and Pi 0.73.1, its peak memory per file byte, ``ptree show`` against ``json.loads``,
each in a fresh interpreter or Node.js process, ``--runs`` times taking turns; wall
clock from after the imports), N small entries (``small_entries.py``: peak memory per
entry beside the entry's JSON bytes, fresh interpreters), N appends of real messages
against the mutable floor (``small_entries.append_times``, in this process), build_context
at depth N against a bare walk of the path (``context_depth.measure``, a fresh
interpreter per run) and the import of N lines of Claude Code and Codex (the real
fixtures repeated with renamed ids) and of N LibreChat messages against ``json.loads``
of the same bytes (``imports.py``, in this process).  The small-entry case is also
measured at 10^7 (``--small-big``) when the memory it would need (its measured cost per
entry at the largest size times 10^7, twice over) is available.

Every table gives, per size, the totals, ptree's ratio to each baseline and the cost per
item: linear growth shows as a flat cost per item.  A full run took 12 minutes on a
loaded two-core machine (load average 5-8) with the files cached in the temp folder;
the first run also generates them (the 10^5-message session and the 10^7 small entries,
1.7 GB in all: about 10 minutes more on that machine).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import textwrap
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import big_session  # noqa: E402
import context_depth  # noqa: E402
import imports  # noqa: E402
import small_entries  # noqa: E402
from harness import Panel, machine, plot_panels  # noqa: E402

from ptree.formats import claude_code, codex, librechat  # noqa: E402
from ptree.pi import SessionFileWarning  # noqa: E402

# The readers report what they leave out of the repeated fixtures (the same kinds at
# every size): the reporting runs, its printing is left out.
warnings.simplefilter("ignore", SessionFileWarning)

RSS_RESOLUTION = 4e6
"""Peak RSS beyond an idle interpreter below this many bytes is not measured: the idle
interpreter's peak includes memory its imports freed and the work then reuses."""
UNRESOLVED = "(< 4 MB)"

README = HERE / "README.md"
START, END = "<!-- growth:start -->", "<!-- growth:end -->"
CASES = ("open", "memory", "show", "small", "append", "context", "import")


@dataclass
class Growth:
    """One case: per size, each contender's total (seconds or bytes) and item count."""

    name: str
    title: str
    kind: str  # "time" (seconds) or "bytes"
    item: str  # what the cost is per: "message", "entry", "file byte", ...
    who: list[str]  # ptree first, then its baselines
    rows: dict[int, dict[str, tuple[float, float]]] = field(default_factory=dict)
    extra: dict[int, str] = field(default_factory=dict)
    extra_head: str = ""
    resolution: float = 0.0  # measured totals below it are not resolved (see RSS_RESOLUTION)
    given: tuple[str, ...] = ()  # contenders known, not measured (a file's bytes)

    def resolved(self, got: dict[str, tuple[float, float]], who: str) -> bool:
        return who in got and (who in self.given or got[who][0] >= self.resolution)

    def add(self, n: int, who: str, total: float, items: float) -> None:
        self.rows.setdefault(n, {})[who] = (total, items)
        print(f"  {self.name:<8} N={n:<10,} {who:<32} {self.per(total, items)}", flush=True)

    def per_item(self, total: float, items: float) -> float:
        """Microseconds (time) or bytes per item."""
        return total / items * (1e6 if self.kind == "time" else 1.0)

    def per(self, total: float, items: float) -> str:
        unit = "µs" if self.kind == "time" else "B"
        return f"{self.per_item(total, items):,.3g} {unit} per {self.item}"

    def table(self) -> str:
        unit = "µs" if self.kind == "time" else "B"
        main, rest = self.who[0], self.who[1:]
        head = ["N", *self.who, *(f"{main} / {o}" for o in rest)]
        head += [f"{w}, {unit} per {self.item}" for w in self.who]
        if self.extra_head:
            head.append(self.extra_head)
        out = [f"**{self.title}**", "", "| " + " | ".join(head) + " |"]
        out.append("|" + " ---: |" * len(head))
        for n in sorted(self.rows):
            got = self.rows[n]
            cells = [f"{n:,}"]
            cells += [_total(self.kind, got[w][0]) if w in got else "" for w in self.who]
            for o in rest:
                ok = self.resolved(got, main) and self.resolved(got, o)
                cells.append(f"{got[main][0] / got[o][0]:.2f}x" if ok else "")
            for w in self.who:
                resolved = self.resolved(got, w)
                cells.append(f"{self.per_item(*got[w]):,.3g}" if resolved else UNRESOLVED)
            if self.extra_head:
                cells.append(self.extra.get(n, "") if self.resolved(got, main) else UNRESOLVED)
            out.append("| " + " | ".join(cells) + " |")
        return "\n".join(out)

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "kind": self.kind,
            "item": self.item,
            "who": self.who,
            "rows": {str(n): {w: list(v) for w, v in got.items()} for n, got in self.rows.items()},
            "extra": {str(n): v for n, v in self.extra.items()},
        }


def _total(kind: str, v: float) -> str:
    return f"{v:.3f} s" if kind == "time" else f"{v / 1e6:,.1f} MB"


# ------------------------------------------------------------------ the cases


def sessions(out: dict[str, Growth], sizes: list[int], runs: int, only: set[str]) -> None:
    """load + build_context against Pi, its memory, and ``ptree show``: fresh processes."""
    pis = big_session.pi_packages()
    pi_names = sorted(pis, key=lambda name: name != "Pi 1.6")  # Pi 1.6 first
    opened = Growth(
        "open",
        "ptree.load + build_context against Pi's SessionManager.open + buildSessionContext "
        "(wall clock)",
        "time",
        "message",
        ["ptree.load + build_context", *pi_names],
    )
    memory = Growth(
        "memory",
        "Peak memory of load + build_context beyond an idle process, per file byte",
        "bytes",
        "file byte",
        ["ptree.load + build_context", *pi_names[:1]],
        resolution=RSS_RESOLUTION,
    )
    shown = Growth(
        "show",
        "ptree show (in process, after the imports) against json.loads of every line (wall clock)",
        "time",
        "message",
        ["ptree show", "json.loads"],
    )
    py_cases = ["ptree.load + build_context", "ptree show", "json.loads"]
    if "show" not in only:
        py_cases = py_cases[:1]
    with tempfile.TemporaryDirectory() as d:
        script = big_session.node_script(Path(d))
        first = big_session.session_file(sizes[0])  # the idle processes read nothing
        idle_py = big_session.run_python("idle", first)["rss"]
        idle_node = {
            name: big_session.run_node(pis[name], first, True, script)["rss"] for name in pi_names
        }
        for n in sizes:
            path = big_session.session_file(n)
            size = path.stat().st_size
            wall: dict[str, list[float]] = {c: [] for c in [*py_cases, *pi_names]}
            rss: dict[str, list[float]] = {c: [] for c in [*py_cases, *pi_names]}
            for _ in range(runs):
                for case in py_cases:
                    got = big_session.run_python(case, path)
                    wall[case].append(got["wall"])
                    rss[case].append((got["rss"] - idle_py) * 1024)
                for name in pi_names:
                    got = big_session.run_node(pis[name], path, False, script)
                    wall[name].append(got["wall"])
                    rss[name].append((got["rss"] - idle_node[name]) * 1024)
            for who in opened.who:
                opened.add(n, who, statistics.median(wall[who]), n)
            if "memory" in only:
                for who in memory.who:
                    memory.add(n, who, statistics.median(rss[who]), size)
            if "show" in only:
                for who in shown.who:
                    shown.add(n, who, statistics.median(wall[who]), n)
    for kept in (opened, memory, shown):
        if kept.name in only:
            out[kept.name] = kept


def small(out: dict[str, Growth], sizes: list[int], runs: int, big: int) -> None:
    """Peak memory of loading N small entries, beside their JSON bytes: fresh processes.

    ``big`` (10^7) is added when the memory it would need is available (see
    :func:`_fits`).
    """
    case = Growth(
        "small",
        "Small entries: peak memory of ptree.load beyond an idle interpreter, beside the "
        "entries' JSON bytes",
        "bytes",
        "entry",
        ["ptree.load", "its JSON"],
        extra_head="beyond its JSON, B per entry",
        resolution=RSS_RESOLUTION,
        given=("its JSON",),
    )
    idle = small_entries.run_case("idle", small_entries.small_file(sizes[0]))[1]
    chosen = list(sizes)
    for n in chosen:  # grows by ``big`` at the last size, if it fits
        path = small_entries.small_file(n)
        peak = statistics.median(small_entries.run_case("load", path)[1] for _ in range(runs))
        size = path.stat().st_size
        case.add(n, "ptree.load", peak - idle, n)
        case.add(n, "its JSON", size, n)
        case.extra[n] = f"{(peak - idle - size) / n:,.0f}"
        if n == sizes[-1] and big > n:
            need = 2 * (peak - idle + size) / n * big
            if _fits(need):
                print(f"  small: {big:,} entries need ~{need / 1e9:.1f} GB: measuring", flush=True)
                chosen.append(big)
            else:
                print(f"  small: {big:,} entries need ~{need / 1e9:.1f} GB: skipped", flush=True)
    out[case.name] = case


def _fits(need: float) -> bool:
    """Whether ``need`` bytes are available now (MemAvailable of /proc/meminfo)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024 > need
    except OSError:
        pass
    return False


def append(out: dict[str, Growth], sizes: list[int], runs: int) -> None:
    """N appends of real messages against the mutable floor (CPU time, this process)."""
    case = Growth(
        "append",
        "Append of N real messages against the mutable floor (CPU time)",
        "time",
        "append",
        ["ptree append", "mutable floor"],
    )
    for n in sizes:
        ours, floor = small_entries.append_times(n, runs)
        case.add(n, "ptree append", statistics.median(ours), n)
        case.add(n, "mutable floor", statistics.median(floor), n)
    out[case.name] = case


def context(out: dict[str, Growth], sizes: list[int], runs: int) -> None:
    """build_context at depth N against a bare walk of the path (fresh interpreters)."""
    case = Growth(
        "context",
        "build_context of a chain of depth N against a bare walk of its path (CPU time)",
        "time",
        "entry",
        ["build_context", "bare walk of the path"],
    )
    got = [context_depth.measure(str(ROOT), sizes) for _ in range(runs)]
    for n in sizes:
        for who, key in zip(case.who, ("ptree", "bare walk of the path"), strict=True):
            case.add(n, who, statistics.median(run[n][key] for run in got), n)
    out[case.name] = case


def imported(out: dict[str, Growth], sizes: list[int], runs: int) -> None:
    """Import of N lines (Claude Code, Codex) or N messages (LibreChat) against json.loads."""
    formats: list[tuple[str, Callable[[Path, int], Path], Callable[[Path], object], bool]] = [
        ("LibreChat", imports.librechat_export, lambda p: librechat.read(p).tree, False),
    ]
    if imports.CLAUDE.is_file() and imports.CODEX.is_file():
        formats[:0] = [
            ("Claude Code", imports.claude_code_session, lambda p: claude_code.read(p).tree, True),
            ("Codex", imports.codex_rollout, lambda p: codex.read(p).tree, True),
        ]
    else:
        print(f"  import: no fixtures at {imports.FIXTURES}: LibreChat only", flush=True)
    with tempfile.TemporaryDirectory() as d:
        for name, make, read, lines in formats:
            item = "line" if lines else "message"
            case = Growth(
                f"import {name}",
                f"Import of {name} ({_plural(item)}) to a tree against json.loads of the "
                "same bytes",
                "time",
                item,
                [f"{name} read", "json.loads"],
            )
            for n in sizes:
                folder = Path(d) / f"{name}-{n}"
                folder.mkdir()
                path = make(folder, n)
                if lines:
                    floor = imports.json_lines([path])
                    items = float(n)
                else:
                    items = float(len(json.loads(path.read_bytes())["messages"]))

                    def floor(path: Path = path) -> object:
                        return json.loads(path.read_bytes())

                def ours(path: Path = path, read: Callable[[Path], object] = read) -> object:
                    return read(path)

                ours()  # a warm-up: the first read imports what the reader needs
                mine, base = imports.medians_ms([ours, floor], runs, time.perf_counter)
                case.add(n, case.who[0], mine / 1e3, items)
                case.add(n, case.who[1], base / 1e3, items)
            out[case.name] = case


# ------------------------------------------------------------------ the output


def plot(cases: list[Growth], path: Path) -> None:
    """One panel per case: each contender's cost per item against N (log N axis)."""
    panels = [
        Panel(
            textwrap.fill(case.title, 64),
            f"N ({_plural(case.item)})" if case.item != "file byte" else "N (messages)",
            ("µs" if case.kind == "time" else "B") + f" per {case.item}",
            {
                who: {
                    n: case.per_item(*got[who])
                    for n, got in case.rows.items()
                    if case.resolved(got, who)
                }
                for who in case.who
            },
            log_y=False,
            title_size=8,
        )
        for case in cases
    ]
    plot_panels(panels, "Cost per item against N (log axis): a flat line is linear growth", path)


def _plural(item: str) -> str:
    return item[:-1] + "ies" if item.endswith("y") else item + "s"


def update_readme(text: str) -> None:
    """Put this run's tables between the growth markers of ``benchmarks/README.md``."""
    readme = README.read_text()
    if START not in readme or END not in readme:
        return
    head, rest = readme.split(START, 1)
    _old, tail = rest.split(END, 1)
    README.write_text(f"{head}{START}\n{text}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--smoke", action="store_true", help="10^2 and 10^3, one run, no output")
    ap.add_argument("--sizes", default="1000,10000,100000", help="N, comma-separated")
    ap.add_argument("--runs", type=int, default=3, help="runs per case and size (medians)")
    ap.add_argument(
        "--small-big",
        type=int,
        default=10_000_000,
        metavar="N",
        help="also load N small entries if the memory allows (0: never)",
    )
    ap.add_argument(
        "--only",
        default=",".join(CASES),
        help=f"run only these of {', '.join(CASES)}, comma-separated (prints; writes nothing)",
    )
    ap.add_argument("--no-plot", action="store_true", help="skip the plot")
    args = ap.parse_args(argv)
    sizes = [100, 1_000] if args.smoke else [int(n) for n in args.sizes.split(",")]
    runs = 1 if args.smoke else args.runs
    big = 0 if args.smoke else args.small_big
    only = set(args.only.split(","))
    if unknown := only - set(CASES):
        ap.error(f"unknown cases: {', '.join(sorted(unknown))}")
    plotting = not args.smoke and not args.no_plot
    if plotting:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            ap.error("the plot needs matplotlib: pip install -e '.[bench]' (or --no-plot)")
    t0 = time.perf_counter()
    out: dict[str, Growth] = {}
    groups: list[tuple[set[str], Callable[[], None]]] = [
        ({"open", "memory", "show"}, lambda: sessions(out, sizes, runs, only)),
        ({"context"}, lambda: context(out, sizes, runs)),
        # small_entries' 5 runs (the issue's "every run of 5") in a full run
        ({"append"}, lambda: append(out, sizes, 5 if runs >= 3 else runs)),
        ({"import"}, lambda: imported(out, sizes, runs)),
        ({"small"}, lambda: small(out, sizes, runs, big)),
    ]
    seconds: dict[str, float] = {}
    for names, measure in groups:
        if only & names:
            start = time.perf_counter()
            measure()
            seconds[",".join(sorted(only & names))] = time.perf_counter() - start
    took = time.perf_counter() - t0
    cases = [out[name] for name in sorted(out, key=_order)]
    text = "\n\n".join(case.table() for case in cases)
    parts = ", ".join(f"{name} {t:.0f} s" for name, t in seconds.items())
    print(f"\n{text}\n\n(total {took:.0f} s: {parts})")
    if args.smoke or only != set(CASES):
        return 0  # a smoke test, or a part: the files hold whole runs only
    results = {
        "machine": machine(),
        "sizes": sizes,
        "runs": runs,
        "seconds": took,
        "seconds_by_group": seconds,
        "cases": {case.name: case.to_json() for case in cases},
    }
    (HERE / "growth.json").write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    update_readme(text)
    if plotting:
        plot(cases, HERE / "growth.png")
    return 0


def _order(name: str) -> int:
    return CASES.index(name.split()[0])


if __name__ == "__main__":
    raise SystemExit(main())
