"""Timing, results, the ratio tables and the plot: the machinery under ``run.py``.

Method: every timed run starts after ``gc.collect()`` with the garbage collector
*enabled* (as users run); a run's result is released only after the clock stops, so
freeing memory is never counted; each figure is the median of several runs after a
warm-up run.  Reading operations are timed in a loop long enough (``MIN_TIME``) for the
clock's resolution not to matter.

The clock is the CPU time of this process (``time.process_time``) for everything that
stays in memory: other processes on a shared machine do not inflate it, as they do wall
time.  Cases that wait for the disk (``fsync``) use wall time (``WALL``), since the
wait is their cost.
"""

from __future__ import annotations

import gc
import json
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CPU",
    "MIN_TIME",
    "WALL",
    "Case",
    "Panel",
    "Results",
    "Run",
    "fresh",
    "looped",
    "machine",
    "per_call",
    "per_op",
    "plot_panels",
    "side_by_side",
]

CPU = time.process_time
WALL = time.perf_counter

MIN_TIME = 0.05
"""A timed loop of a reading operation lasts at least this long (seconds)."""

Run = Callable[[], tuple[int, object]]
"""A run does some work and returns (operations done, what to keep alive till the
clock has stopped)."""


def per_op(run: Run, repeat: int, warmup: bool = True, clock: Callable[[], float] = CPU) -> float:
    """Median seconds per operation of ``repeat`` runs of ``run``."""
    if warmup:
        _ops, keep = run()
        del keep
    times: list[float] = []
    for _ in range(repeat):
        gc.collect()
        t0 = clock()
        ops, keep = run()
        t1 = clock()
        del keep
        times.append((t1 - t0) / ops)
    return statistics.median(times)


def side_by_side(
    runs: dict[str, Run], repeat: int, warmup: bool = True, clock: Callable[[], float] = CPU
) -> dict[str, float]:
    """Median seconds per operation of each run, the runs taking turns.

    Taking turns (ptree, then each baseline, then ptree again…) lets a machine whose
    load changes during the run slow every contender alike, so the ratios hold.
    """
    if warmup:
        for run in runs.values():
            _ops, keep = run()
            del keep
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            gc.collect()
            t0 = clock()
            ops, keep = run()
            t1 = clock()
            del keep
            times[name].append((t1 - t0) / ops)
    return {name: statistics.median(ts) for name, ts in times.items()}


def looped(fn: Callable[[], object], min_time: float = MIN_TIME) -> Run:
    """A run calling ``fn`` in a loop of at least ``min_time`` seconds."""
    t0 = CPU()
    fn()  # the warm-up, which also sizes the loop
    once = max(CPU() - t0, 1e-7)
    loops = max(1, int(min_time / once))

    def run() -> tuple[int, object]:
        for _ in range(loops):
            fn()
        return loops, None

    return run


def per_call(fn: Callable[[], object], repeat: int, min_time: float = MIN_TIME) -> float:
    """Median seconds per call of ``fn``, called in loops of at least ``min_time``."""
    return per_op(looped(fn, min_time), repeat, warmup=False)


@dataclass
class Case:
    """One case: per-operation seconds of ptree and its baselines, by size."""

    name: str
    title: str
    x_label: str = "N (entries)"
    unit: str = "per operation"
    series: dict[str, dict[int, float]] = field(default_factory=dict)
    note: str = ""

    def add(self, who: str, n: int, seconds: float) -> None:
        self.series.setdefault(who, {})[n] = seconds
        print(f"  {self.name:<18} {who:<28} N={n:<9,} {seconds * 1e6:12.3f} µs", flush=True)

    def add_all(self, n: int, measured: dict[str, float]) -> None:
        for who, seconds in measured.items():
            self.add(who, n, seconds)

    def get(self, who: str, n: int) -> float | None:
        return self.series.get(who, {}).get(n)

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "x_label": self.x_label,
            "unit": self.unit,
            "note": self.note,
            "series": {k: {str(n): s for n, s in v.items()} for k, v in self.series.items()},
        }

    @classmethod
    def from_json(cls, name: str, data: dict[str, Any]) -> Case:
        case = cls(name, data["title"], data["x_label"], data["unit"], note=data["note"])
        case.series = {k: {int(n): s for n, s in v.items()} for k, v in data["series"].items()}
        return case


