"""OpenAI Responses (``openai-responses``): body and reply, as pi-ai builds them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from ..js import stringify, template, utf16_len
from ._js import MISSING, is_blank, sanitize_surrogates, short_hash, word_chars
from ._model import (
    NormalizeId,
    Request,
    Target,
    blocks_of,
    instructions,
    transform_messages,
)
from ._reply import new_message, num, parse_arguments, priced

__all__ = ["build", "input_by_message", "normalize_id", "parse"]

# Providers whose Responses endpoint takes OpenAI's `<call id>|<item id>` pairs.
_PAIRED_ID_PROVIDERS = frozenset(("openai", "openai-codex", "opencode"))
_TRAILING_UNDERSCORES = re.compile(r"_+$")


def _id_part(part: str) -> str:
    return _TRAILING_UNDERSCORES.sub("", word_chars(part)[:64])


def normalize_id(target: Target) -> NormalizeId:
    """Responses' tool-call ids: ``<call>|<item>`` pairs kept (foreign items hashed to
    ``fc_…``) for OpenAI's own hosts, else the call id's ``[a-zA-Z0-9_-]``, at most 64."""

    def normalize(call_id: str, source: dict[str, Any]) -> str:
        if target.provider not in _PAIRED_ID_PROVIDERS or "|" not in call_id:
            return _id_part(call_id)
        parts = call_id.split("|")
        call, item = parts[0], parts[1]
        foreign = source.get("provider") != target.provider or source.get("api") != target.api
        new_item = f"fc_{short_hash(item)}"[:64] if foreign else _id_part(item)
        if not new_item.startswith("fc_"):
            new_item = _id_part(f"fc_{new_item}")
        return f"{_id_part(call)}|{new_item}"

    return normalize


def _text_signature(signature: Any) -> tuple[str, str | None] | None:
    if not signature:
        return None
    if signature.startswith("{"):
        try:
            parsed = json.loads(signature)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


def _image(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "input_image",
        "detail": "auto",
        "image_url": f"data:{template(block.get('mimeType', MISSING))};base64,"
        f"{template(block.get('data', MISSING))}",
    }


def _tool_output(result: dict[str, Any], target: Target) -> Any:
    blocks = blocks_of(result)
    text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    images = [b for b in blocks if b.get("type") == "image"]
    has_text = not is_blank(text)
    if not images or not target.images:
        if not has_text:
            text = "(see attached image)" if images else "(no tool output)"
        return sanitize_surrogates(text)
    out: list[dict[str, Any]] = []
    if has_text:
        out.append({"type": "input_text", "text": sanitize_surrogates(text)})
    out.extend(_image(b) for b in images)
    return out


def build(request: Request) -> dict[str, Any]:
    """The conversation fields of pi-ai's Responses body."""
    target = request.target
    items = instructions(request.system, target.reasoning)
    for _, produced in _per_message(request.messages, target):
        items.extend(produced)
    body: dict[str, Any] = {"input": items}
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": t.get("name", MISSING),
                "description": t.get("description", MISSING),
                "parameters": t.get("parameters", MISSING),
            }
            for t in request.tools
        ]
    return body


def _blocks(content: Any) -> list[Any]:
    """A user message's content as blocks: a string is one text block."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _per_message(
    messages: list[dict[str, Any]], target: Target
) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Each transformed message with the input items pi-ai makes of it (maybe none)."""
    index = 0  # pi-ai's msgIndex: messages before this one that produced input
    for msg in messages:
        role = msg.get("role")
        produced: list[dict[str, Any]] = []
        if role == "user":
            parts = [
                {"type": "input_text", "text": sanitize_surrogates(b.get("text", ""))}
                if b.get("type") == "text"
                else _image(b)
                for b in _blocks(msg["content"])
            ]
            if parts:
                produced.append({"role": "user", "content": parts})
        elif role == "assistant":
            produced = _assistant(msg, target, index)
        elif role == "toolResult":
            produced.append(
                {
                    "type": "function_call_output",
                    "call_id": str(msg.get("toolCallId")).split("|")[0],
                    "output": _tool_output(msg, target),
                }
            )
        if role in ("user", "assistant") and not produced:
            yield msg, produced
            continue
        index += 1
        yield msg, produced


