"""Sessions written through the framework adapters, opened by Pi 0.73.1 itself (Node).

A ``TreeSession`` file must give Pi's ``SessionManager`` the same context ptree builds,
and Pi's own OpenAI Responses provider must turn that context into the input items the
Agents SDK sent (written out by hand below).  A pydantic-ai history written with
``append_messages`` must give Pi the same context as ptree.  The package and the
``node`` helper are those of ``tests/test_pi_interop.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("OPENAI_API_KEY", "sk-test-not-used")  # nothing reaches the network

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from openai.types.responses import ResponseReasoningItem
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import AgentRunResult
from pydantic_ai.models.test import TestModel

from ptree import SessionWriter, build_context, load
from ptree.integrations.openai_agents import TreeSession
from ptree.integrations.pydantic_ai import append_messages
from tests.test_pi_interop import node, pi_package  # noqa: F401 - pi_package is a fixture

pytestmark = pytest.mark.slow
set_tracing_disabled(True)


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def run(agent: PydanticAgent[Any, Any], prompt: str, **kwargs: Any) -> AgentRunResult[Any]:
    """``agent.run`` in a fresh event loop, closed afterwards (see test_pydantic_ai.run)."""
    return asyncio.run(agent.run(prompt, **kwargs))


def plain(value: Any) -> Any:
    return json.loads(json.dumps(value))


def test_tree_session_file_in_pi(pi_package: Path, tmp_path: Path) -> None:  # noqa: F811
    """Pi builds ptree's context from the file and would send the SDK's items."""
    path = tmp_path / "chat.jsonl"
    model = ScriptedModel(
        [
            [
                ResponseReasoningItem(type="reasoning", id="rs1", summary=[]),
                function_call("weather", {"city": "Paris"}, call_id="c1", item_id="fc_1"),
                function_call("weather", {"city": "Rome"}, call_id="c2", item_id="fc_2"),
            ],
            [assistant_message("Sunny in both.", item_id="msg_1")],
        ]
    )
    agent = Agent(name="assistant", model=model, tools=[weather])

    async def scenario() -> None:
        async with TreeSession("chat", path, model="gpt-test") as session:
            await Runner.run(agent, "Weather in Paris and Rome?", session=session)

    asyncio.run(scenario())
    seen = node("pi_responses_input.mjs", pi_package, path, "gpt-test")
    assert seen["context"]["messages"] == plain(list(build_context(load(path)).messages))
    assert seen["input"] == [
        {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris and Rome?"}]},
        {"type": "reasoning", "id": "rs1", "summary": []},
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "c1",
            "name": "weather",
            "arguments": '{"city":"Paris"}',
        },
        {
            "type": "function_call",
            "id": "fc_2",
            "call_id": "c2",
            "name": "weather",
            "arguments": '{"city":"Rome"}',
        },
        {"type": "function_call_output", "call_id": "c1", "output": "sunny in Paris"},
        {"type": "function_call_output", "call_id": "c2", "output": "sunny in Rome"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Sunny in both.", "annotations": []}],
            "status": "completed",
            "id": "msg_1",
        },
    ]


def test_pydantic_ai_file_in_pi(pi_package: Path, tmp_path: Path) -> None:  # noqa: F811
    """Pi builds the same context as ptree from a pydantic-ai history's file."""
    agent = PydanticAgent(TestModel(), system_prompt="Be brief.")

    @agent.tool_plain
    def forecast(city: str) -> str:
        return f"rain in {city}"

    result = run(agent, "Forecast?")
    path = tmp_path / "chat.jsonl"
    with SessionWriter(path) as w:
        w.commit(append_messages(w.value, result.all_messages()))
    [view] = node("pi_read.mjs", pi_package, path)
    context = view["context"]["messages"]
    assert context == plain(list(build_context(load(path)).messages))
    # the system prompt is a Pi 1.6 system message: Pi 0.73.1 keeps it in the context
    # and leaves it out of what its model gets
    roles = ["system", "user", "assistant", "toolResult", "assistant"]
    assert [m["role"] for m in context] == roles
    assert context[0]["content"] == "Be brief."
    assert context[2]["content"][0]["type"] == "toolCall"
    assert context[3]["toolCallId"] == context[2]["content"][0]["id"]
    assert view["context"]["model"] == {"provider": "test", "modelId": "test"}
