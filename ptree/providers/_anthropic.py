"""Anthropic Messages (``anthropic-messages``): body and reply, as pi-ai builds them."""

from __future__ import annotations

from typing import Any

from ._js import is_blank, sanitize_surrogates, utf16_slice, word_chars
from ._model import ERROR_IMAGE_PLACEHOLDER, Target, replace_images, transform_messages

__all__ = ["build", "parse"]

_MARKER = {"type": "ephemeral"}


def _normalize_id(call_id: str, _source: dict[str, Any]) -> str:
    return utf16_slice(word_chars(call_id), 64)


def _image(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block.get("mimeType"), "data": block.get("data")},
    }


def _result_content(content: list[Any]) -> Any:
    blocks = [b for b in content if isinstance(b, dict)]
    if not any(b.get("type") == "image" for b in blocks):
        return sanitize_surrogates("\n".join(str(b.get("text", "")) for b in blocks))
    out = [
        {"type": "text", "text": sanitize_surrogates(b.get("text", ""))}
        if b.get("type") == "text"
        else _image(b)
        for b in blocks
    ]
    if not any(b["type"] == "text" for b in out):
        out.insert(0, {"type": "text", "text": "(see attached image)"})
    return out


def _tool_result(msg: dict[str, Any], content: list[Any]) -> dict[str, Any]:
    out = {
        "type": "tool_result",
        "tool_use_id": msg.get("toolCallId"),
        "content": _result_content(content),
    }
    if msg.get("isError") is not None:
        out["is_error"] = msg["isError"]
    return out


def _assistant(msg: dict[str, Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in msg["content"]:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            if not is_blank(block.get("text")):
                blocks.append({"type": "text", "text": sanitize_surrogates(block["text"])})
        elif kind == "thinking":
            signature = block.get("thinkingSignature")
            if block.get("redacted"):
                redacted: dict[str, Any] = {"type": "redacted_thinking"}
                if signature is not None:
                    redacted["data"] = signature
                blocks.append(redacted)
                continue
            signed = not is_blank(signature)
            thinking = block.get("thinking") or ""
            if is_blank(thinking) and not signed:
                continue
            if signed:
                blocks.append(
                    {"type": "thinking", "thinking": sanitize_surrogates(thinking), "signature": signature}
                )
            else:
                blocks.append({"type": "text", "text": sanitize_surrogates(thinking)})
        elif kind == "toolCall":
            args = block.get("arguments")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block.get("id"),
                    "name": block.get("name"),
                    "input": {} if args is None else args,
                }
            )
    return blocks


def _schema(parameters: Any) -> dict[str, Any]:
    schema = parameters if isinstance(parameters, dict) else {}
    out: dict[str, Any] = {
        "type": "object",
        "properties": schema.get("properties") if schema.get("properties") is not None else {},
        "required": schema.get("required") if schema.get("required") is not None else [],
    }
    for key in ("additionalProperties", "$defs", "definitions"):
        if key in schema:
            out[key] = schema[key]
    return out


def build(
    messages: list[dict[str, Any]],
    target: Target,
    system: str | None,
    tools: list[dict[str, Any]],
) -> dict[str, Any]:
    """The conversation fields of pi-ai's Anthropic Messages body."""
    out: list[dict[str, Any]] = []
    transformed = transform_messages(messages, target, _normalize_id)
    i = 0
    n = len(transformed)
    while i < n:
        msg = transformed[i]
        role = msg.get("role")
        if role == "user":
            content = msg["content"]
            if isinstance(content, str):
                if not is_blank(content):
                    out.append({"role": "user", "content": sanitize_surrogates(content)})
            else:
                parts = []
                for b in content:
                    if b.get("type") == "text":
                        text = sanitize_surrogates(b.get("text", ""))
                        if not is_blank(text):
                            parts.append({"type": "text", "text": text})
                    else:
                        parts.append(_image(b))
                if parts:
                    out.append({"role": "user", "content": parts})
        elif role == "assistant":
            blocks = _assistant(msg)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif role == "toolResult":
            results: list[dict[str, Any]] = []
            after: list[dict[str, Any]] = []
            while i < n and transformed[i].get("role") == "toolResult":
                result = transformed[i]
                content = [b for b in result["content"] if isinstance(b, dict)]
                images = [b for b in content if b.get("type") == "image"]
                if result.get("isError") and images:
                    results.append(
                        _tool_result(result, replace_images(content, ERROR_IMAGE_PLACEHOLDER))
                    )
                    after.append(
                        {
                            "type": "text",
                            "text": "Images from the error result of tool call "
                            f"{result.get('toolCallId')} ({result.get('toolName')}):",
                        }
                    )
                    after.extend(_image(b) for b in images)
                else:
                    results.append(_tool_result(result, content))
                i += 1
            i -= 1
            out.append({"role": "user", "content": results + after})
        i += 1
    if out and out[-1]["role"] == "user":
        last = out[-1]
        if isinstance(last["content"], list):
            block = last["content"][-1] if last["content"] else None
            if block is not None and block.get("type") in ("text", "image", "tool_result"):
                block["cache_control"] = dict(_MARKER)
        elif isinstance(last["content"], str):
            last["content"] = [{"type": "text", "text": last["content"], "cache_control": dict(_MARKER)}]
    body: dict[str, Any] = {"messages": out}
    if system:
        body["system"] = [{"type": "text", "text": sanitize_surrogates(system), "cache_control": dict(_MARKER)}]
    if tools:
        converted = [
            {
                "name": t.get("name"),
                "description": t.get("description"),
                "eager_input_streaming": True,
                "input_schema": _schema(t.get("parameters")),
            }
            for t in tools
        ]
        converted[-1]["cache_control"] = dict(_MARKER)
        body["tools"] = converted
    return body


def parse(response: dict[str, Any], target: Target) -> dict[str, Any]:
    """Placeholder replaced below."""
    raise NotImplementedError