def input_by_message(messages: list[dict[str, Any]], target: Target) -> list[list[dict[str, Any]]]:
    """The input items of each of ``messages``, in pi-ai's one conversion.

    ``out[i]`` holds what ``messages[i]`` gives (nothing for a failed turn).  A result
    pi-ai makes up for a call left unanswered comes first in the items of the message
    that closes the call's turn (the next user or assistant message); at the end of the
    conversation it goes with none, since pi-ai adds it only because the request ends
    there.  ``messages`` are plain copies, owned by the caller (changed in place).
    Cost: O(total size of the messages).
    """
    origin = {id(m): i for i, m in enumerate(messages)}
    out: list[list[dict[str, Any]]] = [[] for _ in messages]
    made_up: list[dict[str, Any]] = []
    for msg, produced in _per_message(
        transform_messages(messages, target, normalize_id(target)), target
    ):
        i = origin.get(id(msg))
        if i is None:
            made_up += produced
        else:
            out[i] = made_up + produced
            made_up = []
    return out


def _assistant(msg: dict[str, Any], target: Target, index: int) -> list[dict[str, Any]]:
    same_host = msg.get("provider") == target.provider and msg.get("api") == target.api
    same_model = same_host and msg.get("model") == target.model
    other_model = same_host and msg.get("model") != target.model
    output: list[dict[str, Any]] = []
    text_index = 0
    for block in blocks_of(msg):
        kind = block.get("type")
        if kind == "thinking":
            signature = block.get("thinkingSignature")
            if signature:
                try:
                    output.append(json.loads(signature))
                except ValueError as e:
                    raise ValueError(
                        f"a thinking signature of an openai-responses message is not JSON: {e}"
                    ) from None
        elif kind == "text":
            parsed = _text_signature(block.get("textSignature"))
            fallback = f"msg_pi_{index}" if text_index == 0 else f"msg_pi_{index}_{text_index}"
            text_index += 1
            item_id = parsed[0] if parsed else None
            if not item_id:
                item_id = fallback
            elif utf16_len(item_id) > 64:
                item_id = f"msg_{short_hash(item_id)}"
            item: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": sanitize_surrogates(block.get("text", "")),
                        "annotations": [],
                    }
                ],
                "status": "completed",
                "id": item_id,
            }
            if parsed and parsed[1]:
                item["phase"] = parsed[1]
            output.append(item)
        elif kind == "toolCall":
            parts = str(block.get("id")).split("|")
            call: dict[str, Any] = {"type": "function_call"}
            item_part = parts[1] if len(parts) > 1 else None
            if not other_model and item_part is not None and item_part.startswith("fc_"):
                call["id"] = item_part
            call["call_id"] = parts[0]
            call["name"] = block.get("name", MISSING)
            call["arguments"] = stringify(block["arguments"]) if "arguments" in block else MISSING
            if same_model and "namespace" in block:
                call["namespace"] = block["namespace"]
            output.append(call)
    return output


def _text_signature_v1(item_id: Any, phase: Any) -> str:
    data: dict[str, Any] = {"v": 1}
    if item_id is not None:
        data["id"] = item_id
    if phase:
        data["phase"] = phase
    return stringify(data)


def _joined(parts: Any, key: str, sep: str) -> str:
    if not isinstance(parts, list):
        return ""
    return sep.join(_js_str(p.get(key)) if isinstance(p, dict) else "" for p in parts)


def _js_str(value: Any) -> str:
    # Array.prototype.join writes null and undefined as ""
    return "" if value is None else value if isinstance(value, str) else stringify(value)


