"""Import speed of ``ptree.formats``: each reader beside reading the same bytes with json.loads.

    python benchmarks/imports.py            # 7 runs each, prints the table
    python benchmarks/imports.py --smoke    # 1 run each (CI: checks it runs)
    python benchmarks/imports.py --cpu      # CPU time instead of the clock (a busy machine)
    python benchmarks/imports.py --librechat 1000,10000,100000   # LibreChat at these sizes

The largest real fixture of each agent (``shared/fixtures``) and two generated
LibreChat exports (a chat's plain messages; an agent's structured content with tool
calls) are read (1) line by line with :func:`json.loads` (the floor: parsing the same
JSON and nothing else), (2) by the ptree reader (the whole import to a tree, every
check included), and (3) by the reader and :func:`ptree.dump` (what ``ptree import``
does).  Medians of the runs, in milliseconds, the three taking turns in each run (a
read under 50 ms timed in a loop of 50 ms); the ratio is (2) / (1).  The results of a
full run are in ``benchmarks/README.md`` ("Importing other agents' sessions").
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import ptree  # noqa: E402
from ptree.formats import claude_code, codex, librechat  # noqa: E402

FIXTURES = HERE.parent.parent / "shared" / "fixtures"
CLAUDE = FIXTURES / "claude-code" / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
CODEX = (
    FIXTURES
    / "codex"
    / "localpush"
    / "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
)


def medians_ms(
    fns: list[Callable[[], object]], runs: int, clock: Callable[[], float]
) -> list[float]:
    """Each function's median time per call, in ms: the functions take turns in every
    run (a busy moment of a shared machine slows them alike), and a call shorter than
    50 ms is timed in a loop of at least 50 ms (a 3 ms read is otherwise mostly the
    clock's and the scheduler's noise)."""
    loops = []
    for fn in fns:
        start = clock()
        fn()
        loops.append(max(1, int(0.05 / max(clock() - start, 1e-6))))
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(runs):
        for fn, n, out in zip(fns, loops, times, strict=True):
            start = clock()
            for _ in range(n):
                fn()
            out.append((clock() - start) / n)
    return [statistics.median(t) * 1000 for t in times]


def json_lines(paths: list[Path]) -> Callable[[], object]:
    def read() -> object:
        return [
            [json.loads(line) for line in p.read_bytes().splitlines() if line.strip()]
            for p in paths
        ]

    return read


def librechat_export(folder: Path, messages: int) -> Path:
    """A flat LibreChat export of one long conversation with a regenerated answer each
    tenth turn (branches), as the export writes it."""
    out = []
    parent = "00000000-0000-0000-0000-000000000000"
    for i in range(messages):
        mid = f"m{i}"
        out.append(
            {
                "messageId": mid,
                "parentMessageId": parent,
                "isCreatedByUser": i % 2 == 0,
                "sender": "User" if i % 2 == 0 else "GPT-4o",
                "model": "gpt-4o",
                "text": f"message {i} " * 20,
                "createdAt": "2024-05-01T16:35:11.530Z",
            }
        )
        if i % 20 == 19:
            out.append(dict(out[-1], messageId=f"{mid}-again", text="again " * 20))
        parent = mid
    path = folder / "librechat.json"
    path.write_text(json.dumps({"conversationId": "c", "messages": out}), encoding="utf-8")
    return path


def librechat_agents_export(folder: Path, messages: int) -> Path:
    """A flat LibreChat export of an agent's conversation: each answer's structured
    ``content`` a thought, a tool call with its output, and the text after it (three
    entries), a regenerated answer each tenth turn, as the agents endpoint writes it."""
    out = []
    parent = "00000000-0000-0000-0000-000000000000"
    for i in range(messages):
        mid = f"m{i}"
        message: dict[str, object] = {
            "messageId": mid,
            "parentMessageId": parent,
            "isCreatedByUser": i % 2 == 0,
            "sender": "User" if i % 2 == 0 else "Agent",
            "endpoint": "agents",
            "model": "gpt-4o",
            "text": f"message {i} " * 20 if i % 2 == 0 else "",
            "createdAt": "2024-05-01T16:35:11.530Z",
        }
        if i % 2:
            call = {
                "id": f"call_{i:08d}",
                "name": "search",
                "args": json.dumps({"query": f"question {i}", "limit": 5}),
                "output": f"result {i} " * 20,
                "type": "tool_call",
            }
            message["content"] = [
                {"type": "think", "think": f"thinking about {i} " * 5},
                {"type": "tool_call", "tool_call": call},
                {"type": "text", "text": f"answer {i} " * 20},
            ]
        out.append(message)
        if i % 20 == 19:
            out.append(dict(message, messageId=f"{mid}-again"))
        parent = mid
    path = folder / "librechat-agents.json"
    path.write_text(json.dumps({"conversationId": "c", "messages": out}), encoding="utf-8")
    return path


# The ids a copy of a fixture renames: uuids, and tool-call ids as a JSON string.
_IDS = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r'|(?<=")(?:call|toolu)_[A-Za-z0-9]{8,}(?=")'
)


def _tiled(src: Path, lines: int, skip: int, keep: str) -> list[str]:
    """The first ``lines`` lines of ``src`` repeated: each copy after the first leaves out
    its first ``skip`` lines and renames every id but ``keep`` (the session's own)."""
    body = src.read_text(encoding="utf-8").splitlines()
    out = body[:lines]
    copy = 0
    while len(out) < lines:
        copy += 1
        suffix = f"-{copy}"

        def renamed(m: re.Match[str], suffix: str = suffix) -> str:
            return m[0] if m[0] == keep else m[0] + suffix

        out += [_IDS.sub(renamed, line) for line in body[skip:][: lines - len(out)]]
    return out


def claude_code_session(folder: Path, lines: int) -> Path:
    """A Claude Code session of ``lines`` records: the fixture's, repeated with new ids
    (each copy a new root of the same session, as after ``/clear``)."""
    path = folder / CLAUDE.name
    path.write_text("\n".join(_tiled(CLAUDE, lines, 0, CLAUDE.stem)) + "\n", encoding="utf-8")
    return path


def codex_rollout(folder: Path, lines: int) -> Path:
    """A Codex rollout of ``lines`` lines: the fixture's turns repeated (one
    ``session_meta``), each copy's call ids renamed."""
    meta = json.loads(CODEX.read_text(encoding="utf-8").split("\n", 1)[0])
    path = folder / CODEX.name
    body = _tiled(CODEX, lines, 1, meta["payload"]["id"])
    path.write_text("\n".join(body) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="one run each, to check it works")
    ap.add_argument(
        "--cpu",
        action="store_true",
        help="time with the process's CPU time instead of the clock (steadier when the "
        "machine is shared: waiting for a core is not counted)",
    )
    ap.add_argument(
        "--librechat",
        default=None,
        help="the generated LibreChat export's sizes, in messages, comma-separated "
        "(default 20000; 2000 with --smoke): a row each",
    )
    args = ap.parse_args(argv)
    runs = 1 if args.smoke else 7
    clock = time.process_time if args.cpu else time.perf_counter
    if not CLAUDE.is_file():
        print(f"no fixtures at {FIXTURES}: nothing to measure", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sizes = [int(n) for n in (args.librechat or ("2000" if args.smoke else "20000")).split(",")]
        cases: list[
            tuple[str, Path, list[Path], Callable[[], ptree.SessionTree], Callable[[], object]]
        ] = [
            (
                "claude-code",
                CLAUDE,
                claude_code.session_files(CLAUDE),
                lambda: claude_code.read(CLAUDE).tree,
                json_lines(claude_code.session_files(CLAUDE)),
            ),
            ("codex", CODEX, [CODEX], lambda: codex.read(CODEX).tree, json_lines([CODEX])),
        ]
        for n in sizes:
            (folder / str(n)).mkdir()
            for name, make in (
                ("librechat", librechat_export),
                ("librechat-agents", librechat_agents_export),
            ):
                export = make(folder / str(n), n)
                cases.append(
                    (
                        name,
                        export,
                        [export],
                        lambda export=export: librechat.read(export).tree,  # type: ignore[misc]
                        lambda export=export: json.loads(export.read_bytes()),  # type: ignore[misc]
                    )
                )
        print(
            "| format | file | size | records | json.loads | read | read + dump | "
            "read / json.loads |"
        )
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for name, path, files, read, floor in cases:
            size = sum(p.stat().st_size for p in files)
            tree = read()
            out = folder / f"{name}.out.jsonl"

            def read_dump(read: Callable[[], ptree.SessionTree] = read, out: Path = out) -> None:
                ptree.dump(read(), out, overwrite=True)  # once per run

            base, ours, both = medians_ms([floor, read, read_dump], runs, clock)
            print(
                f"| {name} | {path.name[:28]} | {size / 1e6:.2f} MB | {len(tree):,} entries "
                f"| {base:.1f} ms | {ours:.1f} ms | {both:.1f} ms | {ours / base:.1f}x |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
