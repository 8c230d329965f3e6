"""OpenAI Responses (``openai-responses``): body and reply, as pi-ai builds them."""

from __future__ import annotations

import json
import re
from typing import Any

from ._js import is_blank, js_json, sanitize_surrogates, short_hash, utf16_len, word_chars
from ._model import Target, transform_messages

__all__ = ["build", "parse"]

# Providers whose Responses endpoint takes OpenAI's `<call id>|<item id>` pairs.
_PAIRED_ID_PROVIDERS = frozenset(("openai", "openai-codex", "opencode"))
_TRAILING_UNDERSCORES = re.compile(r"_+$")


def _id_part(part: str) -> str:
    return _TRAILING_UNDERSCORES.sub("", word_chars(part)[:64])


def _normalize_id(target: Target) -> Any:
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
        "image_url": f"data:{block.get('mimeType')};base64,{block.get('data')}",
    }


def _tool_output(content: list[Any], target: Target) -> Any:
    blocks = [b for b in content if isinstance(b, dict)]
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


def build(
    messages: list[dict[str, Any]],
    target: Target,
    system: str | None,
    tools: list[dict[str, Any]],
) -> dict[str, Any]:
    """The conversation fields of pi-ai's Responses body."""
    items: list[dict[str, Any]] = []
    if system:
        role = "developer" if target.reasoning else "system"
        items.append({"role": role, "content": sanitize_surrogates(system)})
    index = 0  # pi-ai's msgIndex: messages before this one that produced input
    for msg in transform_messages(messages, target, _normalize_id(target)):
        role = msg.get("role")
        if role == "user":
            content = msg["content"]
            if isinstance(content, str):
                items.append(
                    {"role": "user", "content": [{"type": "input_text", "text": sanitize_surrogates(content)}]}
                )
            else:
                parts = [
                    {"type": "input_text", "text": sanitize_surrogates(b.get("text", ""))}
                    if b.get("type") == "text"
                    else _image(b)
                    for b in content
                ]
                if not parts:
                    continue
                items.append({"role": "user", "content": parts})
        elif role == "assistant":
            output = _assistant(msg, target, index)
            if not output:
                continue
            items.extend(output)
        elif role == "toolResult":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": str(msg.get("toolCallId")).split("|")[0],
                    "output": _tool_output(msg["content"], target),
                }
            )
        index += 1
    body: dict[str, Any] = {"input": items}
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "name": t.get("name"),
                "description": t.get("description"),
                "parameters": t.get("parameters"),
            }
            for t in tools
        ]
    return body


def _assistant(msg: dict[str, Any], target: Target, index: int) -> list[dict[str, Any]]:
    same_host = msg.get("provider") == target.provider and msg.get("api") == target.api
    same_model = same_host and msg.get("model") == target.model
    other_model = same_host and msg.get("model") != target.model
    output: list[dict[str, Any]] = []
    text_index = 0
    for block in msg["content"]:
        if not isinstance(block, dict):
            continue
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
            call = {"type": "function_call"}
            item_part = parts[1] if len(parts) > 1 else None
            if not other_model and item_part is not None and item_part.startswith("fc_"):
                call["id"] = item_part
            call["call_id"] = parts[0]
            call["name"] = block.get("name")
            call["arguments"] = js_json(block.get("arguments"))
            if same_model and "namespace" in block:
                call["namespace"] = block["namespace"]
            output.append(call)
    return output


def parse(response: dict[str, Any], target: Target) -> dict[str, Any]:
    """Placeholder replaced below."""
    raise NotImplementedError
