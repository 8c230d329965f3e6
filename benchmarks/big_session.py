"""Opening a big session: ptree against bare json.loads and Pi, each in a fresh process.

    python benchmarks/big_session.py [--messages 50000] [--runs 3] [--baseline COMMIT[:CASES]]
        [--small-entries 1000000] [--append 100000]

Generates (once, cached in the system's temp folder) a Pi session of real messages
(the benchmark pool, 1.7 KB of JSON each) with a branch every 40 entries: after every
40th entry the leaf moves back to a random one of the last 40, so about half of the
entries end up on the current path.  50,000 messages make a file of about 90 MB.

Each case runs ``--runs`` times, each time in a new interpreter (or a new Node.js
process), alternating the cases so that drift of a busy machine hits all alike; it
reports the median wall-clock time of the work itself (from after the imports to the
result in hand: what a user waits for, and issue 26's unit), its CPU time (user +
system, from ``resource``/``process.cpuUsage``: Node.js also works on other threads,
so its CPU time can exceed its wall-clock time), and the process's peak resident
memory minus that of an idle interpreter (or Node.js) that imported the same modules,
per byte of the file.  The
ratios are against bare ``json.loads`` of every line (the floor a Python reader that
decodes everything cannot beat) and against Pi's own ``SessionManager.open`` followed
by ``buildSessionContext``.  One case is a whole command: ``ptree show`` in a process
of its own, timed from its spawn to its exit (start-up and imports included) beside the
in-process ``json.loads``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from startup import byte_compile

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from harness import fresh  # noqa: E402

PI_PACKAGES = {
    "Pi 0.73.1": ROOT / ".cache/pi/node_modules/@mariozechner/pi-coding-agent",
    "Pi 1.6": ROOT / ".cache/pi16/node_modules/@earendil-works/pi-coding-agent",
}

# Runs in a fresh interpreter: prints {"cpu": seconds of the work, "wall": seconds by
# the clock, "rss": peak KiB}.  Every case (the idle one too) imports the modules a load
# and a context use before its clocks start, as Node.js imports Pi's module first.
PY_CASE = r"""
import json, os, resource, sys, time
case, path = sys.argv[1], sys.argv[2]
import ptree
import ptree.context, ptree.pi.reader  # imports first: the clock starts after them
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
start = cpu()
wall0 = time.perf_counter()
if case == "idle":
    pass
elif case == "json.loads":
    with open(path, "rb") as f:
        out = [json.loads(line) for line in f.read().split(b"\n") if line]
elif case == "ptree.load":
    out = ptree.load(path)
elif case == "ptree.load + build_context":
    out = ptree.build_context(ptree.load(path))
elif case in ("ptree show", "ptree path"):
    from ptree.cli import main as cli_main
    with open(os.devnull, "w") as sink:
        sys.stdout = sink
        cli_main([case.split()[1], path])
        sys.stdout = sys.__stdout__
