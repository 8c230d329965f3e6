"""Issue 27's fault figures: runs ``tests/test_faults.py`` with a report file and prints
one table (faults injected, operations attempted, entries lost) and the totals.

    python benchmarks/faults.py                 # the load-while-writing soak: 30 s per kind
    PTREE_SOAK_SECONDS=2 python benchmarks/faults.py   # CI's length

Needs what the tests need: Node with Pi 0.73.1 and 1.6 (``.cache/``), PostgreSQL
(``PTREE_TEST_POSTGRES_URL``; ``.ci/postgres start`` starts one), and its server
programs with util-linux's ``prlimit`` for the tests that start a server of their own
(the restart, and the full disk: the server's processes limited to 17 MiB files).
Not a timing: the figures are counts. A second table gives, for the soak of each file
writer, how many of its operations were Pi's loads (Pi 0.73.1 and Pi 1.6, one Node process
each, loading while the writers append) and how many of those ended inside a two-line commit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    env = dict(os.environ)
    env.setdefault("PTREE_SOAK_SECONDS", "30")
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "faults.jsonl"
        env["PTREE_FAULT_REPORT"] = str(report)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "tests/test_faults.py",
            ],
            cwd=ROOT,
            env=env,
            check=False,
        )
        rows = (
            [json.loads(line) for line in report.read_text().splitlines()]
            if report.exists()
            else []
        )
    print(f"\nPTREE_SOAK_SECONDS={env['PTREE_SOAK_SECONDS']}\n")
    print("| fault | faults injected | operations attempted | entries lost |")
    print("|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['test']} | {r['faults']} | {r['operations']} | {r['lost']} |")
    total = {k: sum(r[k] for r in rows) for k in ("faults", "operations", "lost")}
    print(f"| **all {len(rows)}** | {total['faults']} | {total['operations']} | {total['lost']} |")
    # The soak's rows: how many of the operations were Pi's loads (0.73.1 and 1.6 together),
    # and how many of those ended between the two lines of a commit being written.
    soak = [r for r in rows if r.get("pi_loads")]
    if soak:
        print("\n| soak | Pi loads | Pi loads ending inside a two-line commit |")
        print("|---|---:|---:|")
        for r in soak:
            print(f"| {r['test']} | {r['pi_loads']} | {r['pi_halves']} |")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
