"""Hand-written non-streaming replies of the four APIs, for ``assistant_message``.

Each is (name, api, provider, model, reply body).  The expected messages are not written
here: the tests get them from pi-ai 1.6.0, which reads each reply as the equivalent
server-sent event stream.
"""

from __future__ import annotations

import json
from typing import Any

REPLIES: list[tuple[str, str, str, str, dict[str, Any]]] = []


def _add(name: str, api: str, provider: str, model: str, body: dict[str, Any]) -> None:
    REPLIES.append((name, api, provider, model, body))


def _chat(
    message: dict[str, Any], finish: Any, usage: Any = None, model: str = "gpt-5"
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
        ],
    }
    if usage is not None:
        body["usage"] = usage
    return body


_USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
_add(
    "chat text",
    "openai-completions",
    "openai",
    "gpt-5",
    _chat({"content": "Hi there"}, "stop", _USAGE),
)
_add(
    "chat tool calls, parallel, odd arguments",
    "openai-completions",
    "openai",
    "gpt-5",
    _chat(
        {
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"a.txt"}'},
                },
                {"id": "call_2", "type": "function", "function": {"name": "bash", "arguments": ""}},
                {
                    "id": "call_3",
                    "type": "function",
                    "function": {"name": "edit", "arguments": "[1,2]"},
                },
                {
                    "id": "call_4",
                    "type": "function",
                    "function": {"name": "edit", "arguments": '{"a":"x\ny"}'},
                },
                {
                    "id": "call_5",
                    "type": "function",
                    "function": {"name": "edit", "arguments": '{"a":"\\d"}'},
                },
            ],
        },
        "tool_calls",
        {
            "prompt_tokens": 100,
            "completion_tokens": 40,
            "prompt_tokens_details": {"cached_tokens": 30, "cache_write_tokens": 5},
            "completion_tokens_details": {"reasoning_tokens": 12},
        },
    ),
)
_add(
    "chat reasoning_content (DeepSeek) and cache hits",
    "openai-completions",
    "deepseek",
    "deepseek-reasoner",
    _chat(
        {"content": "42", "reasoning_content": "Let me think."},
        "stop",
        {"prompt_tokens": 50, "completion_tokens": 10, "prompt_cache_hit_tokens": 20},
        model="deepseek-reasoner",
    ),
)
_add(
    "chat reasoning field on opencode-go",
    "openai-completions",
    "opencode-go",
    "kimi-k2",
    _chat(
        {"content": "ok", "reasoning": "thinking"},
        "stop",
        {"prompt_tokens": 5, "completion_tokens": 2, "cached_tokens": 1},
        model="kimi-k2",
    ),
)
_add(
    "chat OpenRouter reasoning_details merge",
    "openai-completions",
    "openrouter",
    "anthropic/claude-sonnet-4.5",
    _chat(
        {
            "content": "done",
            "reasoning": "step one",
            "reasoning_details": [
                {
                    "type": "reasoning.text",
                    "text": "step ",
                    "format": "anthropic-claude-v1",
                    "index": 0,
                },
                {"type": "reasoning.text", "text": "one", "signature": "sig", "index": 0},
                {"type": "reasoning.encrypted", "data": "abc", "id": "r1"},
                {"type": "reasoning.bogus"},
                {"type": "reasoning.summary", "summary": "a"},
                {"type": "reasoning.summary", "summary": "b", "id": None},
            ],
        },
        "stop",
        model="anthropic/claude-4.5-sonnet-20250929",
    ),
)
_add(
    "chat refusal is ignored",
    "openai-completions",
    "openai",
    "gpt-5",
    _chat({"content": None, "refusal": "I can't."}, "stop"),
)
_add("chat length", "openai-completions", "openai", "gpt-5", _chat({"content": "cut"}, "length"))
_add(
    "chat content filter",
    "openai-completions",
    "openai",
    "gpt-5",
    _chat({"content": "par"}, "content_filter"),
)
_add(
    "chat unknown finish",
    "openai-completions",
    "openai",
    "gpt-5",
    _chat({"content": "x"}, "weird_reason"),
)
_add(
    "chat no finish reason", "openai-completions", "openai", "gpt-5", _chat({"content": "x"}, None)
)
_add(
    "chat served by another model",
    "openai-completions",
    "openai",
    "gpt-5",
    _chat({"content": "x"}, "stop", model="gpt-5-2025-08-07"),
)


