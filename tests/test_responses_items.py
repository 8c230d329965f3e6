"""Pi messages -> OpenAI Responses input items: one conversion, pi-ai's, for every layer.

- ``ptree.providers.responses_items`` told message by message is pi-ai's ``input``
  (seeded conversations against pi-ai 1.6.0 itself);
- a ``TreeSession`` over a session Pi wrote with the Responses API returns, from
  ``get_items``, the input items pi-ai builds for it (Pi 1.6's session manager and
  ``convertToLlm``, then pi-ai's ``convertResponsesMessages``, run by Node): plain
  string text signatures, ``phase``, ``fc_`` item ids of foreign calls, arguments as
  ``JSON.stringify`` writes them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ptree import load
from ptree.integrations.openai_agents import TreeSession
from ptree.providers import payload, responses_items

from .provider_cases import Reference, body_part, install_reference, seeded_cases
from .test_js_rules import _require_node
from .test_pi16 import PI16
from .test_pi_interop import node

TS = "2026-12-03T10:00:00.000Z"
NO_RESULT = "No result provided"


@pytest.fixture(scope="module")
def pi_ai() -> Iterator[Reference]:
    """pi-ai 1.6.0 in one Node process for the module."""
    install_reference()
    ref = Reference()
    yield ref
    ref.close()


class TestResponsesItems:
    """``responses_items`` joined is pi-ai's ``input``, message by message."""

    def test_seeded_against_pi_ai(self, pi_ai: Reference) -> None:
        """250 seeded Responses conversations: joined, the items are pi-ai's input, but for
        the instructions (system messages, which give no items of their own) and results
        pi-ai makes up at the very end of a conversation (left out, documented)."""
        cases = [c for c in seeded_cases(1200, seed=27) if c["api"] == "openai-responses"]
        cases = [{**c, "system": None, "tools": []} for c in cases][:250]
        assert len(cases) == 250
        answers = pi_ai.ask_many(cases)
        for case, answer in zip(cases, answers, strict=True):
            expected = body_part(answer["body"])["input"]
            while expected and expected[0].get("role") in ("system", "developer"):
                expected = expected[1:]
            per = responses_items(
                case["messages"],
                provider=case["provider"],
                model=case["model"],
                reasoning=case.get("reasoning", False),
                images=case.get("images", True),
            )
            assert len(per) == len(case["messages"])
            joined = [item for items in per for item in items]
            tail = expected[len(joined) :]
            assert expected[: len(joined)] == joined, json.dumps(case)[:2000]
            assert all(i.get("output") == NO_RESULT for i in tail), tail

    def test_made_up_result_goes_with_the_next_turn(self) -> None:
        """A call left unanswered: its made-up result opens the next user message's items."""
        call = {"type": "toolCall", "id": "c1|fc_1", "name": "f", "arguments": {}}
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [call], "api": "openai-responses",
             "provider": "openai", "model": "gpt-5", "stopReason": "toolUse"},
            {"role": "user", "content": "next"},
        ]  # fmt: skip
        per = responses_items(messages, provider="openai", model="gpt-5")
        assert per[2] == [
            {"type": "function_call_output", "call_id": "c1", "output": NO_RESULT},
            {"role": "user", "content": [{"type": "input_text", "text": "next"}]},
        ]
        joined = [i for items in per for i in items]
        assert joined == payload(messages, api="openai-responses", provider="openai",
                                 model="gpt-5")["input"]  # fmt: skip


# ------------------------------------------------------------ a session Pi wrote, replayed