took = cpu() - start
wall = time.perf_counter() - wall0
print(json.dumps({"cpu": took, "wall": wall,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

NODE_CASE = r"""
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
const [moduleUrl, file, idle] = process.argv.slice(2);
const { SessionManager } = await import(moduleUrl);
const dir = mkdtempSync(join(tmpdir(), "ptree-bench-pi-"));
const c0 = process.cpuUsage();
const w0 = performance.now();
if (idle !== "idle") {
  const sm = SessionManager.open(file, dir);
  sm.buildSessionContext();
}
const c = process.cpuUsage(c0);
const wall = (performance.now() - w0) / 1e3;
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ cpu: (c.user + c.system) / 1e6, wall,
                             rss: process.resourceUsage().maxRSS }));
"""


def session_file(n: int) -> Path:
    """The benchmark session of ``n`` messages, generated once and cached in the temp folder.

    Written under another name and renamed, so that a process reading the cache never
    sees a file half written.
    """
    path = Path(tempfile.gettempdir()) / f"ptree-big-session-{n}.jsonl"
    if not path.exists():
        print(f"generating {path} ...", flush=True)
        part = path.with_name(f"{path.name}.{os.getpid()}.part")
        generate(part, n)
        os.replace(part, path)
    return path


def pi_packages() -> dict[str, Path]:
    """Pi's packages installed here (name: folder), if Node.js is on the PATH."""
    return {
        name: pkg
        for name, pkg in PI_PACKAGES.items()
        if shutil.which("node") and (pkg / "dist/core/session-manager.js").is_file()
    }


def node_script(folder: Path) -> Path:
    """Write the Node.js case (Pi's open + buildSessionContext) into ``folder``."""
    script = folder / "open.mjs"
    script.write_text(NODE_CASE)
    return script


def generate(path: Path, n: int) -> None:
    """The benchmark session: ``n`` real messages, a branch every 40 entries."""
    from messages import load_pool

    import ptree

    rng = random.Random(7)
    tree = ptree.SessionTree(id_factory=ptree.ids.random_ids)
    for i, message in enumerate(load_pool().take(n)):
        if i % 40 == 39:
            ids = tree.ids()
            tree = tree.move_to(ids[rng.randrange(max(0, len(ids) - 40), len(ids))])
        tree = tree.append(message)
    ptree.dump(tree, path)


def run_python(case: str, path: Path, root: Path = ROOT) -> dict[str, float]:
    """One case of ``PY_CASE`` in a fresh interpreter: its cpu, wall and rss (KiB)."""
    # In the checkout's folder: ``python -c`` puts the working folder first on sys.path.
    env = dict(os.environ, PYTHONPATH=str(root))
    out = fresh(
        [sys.executable, "-c", PY_CASE, case, str(path)],
        env=env,
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


WHOLE_SHOW = "ptree show, the whole process"


def _whole_show(path: Path, root: Path = ROOT) -> dict[str, float]:
    """``python -m ptree show FILE`` with its output to /dev/null: the wall clock from
    spawning the process to its exit (the interpreter's start and every import included,
    what a user waits for at a prompt), its CPU time and peak memory (``wait4``).  The
    modules' bytecode caches are written first, untimed, as an install writes them."""
    env = dict(os.environ, PYTHONPATH=str(root))
    byte_compile(root)  # as an installed ptree has them (startup.py)
    with open(os.devnull, "wb") as sink:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "ptree", "show", str(path)],
            stdout=sink,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=root,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, proc.args)
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "rss": usage.ru_maxrss}


def _case(case: str, path: Path, root: Path = ROOT) -> dict[str, float]:
    return _whole_show(path, root) if case == WHOLE_SHOW else run_python(case, path, root)


def run_node(package: Path, path: Path, idle: bool, script: Path) -> dict[str, float]:
    """Pi's open + buildSessionContext (or only its import) in a fresh Node.js process."""
    module = package / "dist" / "core" / "session-manager.js"
    out = fresh(
        ["node", str(script), module.as_uri(), str(path), "idle" if idle else "run"],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--messages", type=int, default=50_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="COMMIT[:CASE,...]",
        help="also run these cases (default: ptree.load and ptree.load + build_context) "
        "from this commit, side by side; may be given more than once",
    )
    ap.add_argument(
        "--small-entries",
        type=int,
        default=0,
        metavar="N",
        help="then measure a load of N small entries (small_entries.py: memory per entry)",
    )
    ap.add_argument(
        "--append",
        type=int,
        default=0,
        metavar="N",
        help="then time N appends of real messages against the floor (small_entries.py)",
    )
    args = ap.parse_args(argv)
    path = session_file(args.messages)
    size = path.stat().st_size
    cases = [
        "json.loads",
        "ptree.load",
        "ptree.load + build_context",
        "ptree show",
        WHOLE_SHOW,
        "ptree path",
    ]
    pis = pi_packages()
    cpu: dict[str, list[float]] = {c: [] for c in [*cases, *pis]}
    wall: dict[str, list[float]] = {c: [] for c in [*cases, *pis]}
    rss: dict[str, list[float]] = {c: [] for c in [*cases, *pis]}
    idle_py = run_python("idle", path)["rss"]
    with tempfile.TemporaryDirectory() as d:
        script = node_script(Path(d))
        old: dict[str, tuple[str, Path]] = {}  # label: (case, checkout)
        bases: list[Path] = []
        for spec in args.baseline:
            commit, _, listed = spec.partition(":")
            base = Path(d) / f"baseline-{len(bases)}"
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(base), commit],
                check=True,
            )
            bases.append(base)
            chosen = listed.split(",") if listed else ["ptree.load", "ptree.load + build_context"]
            for case in chosen:
                label = f"{case} at {commit[:8]}"
                old[label] = (case, base)
                cpu[label], wall[label], rss[label] = [], [], []
        idle_node = {name: run_node(pkg, path, True, script)["rss"] for name, pkg in pis.items()}
        for _ in range(args.runs):
            for case in cases:
                got = _case(case, path)
                cpu[case].append(got["cpu"])
                wall[case].append(got["wall"])
                rss[case].append(got["rss"] - idle_py)
            for name, pkg in pis.items():
                got = run_node(pkg, path, False, script)
                cpu[name].append(got["cpu"])
                wall[name].append(got["wall"])
                rss[name].append(got["rss"] - idle_node[name])
            for label, (case, base) in old.items():
                got = _case(case, path, base)
                cpu[label].append(got["cpu"])
                wall[label].append(got["wall"])
                rss[label].append(got["rss"] - idle_py)
        for base in bases:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False
            )
    floor = statistics.median(wall["json.loads"])
    print(f"\nfile: {size / 1e6:.1f} MB, {args.messages:,} messages; {args.runs} runs per case")
    print(
        "| case | wall clock | vs json.loads | vs Pi 0.73.1 | vs Pi 1.6 | CPU time "
        "| CPU vs Pi 0.73.1 | CPU vs Pi 1.6 | peak memory / file bytes |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    refs = [statistics.median(wall[name]) if name in wall else None for name in PI_PACKAGES]
    cpu_refs = [statistics.median(cpu[name]) if name in cpu else None for name in PI_PACKAGES]
    for case in cpu:
        w = statistics.median(wall[case])
        t = statistics.median(cpu[case])
        m = statistics.median(rss[case]) * 1024 / size
        vs_pi = " | ".join(f"{w / ref:.2f}x" if ref else "-" for ref in refs)
        cpu_vs_pi = " | ".join(f"{t / ref:.2f}x" if ref else "-" for ref in cpu_refs)
        label = f"{case} open + buildSessionContext" if case in pis else case
        print(
            f"| {label} | {w:.3f} s | {w / floor:.2f}x | {vs_pi} | {t:.3f} s | {cpu_vs_pi} "
            f"| {m:.2f}x |"
        )
    if args.small_entries or args.append:
        # The other two rows, in the same command (each load in a fresh process).
        import small_entries

        print()
        rest = ["--runs", "2", "--entries", str(args.small_entries or 1_000_000)]
        if not args.small_entries:
            rest += ["--runs", "0"]
        if args.append:
            rest += ["--append", str(args.append)]
        small_entries.main(rest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