def _responses(
    output: list[dict[str, Any]], status: str = "completed", **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-5",
        "status": status,
        "output": output,
        "usage": {
            "input_tokens": 200,
            "input_tokens_details": {"cached_tokens": 50},
            "output_tokens": 30,
            "output_tokens_details": {"reasoning_tokens": 10},
            "total_tokens": 230,
        },
    }
    body.update(extra)
    return body


_REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [
        {"type": "summary_text", "text": "First."},
        {"type": "summary_text", "text": "Second."},
    ],
    "encrypted_content": "gAAAA",
}
_MESSAGE = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Answer", "annotations": []}],
}
_CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "read",
    "arguments": '{"path": "x", "10": 1.0}',
    "status": "completed",
}
_add(
    "responses reasoning, text, call",
    "openai-responses",
    "openai",
    "gpt-5",
    _responses([_REASONING, _MESSAGE, _CALL]),
)
_add(
    "responses reasoning content without summary, phase",
    "openai-responses",
    "openai",
    "gpt-5",
    _responses(
        [
            {
                "type": "reasoning",
                "id": "rs_2",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": "raw"}],
            },
            {**_MESSAGE, "phase": "final_answer"},
            {
                **_MESSAGE,
                "id": "msg_2",
                "phase": "commentary",
                "content": [
                    {"type": "refusal", "refusal": "No."},
                    {"type": "output_text", "text": "!", "annotations": []},
                ],
            },
        ]
    ),
)
_add("responses text only", "openai-responses", "openai", "gpt-5", _responses([_MESSAGE]))
_add(
    "responses incomplete max tokens",
    "openai-responses",
    "openai",
    "gpt-5",
    _responses([_MESSAGE], "incomplete", incomplete_details={"reason": "max_output_tokens"}),
)
_add(
    "responses incomplete content filter",
    "openai-responses",
    "openai",
    "gpt-5",
    _responses([_MESSAGE], "incomplete", incomplete_details={"reason": "content_filter"}),
)
_add(
    "responses failed",
    "openai-responses",
    "openai",
    "gpt-5",
    _responses([_MESSAGE], "failed", error={"code": "server_error", "message": "boom"}),
)
_add(
    "responses call with bad arguments and namespace",
    "openai-responses",
    "openai-codex",
    "gpt-5-codex",
    _responses([{**_CALL, "arguments": "{oops", "namespace": "tools"}]),
)


def _anthropic(content: list[dict[str, Any]], stop: Any, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 20,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 50,
            "cache_creation": {"ephemeral_5m_input_tokens": 20, "ephemeral_1h_input_tokens": 30},
        },
    }
    body.update(extra)
    return body


_add(
    "anthropic thinking, redacted, text, tool use",
    "anthropic-messages",
    "anthropic",
    "claude-sonnet-4-5",
    _anthropic(
        [
            {"type": "thinking", "thinking": "Hmm.", "signature": "EqQBCkYIBx"},
            {"type": "redacted_thinking", "data": "EmwKAhgB"},
            {"type": "text", "text": "Let me read."},
            {
                "type": "tool_use",
                "id": "toolu_01",
                "name": "read",
                "input": {"path": "a", "2": 1.5},
            },
            {"type": "tool_use", "id": "toolu_02", "name": "ls", "input": {}},
        ],
        "tool_use",
    ),
)
_add(
    "anthropic end turn",
    "anthropic-messages",
    "anthropic",
    "claude-sonnet-4-5",
    _anthropic([{"type": "text", "text": "Hi"}], "end_turn"),
)
_add(
    "anthropic max tokens",
    "anthropic-messages",
    "anthropic",
    "claude-sonnet-4-5",
    _anthropic([{"type": "text", "text": "Hi"}], "max_tokens"),
)
_add(
    "anthropic pause turn",
    "anthropic-messages",
    "anthropic",
    "claude-sonnet-4-5",
    _anthropic([], "pause_turn"),
)
_add(
    "anthropic refusal with explanation",
    "anthropic-messages",
    "anthropic",
    "claude-sonnet-4-5",
    _anthropic(
        [{"type": "text", "text": "I"}],
        "refusal",
        stop_details={"type": "refusal", "explanation": "Policy."},
    ),
)
_add(
    "anthropic refusal without explanation",
    "anthropic-messages",
    "anthropic",
    "claude-sonnet-4-5",
    _anthropic([], "refusal"),
)
_add(
    "anthropic server tool blocks dropped, other model served",
    "anthropic-messages",
    "anthropic",
    "claude-sonnet-4-5",
    _anthropic(
        [
            {
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {"query": "x"},
            },
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            {"type": "text", "text": "Found."},
        ],
        "end_turn",
        model="claude-sonnet-4-5-20250929",
    ),
)
_add(
    "anthropic thinking tokens",
    "anthropic-messages",
    "anthropic",
    "claude-sonnet-4-5",
    _anthropic(
        [{"type": "text", "text": "ok"}],
        "end_turn",
        usage={
            "input_tokens": 3,
            "output_tokens": 9,
            "output_tokens_details": {"thinking_tokens": 4},
        },
    ),
)


