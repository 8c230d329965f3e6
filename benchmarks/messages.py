"""Realistic messages for the benchmarks: what Pi really stores, not toy dicts.

The cost of protecting a message (ptree's freeze, baseline (b)'s deep copy) grows with
its size, so a benchmark with ``{"role": "user", "content": "hi"}`` would flatter
every copying design.  The pool is read from the real Pi sessions in
``/work/shared/fixtures/pi/`` (user, assistant and tool-result messages as Pi wrote
them; 1,904 messages, 1.7 KB of JSON each on average); where those files are absent, a
built-in mix of the same shapes and sizes stands in.  Either way the pool says where it
came from, and the README reports which one a run used.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["FIXTURES", "Pool", "load_pool"]

FIXTURES = Path(os.environ.get("PTREE_PI_FIXTURES", "/work/shared/fixtures/pi"))

Message = dict[str, Any]


class Pool:
    """A list of plain-dict messages and where they came from."""

    def __init__(self, messages: list[Message], source: str) -> None:
        self.messages = messages
        self.source = source
        self.mean_json_bytes = sum(len(json.dumps(m)) for m in messages) / len(messages)

    def take(self, n: int) -> list[Message]:
        """``n`` messages, cycling through the pool (the same dicts are reused: the
        tree under test must copy or freeze each one, as it would a caller's)."""
        pool = self.messages
        k = len(pool)
        return [pool[i % k] for i in range(n)]


def _from_fixtures() -> list[Message]:
    out: list[Message] = []
    for path in sorted(FIXTURES.glob("*.jsonl")):
        with path.open(encoding="utf-8") as f:
            for line in f:
                obj = json.loads(line)
                if obj.get("type") == "message" and isinstance(obj.get("message"), dict):
                    out.append(obj["message"])
    return out


def _usage(i: int) -> Message:
    return {
        "input": 3 + i,
        "output": 120 + i,
        "cacheRead": 18000 + 7 * i,
        "cacheWrite": 400,
        "totalTokens": 18523 + 8 * i,
        "cost": {
            "input": 9e-06,
            "output": 0.0018,
            "cacheRead": 0.0054,
            "cacheWrite": 0.0015,
            "total": 0.0087,
        },
    }


def _fallback() -> list[Message]:
    """The mix of the real files, made up: a user turn, an assistant turn with text
    and a tool call, and a tool result with a page of output (about 1 KB of JSON each
    on average, a little less than the real files' 1.7 KB)."""
    out: list[Message] = []
    for i in range(300):
        out.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": f"Please look at module {i} and fix the failing test. " * 3,
                    }
                ],
                "timestamp": 1763681630791 + i,
            }
        )
        out.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"I'll read the file first ({i}). " * 4},
                    {
                        "type": "toolCall",
                        "id": f"toolu_{i:024d}",
                        "name": "read",
                        "arguments": {"path": f"/home/user/project/src/module_{i}.py"},
                    },
                ],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": _usage(i),
                "stopReason": "toolUse",
                "timestamp": 1763681631000 + i,
            }
        )
        out.append(
            {
                "role": "toolResult",
                "toolCallId": f"toolu_{i:024d}",
                "toolName": "read",
                "content": [{"type": "text", "text": f"def f{i}(x):\n    return x + {i}\n" * 60}],
                "isError": False,
                "timestamp": 1763681632000 + i,
            }
        )
    return out


def load_pool() -> Pool:
    """The real Pi messages if the fixtures are here, else the built-in mix."""
    real = _from_fixtures()
    if real:
        return Pool(real, f"{len(real)} messages of the Pi sessions in {FIXTURES}")
    return Pool(_fallback(), "the built-in mix (Pi fixtures not found)")