def parse(response: dict[str, Any], target: Target) -> dict[str, Any]:
    """pi-ai's message for a Responses reply (streamed item by item)."""
    out = new_message(target)
    content: list[dict[str, Any]] = out["content"]
    if "id" in response:
        out["responseId"] = response["id"]
    for item in response.get("output") or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "reasoning":
            summary = _joined(item.get("summary"), "text", "\n\n")
            text = _joined(item.get("content"), "text", "\n\n")
            content.append(
                {
                    "type": "thinking",
                    "thinking": summary or text or "",
                    "thinkingSignature": stringify(item),
                }
            )
        elif kind == "message":
            parts = item.get("content")
            text = ""
            if isinstance(parts, list):
                text = "".join(
                    _js_str(p.get("text") if p.get("type") == "output_text" else p.get("refusal"))
                    for p in parts
                    if isinstance(p, dict)
                )
            content.append(
                {
                    "type": "text",
                    "text": text,
                    "textSignature": _text_signature_v1(item.get("id"), item.get("phase")),
                }
            )
        elif kind == "function_call":
            block: dict[str, Any] = {
                "type": "toolCall",
                "id": _call_id(item),
                "name": item.get("name"),
            }
            block.update(parse_arguments(item.get("arguments") or ""))
            if "namespace" in item:
                block["namespace"] = item["namespace"]
            content.append(block)
        elif kind == "custom_tool_call":
            # a grammar tool's free-text input; pi-ai files it under "input"
            block = {
                "type": "toolCall",
                "id": _call_id(item),
                "name": item.get("name"),
                "arguments": {"input": item.get("input") or ""},
            }
            if "namespace" in item:
                block["namespace"] = item["namespace"]
            content.append(block)
    status = response.get("status")
    if status == "failed":  # streamed as response.failed
        error = response.get("error")
        details = response.get("incomplete_details")
        if isinstance(error, dict) and error:
            message = f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}"
        elif isinstance(details, dict) and details.get("reason"):
            message = f"incomplete: {details['reason']}"
        else:
            message = "Unknown error (no error details in response)"
        out["stopReason"] = "error"
        out["errorMessage"] = message
        if status is not None:
            out["rawStopReason"] = status
        return out
    usage = response.get("usage")
    if isinstance(usage, dict):
        details = usage.get("input_tokens_details")
        cached = num(details.get("cached_tokens")) if isinstance(details, dict) else 0
        write = num(details.get("cache_write_tokens")) if isinstance(details, dict) else 0
        output_details = usage.get("output_tokens_details")
        out["usage"] = {
            "input": max(0, num(usage.get("input_tokens")) - cached - write),
            "output": num(usage.get("output_tokens")),
            "cacheRead": cached,
            "cacheWrite": write,
            "reasoning": num(output_details.get("reasoning_tokens"))
            if isinstance(output_details, dict)
            else 0,
            "totalTokens": num(usage.get("total_tokens")),
        }
    priced(out["usage"])
    incomplete = response.get("incomplete_details")
    reason = incomplete.get("reason") if isinstance(incomplete, dict) else None
    reason = reason if isinstance(reason, str) else None
    raw_reason = f"{template(response.get('status', MISSING))}.{reason}" if reason else status
    if raw_reason is not None:
        out["rawStopReason"] = raw_reason
    error_message: str | None = None
    if not status or status in ("completed", "in_progress", "queued"):
        out["stopReason"] = "stop"
    elif status == "incomplete":
        if reason == "max_output_tokens":
            out["stopReason"] = "length"
        else:
            out["stopReason"] = "error"
            error_message = (
                f"Response incomplete: {reason}"
                if reason
                else "Response incomplete without a provider reason"
            )
    elif status == "cancelled":
        out["stopReason"] = "error"
    else:
        out["stopReason"] = "error"
        error_message = f"Unhandled stop reason: {status}"
    if out["stopReason"] == "stop" and any(b["type"] == "toolCall" for b in content):
        out["stopReason"] = "toolUse"
    if out["stopReason"] == "error":
        out["errorMessage"] = error_message or "An unknown error occurred"
    return out


def _call_id(item: dict[str, Any]) -> str:
    """pi-ai's ``${item.call_id}|${item.id}`` for a function or grammar-tool call."""
    return f"{template(item.get('call_id', MISSING))}|{template(item.get('id', MISSING))}"