def _gemini(parts: list[dict[str, Any]], finish: Any, **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    body: dict[str, Any] = {
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": 100,
            "candidatesTokenCount": 20,
            "thoughtsTokenCount": 7,
            "cachedContentTokenCount": 40,
            "totalTokenCount": 127,
        },
        "modelVersion": "gemini-2.5-pro",
        "responseId": "resp-g1",
    }
    body.update(extra)
    return body


_add(
    "gemini thought parts merge, signatures kept, calls with ids",
    "google-generative-ai",
    "google",
    "gemini-3-pro-preview",
    _gemini(
        [
            {"text": "Think 1. ", "thought": True, "thoughtSignature": "c2lnMQ=="},
            {"text": "Think 2.", "thought": True},
            {"text": "Answer ", "thoughtSignature": "c2lnMg=="},
            {"text": "part two.", "thoughtSignature": ""},
            {
                "functionCall": {"id": "fc-1", "name": "read", "args": {"path": "a"}},
                "thoughtSignature": "c2lnMw==",
            },
            {"text": "After."},
        ],
        "STOP",
    ),
)
_add(
    "gemini text stop",
    "google-generative-ai",
    "google",
    "gemini-2.5-pro",
    _gemini([{"text": "Hi"}], "STOP"),
)
_add(
    "gemini max tokens",
    "google-generative-ai",
    "google",
    "gemini-2.5-pro",
    _gemini([{"text": "Hi"}], "MAX_TOKENS"),
)
_add("gemini safety", "google-generative-ai", "google", "gemini-2.5-pro", _gemini([], "SAFETY"))
_add(
    "gemini recitation",
    "google-generative-ai",
    "google",
    "gemini-2.5-pro",
    _gemini([{"text": "a"}], "RECITATION"),
)
_add(
    "gemini no finish reason",
    "google-generative-ai",
    "google",
    "gemini-2.5-pro",
    _gemini([{"text": "a"}], None),
)
_add(
    "gemini calls without ids and with a repeated id",
    "google-generative-ai",
    "google",
    "gemini-2.5-flash",
    _gemini(
        [
            {"functionCall": {"name": "read", "args": {"p": 1}}},
            {"functionCall": {"id": "same", "name": "ls"}},
            {"functionCall": {"id": "same", "name": "ls", "args": {}}},
        ],
        "STOP",
    ),
)

