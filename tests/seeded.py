"""Seeded random sessions for the Pi 1.6 interop tests: hundreds per Node run.

Hypothesis draws are capped in size, so the big batches (hundreds of sessions, each
checked at every entry) come from a seeded ``random.Random`` instead: the same seed
gives the same sessions, and a failure names its seed.  Two generators:

- :func:`random_tree`: a ptree tree of every entry kind and Pi 1.6 shape (usage
  entries, context edits aimed anywhere, system messages, checkpoints, compactions
  keeping nothing, contentless messages, null displays), with branches;
- :func:`random_ops`: a script of Pi 1.6 ``SessionManager`` calls for
  ``tests/interop/pi16.mjs`` (entries named by their index among those made so far).
"""

from __future__ import annotations

import random
from typing import Any

import ptree

TEXTS = [
    "",
    "hi",
    "a longer answer",
    "é方",
    ' "quoted" \\ ',
    "line\nbreak",
    " \u001c ",
    "\ufeff",
    "\u3000 wide \u00a0",
    "\u0085x\u0085",
    "\r\n name \r",
    " \u200b ",
]
TIMESTAMPS = ["2026-11-20T09:00:00.000Z", "2026-11-20T09:04:00.123Z", "2025-12-09T00:53:29.825Z"]


def _text(rng: random.Random) -> str:
    return rng.choice(TEXTS)


def _content(rng: random.Random) -> Any:
    if rng.random() < 0.5:
        return _text(rng)
    return [{"type": "text", "text": _text(rng)} for _ in range(rng.randint(1, 2))]


def _usage(rng: random.Random) -> dict[str, Any]:
    cost = {k: rng.choice([0, 0.015, 0.5]) for k in ("input", "output", "cacheRead")}
    cost.update(cacheWrite=0, total=sum(cost.values()))
    return {
        "input": rng.randint(0, 999),
        "output": rng.randint(0, 999),
        "cacheRead": rng.randint(0, 99_999),
        "cacheWrite": 0,
        "totalTokens": rng.randint(0, 99_999),
        "cost": cost,
    }


def _tool(rng: random.Random) -> dict[str, Any]:
    name = rng.choice(["read", "bash", "edit"])
    return {"name": name, "description": _text(rng), "parameters": {"type": "object"}}


def random_message(rng: random.Random, clock: int) -> dict[str, Any]:
    """A message of any role Pi stores, sometimes without content."""
    role = rng.choice(
        ["user", "user", "assistant", "assistant", "toolResult", "system", "bashExecution"]
    )
    if rng.random() < 0.08:
        out: dict[str, Any] = {"role": role, "timestamp": clock}
        if rng.random() < 0.5:
            out["content"] = None
        return out
    if role == "user":
        return {"role": "user", "content": _content(rng), "timestamp": clock}
    if role == "assistant":
        provider, model = rng.choice(
            [("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-5.1-codex")]
        )
        return {
            "role": "assistant",
            "content": [{"type": "text", "text": _text(rng)}],
            "api": "anthropic-messages",
            "provider": provider,
            "model": model,
            "usage": _usage(rng),
            "stopReason": "stop",
            "timestamp": clock,
        }
    if role == "toolResult":
        return {
            "role": "toolResult",
            "toolCallId": "call1",
            "toolName": "read",
            "content": [{"type": "text", "text": _text(rng)}],
            "isError": False,
            "timestamp": clock,
        }
    if role == "bashExecution":
        return {
            "role": "bashExecution",
            "command": "ls",
            "output": _text(rng),
            "exitCode": rng.choice([0, 1]),
            "cancelled": False,
            "truncated": False,
            "excludeFromContext": rng.random() < 0.3,
            "timestamp": clock,
        }
    system: dict[str, Any] = {"role": "system", "content": _content(rng)}
    if rng.random() < 0.6:
        system["sections"] = {
            rng.choice(["tools", "skills", "a"]): rng.choice([None, "A", "B"])
            for _ in range(rng.randint(1, 2))
        }
    if rng.random() < 0.5:
        system["toolsAdded"] = [_tool(rng) for _ in range(rng.randint(1, 2))]
    if rng.random() < 0.3:
        system["toolsRemoved"] = [{"name": rng.choice(["read", "bash"])}]
    if rng.random() < 0.9:
        system["timestamp"] = clock
    return system


