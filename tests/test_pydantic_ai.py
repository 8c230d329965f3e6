"""pydantic-ai message history in a tree, with the real pydantic-ai, offline.

Agents run on pydantic-ai's own ``FunctionModel`` (which shows the test exactly what
the model is given) and ``TestModel``.  Expected values are written by hand or are
what pydantic-ai itself returned from a run.
"""

from __future__ import annotations

import asyncio
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai import Agent, AgentRunResult
from pydantic_ai.messages import (
    BinaryContent,
    BinaryImage,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RequestUsage

from ptree import (
    Custom,
    History,
    InvalidMessageError,
    MessageEntry,
    SessionTree,
    SessionWriter,
    build_context,
    load,
)
from ptree.integrations.pydantic_ai import (
    CUSTOM_TYPE,
    PART_FIELD,
    RECORD_FIELD,
    append_messages,
    pi_messages,
    to_messages,
)

T0 = datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)
T0_MS = 1767268800123
T1 = datetime(2026, 1, 1, 12, 0, 1, tzinfo=UTC)
T1_MS = 1767268801000
PNG = b"\x89PNG\r\n\x1a\n"


def old_retries() -> tuple[RetryPromptPart, RetryPromptPart]:
    """Deprecated retry prompts, as older histories hold them: for a tool, and not."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic-ai warns that the class is deprecated
        return (
            RetryPromptPart(
                content="bad args", tool_name="weather", tool_call_id="t0", timestamp=T1
            ),
            RetryPromptPart(content="say it as JSON", tool_call_id="t9", timestamp=T1),
        )


def every_part() -> list[ModelMessage]:
    """A history with every kind of part current pydantic-ai writes, and fields to keep."""
    return [
        ModelRequest(
            parts=[
                SystemPromptPart("Be brief.", timestamp=T0),
                UserPromptPart("Weather?", timestamp=T0),
                UserPromptPart(["Look:", BinaryImage(PNG, media_type="image/png")], timestamp=T0),
            ],
            timestamp=T0,
            run_id="run-1",
            conversation_id="conv-1",
            metadata={"k": [1, 2]},
        ),
        ModelResponse(
            parts=[
                ThinkingPart("Need the tool.", signature="sig-1", provider_name="p"),
                TextPart("Checking."),
                ToolCallPart("weather", {"city": "Paris"}, tool_call_id="t1"),
                ToolCallPart("weather", '{"city": "Rome"}', tool_call_id="t2"),
            ],
            usage=RequestUsage(input_tokens=11, output_tokens=7, cache_read_tokens=3),
            model_name="gpt-test",
            provider_name="openai",
            timestamp=T1,
            finish_reason="tool_call",
            run_id="run-1",
            conversation_id="conv-1",
            provider_response_id="resp-1",
        ),
        ModelRequest(
            parts=[
                ToolReturnPart("weather", "sunny", tool_call_id="t1", timestamp=T1),
                ToolReturnPart(
                    "weather", "city unknown", tool_call_id="t2", timestamp=T1, outcome="retried"
                ),
            ],
            timestamp=T1,
            run_id="run-1",
        ),
        ModelRequest(
            parts=[
                RetryFeedbackPart(
                    "the answer must be JSON", retry=RetryInfo(cause="model_retry"), timestamp=T1
                ),
            ],
            run_id="run-1",
        ),
        ModelRequest(parts=[SystemPromptPart("Only a system prompt.", timestamp=T1)]),
        ModelRequest(parts=[], instructions="Only instructions.", timestamp=T1),
        ModelResponse(parts=[TextPart("Sunny.")], model_name="gpt-test", timestamp=T1),
    ]


class TestRoundTrip:
    def test_equal_after_append(self) -> None:
        """to_messages gives back == messages: timestamps, ids, usage, metadata."""
        messages = every_part()
        tree = append_messages(SessionTree(), messages)
        assert to_messages(tree) == messages

    def test_equal_through_a_file(self, tmp_path: Path) -> None:
        """Written to a Pi file and loaded again, the history is still ==."""
        messages = every_part()
        path = tmp_path / "s.jsonl"
        with SessionWriter(path) as w:
            w.commit(append_messages(w.value, messages))
        assert to_messages(load(path)) == messages

    def test_normalised_as_pydantic_ai_does(self) -> None:
        """Where pydantic-ai's own adapter normalises, the result is what it gives.

        A deprecated ``RetryPromptPart`` comes back as the part that replaces it, and
        ``BinaryContent`` holding an image as ``BinaryImage``, exactly as
        ``ModelMessagesTypeAdapter`` (pydantic-ai's way to store a history) does.
        """
        retry, feedback = old_retries()
        messages: list[ModelMessage] = [
            ModelRequest(
                parts=[
                    UserPromptPart([BinaryContent(PNG, media_type="image/png")], timestamp=T0),
                    retry,
                    feedback,
                ],
                timestamp=T0,
            )
        ]
        adapter = ModelMessagesTypeAdapter
        expected = adapter.validate_python(adapter.dump_python(messages, mode="json"))
        got = to_messages(append_messages(SessionTree(), messages))
        assert got == expected
        parts = got[0].parts
        assert isinstance(parts[0], UserPromptPart)
        assert isinstance(parts[0].content[0], BinaryImage)
        assert isinstance(parts[1], ToolReturnPart)
        assert parts[1].outcome == "retried"
        assert isinstance(parts[2], RetryFeedbackPart)

    def test_entries(self) -> None:
        """One entry per Pi message; the first carries the message, the rest say they are
        part of it."""
        tree = append_messages(SessionTree(), every_part())
        kinds = [
            e.message["role"] if isinstance(e, MessageEntry) else e.type for e in tree.entries()
        ]
        assert kinds == [
            "system",  # request 1: the system prompt (a Pi 1.6 system message)
            "user",
            "user",  # and two user prompts
            "assistant",  # the response
            "toolResult",
            "toolResult",  # request 3: two returns
            "user",  # request 4: retry feedback
            "system",  # request 5: a system prompt alone
            "custom",  # request 6: nothing maps (instructions have no Pi message)
            "assistant",
        ]
        e = tree.entries()
        m = [x.message if isinstance(x, MessageEntry) else {} for x in e]
        assert m[0][RECORD_FIELD]["parts"][0]["content"] == "Be brief."
        assert [m[1][PART_FIELD], m[2][PART_FIELD]] == [True, True]
        assert all(RECORD_FIELD not in x for x in m[1:3])
        assert isinstance(e[8], Custom)
        assert e[8].custom_type == CUSTOM_TYPE


class TestPiMessages:
    """The Pi messages each part becomes (hand-written)."""

    def test_request(self) -> None:
        request = every_part()[0]
        assert pi_messages(request) == [
            {"role": "system", "content": "Be brief.", "timestamp": T0_MS},
            {"role": "user", "content": "Weather?", "timestamp": T0_MS},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Look:"},
                    {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                ],
                "timestamp": T0_MS,
            },
        ]

    def test_response(self) -> None:
        assert pi_messages(every_part()[1]) == [
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": "Need the tool.",
                        "thinkingSignature": "sig-1",
                    },
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "toolCall",
                        "id": "t1",
                        "name": "weather",
                        "arguments": {"city": "Paris"},
                    },
                    {
                        "type": "toolCall",
                        "id": "t2",
                        "name": "weather",
                        "arguments": {"city": "Rome"},
                    },
                ],
                "api": "pydantic-ai",
                "provider": "openai",
                "model": "gpt-test",
                "usage": {
                    "input": 11,
                    "output": 7,
                    "cacheRead": 3,
                    "cacheWrite": 0,
                    "totalTokens": 18,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                },
                "stopReason": "toolUse",
                "timestamp": T1_MS,
            }
        ]

    def test_tool_returns_and_retries(self) -> None:
        retry, feedback = old_retries()
        returns = pi_messages(ModelRequest(parts=[*every_part()[2].parts, retry, feedback]))
        assert [(m["role"], m.get("toolCallId"), m.get("isError")) for m in returns] == [
            ("toolResult", "t1", False),
            ("toolResult", "t2", True),  # retried: the model is told it failed
            ("toolResult", "t0", True),  # an old retry prompt for a tool
            ("user", None, None),  # an old retry prompt for no tool
        ]
        assert returns[0]["content"] == [{"type": "text", "text": "sunny"}]
        assert "bad args" in returns[2]["content"][0]["text"]
        assert "say it as JSON" in returns[3]["content"]
        [message] = pi_messages(every_part()[3])
        assert message["role"] == "user"
        assert "the answer must be JSON" in message["content"]


class TestFromPi:
    """Messages written by Pi (no pydantic-ai record) are converted."""

    def pi_tree(self) -> SessionTree:
        t = SessionTree().append({"role": "user", "content": "Weather?", "timestamp": T0_MS})
        t = t.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Tool.", "thinkingSignature": "s"},
                    {"type": "toolCall", "id": "t1", "name": "weather", "arguments": {"city": "P"}},
                ],
                "provider": "anthropic",
                "model": "claude",
                "usage": {"input": 5, "output": 2, "cacheRead": 1, "cacheWrite": 4},
                "stopReason": "toolUse",
                "timestamp": T1_MS,
            }
        )
        t = t.append(
            {
                "role": "toolResult",
                "toolCallId": "t1",
                "toolName": "weather",
                "content": [{"type": "text", "text": "sunny"}],
                "isError": False,
                "timestamp": T1_MS,
            }
        )
        return t.append(
            {"role": "user", "content": [{"type": "text", "text": "ok"}], "timestamp": T1_MS}
        )

    def test_tree(self) -> None:
        t1 = datetime.fromtimestamp(T1_MS / 1000, tz=UTC)
        t0 = datetime.fromtimestamp(T0_MS / 1000, tz=UTC)
        assert to_messages(self.pi_tree()) == [
            ModelRequest(parts=[UserPromptPart("Weather?", timestamp=t0)], timestamp=t0),
            ModelResponse(
                parts=[
                    ThinkingPart("Tool.", signature="s"),
                    ToolCallPart("weather", {"city": "P"}, tool_call_id="t1"),
                ],
                usage=RequestUsage(
                    input_tokens=5, output_tokens=2, cache_read_tokens=1, cache_write_tokens=4
                ),
                model_name="claude",
                provider_name="anthropic",
                timestamp=t1,
                finish_reason="tool_call",
            ),
            ModelRequest(  # the result and the next user message: one request
                parts=[
                    ToolReturnPart("weather", "sunny", tool_call_id="t1", timestamp=t1),
                    UserPromptPart("ok", timestamp=t1),
                ],
                timestamp=t1,
            ),
        ]

    def test_context_with_compaction(self) -> None:
        """From a Context: what Pi's model sees, the summary as a user prompt."""
        t = self.pi_tree().append_compaction("They asked about weather.", "e4", 100)
        messages = to_messages(build_context(t))
        first = messages[0]
        assert isinstance(first, ModelRequest)
        parts = first.parts
        assert [type(p).__name__ for p in parts] == ["UserPromptPart", "UserPromptPart"]
        assert "They asked about weather." in str(parts[0].content)  # type: ignore[union-attr]
        assert parts[1].content == "ok"  # type: ignore[union-attr]

    def test_system_messages_of_pi_16(self) -> None:
        """Pi 1.6's system messages become system prompt parts (their text, then their
        sections' texts); a patch with only tool changes gives none."""
        t0 = datetime.fromtimestamp(T0_MS / 1000, tz=UTC)
        t = SessionTree().append(
            {
                "role": "system",
                "content": "Be brief.",
                "sections": {"tools": "<tools>read</tools>", "gone": None},
                "timestamp": T0_MS,
            }
        )
        t = t.append({"role": "system", "content": "", "toolsRemoved": [{"name": "bash"}]})
        t = t.append({"role": "user", "content": "Hi", "timestamp": T0_MS})
        expected = [
            ModelRequest(
                parts=[
                    SystemPromptPart("Be brief.\n\n<tools>read</tools>", timestamp=t0),
                    UserPromptPart("Hi", timestamp=t0),
                ],
                timestamp=t0,
            )
        ]
        assert to_messages(t) == expected
        assert to_messages(build_context(t)) == expected


def run(agent: Agent[Any, Any], prompt: str, **kwargs: Any) -> AgentRunResult[Any]:
    """``agent.run`` in a fresh event loop, closed afterwards.

    Not ``run_sync``: it keeps its loop open as the thread's current one for the next
    call, and a test that sets another loop later would leave it to the garbage
    collector (a ResourceWarning, an error here).
    """
    return asyncio.run(agent.run(prompt, **kwargs))


def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


class TestAgent:
    def test_branching_conversation(self, tmp_path: Path) -> None:
        """Turns with tool calls; back to the first answer; the model sees that branch."""
        seen: list[list[ModelMessage]] = []

        def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            seen.append(list(messages))
            last = messages[-1]
            assert isinstance(last, ModelRequest)
            part = last.parts[-1]
            if isinstance(part, UserPromptPart):
                city = str(part.content).split()[-1].rstrip("?")
                return ModelResponse(parts=[ToolCallPart("weather", {"city": city})])
            assert isinstance(part, ToolReturnPart)
            return ModelResponse(parts=[TextPart(f"It is {part.content}.")])

        agent = Agent(FunctionModel(model), system_prompt="Be brief.", tools=[weather])
        path = tmp_path / "chat.jsonl"
        with SessionWriter(path) as w:
            history = History(w.value)
            r1 = run(agent, "Weather in Paris?", message_history=to_messages(w.value))
            assert r1.output == "It is sunny in Paris."
            tree = w.commit(append_messages(w.value, r1.new_messages()))
            history = history.commit(tree)
            first_answer = tree.leaf_id
            r2 = run(agent, "And Rome?", message_history=to_messages(tree))
            tree = w.commit(append_messages(tree, r2.new_messages()))
            history = history.commit(tree)
            assert to_messages(tree) == r2.all_messages()
            old_leaf = tree.leaf_id

            # Back to the first answer; ask something else.
            tree = w.commit(tree.move_to(first_answer))
            history = history.commit(tree)
            assert first_answer is not None
            seen.clear()
            r3 = run(agent, "And London?", message_history=to_messages(tree))
            assert r3.output == "It is sunny in London."
            # The model was given exactly the first turn, then the new question.
            assert seen[0][:-1] == r1.all_messages()
            tree = w.commit(append_messages(tree, r3.new_messages()))
            history = history.commit(tree)

            # Both branches are in the tree.
            assert len(tree.leaves()) == 2
            assert to_messages(tree.move_to(old_leaf)) == r2.all_messages()
            assert to_messages(tree) == r1.all_messages() + r3.new_messages()
            # Undo gives back each earlier value.
            assert to_messages(history.undo().present) == r1.all_messages()
            assert to_messages(history.undo().undo().present) == r2.all_messages()
            assert history.undo().undo().redo().redo().present == tree
        # Reloading from disk gives the same history.
        assert to_messages(load(path)) == r1.all_messages() + r3.new_messages()

    def test_test_model_runs_on_the_history(self) -> None:
        """pydantic-ai's TestModel continues a conversation given by to_messages."""
        agent = Agent(TestModel(), tools=[weather])
        r1 = run(agent, "Weather?")
        tree = append_messages(SessionTree(), r1.new_messages())
        r2 = run(agent, "Again", message_history=to_messages(tree))
        tree = append_messages(tree, r2.new_messages())
        assert to_messages(tree) == r2.all_messages()
        # TestModel calls the tool in the first run only: the tool's result is then
        # in the history it is given.
        assert [m["role"] for m in build_context(tree).messages] == [
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "user",
            "assistant",
        ]


def test_bad_message_refused() -> None:
    """Something that is not a pydantic-ai message is refused, naming its index."""
    bad: Any = [ModelRequest(parts=[UserPromptPart("ok")]), {"kind": "request", "parts": []}]
    with pytest.raises(InvalidMessageError, match=r"messages\[1\].*not dict"):
        append_messages(SessionTree(), bad)


# ---------------------------------------------------------------- property test

texts = st.text(max_size=10)
times = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    # A named function: Hypothesis reads a lambda's source to check that it uses its
    # argument, and a lambda inside a call is not always found.
    return st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**9), 10**9) | texts,
    _containers,
    max_leaves=5,
)
ids = st.sampled_from(["t1", "t2", "t3"])
request_parts: st.SearchStrategy[Any] = st.one_of(
    st.builds(SystemPromptPart, texts, timestamp=times),
    st.builds(UserPromptPart, texts, timestamp=times),
    st.builds(
        lambda t, b, when: UserPromptPart(
            [t, BinaryImage(b, media_type="image/png")], timestamp=when
        ),
        texts,
        st.binary(max_size=8),
        times,
    ),
    st.builds(
        ToolReturnPart,
        st.sampled_from(["f", "g"]),
        texts | json_values,
        ids,
        timestamp=times,
        outcome=st.sampled_from(["success", "failed", "retried"]),
    ),
    st.builds(
        lambda c, when: RetryFeedbackPart(c, retry=RetryInfo(cause="model_retry"), timestamp=when),
        texts,
        times,
    ),
)
response_parts: st.SearchStrategy[Any] = st.one_of(
    st.builds(TextPart, texts),
    st.builds(ThinkingPart, texts, signature=st.none() | texts),
    st.builds(
        ToolCallPart,
        st.sampled_from(["f", "g"]),
        st.dictionaries(texts, json_values, max_size=3),
        ids,
    ),
)
model_messages = st.lists(
    st.one_of(
        st.builds(
            lambda parts, when, run_id: ModelRequest(parts=parts, timestamp=when, run_id=run_id),
            st.lists(request_parts, min_size=1, max_size=3),
            st.none() | times,
            st.none() | texts,
        ),
        st.builds(
            lambda parts, when, name, usage: ModelResponse(
                parts=parts,
                timestamp=when,
                model_name=name,
                usage=RequestUsage(input_tokens=usage[0], output_tokens=usage[1]),
            ),
            st.lists(response_parts, max_size=3),
            times,
            st.none() | texts,
            st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)),
        ),
    ),
    max_size=6,
)