# -- more shapes: missing fields, several choices, odd values
_add(
    "chat several choices, first only; reasoning fields in order",
    "openai-completions",
    "openai",
    "gpt-5",
    {
        "id": "c2",
        "model": "gpt-5",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "",
                    "reasoning": "",
                    "reasoning_text": "rt",
                    "reasoning_content": None,
                },
                "finish_reason": "end",
            },
            {
                "index": 1,
                "message": {"role": "assistant", "content": "second"},
                "finish_reason": "stop",
            },
        ],
    },
)
_add(
    "chat reasoning_details only, tool call without id, function_call finish",
    "openai-completions",
    "openrouter",
    "x/y",
    _chat(
        {
            "content": None,
            "reasoning_details": [{"type": "reasoning.encrypted", "data": "E", "id": "r"}],
            "tool_calls": [
                {"type": "function", "function": {"name": "read", "arguments": '{"a": [1, 2.50]}'}}
            ],
        },
        "function_call",
        {
            "prompt_tokens": 3,
            "completion_tokens": 1,
            "completion_tokens_details": {"reasoning_tokens": 0},
            "reasoning_tokens": 5,
        },
        model="x/y",
    ),
)
_add(
    "chat no choices",
    "openai-completions",
    "openai",
    "gpt-5",
    {"id": "c3", "model": "gpt-5", "choices": [], "usage": _USAGE},
)
_add(
    "responses without usage, odd items, custom tool call",
    "openai-responses",
    "openai",
    "gpt-5",
    {
        "id": "resp_2",
        "status": "completed",
        "output": [
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            {"type": "message", "id": "msg_3", "role": "assistant", "content": []},
            {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "ls"},
            {
                "type": "custom_tool_call",
                "id": "ctc_1",
                "call_id": "call_3",
                "name": "apply_patch",
                "input": "*** Begin",
            },
        ],
    },
)
_add(
    "responses call ids that are not strings (JavaScript's template text of each)",
    "openai-responses",
    "openai",
    "gpt-5",
    {
        "id": "resp_5",
        "status": "completed",
        "output": [
            {"type": "function_call", "id": {"x": 1}, "call_id": 7, "name": "ls"},
            {"type": "function_call", "call_id": ["a", "b"], "name": "ls", "arguments": "{}"},
            {"type": "custom_tool_call", "id": None, "call_id": True, "name": "p", "input": ""},
        ],
    },
)
_add(
    "responses cancelled",
    "openai-responses",
    "openai",
    "gpt-5",
    _responses([_MESSAGE], "cancelled"),
)
_add(
    "responses in progress",
    "openai-responses",
    "openai",
    "gpt-5",
    _responses([_MESSAGE], "in_progress"),
)
_add(
    "responses incomplete without reason",
    "openai-responses",
    "openai",
    "gpt-5",
    _responses([], "incomplete"),
)
_add(
    "responses cache writes",
    "openai-responses",
    "openai",
    "gpt-5",
    _responses(
        [_MESSAGE],
        usage={
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 3, "cache_write_tokens": 20},
            "output_tokens": 2,
            "total_tokens": 12,
        },
    ),
)
_add(
    "anthropic sparse usage, non-object tool input, empty signature",
    "anthropic-messages",
    "anthropic",
    "claude-sonnet-4-5",
    _anthropic(
        [
            {"type": "thinking", "thinking": "", "signature": ""},
            {"type": "tool_use", "id": "toolu_9", "name": "x", "input": [1, 2]},
        ],
        "tool_use",
        usage={"output_tokens": 7},
    ),
)
_add(
    "anthropic no stop reason",
    "anthropic-messages",
    "anthropic",
    "claude-sonnet-4-5",
    _anthropic([{"type": "text", "text": "a"}], None),
)
_add(
    "anthropic sensitive",
    "anthropic-messages",
    "anthropic",
    "claude-sonnet-4-5",
    _anthropic([], "sensitive"),
)
_add(
    "gemini blocked prompt: no candidates",
    "google-generative-ai",
    "google",
    "gemini-2.5-pro",
    {
        "promptFeedback": {"blockReason": "SAFETY"},
        "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
        "responseId": "r2",
    },
)
_add(
    "gemini empty text parts, call without name, no usage",
    "google-generative-ai",
    "google",
    "gemini-2.5-flash",
    {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": ""},
                        {"text": "", "thought": True},
                        {"functionCall": {"args": {"q": 1}}},
                    ],
                },
                "finishReason": "STOP",
            },
            {"content": {"role": "model", "parts": [{"text": "other"}]}, "finishReason": "STOP"},
        ]
    },
)
_add(
    "gemini malformed function call",
    "google-generative-ai",
    "google",
    "gemini-2.5-flash",
    _gemini([], "MALFORMED_FUNCTION_CALL"),
)
_add(
    "gemini unknown finish reason",
    "google-generative-ai",
    "google",
    "gemini-2.5-flash",
    _gemini([{"text": "x"}], "NEW_REASON"),
)

_add(
    "anthropic without id and model",
    "anthropic-messages",
    "anthropic",
    "claude-sonnet-4-5",
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "a"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    },
)
_add(
    "responses with a null id",
    "openai-responses",
    "openai",
    "gpt-5",
    _responses([_MESSAGE], id=None),
)
_add(
    "gemini empty response id",
    "google-generative-ai",
    "google",
    "gemini-2.5-pro",
    _gemini([{"text": "a"}], "STOP", responseId=""),
)

assert len({r[0] for r in REPLIES}) == len(REPLIES)
assert json.dumps(REPLIES)  # all JSON


# -- generated replies ------------------------------------------------------------------
# The same chooser as the conversations (seeded or Hypothesis-driven).

