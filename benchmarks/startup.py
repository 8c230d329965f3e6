"""Start-up cost: ``import ptree`` and ``ptree --help`` beside ``import attrs, msgspec``.

    python benchmarks/startup.py            # 21 fresh processes per case, the table
    python benchmarks/startup.py --smoke    # 3 per case (CI: checks it runs)

Every command a user runs pays for importing ptree, so the front door loads only the
core and Pi's files, and each outer layer (formats, providers, stores, integrations,
the CLI's commands) when first used.  Each case runs in a fresh interpreter
(``python -c``), alternating with the baseline so that both see the same machine, and
is timed inside the process from just before the import to just after it (the
interpreter's own start is the same for all and left out); ``ptree --help`` is timed
from before ``import ptree.cli`` to the help text written.  The front door loads each
name's module on first use, so a row also shows what the first use of the tree and of
Pi's reader costs (the core and :mod:`ptree.pi` loaded).  Medians, in
milliseconds; the ratio is each case over the baseline, the dependencies ptree
cannot start without.  The targets (issue #23): ``import ptree`` at most 1.5x,
``ptree --help`` at most 2x.  ptree's bytecode caches are written first, as an install
writes them (:func:`byte_compile`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

TIMED = """
import time, sys
start = time.perf_counter()
{body}
sys.stdout.write("\\n%r\\n" % (time.perf_counter() - start))
"""

CASES: dict[str, str] = {
    "import attrs, msgspec (baseline)": "import attrs, msgspec",
    "import ptree": "import ptree",
    "import ptree + first use of SessionTree and load": (
        "import ptree\nptree.SessionTree, ptree.load"
    ),
    "ptree --help": (
        "import io, contextlib\n"
        "import ptree.cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        ptree.cli.main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass"
    ),
}
TARGETS = {"import ptree": 1.5, "ptree --help": 2.0}


def byte_compile(root: Path = ROOT) -> None:
    """Write the bytecode caches of ptree's modules (``compileall``), as installing a
    package does: with ``PYTHONDONTWRITEBYTECODE`` set (or a checkout never run), every
    fresh interpreter would compile each module again, a cost no installed ptree has."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(root / "ptree")],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def once(body: str) -> float:
    """Seconds one fresh interpreter spends on ``body``."""
    done = subprocess.run(
        [sys.executable, "-c", TIMED.format(body=body)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="fresh processes per case")
    parser.add_argument("--smoke", action="store_true", help="3 runs per case (CI)")
    args = parser.parse_args()
    runs = 3 if args.smoke else args.runs
    byte_compile()
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(runs):
        for name, body in CASES.items():  # alternating: each round sees the same machine
            times[name].append(once(body))
    medians = {name: statistics.median(ts) * 1000 for name, ts in times.items()}
    base = medians["import attrs, msgspec (baseline)"]
    print(f"{runs} fresh processes per case, medians; ratio over the baseline\n")
    print("| case | ms | ratio | target |")
    print("| --- | ---: | ---: | --- |")
    for name, ms in medians.items():
        target = TARGETS.get(name)
        verdict = (
            "" if target is None else f"<= {target}x: {'met' if ms / base <= target else 'missed'}"
        )
        print(f"| {name} | {ms:.1f} | {ms / base:.2f}x | {verdict} |")


if __name__ == "__main__":
    main()
