"""OpenAI Chat Completions (``openai-completions``): body and reply, as pi-ai builds them."""

from __future__ import annotations

import json
from typing import Any

from ..js import stringify, template, utf16_len, utf16_slice
from ._js import MISSING, is_blank, sanitize_surrogates, short_hash, word_chars
from ._model import NormalizeId, Request, Target, blocks_of, convert, instructions
from ._reply import new_message, num, parse_arguments, priced

__all__ = ["build", "normalize_id", "parse"]

_REASONING_FIELDS = ("reasoning", "reasoning_content", "reasoning_text")


def normalize_id(target: Target) -> NormalizeId:
    """Chat Completions' tool-call ids: a Responses pair joined, at most 40 for OpenAI."""

    def normalize(call_id: str, _source: dict[str, Any]) -> str:
        if "|" in call_id:
            sep = call_id.index("|")
            call = word_chars(call_id[:sep])
            item = word_chars(call_id[sep + 1 :])
            combined = f"{call}_{item}" if item else call
            if len(combined) <= 40:
                return combined
            digest = short_hash(call_id)[:8]
            return f"{call[: max(1, 40 - len(digest) - 1)]}_{digest}"
        if target.provider == "openai" and utf16_len(call_id) > 40:
            return utf16_slice(call_id, 40)
        return call_id

    return normalize


def _is_detail(d: Any) -> bool:
    if not isinstance(d, dict):
        return False
    if not (d.get("id") is None or isinstance(d["id"], str)):
        return False
    if "format" in d and not isinstance(d["format"], str):
        return False
    if "index" in d and (isinstance(d["index"], bool) or not isinstance(d["index"], int | float)):
        return False
    kind = d.get("type")
    if kind == "reasoning.summary":
        return isinstance(d.get("summary"), str)
    if kind == "reasoning.encrypted":
        return isinstance(d.get("data"), str)
    if kind == "reasoning.text":
        return isinstance(d.get("text"), str) and (
            d.get("signature") is None or isinstance(d["signature"], str)
        )
    return False


def _loads(text: Any) -> Any:
    if not text or not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _details(signature: Any) -> list[Any] | None:
    parsed = _loads(signature)
    if isinstance(parsed, list) and parsed and all(_is_detail(d) for d in parsed):
        return parsed
    return None


def _legacy_detail(signature: Any) -> Any:
    parsed = _loads(signature)
    if (
        _is_detail(parsed)
        and parsed["type"] == "reasoning.encrypted"
        and isinstance(parsed.get("id"), str)
        and parsed["id"]
        and parsed["data"]
    ):
        return parsed
    return None


def _image_url(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {
            "url": f"data:{template(block.get('mimeType', MISSING))};base64,"
            f"{template(block.get('data', MISSING))}"
        },
    }


def _assistant(msg: dict[str, Any], target: Target, out: list[dict[str, Any]]) -> None:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    blocks = blocks_of(msg)
    texts = [
        sanitize_surrogates(b.get("text", ""))
        for b in blocks
        if b.get("type") == "text" and not is_blank(b.get("text"))
    ]
    text = "".join(texts)
    thinking = [b for b in blocks if b.get("type") == "thinking"]
    calls = [b for b in blocks if b.get("type") == "toolCall"]
    details = next(
        (d for d in (_details(b.get("thinkingSignature")) for b in thinking) if d is not None),
        None,
    )
    if details is None:
        legacy = [d for d in (_legacy_detail(c.get("thoughtSignature")) for c in calls) if d]
        details = legacy or None
    if text:
        message["content"] = text
    readable = [b for b in thinking if not is_blank(b.get("thinking"))]
    if readable and details is None:
        field = readable[0].get("thinkingSignature")
        if target.provider == "opencode-go" and field == "reasoning":
            field = "reasoning_content"
        if field in _REASONING_FIELDS:
            message[field] = "\n".join(b["thinking"] for b in readable)
    if calls:
        message["tool_calls"] = [
            {
                "id": c.get("id", MISSING),
                "type": "function",
                "function": {
                    "name": c.get("name", MISSING),
                    "arguments": stringify(c["arguments"]) if "arguments" in c else MISSING,
                },
            }
            for c in calls
        ]
    if details is not None:
        message["reasoning_details"] = details
    if _is_deepseek(target) and target.reasoning and "reasoning_content" not in message:
        message["reasoning_content"] = ""
    if message["content"] or calls:
        out.append(message)


