"""Writes the fixture of a LangGraph thread stored by TreeSaver as of commit 678b173,
before checkpoint entries left out their usual metadata, rest and versions.

    git stash  # (or check out 678b173)
    python tests/langgraph_v1/make_thread.py

``thread.jsonl`` is the thread's ptree session; ``expected.json`` what that saver's
``list`` gave for it (each checkpoint but its channel values, its metadata, its parent,
its messages as ``messages_to_dict`` and its pending writes' tasks and channels).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from langchain_core.messages import HumanMessage, messages_to_dict  # noqa: E402

from ptree import dump  # noqa: E402
from ptree.integrations.langgraph import TreeSaver  # noqa: E402
from tests.test_langgraph import _graph  # noqa: E402


def listed(saver: TreeSaver) -> list[dict[str, Any]]:
    rows = []
    for t in saver.list({"configurable": {"thread_id": "chat"}}):
        checkpoint = {k: v for k, v in t.checkpoint.items() if k != "channel_values"}
        rows.append(
            {
                "id": t.config["configurable"]["checkpoint_id"],
                "parent": t.parent_config and t.parent_config["configurable"]["checkpoint_id"],
                "checkpoint": checkpoint,
                "metadata": t.metadata,
                "messages": messages_to_dict(t.checkpoint["channel_values"].get("messages", [])),
                "writes": [[task, channel] for task, channel, _ in t.pending_writes or []],
            }
        )
    return rows


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        saver = TreeSaver(f"sqlite://{tmp}/t.db")
        graph = _graph(saver)
        config: Any = {"configurable": {"thread_id": "chat"}}
        for i in range(3):
            graph.invoke({"messages": [HumanMessage(f"question {i}", id=f"h{i}")]}, config)
        history = list(graph.get_state_history(config))
        graph.invoke(None, history[5].config)  # a branch
        forked = graph.update_state(
            history[8].config, {"messages": [HumanMessage("other", id="o")]}
        )
        graph.invoke(None, forked)
        dump(saver.thread("chat"), HERE / "thread.jsonl", overwrite=True)
        (HERE / "expected.json").write_text(json.dumps(listed(saver), indent=1) + "\n")
        saver.close()


if __name__ == "__main__":
    main()
