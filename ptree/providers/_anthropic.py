"""Anthropic Messages (``anthropic-messages``): body and reply, as pi-ai builds them."""

from __future__ import annotations

from typing import Any

from ..js import stringify, template, utf16_slice
from ._js import MISSING, is_blank, sanitize_surrogates, word_chars
from ._model import (
    ERROR_IMAGE_PLACEHOLDER,
    NormalizeId,
    Request,
    Target,
    blocks_of,
    convert,
    replace_images,
)
from ._reply import new_message, num, parse_arguments, priced, total_usage

__all__ = ["build", "normalize_id", "parse"]

_MARKER = {"type": "ephemeral"}


def _normalize_id(call_id: str, _source: dict[str, Any]) -> str:
    return utf16_slice(word_chars(call_id), 64)


def _image(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": block.get("mimeType", MISSING),
            "data": block.get("data", MISSING),
        },
    }


def _user(content: Any, _target: Target, out: list[dict[str, Any]]) -> None:
    if isinstance(content, str):
        if not is_blank(content):
            out.append({"role": "user", "content": sanitize_surrogates(content)})
        return
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
        "tool_use_id": msg.get("toolCallId", MISSING),
        "content": _result_content(content),
    }
    if msg.get("isError") is not None:
        out["is_error"] = msg["isError"]
    return out


def _assistant(msg: dict[str, Any], _target: Target, out: list[dict[str, Any]]) -> None:
    blocks = _assistant_blocks(msg)
    if blocks:
        out.append({"role": "assistant", "content": blocks})


def _assistant_blocks(msg: dict[str, Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in blocks_of(msg):
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
                    {
                        "type": "thinking",
                        "thinking": sanitize_surrogates(thinking),
                        "signature": signature,
                    }
                )
            else:
                blocks.append({"type": "text", "text": sanitize_surrogates(thinking)})
        elif kind == "toolCall":
            args = block.get("arguments")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block.get("id", MISSING),
                    "name": block.get("name", MISSING),
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


def normalize_id(_target: Target) -> NormalizeId:
    """Anthropic's tool-call ids: at most 64 of ``[a-zA-Z0-9_-]``, whatever the model."""
    return _normalize_id


def _tool_results(run: list[dict[str, Any]], _target: Target, out: list[dict[str, Any]]) -> None:
    results: list[dict[str, Any]] = []
    after: list[dict[str, Any]] = []
    for result in run:
        content = blocks_of(result)
        images = [b for b in content if b.get("type") == "image"]
        if result.get("isError") and images:
            results.append(_tool_result(result, replace_images(content, ERROR_IMAGE_PLACEHOLDER)))
            after.append(
                {
                    "type": "text",
                    "text": "Images from the error result of tool call "
                    f"{template(result.get('toolCallId', MISSING))} "
                    f"({template(result.get('toolName', MISSING))}):",
                }
            )
            after.extend(_image(b) for b in images)
        else:
            results.append(_tool_result(result, content))
    out.append({"role": "user", "content": results + after})


def build(request: Request) -> dict[str, Any]:
    """The conversation fields of pi-ai's Anthropic Messages body."""
    out = convert(request, _user, _assistant, _tool_results)
    if out and out[-1]["role"] == "user":
        last = out[-1]
        if isinstance(last["content"], list):
            block = last["content"][-1] if last["content"] else None
            if block is not None and block.get("type") in ("text", "image", "tool_result"):
                block["cache_control"] = dict(_MARKER)
        elif isinstance(last["content"], str):
            last["content"] = [
                {"type": "text", "text": last["content"], "cache_control": dict(_MARKER)}
            ]
    body: dict[str, Any] = {"messages": out}
    if request.system:
        body["system"] = [
            {
                "type": "text",
                "text": sanitize_surrogates(request.system),
                "cache_control": dict(_MARKER),
            }
        ]
    if request.tools:
        converted = [
            {
                "name": t.get("name", MISSING),
                "description": t.get("description", MISSING),
                "eager_input_streaming": True,
                "input_schema": _schema(t.get("parameters")),
            }
            for t in request.tools
        ]
        converted[-1]["cache_control"] = dict(_MARKER)
        body["tools"] = converted
    return body


_STOP_REASONS = {
    "end_turn": "stop",
    "pause_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
}


def _count(value: Any) -> Any:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def parse(response: dict[str, Any], target: Target) -> dict[str, Any]:
    """pi-ai's message for an Anthropic Messages reply (streamed block by block)."""
    out = new_message(target)
    content: list[dict[str, Any]] = out["content"]
    if "id" in response:
        out["responseId"] = response["id"]
    if "model" in response and response["model"] != target.model:
        out["responseModel"] = response["model"]
    raw: dict[str, Any] = response["usage"] if isinstance(response.get("usage"), dict) else {}
    usage = out["usage"]
    usage["input"] = num(raw.get("input_tokens"))
    usage["output"] = num(raw.get("output_tokens"))
    usage["cacheRead"] = num(raw.get("cache_read_input_tokens"))
    usage["cacheWrite"] = num(raw.get("cache_creation_input_tokens"))
    creation = raw.get("cache_creation")
    usage["cacheWrite1h"] = (
        num(creation.get("ephemeral_1h_input_tokens")) if isinstance(creation, dict) else 0
    )
    details = raw.get("output_tokens_details")
    thinking_tokens = _count(details.get("thinking_tokens")) if isinstance(details, dict) else None
    if thinking_tokens is not None:
        usage["reasoning"] = thinking_tokens
    total_usage(usage)
    priced(usage)
    for block in response.get("content") or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            content.append({"type": "text", "text": block.get("text") or ""})
        elif kind == "thinking":
            content.append(
                {
                    "type": "thinking",
                    "thinking": block.get("thinking") or "",
                    "thinkingSignature": block.get("signature") or "",
                }
            )
        elif kind == "redacted_thinking":
            thinking: dict[str, Any] = {"type": "thinking", "thinking": "[Reasoning redacted]"}
            if "data" in block:
                thinking["thinkingSignature"] = block["data"]
            thinking["redacted"] = True
            content.append(thinking)
        elif kind == "tool_use":
            call: dict[str, Any] = {
                "type": "toolCall",
                "id": block.get("id"),
                "name": block.get("name"),
            }
            arguments = block.get("input")
            if isinstance(arguments, dict):
                call["arguments"] = arguments
            else:
                call.update(parse_arguments(stringify(arguments) if arguments is not None else ""))
            content.append(call)
    reason = response.get("stop_reason")
    if reason:
        out["rawStopReason"] = reason
    if not reason:
        out["stopReason"] = "error"
        out["errorMessage"] = "Anthropic stream ended without a stop reason"
    elif reason in _STOP_REASONS:
        out["stopReason"] = _STOP_REASONS[reason]
    else:
        out["stopReason"] = "error"
        if reason == "refusal":
            stop_details = response.get("stop_details")
            explanation = (
                stop_details.get("explanation") if isinstance(stop_details, dict) else None
            )
            out["errorMessage"] = explanation or "The model refused to complete the request"
        elif reason == "sensitive":
            out["errorMessage"] = "Provider stopped with: sensitive"
        else:
            out["errorMessage"] = f"Unhandled stop reason: {reason}"
    return out
