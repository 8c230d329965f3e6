"""Crash test: a writer process killed with SIGKILL at random moments, many times.

Each round starts a child process that reopens the same file with a
:class:`~ptree.SessionWriter` and commits in a loop (appends, some large, and leaf
moves), printing each commit after ``commit`` returned; the parent kills it with
SIGKILL at a random moment.  After every kill the file must load strictly, hold every
commit the child reported, and accept further commits (the next round).  Some rounds
also tear the tail by hand (the start of a line, no newline), as a crash in the middle
of a write would.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from ptree import SessionFileWarning, SessionWriter, load

pytestmark = pytest.mark.slow

ROUNDS = 30

CHILD = r"""
import sys, ptree
path, fsync, seed = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
import random, warnings
warnings.simplefilter("ignore")  # the torn tail it recovers is reported, not an error
rng = random.Random(seed)
w = ptree.SessionWriter(path, fsync=fsync)
t = w.value
while True:
    n = len(t)
    size = 200_000 if rng.random() < 0.1 else rng.randint(1, 300)
    # Multi-byte characters, so that a kill may cut a line inside one.
    t = t.append({"role": "user", "content": ("x\u00e9\U0001F600" * size)[:size]},
                 id=f"s{seed}-{n}")
    if rng.random() < 0.3:
        t = t.append_label(t.leaf_id, f"L{n}")
    if rng.random() < 0.3:
        t = t.move_to(rng.choice(t.ids()))
    t = w.commit(t)
    print(len(t), t.ids()[-1], t.leaf_id, flush=True)
"""


def run_round(path: Path, rng: random.Random, seed: int) -> tuple[int, str, str] | None:
    """One child life: start, wait for a commit, live a random while, SIGKILL."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(seed % 2), str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None
    first = child.stdout.readline()
    if not first:
        child.wait(timeout=30)
        err = child.stderr.read().decode() if child.stderr else ""
        raise AssertionError(f"the writer died: {err}")
    time.sleep(rng.uniform(0, 0.15))
    child.send_signal(signal.SIGKILL)
    rest, _ = child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    lines = (first + rest).decode().split("\n")[:-1]  # a cut-off last print is no report
    if not lines:
        return None
    count, last_id, leaf = lines[-1].split(" ")
    return int(count), last_id, leaf


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def test_sigkill_never_loses_a_commit(tmp_path: Path) -> None:
    """Every reported commit survives every kill; the file always loads and grows on."""
    path = tmp_path / "crash.jsonl"
    rng = random.Random(4)
    torn_rounds = 0
    for seed in range(ROUNDS):
        reported = run_round(path, rng, seed)
        if rng.random() < 0.3 and _ends_with_newline(path):
            # Tear the tail as an interrupted write would: a line's start, no newline.
            # Only after a whole line: the kill may have torn the tail already (a large
            # write cut short), and no writer ever appends to a torn tail without
            # starting a fresh line, so gluing a second torn start onto it would make
            # a line no crash can make.
            line = json.dumps(
                {
                    "type": "message",
                    "id": f"torn{seed}",
                    "parentId": None,
                    "timestamp": "t",
                    "message": {"role": "user", "content": "z\u00e9\U0001f600"},
                },
                ensure_ascii=False,
            ).encode()
            with path.open("ab") as f:
                f.write(line[: rng.randint(1, len(line) - 1)])  # maybe inside a character
            torn_rounds += 1
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tree = load(path)  # strict: torn lines are recovered, nothing else is wrong
        assert all(issubclass(w.category, SessionFileWarning) for w in caught)
        assert all("torn" in str(w.message) for w in caught)
        tree._check()
        if reported is not None:
            count, last_id, leaf = reported
            assert len(tree) >= count
            assert tree.ids()[count - 1] == last_id
            if len(tree) == count:
                # Every commit appends, so nothing landed after the report: the file
                # holds exactly the reported value, leaf included.
                assert tree.leaf_id == leaf
    assert torn_rounds > 0
    # After all that, a clean writer commits and closes, and the file reads back exactly.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SessionFileWarning)
        with SessionWriter(path) as w:
            final = w.commit(w.value.append({"role": "user", "content": "the end"}))
        again = load(path)
    assert again == final
    assert os.path.getsize(path) > 0