def _is_deepseek(target: Target) -> bool:
    return target.provider == "deepseek"


def _cache_markers(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> None:
    """OpenRouter's Anthropic models: pi-ai's three cache breakpoints."""
    marker = {"type": "ephemeral"}
    for m in messages:
        if m["role"] in ("system", "developer"):
            _mark_text(m, marker)
            break
    if tools:
        tools[-1]["cache_control"] = dict(marker)
    for m in reversed(messages):
        if m["role"] in ("user", "assistant", "tool") and _mark_text(m, marker):
            break


def _mark_text(message: dict[str, Any], marker: dict[str, str]) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": dict(marker)}]
        return True
    if not isinstance(content, list):
        return False
    for part in reversed(content):
        if isinstance(part, dict) and part.get("type") == "text":
            part["cache_control"] = dict(marker)
            return True
    return False


def _user(content: Any, _target: Target, out: list[dict[str, Any]]) -> None:
    if isinstance(content, str):
        out.append({"role": "user", "content": sanitize_surrogates(content)})
        return
    parts = []
    for b in content:
        if b.get("type") == "text":
            if b.get("text"):
                parts.append({"type": "text", "text": sanitize_surrogates(b["text"])})
        else:
            parts.append(_image_url(b))
    if parts:
        out.append({"role": "user", "content": parts})


def _tool_results(run: list[dict[str, Any]], target: Target, out: list[dict[str, Any]]) -> None:
    images: list[dict[str, Any]] = []
    for result in run:
        blocks = blocks_of(result)
        text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        has_images = any(b.get("type") == "image" for b in blocks)
        if is_blank(text):
            text = "(see attached image)" if has_images else "(no tool output)"
        out.append(
            {
                "role": "tool",
                "content": sanitize_surrogates(text),
                "tool_call_id": result.get("toolCallId", MISSING),
            }
        )
        if has_images and target.images:
            images.extend(_image_url(b) for b in blocks if b.get("type") == "image")
    if images:
        out.append(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Attached image(s) from tool result:"},
                    *images,
                ],
            }
        )


def build(request: Request) -> dict[str, Any]:
    """The conversation fields of pi-ai's Chat Completions body."""
    target = request.target
    out = instructions(request.system, target.reasoning and target.provider == "openai")
    out += convert(request, _user, _assistant, _tool_results)
    body: dict[str, Any] = {"messages": out}
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.get("name", MISSING),
                    "description": t.get("description", MISSING),
                    "parameters": t.get("parameters", MISSING),
                },
            }
            for t in request.tools
        ]
    if target.provider == "openrouter" and target.model.startswith("anthropic/"):
        _cache_markers(out, body.get("tools"))
    return body


_STOP_REASONS = {
    "stop": "stop",
    "end": "stop",
    "length": "length",
    "function_call": "toolUse",
    "tool_calls": "toolUse",
}


def _usage(raw: dict[str, Any]) -> dict[str, Any]:
    details = raw.get("prompt_tokens_details")
    cached: Any = None
    if isinstance(details, dict):
        cached = details.get("cached_tokens")
    if cached is None:
        cached = raw.get("prompt_cache_hit_tokens")
    if cached is None:
        cached = raw.get("cached_tokens")
    if cached is None:
        cached = 0
    write = num(details.get("cache_write_tokens")) if isinstance(details, dict) else 0
    prompt = num(raw.get("prompt_tokens"))
    output = num(raw.get("completion_tokens"))
    completion_details = raw.get("completion_tokens_details")
    reasoning = (
        num(completion_details.get("reasoning_tokens"))
        if isinstance(completion_details, dict)
        else 0
    ) or num(raw.get("reasoning_tokens"))
    input_tokens = max(0, prompt - cached - write)
    return {
        "input": input_tokens,
        "output": output,
        "cacheRead": cached,
        "cacheWrite": write,
        "reasoning": reasoning,
        "totalTokens": input_tokens + output + cached + write,
    }


