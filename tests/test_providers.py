"""ptree.providers against pi-ai 1.6.0 itself, run offline in Node.

Three kinds of checks:

* generated conversations (seeded, hundreds per API, and Hypothesis-driven): ``payload``
  must equal the conversation fields of the body pi-ai sends;
* one named test per rule of ``docs/providers.md``: a small conversation whose expected
  fragment is written here by hand, and whose whole body must also equal pi-ai's;
* hand-written replies of each API: ``assistant_message`` must equal the message pi-ai
  builds when the same reply arrives as a stream.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptree import Context
from ptree.providers import APIS, ProviderError, assistant_message, payload

from .provider_cases import (
    Chooser,
    DrawChooser,
    Reference,
    body_part,
    cases,
    install_reference,
    seeded_cases,
)
from .provider_replies import REPLIES, reply_case


@pytest.fixture(scope="module")
def pi_ai() -> Iterator[Reference]:
    """pi-ai 1.6.0 in one Node process for the whole module."""
    install_reference()
    ref = Reference()
    yield ref
    ref.close()


def as_doubles(value: Any) -> Any:
    """A JSON value with every number as a double, the way JavaScript holds it.

    pi-ai writes 2**60 as 1152921504606847000, Python as 1152921504606846976: the same
    double, written two ways; only numbers change here.
    """
    return json.loads(json.dumps(value), parse_int=float)


def ours(case: dict[str, Any]) -> dict[str, Any]:
    return payload(
        case["messages"],
        api=case["api"],
        provider=case["provider"],
        model=case["model"],
        system=case.get("system"),
        tools=case.get("tools") or (),
        reasoning=case.get("reasoning", False),
        images=case.get("images", True),
    )


def theirs(pi_ai: Reference, case: dict[str, Any]) -> dict[str, Any]:
    answer = pi_ai.ask_many([{"kind": "payload", **case}])[0]
    return body_part(answer["body"])


class Hashed(str):
    """An expected id whose tail is pi-ai's short hash: the prefix is written here, the
    whole id must equal the one in pi-ai's body."""


def expected_body(case: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any] | None:
    """pi-ai's conversation fields, or None where Google's SDK sent nothing."""
    if "body" not in answer:
        # Google's SDK refuses an empty conversation before sending anything; ptree
        # returns the empty list and lets the API say no.
        assert case["api"] == "google-generative-ai", answer
        assert answer["error"].startswith("contents are required"), answer
        return None
    return body_part(answer["body"])


def assert_same(
    case: dict[str, Any], mine: dict[str, Any], reference: dict[str, Any] | None
) -> None:
    if reference is None:
        assert mine["contents"] == [], json.dumps(case)[:4000]
        return
    assert as_doubles(mine) == as_doubles(reference), json.dumps(case)[:4000]


class TestGeneratedConversations:
    """``payload`` equals pi-ai's body on generated conversations."""

    def test_seeded_cases_every_api(self, pi_ai: Reference) -> None:
        """800 seeded conversations (at least 150 per API) all give pi-ai's bodies."""
        batch = seeded_cases(800, seed=13)
        per_api = Counter(c["api"] for c in batch)
        assert set(per_api) == set(APIS)
        assert min(per_api.values()) >= 150, per_api
        answers = pi_ai.ask_many(batch)
        for case, answer in zip(batch, answers, strict=True):
            assert_same(case, ours(case), expected_body(case, answer))

    # Each example is a round trip to Node; the seeded batch above covers the volume, so
    # Hypothesis gets a fixed budget here (PTREE_PROVIDER_EXAMPLES raises it).
    @settings(max_examples=int(os.environ.get("PTREE_PROVIDER_EXAMPLES", "150")))
    @given(cases())
    def test_hypothesis_conversations(self, pi_ai: Reference, case: dict[str, Any]) -> None:
        """Hypothesis-generated conversations give pi-ai's bodies (and shrink when not)."""
        answer = pi_ai.ask_many([case])[0]
        assert_same(case, ours(case), expected_body(case, answer))


# ---------------------------------------------------------------------------------------
# One test per rule.  Each case names the rule; `expect` picks a fragment of the body
# and the hand-written value it must have.

U = {"role": "user", "content": "Hi", "timestamp": 1}


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, "timestamp": 1}


def assistant(
    content: list[dict[str, Any]],
    api: str = "anthropic-messages",
    provider: str = "anthropic",
    model: str = "claude-sonnet-4-5",
    stop: str = "stop",
) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": api,
        "provider": provider,
        "model": model,
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
        "stopReason": stop,
        "timestamp": 2,
    }


def result(
    call_id: str, content: list[dict[str, Any]], error: bool = False, name: str = "read"
) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": content,
        "isError": error,
        "timestamp": 3,
    }