def _pi_session(path: Path) -> Path:
    """A session as Pi writes it with the OpenAI Responses API (model gpt-test), with
    what the old conversion got wrong: a plain-string text signature, a ``phase``, a
    tool call of another provider, a text without a signature, a bash run."""

    def e(i: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
        return {"type": "message", "id": i, "parentId": parent, "timestamp": TS, "message": message}

    def assistant(content: list[Any], **over: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": content, "api": "openai-responses",
                "provider": "openai", "model": "gpt-test", "stopReason": "stop",
                "usage": {"input": 1, "output": 1}, "timestamp": 2, **over}  # fmt: skip

    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text",
                 "text": "think"}], "encrypted_content": "enc"}  # fmt: skip
    header = {"type": "session", "version": 3, "id": "resp", "timestamp": TS, "cwd": "/w"}
    records = [
        header,
        e("m1", None, {"role": "user", "content": "Weather?", "timestamp": 1}),
        e("m2", "m1", assistant([
            {"type": "thinking", "thinking": "think", "thinkingSignature": json.dumps(reasoning)},
            {"type": "text", "text": "Looking.", "textSignature":
                '{"v":1,"id":"msg_a","phase":"commentary"}'},
            {"type": "toolCall", "id": "call_1|fc_1", "name": "weather",
             "arguments": {"city": "Paris", "n": 1.0, "big": 2**60}},
        ], stopReason="toolUse")),
        e("m3", "m2", {"role": "toolResult", "toolCallId": "call_1|fc_1", "toolName": "weather",
                       "content": [{"type": "text", "text": "rain"}], "isError": False,
                       "timestamp": 3}),
        e("m4", "m3", assistant([{"type": "text", "text": "Rain.", "textSignature": "msg_plain"}])),
        e("m5", "m4", {"role": "bashExecution", "command": "date", "output": "Thu",
                       "exitCode": 0, "timestamp": 4}),
        e("m6", "m5", {"role": "user", "content": [{"type": "text", "text": "Rome?"}],
                       "timestamp": 5}),
        e("m7", "m6", assistant([
            {"type": "toolCall", "id": "toolu_9|item_9", "name": "weather",
             "arguments": {"city": "Rome"}},
        ], api="anthropic-messages", provider="anthropic", model="claude", stopReason="toolUse")),
        e("m8", "m7", {"role": "toolResult", "toolCallId": "toolu_9|item_9",
                       "toolName": "weather", "content": [{"type": "text", "text": "sun"}],
                       "isError": False, "timestamp": 6}),
        e("m9", "m8", assistant([{"type": "text", "text": "Sun."}])),
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


class TestTreeSessionOverPi:
    """The items a TreeSession gives for Pi's messages are those pi-ai sends."""

    def test_get_items_is_pi_ai_input(self, tmp_path: Path) -> None:
        """get_items over a Responses session Pi wrote equals pi-ai's input items."""
        _require_node(PI16)
        path = _pi_session(tmp_path / "resp.jsonl")
        seen = node("pi_responses_input.mjs", PI16, path, "gpt-test")

        async def items() -> tuple[list[Any], list[Any]]:
            async with TreeSession("resp", tree=load(path), model="gpt-test") as session:
                return await session.get_items(), await session.get_items(3)

        every, latest = asyncio.run(items())
        assert json.loads(json.dumps(every)) == seen["input"]
        assert json.loads(json.dumps(latest)) == seen["input"][-3:]

    def test_what_the_old_conversion_lost(self, tmp_path: Path) -> None:
        """Hand-written: the plain signature names the item, phase stays, a foreign call's
        item id starts with fc_, numbers are written as JSON.stringify writes them."""
        path = _pi_session(tmp_path / "resp.jsonl")

        async def items() -> list[Any]:
            async with TreeSession("resp", tree=load(path), model="gpt-test") as session:
                return await session.get_items()

        got = asyncio.run(items())
        texts = [i for i in got if i.get("type") == "message"]
        assert [(t["id"], t.get("phase")) for t in texts] == [
            ("msg_a", "commentary"),
            ("msg_plain", None),
            ("msg_pi_8", None),  # the ninth message (pi-ai counts from 0)
        ]
        calls = [i for i in got if i.get("type") == "function_call"]
        assert calls[0]["arguments"] == '{"city":"Paris","n":1,"big":1152921504606847000}'
        assert calls[1]["id"].startswith("fc_")
        assert calls[1]["call_id"] == "toolu_9"