@given(model_messages, model_messages, st.integers(0, 6))
def test_round_trip_and_branches(
    first: list[ModelMessage], second: list[ModelMessage], at: int
) -> None:
    """Any history comes back ==; a branch from any message keeps both sides intact."""
    tree = append_messages(SessionTree(), first)
    assert to_messages(tree) == first
    # Branch after message ``at`` of the first history: walk back over its entries.
    cut = min(at, len(first))
    keep = append_messages(SessionTree(), first[:cut])
    branched = append_messages(tree.move_to(keep.leaf_id), second)
    assert to_messages(branched) == first[:cut] + second
    assert to_messages(tree) == first  # the value branched from is unchanged
    assert to_messages(branched.move_to(tree.leaf_id)) == first


class TestThroughContext:
    """Issue 27: ``to_messages(build_context(tree))`` is as exact as ``to_messages(tree)``."""

    @staticmethod
    def three_runs(model: Any) -> tuple[SessionTree, list[ModelMessage]]:
        """Three runs of an agent with a system prompt and a tool, each given the history
        back from the tree through a context, the new messages appended after each."""
        agent: Agent[None, str] = Agent(model, system_prompt="Be brief.")

        @agent.tool_plain
        def forecast(city: str) -> str:
            return f"rain in {city}"

        tree = SessionTree()
        appended: list[ModelMessage] = []
        for prompt in ("Forecast?", "And tomorrow?", "Thanks."):
            history = to_messages(build_context(tree)) if appended else None
            result = run(agent, prompt, message_history=history)
            tree = append_messages(tree, result.new_messages())
            appended += result.new_messages()
        return tree, appended

    def test_test_model(self) -> None:
        """With pydantic-ai's TestModel: both routes give back == messages, the system
        prompt, run and conversation ids, full timestamps and finish reasons among them."""
        tree, appended = self.three_runs(TestModel())
        first = appended[0]
        assert isinstance(first, ModelRequest)
        assert isinstance(first.parts[0], SystemPromptPart)
        assert first.run_id is not None
        assert first.conversation_id is not None
        assert to_messages(build_context(tree)) == appended
        assert to_messages(tree) == appended

    def test_function_model(self) -> None:
        """With a FunctionModel calling the tool on every run: the same."""

        def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            last = messages[-1]
            if isinstance(last, ModelRequest) and isinstance(last.parts[-1], UserPromptPart):
                return ModelResponse(parts=[ToolCallPart("forecast", {"city": "Paris"})])
            return ModelResponse(parts=[TextPart("Rain.")], finish_reason="stop")

        tree, appended = self.three_runs(FunctionModel(answer))
        assert len(appended) == 12
        assert to_messages(build_context(tree)) == appended
        assert to_messages(tree) == appended

    def test_pi_sees_the_system_prompt(self) -> None:
        """The system prompt is a Pi 1.6 system message in the context, so Pi 1.6's
        model gets it too (hand-written)."""
        tree, _ = self.three_runs(TestModel())
        systems = [m for m in build_context(tree).messages if m["role"] == "system"]
        assert [m["content"] for m in systems] == ["Be brief."]

    def test_files_of_the_earlier_layout(self) -> None:
        """Entries written when the record sat beside the message (in the entry's own
        fields) still give back == messages from the tree."""
        messages = every_part()[:3]
        new = append_messages(SessionTree(), messages)
        old = SessionTree()
        for entry in new.entries():
            assert isinstance(entry, MessageEntry)
            message = dict(entry.message)
            extra: dict[str, Any] = {}
            if RECORD_FIELD in message:
                extra[RECORD_FIELD] = message.pop(RECORD_FIELD)
            elif message.pop(PART_FIELD, None):
                extra[PART_FIELD] = "e1"
            old = old.append_entry(
                MessageEntry(
                    id=entry.id, parent_id=old.leaf_id, timestamp=entry.timestamp,
                    message=message, extra=extra,
                )
            )  # fmt: skip
        assert to_messages(old) == messages