def text(t: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": t, **extra}


def think(t: str, **extra: Any) -> dict[str, Any]:
    return {"type": "thinking", "thinking": t, **extra}


def call(call_id: str, args: Any = None, name: str = "read", **extra: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": args or {}, **extra}


IMG = {"type": "image", "data": "iVBO", "mimeType": "image/png"}
TOOL = {
    "name": "read",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"p": {"type": "string"}}},
}
CC = ("openai-completions", "openai", "gpt-5")
RS = ("openai-responses", "openai", "gpt-5")
AN = ("anthropic-messages", "anthropic", "claude-sonnet-4-5")
GG = ("google-generative-ai", "google", "gemini-2.5-pro")
G3 = ("google-generative-ai", "google", "gemini-3-pro-preview")


def case(target: tuple[str, str, str], messages: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    api, provider, model = target
    return {"api": api, "provider": provider, "model": model, "messages": messages, **kw}


def same(
    target: tuple[str, str, str], content: list[dict[str, Any]], stop: str = "stop"
) -> dict[str, Any]:
    return assistant(content, *target, stop=stop)


# (rule name, case, path into ptree's body, hand-written expected value)
RULES: list[tuple[str, dict[str, Any], tuple[Any, ...], Any]] = [
    # -- steps common to every API
    (
        "empty system prompt sends nothing",
        case(CC, [U], system=""),
        ("messages", 0),
        {"role": "user", "content": "Hi"},
    ),
    (
        "tools without a prompt add no system message",
        case(CC, [U], tools=[TOOL]),
        ("messages", 0, "role"),
        "user",
    ),
    (
        "null content counts as empty",
        case(AN, [user(None), U]),
        ("messages",),
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "Hi", "cache_control": {"type": "ephemeral"}}],
            }
        ],
    ),
    (
        "text-only model: user image placeholder",
        case(CC, [user([IMG, IMG, text("x")])], images=False),
        ("messages", 0, "content", 0, "text"),
        "(image omitted: model does not support images)",
    ),
    (
        "text-only model: a run of images gives one placeholder",
        case(CC, [user([IMG, IMG])], images=False),
        ("messages", 0, "content"),
        [{"type": "text", "text": "(image omitted: model does not support images)"}],
    ),
    (
        "text-only model: no placeholder right after a placeholder",
        case(
            CC, [user([text("(image omitted: model does not support images)"), IMG])], images=False
        ),
        ("messages", 0, "content"),
        [{"type": "text", "text": "(image omitted: model does not support images)"}],
    ),
    (
        "text-only model: tool image placeholder",
        case(CC, [same(CC, [call("c1")], "toolUse"), result("c1", [IMG])], images=False),
        ("messages", 1, "content"),
        "(tool image omitted: model does not support images)",
    ),
    (
        "thinking from another model is dropped, signed or not",
        case(AN, [assistant([think("a", thinkingSignature="sig"), think("b"), text("t")], *CC), U]),
        ("messages", 0, "content"),
        [{"type": "text", "text": "t"}],
    ),
    (
        "same model keeps signed thinking even when empty",
        case(AN, [same(AN, [think("", thinkingSignature="sig"), text("t")]), U]),
        ("messages", 0, "content", 0),
        {"type": "thinking", "thinking": "", "signature": "sig"},
    ),
    (
        "same model drops blank unsigned thinking",
        case(AN, [same(AN, [think(" \n"), text("t")]), U]),
        ("messages", 0, "content"),
        [{"type": "text", "text": "t"}],
    ),
    (
        "another model's text loses its signature (Responses falls back to msg_pi ids)",
        case(RS, [U, assistant([text("t", textSignature="msg_keep")], *CC)]),
        ("input", 1, "id"),
        "msg_pi_1",
    ),
    (
        "another model's tool call loses its thoughtSignature",
        case(
            GG,
            [
                assistant(
                    [call("c1", thoughtSignature="QUJD")],
                    "google-generative-ai",
                    "google",
                    "gemini-2.5-flash",
                    "toolUse",
                ),
                result("c1", [text("ok")]),
            ],
        ),
        ("contents", 0, "parts", 0),
        {"functionCall": {"name": "read", "args": {}}},
    ),
    (
        "same model keeps the thoughtSignature (valid base64)",
        case(
            GG,
            [
                same(GG, [call("c1", thoughtSignature="QUJD")], "toolUse"),
                result("c1", [text("ok")]),
            ],
        ),
        ("contents", 0, "parts", 0, "thoughtSignature"),
        "QUJD",
    ),
    (
        "renamed ids are followed by their tool results",
        case(
            AN,
            [assistant([call("call 1|x")], *CC, stop="toolUse"), result("call 1|x", [text("ok")])],
        ),
        ("messages", 1, "content", 0, "tool_use_id"),
        "call_1_x",
    ),
    (
        "errored turns are left out",
        case(AN, [U, assistant([text("partial")], *AN, stop="error"), U]),
        ("messages", 1, "content", 0, "text"),
        "Hi",
    ),
    (
        "aborted turns are left out, their results stay as orphans",
        case(CC, [U, same(CC, [call("c1")], "aborted"), result("c1", [text("late")])]),
        ("messages", 1),
        {"role": "tool", "content": "late", "tool_call_id": "c1"},
    ),
    (
        "an unanswered call gets a synthetic error result",
        case(AN, [same(AN, [call("c1"), call("c2")], "toolUse"), result("c2", [text("ok")])]),
        ("messages", 1, "content", 1),
        {
            "type": "tool_result",
            "tool_use_id": "c1",
            "content": "No result provided",
            "is_error": True,
            "cache_control": {"type": "ephemeral"},
        },
    ),
    (
        "a result after the next user message does not count",
        case(CC, [same(CC, [call("c1")], "toolUse"), U, result("c1", [text("late")])]),
        ("messages", 1, "content"),
        "No result provided",
    ),
    (
        "a call left open at the end is closed",
        case(CC, [same(CC, [call("c1")], "toolUse")]),
        ("messages", -1),
        {"role": "tool", "content": "No result provided", "tool_call_id": "c1"},
    ),
    (
        "blank is JavaScript's trim: NBSP is blank",
        case(AN, [user("\xa0\u3000"), U]),
        ("messages", 0, "content", 0, "text"),
        "Hi",
    ),
    (
        "blank is JavaScript's trim: U+001C is not blank",
        case(AN, [user("\x1c")]),
        ("messages", 0, "content", 0, "text"),
        "\x1c",
    ),
    (
        "unpaired surrogates leave text",
        case(CC, [user("a\ud83db")]),
        ("messages", 0, "content"),
        "ab",
    ),
    (
        "unpaired surrogates stay in ids and arguments",
        case(
            AN,
            [
                same(AN, [call("i\ud83d", {"k": "v\ud83d"})], "toolUse"),
                result("i\ud83d", [text("ok")]),
            ],
        ),
        ("messages", 0, "content", 0, "input", "k"),
        "v\ud83d",
    ),
    (
        "arguments are JSON.stringify text",
        case(
            CC,
            [
                same(
                    CC,
                    [call("c1", {"b": 1.0, "10": 1e21, "2": [1e-7, 100.0], "é": "\x01"})],
                    "toolUse",
                ),
                result("c1", [text("ok")]),
            ],
        ),
        ("messages", 0, "tool_calls", 0, "function", "arguments"),
        '{"2":[1e-7,100],"10":1e+21,"b":1,"é":"\\u0001"}',
    ),
    (
        "Pi 1.6 system messages fold into the leading prompt",
        case(
            CC,
            [
                {
                    "role": "system",
                    "content": "Base.",
                    "sections": {"b": "B", "a": "A"},
                    "timestamp": 0,
                },
                U,
                {
                    "role": "system",
                    "content": [text("Patch.")],
                    "sections": {"b": None},
                    "timestamp": 5,
                },
            ],
            system="Arg.",
        ),
        ("messages",),
        [
            {"role": "system", "content": "Arg.\n\nBase.\n\nPatch.\n\nA"},
            {"role": "user", "content": "Hi"},
        ],
    ),
    (
        "tool changes in system messages set the tools",
        case(
            AN,
            [
                {
                    "role": "system",
                    "content": "",
                    "toolsAdded": [{"name": "grep", "description": "g", "parameters": {}}],
                    "toolsRemoved": [{"name": "read"}],
                    "timestamp": 0,
                },
                U,
            ],
            tools=[TOOL],
        ),
        ("tools", slice(None), "name"),
        ["grep"],
    ),
    (
        "system messages without a timestamp and no tools vanish",
        case(GG, [{"role": "system", "content": "Ignored."}, U]),
        (),
        {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]},
    ),
    # -- openai-completions
    (
        "completions: system role",
        case(("openai-completions", "openai", "gpt-4o"), [U], system="S"),
        ("messages", 0),
        {"role": "system", "content": "S"},
    ),
    (
        "completions: developer role for an OpenAI reasoning model",
        case(CC, [U], system="S", reasoning=True),
        ("messages", 0, "role"),
        "developer",
    ),
    (
        "completions: no developer role on other hosts",
        case(("openai-completions", "groq", "gpt-oss"), [U], system="S", reasoning=True),
        ("messages", 0, "role"),
        "system",
    ),
    (
        "completions: an empty user string stays",
        case(CC, [user("")]),
        ("messages",),
        [{"role": "user", "content": ""}],
    ),
    (
        "completions: empty text blocks removed, an empty list sends nothing",
        case(CC, [user([text("")]), user([text(""), text(" "), IMG])]),
        ("messages",),
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": " "},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
                ],
            }
        ],
    ),
    (
        "completions: assistant text concatenated without separator",
        case(CC, [U, same(CC, [text("a"), text(" "), text("b")])]),
        ("messages", 1),
        {"role": "assistant", "content": "ab"},
    ),
    (
        "completions: content null beside tool calls",
        case(CC, [same(CC, [call("c1")], "toolUse"), result("c1", [text("ok")])]),
        ("messages", 0, "content"),
        None,
    ),
    (
        "completions: a thinking-only turn is not sent",
        case(CC, [U, same(CC, [think("hmm")]), U]),
        ("messages", 1, "role"),
        "user",
    ),
    (
        "completions: OpenRouter reasoning_details from the signature",
        case(
            ("openai-completions", "openrouter", "x/y"),
            [
                U,
                assistant(
                    [
                        think(
                            "t",
                            thinkingSignature=json.dumps(
                                [{"type": "reasoning.encrypted", "data": "E"}]
                            ),
                        ),
                        text("a"),
                    ],
                    "openai-completions",
                    "openrouter",
                    "x/y",
                ),
            ],
        ),
        ("messages", 1, "reasoning_details"),
        [{"type": "reasoning.encrypted", "data": "E"}],
    ),
    (
        "completions: legacy encrypted detail from tool calls",
        case(
            CC,
            [
                same(
                    CC,
                    [
                        call(
                            "c1",
                            thoughtSignature=json.dumps(
                                {"type": "reasoning.encrypted", "id": "r", "data": "E"}
                            ),
                        )
                    ],
                    "toolUse",
                ),
                result("c1", [text("ok")]),
            ],
        ),
        ("messages", 0, "reasoning_details"),
        [{"type": "reasoning.encrypted", "id": "r", "data": "E"}],
    ),
    (
        "completions: the reasoning field named by the signature",
        case(
            CC,
            [
                U,
                same(
                    CC,
                    [
                        think("a", thinkingSignature="reasoning_text"),
                        think(" "),
                        think("b"),
                        text("x"),
                    ],
                ),
            ],
        ),
        ("messages", 1, "reasoning_text"),
        "a\nb",
    ),
    (
        "completions: opencode-go sends reasoning as reasoning_content",
        case(
            ("openai-completions", "opencode-go", "k"),
            [
                U,
                assistant(
                    [think("a", thinkingSignature="reasoning"), text("x")],
                    "openai-completions",
                    "opencode-go",
                    "k",
                ),
            ],
        ),
        ("messages", 1, "reasoning_content"),
        "a",
    ),
    (
        "completions: DeepSeek reasoning models always get reasoning_content",
        case(
            ("openai-completions", "deepseek", "deepseek-reasoner"),
            [U, assistant([text("x")], *CC)],
            reasoning=True,
        ),
        ("messages", 1, "reasoning_content"),
        "",
    ),
    (
        "completions: tool result text joined, placeholders",
        case(
            CC,
            [
                same(CC, [call("c1"), call("c2"), call("c3")], "toolUse"),
                result("c1", [text("a"), text("b")]),
                result("c2", [IMG]),
                result("c3", []),
            ],
        ),
        ("messages", slice(1, 4), "content"),
        ["a\nb", "(see attached image)", "(no tool output)"],
    ),
    (
        "completions: images of a run of results follow it in one user message",
        case(
            CC,
            [
                same(CC, [call("c1"), call("c2")], "toolUse"),
                result("c1", [IMG]),
                result("c2", [text("t"), IMG]),
            ],
        ),
        ("messages", 3),
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Attached image(s) from tool result:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
            ],
        },
    ),
    (
        "completions: a Responses id becomes call_item",
        case(
            CC,
            [
                assistant([call("call_a|fc+b")], *RS, stop="toolUse"),
                result("call_a|fc+b", [text("ok")]),
            ],
        ),
        ("messages", 1, "tool_call_id"),
        "call_a_fc_b",
    ),
    (
        "completions: a long Responses id is cut and hashed",
        case(CC, [assistant([call("call_" + "x" * 40 + "|fc_1")], *RS, stop="toolUse")]),
        ("messages", 0, "tool_calls", 0, "id"),
        Hashed("call_" + "x" * 26 + "_"),
    ),
    (
        "completions: OpenAI ids without | are cut to 40",
        case(CC, [assistant([call("z" * 45)], *AN, stop="toolUse")]),
        ("messages", 0, "tool_calls", 0, "id"),
        "z" * 40,
    ),
    (
        "completions: other hosts keep ids without |",
        case(
            ("openai-completions", "groq", "m"), [assistant([call("z" * 45)], *AN, stop="toolUse")]
        ),
        ("messages", 0, "tool_calls", 0, "id"),
        "z" * 45,
    ),
    (
        "completions: tool shape",
        case(CC, [U], tools=[TOOL]),
        ("tools",),
        [
            {
                "type": "function",
                "function": {
                    "name": "read",
                    "description": "Read a file",
                    "parameters": TOOL["parameters"],
                },
            }
        ],
    ),
    (
        "completions: OpenRouter Anthropic cache markers",
        case(
            ("openai-completions", "openrouter", "anthropic/claude-sonnet-4.5"),
            [U],
            system="S",
            tools=[TOOL],
        ),
        ("messages",),
        [
            {
                "role": "system",
                "content": [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}],
            },
            {
                "role": "user",
                "content": [{"type": "text", "text": "Hi", "cache_control": {"type": "ephemeral"}}],
            },
        ],
    ),
    # -- openai-responses
    (
        "responses: developer role for any reasoning model",
        case(("openai-responses", "xai", "grok"), [U], system="S", reasoning=True),
        ("input", 0),
        {"role": "developer", "content": "S"},
    ),
    (
        "responses: a user string becomes input_text",
        case(RS, [U]),
        ("input", 0),
        {"role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
    ),
    (
        "responses: images are input_image with detail auto",
        case(RS, [user([IMG])]),
        ("input", 0, "content", 0),
        {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,iVBO"},
    ),
    (
        "responses: same-model reasoning item replayed from the signature",
        case(
            RS,
            [
                U,
                same(
                    RS,
                    [
                        think(
                            "",
                            thinkingSignature='{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"E"}',
                        ),
                        text("a"),
                    ],
                ),
            ],
        ),
        ("input", 1),
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "E"},
    ),
    (
        "responses: text ids msg_pi_n and msg_pi_n_k, blank text sent",
        case(RS, [U, same(RS, [text("a"), text(" ")])]),
        ("input", slice(1, 3), "id"),
        ["msg_pi_1", "msg_pi_1_1"],
    ),
    (
        "responses: a v1 text signature gives id and phase",
        case(
            RS,
            [U, same(RS, [text("a", textSignature='{"v":1,"id":"msg_9","phase":"commentary"}')])],
        ),
        ("input", 1, "phase"),
        "commentary",
    ),
    (
        "responses: a long text id becomes msg_<hash>",
        case(RS, [U, same(RS, [text("a", textSignature="m" * 65)])]),
        ("input", 1, "id"),
        Hashed("msg_"),
    ),
    (
        "responses: an fc_ item id is sent for the same model",
        case(RS, [same(RS, [call("call_1|fc_1")], "toolUse"), result("call_1|fc_1", [text("ok")])]),
        ("input", 0),
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "read",
            "arguments": "{}",
        },
    ),
    (
        "responses: no item id for another model of the same host",
        case(
            RS,
            [
                assistant(
                    [call("call_1|fc_1", namespace="ns")],
                    "openai-responses",
                    "openai",
                    "gpt-4.1",
                    "toolUse",
                )
            ],
        ),
        ("input", 0),
        {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": "{}"},
    ),
    (
        "responses: namespace kept for the same model",
        case(RS, [same(RS, [call("call_1|fc_1", namespace="ns")], "toolUse")]),
        ("input", 0, "namespace"),
        "ns",
    ),
    (
        "responses: foreign item ids become fc_<hash>",
        case(
            ("openai-responses", "openai", "gpt-5"),
            [
                assistant(
                    [call("call_1|item")], "openai-responses", "opencode", "gpt-5", "toolUse"
                ),
                U,
            ],
        ),
        ("input", 0, "call_id"),
        "call_1",
    ),
    (
        "responses: other providers reduce the whole id",
        case(
            ("openai-responses", "xai", "grok"),
            [assistant([call("call 1|fc 2")], *AN, stop="toolUse")],
        ),
        ("input", 0, "call_id"),
        "call_1_fc_2",
    ),
    (
        "responses: tool output with images is a list",
        case(RS, [same(RS, [call("c1")], "toolUse"), result("c1", [text("t"), IMG])]),
        ("input", 1, "output"),
        [
            {"type": "input_text", "text": "t"},
            {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,iVBO"},
        ],
    ),
    (
        "responses: tool shape",
        case(RS, [U], tools=[TOOL]),
        ("tools",),
        [
            {
                "type": "function",
                "name": "read",
                "description": "Read a file",
                "parameters": TOOL["parameters"],
            }
        ],
    ),
    # -- anthropic-messages
    (
        "anthropic: system block with cache marker",
        case(AN, [U], system="S"),
        ("system",),
        [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}],
    ),
    (
        "anthropic: a blank user string sends nothing",
        case(AN, [user(" "), user("a")]),
        ("messages", 0, "content", 0, "text"),
        "a",
    ),
    (
        "anthropic: consecutive user messages are not merged",
        case(AN, [user("a"), user("b")]),
        ("messages", 0),
        {"role": "user", "content": "a"},
    ),
    (
        "anthropic: unsigned thinking becomes text",
        case(AN, [U, same(AN, [think("idea")]), U]),
        ("messages", 1, "content"),
        [{"type": "text", "text": "idea"}],
    ),
    (
        "anthropic: redacted thinking",
        case(
            AN,
            [U, same(AN, [think("[Reasoning redacted]", thinkingSignature="D", redacted=True)]), U],
        ),
        ("messages", 1, "content"),
        [{"type": "redacted_thinking", "data": "D"}],
    ),
    (
        "anthropic: a run of results is one user message",
        case(
            AN,
            [
                same(AN, [call("c1"), call("c2")], "toolUse"),
                result("c1", [text("a")]),
                result("c2", []),
            ],
        ),
        ("messages", 1, "content", slice(None), "content"),
        ["a", ""],
    ),
    (
        "anthropic: result with images is a block list",
        case(AN, [same(AN, [call("c1")], "toolUse"), result("c1", [IMG]), U]),
        ("messages", 1, "content", 0, "content"),
        [
            {"type": "text", "text": "(see attached image)"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
            },
        ],
    ),
    (
        "anthropic: error result images move after the results",
        case(
            AN,
            [
                same(AN, [call("c1")], "toolUse"),
                result("c1", [text("bad"), IMG, IMG], error=True),
                U,
            ],
        ),
        ("messages", 1, "content"),
        [
            {
                "type": "tool_result",
                "tool_use_id": "c1",
                "content": "bad\n(image attached after the tool results)",
                "is_error": True,
            },
            {"type": "text", "text": "Images from the error result of tool call c1 (read):"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
            },
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
            },
        ],
    ),
    (
        "anthropic: no cache marker when the last message is the assistant's",
        case(AN, [U, same(AN, [text("a")])]),
        ("messages", 0, "content"),
        "Hi",
    ),
    (
        "anthropic: ids reduced to word characters, cut to 64",
        case(AN, [assistant([call("a.b" + "c" * 70)], *CC, stop="toolUse")]),
        ("messages", 0, "content", 0, "id"),
        "a_b" + "c" * 61,
    ),
    (
        "anthropic: tool schema rebuilt",
        case(
            AN,
            [U],
            tools=[
                {
                    "name": "t",
                    "description": "d",
                    "parameters": {"type": "object", "anyOf": [], "$defs": {"x": {}}},
                }
            ],
        ),
        ("tools", 0),
        {
            "name": "t",
            "description": "d",
            "eager_input_streaming": True,
            "input_schema": {
                "type": "object",
                "properties": {},
                "required": [],
                "$defs": {"x": {}},
            },
            "cache_control": {"type": "ephemeral"},
        },
    ),
    # -- google-generative-ai
    (
        "gemini: systemInstruction with the user role",
        case(GG, [U], system="S"),
        ("systemInstruction",),
        {"parts": [{"text": "S"}], "role": "user"},
    ),
    (
        "gemini: an empty user string is sent",
        case(GG, [user(""), U]),
        ("contents", 0),
        {"role": "user", "parts": [{"text": ""}]},
    ),
    (
        "gemini: invalid base64 signatures are dropped",
        case(GG, [U, same(GG, [text("a", textSignature="abc")])]),
        ("contents", 1, "parts"),
        [{"text": "a"}],
    ),
    (
        "gemini: blank text kept when signed",
        case(GG, [U, same(GG, [text(" ", textSignature="QUJD")])]),
        ("contents", 1, "parts"),
        [{"text": " ", "thoughtSignature": "QUJD"}],
    ),
    (
        "gemini: same-model thinking is a thought part",
        case(GG, [U, same(GG, [think("t", thinkingSignature="QUJD")])]),
        ("contents", 1, "parts"),
        [{"thought": True, "text": "t", "thoughtSignature": "QUJD"}],
    ),
    (
        "gemini: call ids only for Gemini 3",
        case(G3, [assistant([call("c.1")], *AN, stop="toolUse"), result("c.1", [text("ok")])]),
        ("contents", slice(None), "parts", 0),
        [
            {"functionCall": {"name": "read", "args": {}, "id": "c_1"}},
            {"functionResponse": {"name": "read", "response": {"output": "ok"}, "id": "c_1"}},
        ],
    ),
    (
        "gemini: results share one user content",
        case(
            GG,
            [
                same(GG, [call("c1"), call("c2")], "toolUse"),
                result("c1", [text("a")], error=True),
                result("c2", []),
            ],
        ),
        ("contents", 1, "parts"),
        [
            {"functionResponse": {"name": "read", "response": {"error": "a"}}},
            {"functionResponse": {"name": "read", "response": {"output": ""}}},
        ],
    ),
    (
        "gemini: older models get result images in a content of their own",
        case(GG, [same(GG, [call("c1")], "toolUse"), result("c1", [IMG])]),
        ("contents", 2),
        {
            "role": "user",
            "parts": [
                {"text": "Tool result image:"},
                {"inlineData": {"mimeType": "image/png", "data": "iVBO"}},
            ],
        },
    ),
    (
        "gemini: Gemini 3 gets result images inside",
        case(G3, [same(G3, [call("c1")], "toolUse"), result("c1", [IMG])]),
        ("contents", 1, "parts", 0, "functionResponse", "parts"),
        [{"inlineData": {"mimeType": "image/png", "data": "iVBO"}}],
    ),
    (
        "gemini: const becomes a one-value enum",
        case(
            GG,
            [U],
            tools=[
                {
                    "name": "t",
                    "description": "d",
                    "parameters": {
                        "type": "object",
                        "properties": {"m": {"const": "a"}, "b": {"const": True}},
                    },
                }
            ],
        ),
        ("tools", 0, "functionDeclarations", 0, "parametersJsonSchema", "properties"),
        {"m": {"enum": ["a"]}, "b": {"const": True}},
    ),
]


