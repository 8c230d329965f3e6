"""LangGraph checkpoints: storage and time per step, TreeSaver beside SqliteSaver (issue 24).

    python benchmarks/langgraph_storage.py                  # 100 and 1,000 turns
    python benchmarks/langgraph_storage.py --turns 100      # only some sizes
    python benchmarks/langgraph_storage.py --smoke          # 10 turns, a few seconds (CI)
    python benchmarks/langgraph_storage.py --savers TreeSaver   # one saver only

The same ``StateGraph`` chat (``MessagesState``, an ``agent`` node calling a fake chat
model, a ``ToolNode``, ``tools_condition``) runs ``turns`` turns on one thread, checkpointed
by ptree's ``TreeSaver`` over a SQLite file and by ``langgraph-checkpoint-sqlite``'s
``SqliteSaver`` over another, one after the other in the same process.  The model's
replies are the same for both: an answer of about 600 characters, and on every third
turn first a tool call (the tool returns about 400 characters); the user's questions
are about 150 characters.  Reported per saver: bytes on disk of the whole store after
closing it (the database file and any ``-wal``/``-shm`` beside it), that size divided by
the JSON size of the final message list (``json.dumps(messages_to_dict(messages))``,
UTF-8), the number of checkpoints (steps), and wall time per step: over the whole run,
and over the last tenth of the turns (where a saver whose cost grows with the thread
is slowest).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, messages_to_dict
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from ptree.integrations.langgraph import TreeSaver

WORDS = "the quick brown fox jumps over a lazy dog while rain falls on the quiet river bank "


def text(n: int, seed: int) -> str:
    """About ``n`` characters of text, different for each seed."""
    words = (WORDS * (n // len(WORDS) + 2))[seed % 17 :]
    return f"[{seed}] " + words[:n]


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"result for {query}: " + text(400, len(query))


def replies() -> Iterator[AIMessage]:
    for turn in itertools.count():
        if turn % 3 == 1:
            call = {"name": "lookup", "args": {"query": f"question {turn}"}, "id": f"call_{turn}"}
            yield AIMessage("", tool_calls=[call])
        yield AIMessage(text(600, turn))


def graph(saver: BaseCheckpointSaver[Any]) -> Any:
    model = GenericFakeChatModel(messages=replies())

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([lookup]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=saver)


def disk_bytes(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


def run(kind: str, turns: int, folder: Path) -> dict[str, Any]:
    db = folder / f"{kind}-{turns}.db"
    if kind == "TreeSaver":
        saver: Any = TreeSaver(f"sqlite://{db}")
        close = saver.close
    else:
        conn = sqlite3.connect(db, check_same_thread=False)
        saver = SqliteSaver(conn)
        close = conn.close
    steps = 0
    put = saver.put

    def counted(*args: Any) -> Any:  # each put is one step of the graph
        nonlocal steps
        steps += 1
        return put(*args)

    saver.put = counted
    g = graph(saver)
    config: Any = {"configurable": {"thread_id": "chat"}}
    tail_from = turns - max(1, turns // 10)
    start = time.perf_counter()
    tail_start = start
    tail_steps = 0
    for turn in range(turns):
        if turn == tail_from:
            tail_start = time.perf_counter()
            tail_steps = steps
        g.invoke({"messages": [HumanMessage(text(150, 1000 + turn))]}, config)
    end = time.perf_counter()
    messages = g.get_state(config).values["messages"]
    close()
    json_size = len(json.dumps(messages_to_dict(messages)).encode("utf-8"))
    size = disk_bytes(db)
    return {
        "saver": kind,
        "turns": turns,
        "messages": len(messages),
        "steps": steps,
        "json": json_size,
        "bytes": size,
        "ratio": size / json_size,
        "ms_per_step": (end - start) * 1000 / steps,
        "ms_per_step_last_tenth": (end - tail_start) * 1000 / max(1, steps - tail_steps),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, nargs="*", default=[100, 1000])
    parser.add_argument("--smoke", action="store_true", help="10 turns, a few seconds")
    parser.add_argument(
        "--savers", nargs="*", default=["TreeSaver", "SqliteSaver"], help="which to run"
    )
    args = parser.parse_args()
    sizes = [10] if args.smoke else args.turns
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for turns in sizes:
            for kind in args.savers:
                row = run(kind, turns, Path(tmp))
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    print(
        "| turns | saver | messages | steps | JSON of the messages | bytes on disk | ratio "
        "| ms per step | ms per step, last tenth |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['turns']:,} | {r['saver']} | {r['messages']:,} | {r['steps']:,} "
            f"| {r['json']:,} | {r['bytes']:,} | {r['ratio']:.2f}x "
            f"| {r['ms_per_step']:.2f} | {r['ms_per_step_last_tenth']:.2f} |"
        )


if __name__ == "__main__":
    main()