_WORDS = ["", "Hello", "multi\nline", "émoji 😀", "cut \ud83d", " ", "x" * 50]
_ARGS = [
    '{"path": "a"}',
    "",
    "  ",
    "{oops",
    "[1, 2]",
    '{"a": {"b": [1, 2.5e-7]}}',
    '{"s": "x\ny"}',
    "null",
]


def _usage_subset(chooser: Any, fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if chooser.integer(0, 3)}


def _chat_reply(chooser: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": chooser.choice([None, *_WORDS])}
    for field in ("reasoning_content", "reasoning", "reasoning_text"):
        if chooser.integer(0, 3) == 0:
            message[field] = chooser.choice(["", "thought", None])
    if chooser.integer(0, 3) == 0:
        details = [
            {"type": "reasoning.text", "text": "a", "index": 0},
            {"type": "reasoning.text", "text": "b", "signature": "s"},
            {"type": "reasoning.summary", "summary": "sum"},
            {"type": "reasoning.encrypted", "data": "E", "id": "r1"},
            {"type": "other"},
        ]
        message["reasoning_details"] = [
            chooser.choice(details) for _ in range(chooser.integer(0, 4))
        ]
    if chooser.boolean():
        message["tool_calls"] = [
            {
                "id": chooser.choice(["call_1", "call_2", ""]),
                "type": "function",
                "function": {
                    "name": chooser.choice(["read", ""]),
                    "arguments": chooser.choice(_ARGS),
                },
            }
            for _ in range(chooser.integer(1, 3))
        ]
    if chooser.integer(0, 5) == 0:
        message["refusal"] = "No."
    finish = chooser.choice(
        ["stop", "length", "tool_calls", "function_call", "content_filter", None, "end", "odd"]
    )
    usage = _usage_subset(
        chooser,
        {
            "prompt_tokens": chooser.choice([0, 10, 100]),
            "completion_tokens": chooser.choice([0, 5]),
            "total_tokens": 1,
            "prompt_tokens_details": {
                "cached_tokens": chooser.choice([0, 4]),
                "cache_write_tokens": 2,
            },
            "completion_tokens_details": {"reasoning_tokens": 3},
            "prompt_cache_hit_tokens": 7,
            "cached_tokens": 9,
        },
    )
    body: dict[str, Any] = {
        "id": chooser.choice(["chatcmpl-9", ""]),
        "model": chooser.choice(["gpt-5", "gpt-5-2025", ""]),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if chooser.integer(0, 4):
        body["usage"] = usage
    return body


def _responses_reply(chooser: Any) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    for n in range(chooser.integer(0, 4)):
        kind = chooser.integer(0, 4)
        if kind == 0:
            item: dict[str, Any] = {
                "type": "reasoning",
                "id": f"rs_{n}",
                "summary": [
                    {"type": "summary_text", "text": chooser.choice(_WORDS)}
                    for _ in range(chooser.integer(0, 2))
                ],
            }
            if chooser.boolean():
                item["content"] = [{"type": "reasoning_text", "text": chooser.choice(_WORDS)}]
            if chooser.boolean():
                item["encrypted_content"] = "gAAA"
        elif kind == 1:
            item = {
                "type": "message",
                "id": f"msg_{n}",
                "role": "assistant",
                "status": "completed",
                "content": [
                    chooser.choice(
                        [
                            {
                                "type": "output_text",
                                "text": chooser.choice(_WORDS),
                                "annotations": [],
                            },
                            {"type": "refusal", "refusal": "Nope."},
                        ]
                    )
                    for _ in range(chooser.integer(0, 2))
                ],
            }
            phase = chooser.choice([None, "commentary", "final_answer"])
            if phase:
                item["phase"] = phase
        elif kind in (2, 3):
            item = {
                "type": "function_call",
                "id": f"fc_{n}",
                "call_id": f"call_{n}",
                "name": "read",
            }
            if chooser.integer(0, 4):
                item["arguments"] = chooser.choice(_ARGS)
            if chooser.integer(0, 4) == 0:
                item["namespace"] = "ns"
        else:
            item = {"type": "web_search_call", "id": f"ws_{n}", "status": "completed"}
        output.append(item)
    status = chooser.choice(
        ["completed", "completed", "incomplete", "failed", "cancelled", "in_progress"]
    )
    body: dict[str, Any] = {
        "id": "resp_g",
        "object": "response",
        "status": status,
        "output": output,
    }
    if status == "incomplete" and chooser.integer(0, 3):
        body["incomplete_details"] = {
            "reason": chooser.choice(["max_output_tokens", "content_filter"])
        }
    if status == "failed" and chooser.boolean():
        body["error"] = {"code": "server_error", "message": "boom"}
    if chooser.integer(0, 4):
        body["usage"] = _usage_subset(
            chooser,
            {
                "input_tokens": 50,
                "input_tokens_details": {
                    "cached_tokens": chooser.choice([0, 10]),
                    "cache_write_tokens": 5,
                },
                "output_tokens": 7,
                "output_tokens_details": {"reasoning_tokens": 2},
                "total_tokens": 57,
            },
        )
    return body


def _anthropic_reply(chooser: Any) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    for n in range(chooser.integer(0, 4)):
        kind = chooser.integer(0, 4)
        if kind == 0:
            blocks.append({"type": "text", "text": chooser.choice(_WORDS)})
        elif kind == 1:
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": chooser.choice(_WORDS),
                    "signature": chooser.choice(["", "EqQ"]),
                }
            )
        elif kind == 2:
            blocks.append({"type": "redacted_thinking", "data": "EmwK"})
        elif kind == 3:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{n}",
                    "name": "read",
                    "input": chooser.choice([{}, {"p": "a", "2": 1.5}]),
                }
            )
        else:
            blocks.append(
                {"type": "server_tool_use", "id": f"srv_{n}", "name": "web_search", "input": {}}
            )
    stop = chooser.choice(
        ["end_turn", "tool_use", "max_tokens", "pause_turn", "stop_sequence", "refusal", None]
    )
    body: dict[str, Any] = {
        "id": "msg_g",
        "type": "message",
        "role": "assistant",
        "model": chooser.choice(["claude-sonnet-4-5", "claude-sonnet-4-5-2025"]),
        "content": blocks,
        "stop_reason": stop,
        "usage": _usage_subset(
            chooser,
            {
                "input_tokens": 10,
                "output_tokens": 3,
                "cache_read_input_tokens": 5,
                "cache_creation_input_tokens": 2,
                "cache_creation": {"ephemeral_1h_input_tokens": 1},
                "output_tokens_details": {"thinking_tokens": 1},
            },
        ),
    }
    if stop == "refusal" and chooser.boolean():
        body["stop_details"] = {"type": "refusal", "explanation": "Policy."}
    return body