def pick(value: Any, path: tuple[Any, ...]) -> Any:
    for i, step in enumerate(path):
        if isinstance(step, slice):
            return [pick(v, path[i + 1 :]) for v in value[step]]
        value = value[step]
    return value


@pytest.mark.parametrize(
    ("case_", "path", "expected"), [r[1:] for r in RULES], ids=[r[0] for r in RULES]
)
def test_rule(
    pi_ai: Reference, case_: dict[str, Any], path: tuple[Any, ...], expected: Any
) -> None:
    """The rule named in the id: ptree's body has the hand-written fragment, and equals pi-ai's."""
    mine = ours(case_)
    reference = theirs(pi_ai, case_)
    fragment = pick(mine, path)
    if isinstance(expected, Hashed):
        assert fragment.startswith(expected)
        assert fragment == pick(reference, path)
        assert fragment[len(expected) :].isalnum()
    else:
        assert fragment == expected
    assert as_doubles(mine) == as_doubles(reference)


# every code point, unpaired surrogates included
# (Hypothesis draws surrogates rarely on its own, so pieces with them are mixed in)
ANY_TEXT = st.text(
    st.characters(categories=["Cs", "Cc", "Ll", "Lu", "Lo", "Nd", "Zs", "Zl", "So", "Po"]),
    max_size=12,
) | st.lists(
    st.sampled_from(["\ud800", "\udfff", "\ud83d", "😀", "\ude00", "a", "\x00", "\u2028", '"']),
    max_size=6,
).map("".join)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | ANY_TEXT,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(max_size=4) | st.sampled_from(["0", "10", "2", "01", "-1"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)


class TestJavaScriptRules:
    """The JavaScript pieces pi-ai's bytes depend on, against V8 itself."""

    @settings(max_examples=int(os.environ.get("PTREE_PROVIDER_EXAMPLES", "300")))
    @given(JSON_VALUES)
    def test_json_stringify(self, pi_ai: Reference, value: Any) -> None:
        """Tool-call arguments are written byte for byte as V8's JSON.stringify writes them."""
        expected = pi_ai.ask_many([{"kind": "stringify", "value": value}])[0]["text"]
        body = payload(
            [
                {
                    "role": "assistant",
                    "content": [call("c1", {"v": value})],
                    "api": "a",
                    "provider": "p",
                    "model": "m",
                    "stopReason": "toolUse",
                }
            ],
            api="openai-completions",
            provider="openai",
            model="gpt-5",
        )
        assert (
            body["messages"][0]["tool_calls"][0]["function"]["arguments"]
            == '{"v":' + expected + "}"
        )

    @settings(max_examples=int(os.environ.get("PTREE_PROVIDER_EXAMPLES", "300")))
    @given(ANY_TEXT)
    def test_short_hash(self, pi_ai: Reference, text_: str) -> None:
        """Long Responses ids end in pi-ai's own shortHash of the id."""
        expected = pi_ai.ask_many([{"kind": "hash", "text": "m" * 65 + text_}])[0]["hash"]
        msgs = [U, same(RS, [text("a", textSignature="m" * 65 + text_)])]
        body = payload(msgs, api=RS[0], provider=RS[1], model=RS[2])
        assert body["input"][1]["id"] == "msg_" + expected


class TestErrors:
    """Bad input gives typed errors."""

    def test_unknown_api_lists_the_known_ones(self) -> None:
        """An unknown api is a ProviderError (a ValueError) naming every known api."""
        with pytest.raises(ValueError, match="unknown api 'bedrock'") as info:
            payload([], api="bedrock", provider="p", model="m")
        assert isinstance(info.value, ProviderError)
        for api in APIS:
            assert repr(api) in str(info.value)
        with pytest.raises(ProviderError):
            assistant_message({}, api="nope", provider="p", model="m")

    def test_a_message_that_is_not_an_object(self) -> None:
        """A message that is not a mapping names its index."""
        with pytest.raises(ProviderError, match=r"messages\[1\]"):
            payload([U, "hi"], api="openai-completions", provider="openai", model="m")  # type: ignore[list-item]

    def test_responses_signature_that_is_not_json(self) -> None:
        """A same-model Responses thinking signature that is not JSON (pi-ai throws too)."""
        msgs = [U, same(RS, [think("t", thinkingSignature="not json"), text("a")])]
        with pytest.raises(ProviderError, match="not JSON"):
            payload(msgs, api=RS[0], provider=RS[1], model=RS[2])

    def test_assistant_content_that_is_a_string(self) -> None:
        """Assistant and tool-result content must be block lists (pi-ai fails on strings)."""
        for bad in ({"role": "assistant", "content": "hi"}, result("c", [])):
            if bad["role"] == "toolResult":
                bad["content"] = "text"
            with pytest.raises(ProviderError, match=r"messages\[1\] is a (assistant|toolResult)"):
                payload([U, bad], api="openai-completions", provider="openai", model="m")

    def test_reply_of_the_wrong_type(self) -> None:
        """A reply that is neither a mapping nor an SDK object is a TypeError."""
        with pytest.raises(TypeError):
            assistant_message(42, api="openai-completions", provider="openai", model="m")


class TestInputs:
    """What payload takes and what it leaves alone."""

    def test_context_goes_through_to_provider_messages(self) -> None:
        """A Context's summary messages become user text, as to_provider_messages says."""
        ctx = Context(
            messages=[
                {
                    "role": "branchSummary",
                    "summary": "S",
                    "fromId": "x",
                    "timestamp": "2025-01-01T00:00:00Z",
                },
                U,
            ]
        )
        body = payload(ctx, api="openai-completions", provider="openai", model="m")
        assert body["messages"][0]["content"][0]["text"].startswith(
            "The following is a summary of a branch"
        )
        assert body["messages"][1] == {"role": "user", "content": "Hi"}

    def test_context_keeps_pi_16_system_messages(self) -> None:
        """A Context's system messages (Pi 1.6) become the prompt, as convertToLlm keeps them."""
        system = {"role": "system", "content": "From the session.", "timestamp": 0}
        ctx = Context(messages=[U, system])
        body = payload(ctx, api="google-generative-ai", provider="google", model="gemini-2.5-pro")
        assert body == {
            "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
            "systemInstruction": {"parts": [{"text": "From the session."}], "role": "user"},
        }

    def test_inputs_are_not_changed(self) -> None:
        """The caller's messages and tools are copied, never changed."""
        msgs = [same(CC, [call("c" * 50), think("t")], "toolUse"), user([IMG])]
        tools = [dict(TOOL)]
        before = json.dumps([msgs, tools])
        for api in APIS:
            payload(msgs, api=api, provider="x", model="y", tools=tools, images=False)
        assert json.dumps([msgs, tools]) == before

    def test_frozen_messages_from_a_tree(self) -> None:
        """Frozen messages (as a tree stores them) give plain, mutable output."""
        from ptree import freeze

        body = payload(freeze([U]), api="anthropic-messages", provider="a", model="m")
        assert type(body["messages"][0]) is dict
        json.dumps(body)


def assert_same_message(api: str, mine: dict[str, Any], reference: dict[str, Any]) -> None:
    """ptree's message equals pi-ai's, but for what cannot agree: the timestamp, the
    wording of a JSON error, and the clock in Gemini's made-up call ids."""
    assert abs(mine.pop("timestamp") - reference.pop("timestamp")) < 60_000
    for msg in (mine, reference):
        for block in msg["content"]:
            if "argumentsError" in block:
                # V8 and Python word a JSON error differently; the rest must agree
                first, rest = block["argumentsError"].split("\n\n", 1)
                assert first
                block["argumentsError"] = rest
            # Gemini calls without an id (or with a repeated one) get
            # <name>_<milliseconds>_<counter>: the name part must agree
            made_up = re.fullmatch(r"(.*)_(\d{13})_(\d+)", block.get("id", ""))
            if api == "google-generative-ai" and block["type"] == "toolCall" and made_up:
                assert made_up.group(1) == (block["name"] or "undefined")
                block["id"] = "<made up>"
    assert as_doubles(mine) == as_doubles(reference)


class TestReplies:
    """``assistant_message`` equals pi-ai's message for the same reply streamed."""

    @pytest.mark.parametrize(
        ("name", "api", "provider", "model", "reply"), REPLIES, ids=[r[0] for r in REPLIES]
    )
    def test_reply(
        self,
        pi_ai: Reference,
        name: str,
        api: str,
        provider: str,
        model: str,
        reply: dict[str, Any],
    ) -> None:
        """The reply named in the id gives pi-ai's message (but the timestamp)."""
        mine = assistant_message(reply, api=api, provider=provider, model=model)
        case = {"kind": "response", "api": api, "provider": provider, "model": model}
        answer = pi_ai.ask_many([{**case, "response": reply}])[0]
        assert_same_message(api, mine, answer["message"])

    def test_seeded_replies(self, pi_ai: Reference) -> None:
        """400 generated replies (every API, odd shapes and stop reasons) give pi-ai's messages."""
        rng = random.Random(13)
        batch = [reply_case(Chooser(rng)) for _ in range(400)]
        assert {c["api"] for c in batch} == set(APIS)
        for case, answer in zip(batch, pi_ai.ask_many(batch), strict=True):
            mine = assistant_message(
                case["response"], api=case["api"], provider=case["provider"], model=case["model"]
            )
            assert_same_message(case["api"], mine, answer["message"])

    @settings(max_examples=int(os.environ.get("PTREE_PROVIDER_EXAMPLES", "150")))
    @given(st.composite(lambda draw: reply_case(DrawChooser(draw)))())
    def test_hypothesis_replies(self, pi_ai: Reference, case: dict[str, Any]) -> None:
        """Hypothesis-generated replies give pi-ai's messages."""
        mine = assistant_message(
            case["response"], api=case["api"], provider=case["provider"], model=case["model"]
        )
        assert_same_message(case["api"], mine, pi_ai.ask_many([case])[0]["message"])
