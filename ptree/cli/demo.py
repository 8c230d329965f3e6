"""``ptree demo``: the teaching chapter's scenario, on persistent values."""

from __future__ import annotations

from typing import TextIO

from ..entries import MessageEntry
from ..tree import SessionTree
from .text import message_text

__all__ = ["run_demo"]


def _print_path(tree: SessionTree, title: str, out: TextIO) -> None:
    print(f"[{title}]", file=out)
    for message in tree.current_path():
        print(f"{message['role']}: {message_text(message)}", file=out)


def run_demo(out: TextIO) -> None:
    """Grow plan A, go back and grow plan B, print both to ``out``; plan A's value is
    untouched.  O(1): a fixed scenario.

    Args:
        out: where to print.
    """
    print("ptree — history is not a line, it is a tree\n", file=out)
    question = SessionTree().append({"role": "user", "content": "方案 A"})
    plan_a = question.append({"role": "assistant", "content": "A 的回答"})
    plan_b = plan_a.move_to(question.leaf_id).append({"role": "assistant", "content": "改走方案 B"})

    _print_path(plan_a, "路径：方案 A", out)
    print(file=out)
    _print_path(plan_b, "路径：方案 B", out)
    print(file=out)
    print("[所有节点]", file=out)
    for entry in plan_b.entries():
        assert isinstance(entry, MessageEntry)  # the demo appends messages only
        parent = "null" if entry.parent_id is None else entry.parent_id
        print(
            f"{entry.id} parent={parent} {entry.message['role']}: {message_text(entry.message)}",
            file=out,
        )

    print(file=out)
    print("[方案 A 的值没有变]  (plan A's value after plan B was made)", file=out)
    print(f"plan_a = {plan_a!r}  leaf={plan_a.leaf_id}", file=out)
    print(f"plan_b = {plan_b!r}  leaf={plan_b.leaf_id}", file=out)
    print(
        f"plan_a.current_path() is still: {[message_text(m) for m in plan_a.current_path()]}",
        file=out,
    )
    print(f"'e3' in plan_a: {'e3' in plan_a};  'e3' in plan_b: {'e3' in plan_b}", file=out)