@dataclass
class Results:
    """Everything a run measured, kept as ``results.json``."""

    mode: str
    machine: dict[str, str]
    cases: dict[str, Case] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)
    targets: list[dict[str, Any]] = field(default_factory=list)

    def case(
        self, name: str, title: str, x_label: str = "N (entries)", unit: str = "per operation"
    ) -> Case:
        c = Case(name, title, x_label, unit)
        self.cases[name] = c
        return c

    def save(self, path: Path) -> None:
        data = {
            "mode": self.mode,
            "machine": self.machine,
            "facts": self.facts,
            "targets": self.targets,
            "cases": {k: c.to_json() for k, c in self.cases.items()},
        }
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, path: Path) -> Results:
        data = json.loads(path.read_text())
        r = cls(data["mode"], data["machine"], facts=data["facts"], targets=data["targets"])
        r.cases = {k: Case.from_json(k, v) for k, v in data["cases"].items()}
        return r

    # ------------------------------------------------------------------ report

    def tables(self) -> str:
        """Markdown: per case, each size's µs per operation and ptree's ratio to each."""
        out: list[str] = []
        for case in self.cases.values():
            names = list(case.series)
            if not names:
                continue
            main, others = names[0], names[1:]
            sizes = sorted({n for s in case.series.values() for n in s})
            out.append(f"**{case.title}** (µs {case.unit})\n")
            head = [case.x_label, *names, *(f"{main} / {o}" for o in others)]
            out.append("| " + " | ".join(head) + " |")
            out.append("|" + " ---: |" * len(head))
            for n in sizes:
                row = [f"{n:,}"]
                for who in names:
                    v = case.get(who, n)
                    row.append("" if v is None else _fmt(v * 1e6))
                m = case.get(main, n)
                for o in others:
                    v = case.get(o, n)
                    row.append("" if m is None or v is None else f"{m / v:.2f}x")
                out.append("| " + " | ".join(row) + " |")
            if case.note:
                out.append(f"\n{case.note}")
            out.append("")
        return "\n".join(out)

    def target_table(self) -> str:
        out = ["| case | target | measured | met |", "| --- | --- | --- | --- |"]
        for t in self.targets:
            met = {True: "yes", False: "**no**", None: "n/a"}[t["ok"]]
            out.append(f"| {t['case']} | {t['target']} | {t['measured']} | {met} |")
        return "\n".join(out)

    def plot(self, path: Path) -> None:
        """A log-log plot per case of the cost per operation against N."""
        cases = [c for c in self.cases.values() if any(len(s) > 1 for s in c.series.values())]
        panels = [
            Panel(
                case.title,
                case.x_label,
                f"µs {case.unit}",
                {who: {x: y * 1e6 for x, y in pts.items()} for who, pts in case.series.items()},
            )
            for case in cases
        ]
        plot_panels(
            panels, "ptree against its baselines (log-log; flat = O(1) per operation)", path
        )


@dataclass
class Panel:
    """One panel of a plot: a curve per contender (the first drawn bold), N on a log axis."""

    title: str
    x_label: str
    y_label: str
    series: dict[str, dict[int, float]]
    log_y: bool = True  # else linear from 0, where a flat line reads best
    title_size: int = 10


def plot_panels(panels: list[Panel], title: str, path: Path) -> None:
    """Draw ``panels``, three a row, and save them as a PNG at ``path`` (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = 3
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.0 * rows), squeeze=False)
    for ax, panel in zip(axes.flat, panels, strict=False):
        for i, (who, points) in enumerate(panel.series.items()):
            xs = sorted(points)
            style = {"linewidth": 2.5} if i == 0 else {"linestyle": "--"}
            ax.plot(xs, [points[x] for x in xs], marker="o", label=who, **style)
        ax.set_xscale("log")
        if panel.log_y:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        ax.set_title(panel.title, fontsize=panel.title_size)
        ax.set_xlabel(panel.x_label)
        ax.set_ylabel(panel.y_label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


# Runs the command it is given and exits with its status: a bare interpreter, small.
_LAUNCHER = "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"


def fresh(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(args, **kwargs)`` with a bare interpreter between, for peak memory.

    Linux keeps a process's peak resident memory (``ru_maxrss``) across ``exec``, and a
    child started by ``vfork`` (as ``subprocess`` does) starts from its parent's peak:
    a child of a benchmark that has itself grown (generating a session, timing appends)
    would report the parent's peak, not its own.  The launcher between is ~10 MB, less
    than any measured interpreter (ptree imported: ~20 MB) or Node.js.
    """
    return subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, *args], **kwargs)


def _fmt(us: float) -> str:
    if us >= 100:
        return f"{us:,.0f}"
    if us >= 1:
        return f"{us:.2f}"
    return f"{us:.3f}"


def machine() -> dict[str, str]:
    """What this run ran on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        import os

        cores = str(len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        cores = "?"
    info = {
        "cpu": cpu,
        "cores": cores,
        "os": platform.platform(),
        "python": sys.version.split()[0] + " " + platform.python_implementation(),
    }
    from importlib.metadata import PackageNotFoundError, version

    try:
        info["pyrsistent"] = version("pyrsistent")
        try:
            import pvectorc  # type: ignore[import-not-found]  # noqa: F401

            info["pyrsistent"] += " (C extension)"
        except ImportError:
            info["pyrsistent"] += " (pure Python)"
    except PackageNotFoundError:  # pragma: no cover
        info["pyrsistent"] = "absent"
    try:
        node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True)
        info["node"] = node.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        info["node"] = "absent"
    return info
