"""The cases of the other layers: build_context, load, dump, the writer, History."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from cases import Plan, _frozen, _ptree_chain, _traced
from harness import WALL, Results, Run, looped, side_by_side
from messages import Pool

import ptree
from ptree import SessionTree

__all__ = ["context_cases", "history_cases", "io_cases"]

ROOT = Path(__file__).resolve().parent.parent
PI_MODULE = (
    ROOT
    / ".cache"
    / "pi"
    / "node_modules"
    / "@mariozechner"
    / "pi-coding-agent"
    / "dist"
    / "core"
    / "session-manager.js"
)
PI_SCRIPT = Path(__file__).resolve().parent / "pi_open.mjs"
JSON_LOADS = "(d) json.loads"
PI = "(e) Pi SessionManager.open"


def _walk(leaf: ptree.Entry | None) -> list[ptree.Entry]:
    """The bare walk: parent links from the leaf to the root, then a reverse."""
    out: list[ptree.Entry] = []
    e = leaf
    while e is not None:
        out.append(e)
        e = e.parent_entry
    out.reverse()
    return out


def context_cases(r: Results, pool: Pool, plan: Plan) -> None:
    """build_context at each depth, without and with a compaction, beside a bare walk."""
    case = r.case("build_context", "build_context (a chain)", x_label="depth", unit="per call")
    case.note = (
        "'with a compaction': one compaction halfway down the path, keeping the "
        "100 entries before it."
    )
    for depth in plan.context:
        frozen = _frozen(pool, depth)
        plain = _ptree_chain(frozen)
        half = depth // 2
        compacted = _ptree_chain(frozen[:half]).append_compaction(
            "summary of the first half", f"e{max(1, half - 100)}", 120_000
        )
        for m in frozen[half + 1 :]:
            compacted = compacted.append(m)
        assert len(compacted) == depth
        ctx = ptree.build_context(compacted)
        assert ctx.messages[0]["role"] == "compactionSummary"
        case.add_all(
            depth,
            side_by_side(
                {
                    "ptree": looped(partial(ptree.build_context, plain)),
                    "ptree, with a compaction": looped(partial(ptree.build_context, compacted)),
                    "bare walk of the path": looped(partial(_walk, plain.leaf)),
                },
                plan.repeat,
                warmup=False,
            ),
        )


def history_cases(r: Results, pool: Pool, plan: Plan) -> None:
    """Every version kept through ptree.History: cost per append and memory."""
    keep = r.cases.get("append_keep")
    if keep is not None:
        for n in plan.keep:
            messages = pool.take(n)

            def run(messages: list[Any] = messages) -> tuple[int, object]:
                h = ptree.History(SessionTree())
                for m in messages:
                    h = h.commit(h.present.append(m))
                return len(messages), h

            repeat = plan.repeat if n <= 10_000 else plan.repeat_big
            keep.add_all(n, side_by_side({"ptree in a History": run}, repeat))
    n = plan.memory
    frozen = _frozen(pool, n)

    def build() -> object:
        h = ptree.History(SessionTree())
        for m in frozen:
            h = h.commit(h.present.append(m))
        return h

    per = _traced(build) / n
    mem = r.facts.setdefault("memory", {"n": n, "bytes_per_version": {}})
    mem["bytes_per_version"]["ptree in a History"] = per
    print(f"  memory             {'ptree in a History':<28} N={n:<9,} {per:12.0f} B per version")


def _pi_open(path: Path, runs: int) -> float | None:
    """Seconds of Pi's SessionManager.open on ``path`` (median), or None without Node."""
    if shutil.which("node") is None or not PI_MODULE.is_file():
        return None
    out = subprocess.run(
        ["node", str(PI_SCRIPT), PI_MODULE.as_uri(), str(path), str(runs)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    seconds: float = json.loads(out.stdout.strip().splitlines()[-1])["seconds"]
    return seconds


def io_cases(r: Results, pool: Pool, plan: Plan) -> None:
    """load and dump of files of N entries; the writer's commit."""
    load = r.case("load", "load (a file of N entries)", unit="per entry")
    load.note = (
        "(d) reads the same file and calls json.loads on each line; (e) runs "
        "Pi's SessionManager.open in Node.js on the same file, timed inside "
        "Node in CPU time, as the Python side is (median of the same number of "
        "runs, after a warm-up)."
    )
    dump = r.case("dump", "dump (a file of N entries)", unit="per entry")
    dump.note = (
        "Wall time: the disk's wait is part of the cost.  (d) json.dumps of "
        "each entry's dict (made beforehand), written and "
        "fsync'ed, as ptree.dump fsyncs; ptree.dump also writes atomically "
        "(a temporary file renamed over the target)."
    )
    with tempfile.TemporaryDirectory(prefix="ptree-bench-") as tmp:
        d = Path(tmp)
        sizes = sorted({n for n in (plan.load // 100, plan.load // 10, plan.load) if n})
        for n in sizes:
            tree = _ptree_chain(pool.take(n))
            path = d / f"s{n}.jsonl"
            tree = ptree.dump(tree, path)
            size_mb = path.stat().st_size / 1e6
            repeat = plan.repeat if n < 100_000 else plan.repeat_big

            def run_load(path: Path = path, n: int = n) -> tuple[int, object]:
                return n, ptree.load(path)

            def run_json(path: Path = path, n: int = n) -> tuple[int, object]:
                data = path.read_bytes()
                return n, [json.loads(line) for line in data.splitlines()]

            load.add_all(n, side_by_side({"ptree.load": run_load, JSON_LOADS: run_json}, repeat))
            pi = _pi_open(path, repeat)
            if pi is not None:
                load.add(PI, n, pi / n)
            r.facts.setdefault("files", {})[str(n)] = f"{size_mb:.1f} MB"

            dicts = [e.to_json() for e in tree.entries()]
            out = d / f"out{n}.jsonl"
            bare = d / f"bare{n}.jsonl"

            def run_dump(
                tree: SessionTree = tree, out: Path = out, n: int = n
            ) -> tuple[int, object]:
                return n, ptree.dump(tree, out, overwrite=True)

            def run_bare(
                dicts: list[Any] = dicts, bare: Path = bare, n: int = n
            ) -> tuple[int, object]:
                data = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in dicts)
                with bare.open("w", encoding="utf-8") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
                return n, None

            dump.add_all(
                n,
                side_by_side(
                    {"ptree.dump": run_dump, "(d) json.dumps + write": run_bare}, repeat, clock=WALL
                ),
            )
            del tree, dicts
        _commits(r, pool, plan, d)


def _commits(r: Results, pool: Pool, plan: Plan, d: Path) -> None:
    """The writer's commit of one new message, beside a bare write of the same line."""
    k = max(50, min(1_000, plan.load // 100))
    frozen = _frozen(pool, k)
    for fsync in (False, True):
        label = "fsync" if fsync else "no fsync"
        case = r.case(
            f"commit ({label})",
            f"SessionWriter.commit, {label} (one message)",
            x_label="commits",
            unit="per commit",
        )
        case.note = (
            "Wall time.  Each commit writes one new message to a live file.  "
            "The bare baseline writes the same line with one os.write"
            + (" and one os.fsync." if fsync else ".")
        )
        path = d / f"live-{label}.jsonl"
        w = ptree.SessionWriter.create(path, SessionTree(), fsync=fsync)
        versions = [w.value]
        for m in frozen:
            versions.append(versions[-1].append(m))
        lines = [
            (json.dumps(e.to_json(), ensure_ascii=False) + "\n").encode()
            for e in versions[-1].entries()
        ]
        fd = os.open(d / f"bare-{label}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND)

        def run_commit(
            w: ptree.SessionWriter = w, versions: list[SessionTree] = versions
        ) -> tuple[int, object]:
            for v in versions[1:]:
                w.commit(v)
            return len(versions) - 1, None

        def run_bare(
            fd: int = fd, lines: list[bytes] = lines, fsync: bool = fsync
        ) -> tuple[int, object]:
            for line in lines:
                os.write(fd, line)
                if fsync:
                    os.fsync(fd)
            return len(lines), None

        runs: dict[str, Run] = {"ptree": run_commit, "bare os.write": run_bare}
        # One run each: a writer commits each version once.
        case.add_all(k, side_by_side(runs, 1, warmup=False, clock=WALL))
        w.close()
        os.close(fd)