def random_tree(rng: random.Random, steps: int) -> ptree.SessionTree:
    """A tree of every kind ptree knows, in every Pi 1.6 shape, with branches."""
    tree = ptree.SessionTree()
    for step in range(steps):
        ids = tree.ids()
        if ids and rng.random() < 0.15:
            tree = tree.move_to(rng.choice([None, *ids]))
        ts = rng.choice(TIMESTAMPS)
        new_id = ptree.ids.counter_ids(tree)
        kind = rng.choice(
            ["message"] * 6
            + ["thinking", "model", "usage", "edit", "edit", "compaction", "compaction"]
            + ["branch", "custom", "custom_message", "label", "session_info", "unknown"]
        )
        leaf = tree.leaf_id
        if kind == "message":
            tree = tree.append(random_message(rng, step), timestamp=ts)
        elif kind == "thinking":
            tree = tree.append_thinking_level_change(rng.choice(["off", "low", "high"]))
        elif kind == "model":
            tree = tree.append_model_change(rng.choice(["p", "q"]), rng.choice(["m", "n"]))
        elif kind == "usage":
            tree = tree.append_usage(
                rng.choice(["cache_warm", "classifier"]),
                "anthropic",
                "claude-sonnet-4-5",
                _usage(rng),
                note=rng.choice([None, "", "warm"]),
                timestamp=ts,
            )
        elif kind == "edit":
            target = rng.choice([*ids, "nowhere"]) if ids else "nowhere"
            replacement = None if rng.random() < 0.4 else {"content": _content(rng)}
            tree = tree.insert(
                ptree.ContextEdit(
                    id=new_id,
                    parent_id=leaf,
                    timestamp=ts,
                    target_id=target,
                    replacement=replacement,
                )
            )
        elif kind == "compaction":
            first = rng.choice([None, "null", new_id, *ids[-6:]])
            checkpoint = random_message(rng, step) if rng.random() < 0.4 else None
            if checkpoint is not None:
                checkpoint = {**checkpoint, "role": "system"}
            tree = tree.insert(
                ptree.Compaction(
                    id=new_id,
                    parent_id=leaf,
                    timestamp=ts,
                    summary=_text(rng),
                    first_kept_entry_id=None if first == "null" else first,
                    tokens_before=rng.randint(0, 10**6),
                    usage=_usage(rng) if rng.random() < 0.5 else None,
                    system_message=checkpoint,
                    extra={"firstKeptEntryId": None} if first == "null" else None,
                )
            )
        elif kind == "branch":
            tree = tree.append_branch_summary(
                rng.choice(["root", *(ids[-3:] or ["root"])]),
                _text(rng),
                usage=_usage(rng) if rng.random() < 0.5 else None,
                timestamp=ts,
            )
        elif kind == "custom":
            tree = tree.append_custom("ext", {"n": step})
        elif kind == "custom_message":
            extra = {k: None for k in ("content", "display", "details") if rng.random() < 0.25}
            tree = tree.insert(
                ptree.CustomMessage(
                    id=new_id,
                    parent_id=leaf,
                    timestamp=ts,
                    custom_type="ext",
                    content=None if "content" in extra or rng.random() < 0.1 else _content(rng),
                    display=None if "display" in extra else rng.choice([None, True, False]),
                    details=None if "details" in extra else rng.choice([None, {"k": 1}]),
                    extra=extra,
                )
            )
        elif kind == "label" and ids:
            tree = tree.append_label(rng.choice(ids), rng.choice([None, "", "tag", "other"]))
        elif kind == "session_info":
            tree = tree.insert(
                ptree.SessionInfo(id=new_id, parent_id=leaf, timestamp=ts, name=_text(rng))
            )
        else:
            tree = tree.insert(
                ptree.UnknownEntry(
                    id=new_id,
                    parent_id=leaf,
                    timestamp=ts,
                    entry_type="future_kind",
                    extra={"payload": [step]},
                )
            )
    return tree


def random_ops(rng: random.Random, steps: int) -> list[list[Any]]:
    """A script of Pi 1.6 SessionManager calls (see ``tests/interop/pi16.mjs``)."""
    ops: list[list[Any]] = [["message", random_message(rng, 0) | {"role": "user"}]]
    if rng.random() < 0.5:
        ops.insert(0, ["message", {"role": "system", "content": "Base.", "timestamp": 0}])
    for step in range(1, steps):
        k = rng.randrange(1000)
        kind = rng.choice(
            ["message"] * 6
            + ["thinking", "model", "usage", "compaction", "custom", "session_info"]
            + ["custom_message", "edit", "edit", "label", "branch", "reset", "branch_summary"]
            + (["fork"] if rng.random() < 0.1 else [])
        )
        if kind == "message":
            ops.append(["message", random_message(rng, step)])
        elif kind == "thinking":
            ops.append(["thinking", rng.choice(["off", "low", "high"])])
        elif kind == "model":
            ops.append(["model", rng.choice(["p", "q"]), rng.choice(["m", "n"])])
        elif kind == "usage":
            ops.append(
                ["usage", "cache_warm", "anthropic", "m", _usage(rng), rng.choice(["", "note"])]
            )
        elif kind == "compaction":
            ops.append(
                [
                    "compaction",
                    _text(rng),
                    None if rng.random() < 0.3 else k,
                    rng.randint(0, 10**5),
                    rng.choice([None, {"readFiles": ["a"]}]),
                    rng.choice([None, True]),
                    rng.choice([None, _usage(rng)]),
                ]
            )
        elif kind == "custom":
            ops.append(["custom", "ext", {"n": step}])
        elif kind == "session_info":
            ops.append(["session_info", _text(rng)])
        elif kind == "custom_message":
            ops.append(
                [
                    "custom_message",
                    "ext",
                    rng.choice([_content(rng), None]),
                    rng.choice([True, False, None]),
                    rng.choice([None, {"k": 1}]),
                ]
            )
        elif kind == "edit":
            replacement = None if rng.random() < 0.4 else {"content": _content(rng)}
            ops.append(["context_edit", k, replacement])
        elif kind == "label":
            ops.append(["label", k, rng.choice(["tag", "", "other"])])
        elif kind == "branch":
            ops.append(["branch", k])
        elif kind == "reset":
            ops.append(["reset"])
        elif kind == "branch_summary":
            ops.append(
                [
                    "branch_summary",
                    None if rng.random() < 0.15 else k,
                    _text(rng),
                    rng.choice([None, {"files": []}]),
                    rng.choice([None, False]),
                    rng.choice([None, _usage(rng)]),
                ]
            )
        else:
            ops.append(["fork", k])
    return ops