def _append_detail(details: list[dict[str, Any]], detail: dict[str, Any]) -> None:
    last = details[-1] if details else None
    if (
        last is not None
        and detail["type"] == last["type"]
        and detail["type"]
        in (
            "reasoning.text",
            "reasoning.summary",
        )
    ):
        if detail["type"] == "reasoning.text":
            last["text"] += detail["text"]
            if not last.get("signature"):
                last["signature"] = detail.get("signature")
        else:
            last["summary"] += detail["summary"]
        if last.get("id") is None:
            last["id"] = detail.get("id")
        if not last.get("format"):
            last["format"] = detail.get("format")
        if last.get("index") is None:
            last["index"] = detail.get("index")
        for key in ("id", "format", "index", "signature"):
            if key in last and last[key] is None and key not in detail:
                del last[key]  # JavaScript's undefined is not written
        return
    details.append(dict(detail))


def parse(response: dict[str, Any], target: Target) -> dict[str, Any]:
    """pi-ai's message for a Chat Completions reply (streamed as one delta)."""
    out = new_message(target)
    content: list[dict[str, Any]] = out["content"]
    if "id" in response:
        out["responseId"] = response["id"]  # pi-ai keeps even an empty id
    served = response.get("model")
    if isinstance(served, str) and served and served != target.model:
        out["responseModel"] = served
    choices = response.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    usage = response.get("usage")
    if (
        not isinstance(usage, dict)
        and isinstance(choice, dict)
        and isinstance(choice.get("usage"), dict)
    ):
        usage = choice["usage"]
    if isinstance(usage, dict):
        out["usage"] = priced(_usage(usage))
    finished = False
    error: str | None = None
    if isinstance(choice, dict):
        delta = choice.get("message") or {}
        thinking: dict[str, Any] | None = None
        for field in ("reasoning_content", "reasoning", "reasoning_text"):
            value = delta.get(field)
            if isinstance(value, str) and value:
                signature = (
                    "reasoning_content"
                    if target.provider == "opencode-go" and field == "reasoning"
                    else field
                )
                thinking = {"type": "thinking", "thinking": value, "thinkingSignature": signature}
                content.append(thinking)
                break
        details: list[dict[str, Any]] | None = None
        raw_details = delta.get("reasoning_details")
        if isinstance(raw_details, list):
            for detail in raw_details:
                if not _is_detail(detail):
                    continue
                if thinking is None:
                    thinking = {"type": "thinking", "thinking": "", "thinkingSignature": ""}
                    content.append(thinking)
                if details is None:
                    details = []
                _append_detail(details, detail)
        text = delta.get("content")
        if isinstance(text, str) and text:
            content.append({"type": "text", "text": text})
        calls = delta.get("tool_calls")
        # The stream finds a call by its index, else by its id: a call repeating an
        # earlier call's id continues that call (its name fills a blank one, its
        # arguments text is appended).
        by_id: dict[str, dict[str, Any]] = {}
        texts: list[tuple[dict[str, Any], list[str]]] = []
        for call in calls if isinstance(calls, list) else ():
            if not isinstance(call, dict):
                continue
            function: dict[str, Any] = (
                call["function"] if isinstance(call.get("function"), dict) else {}
            )
            call_id = call.get("id")
            name = function.get("name") or ""
            block = by_id.get(call_id) if isinstance(call_id, str) and call_id else None
            if block is None:
                block = {"type": "toolCall", "id": call_id or "", "name": name}
                texts.append((block, []))
                content.append(block)
                if isinstance(call_id, str) and call_id:
                    by_id[call_id] = block
            elif not block["name"] and name:
                block["name"] = name
            arguments = function.get("arguments")
            if isinstance(arguments, str) and arguments:
                next(t for b, t in texts if b is block).append(arguments)
        for block, text in texts:
            block.update(parse_arguments("".join(text)))
        if thinking is not None and details is not None:
            thinking["thinkingSignature"] = stringify(details)
        reason = choice.get("finish_reason")
        if reason:
            finished = True
            out["rawStopReason"] = reason
            out["stopReason"] = _STOP_REASONS.get(reason, "error")
            if out["stopReason"] == "error":
                error = f"Provider finish_reason: {reason}"
    if out["stopReason"] == "error":
        out["errorMessage"] = error or "Provider returned an error stop reason"
    elif not finished or out["stopReason"] == "pending":
        out["stopReason"] = "error"
        out["errorMessage"] = "Stream ended without finish_reason"
    return out