def _gemini_reply(chooser: Any) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for n in range(chooser.integer(0, 5)):
        if chooser.integer(0, 3):
            part: dict[str, Any] = {"text": chooser.choice(_WORDS)}
            if chooser.boolean():
                part["thought"] = True
        else:
            part = {"functionCall": {"name": chooser.choice(["read", "ls"]), "args": {"n": n}}}
            call_id = chooser.choice([None, "fc-1", "fc-2"])
            if call_id:
                part["functionCall"]["id"] = call_id
        if chooser.integer(0, 2) == 0:
            part["thoughtSignature"] = chooser.choice(["c2ln", ""])
        parts.append(part)
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    finish = chooser.choice(
        ["STOP", "STOP", "MAX_TOKENS", "SAFETY", "MALFORMED_FUNCTION_CALL", None]
    )
    if finish:
        candidate["finishReason"] = finish
    body: dict[str, Any] = {"candidates": [candidate]}
    if chooser.integer(0, 3):
        body["usageMetadata"] = _usage_subset(
            chooser,
            {
                "promptTokenCount": 20,
                "candidatesTokenCount": 4,
                "thoughtsTokenCount": 2,
                "cachedContentTokenCount": 5,
                "totalTokenCount": 26,
            },
        )
    if chooser.boolean():
        body["responseId"] = "resp-g"
    return body


_REPLY_TARGETS = [
    ("openai-completions", "openai", "gpt-5", _chat_reply),
    ("openai-completions", "opencode-go", "kimi-k2", _chat_reply),
    ("openai-responses", "openai", "gpt-5", _responses_reply),
    ("anthropic-messages", "anthropic", "claude-sonnet-4-5", _anthropic_reply),
    ("google-generative-ai", "google", "gemini-3-pro-preview", _gemini_reply),
]


def reply_case(chooser: Any) -> dict[str, Any]:
    """One generated reply case: an API, a provider, a model and a reply body."""
    api, provider, model, make = chooser.choice(_REPLY_TARGETS)
    return {
        "kind": "response",
        "api": api,
        "provider": provider,
        "model": model,
        "response": make(chooser),
    }
