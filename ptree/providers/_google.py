"""Google Gemini (``google-generative-ai``): body and reply, as pi-ai builds them."""

from __future__ import annotations

import itertools
import re
import time
from typing import Any

from ..js import template, truthy, utf16_slice
from ._js import MISSING, is_blank, sanitize_surrogates, word_chars
from ._model import NormalizeId, Request, Target, blocks_of, convert
from ._reply import new_message, num, priced

__all__ = ["build", "normalize_id", "parse"]

_GEMINI_VERSION = re.compile(r"gemini(?:-live)?-(\d+)")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def _gemini_major(model: str) -> int | None:
    m = _GEMINI_VERSION.match(model.lower())
    return int(m.group(1)) if m else None


def needs_call_ids(model: str) -> bool:
    """Whether Gemini wants tool-call ids for this model (Gemini 3+, Claude, gpt-oss)."""
    major = _gemini_major(model)
    return model.startswith(("claude-", "gpt-oss-")) or (major is not None and major >= 3)


def _images_inside(model: str) -> bool:
    major = _gemini_major(model)
    return major is None or major >= 3


def _signature(same: bool, signature: Any) -> str | None:
    if (
        same
        and isinstance(signature, str)
        and signature
        and len(signature) % 4 == 0
        and _BASE64.fullmatch(signature)
    ):
        return signature
    return None


def normalize_id(target: Target) -> NormalizeId:
    """Gemini's tool-call ids: kept, or at most 64 of ``[a-zA-Z0-9_-]`` where it wants ids."""

    def normalize(call_id: str, _source: dict[str, Any]) -> str:
        if not needs_call_ids(target.model):
            return call_id
        return utf16_slice(word_chars(call_id), 64)

    return normalize


def _inline(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "inlineData": {
            "mimeType": block.get("mimeType", MISSING),
            "data": block.get("data", MISSING),
        }
    }


def _user(content: Any, _target: Target, contents: list[dict[str, Any]]) -> None:
    if isinstance(content, str):
        contents.append({"role": "user", "parts": [{"text": sanitize_surrogates(content)}]})
        return
    parts = [
        {"text": sanitize_surrogates(b.get("text", ""))} if b.get("type") == "text" else _inline(b)
        for b in content
    ]
    if parts:
        contents.append({"role": "user", "parts": parts})


def _model(msg: dict[str, Any], target: Target, contents: list[dict[str, Any]]) -> None:
    parts = _model_parts(msg, target)
    if parts:
        contents.append({"role": "model", "parts": parts})


def _model_parts(msg: dict[str, Any], target: Target) -> list[dict[str, Any]]:
    same = msg.get("provider") == target.provider and msg.get("model") == target.model
    parts: list[dict[str, Any]] = []
    for block in blocks_of(msg):
        kind = block.get("type")
        if kind == "text":
            signature = _signature(same, block.get("textSignature"))
            if is_blank(block.get("text")) and not signature:
                continue
            part: dict[str, Any] = {"text": sanitize_surrogates(block.get("text") or "")}
            if signature:
                part["thoughtSignature"] = signature
            parts.append(part)
        elif kind == "thinking":
            if same:
                signature = _signature(same, block.get("thinkingSignature"))
                if is_blank(block.get("thinking")) and not signature:
                    continue
                part = {"thought": True, "text": sanitize_surrogates(block.get("thinking") or "")}
                if signature:
                    part["thoughtSignature"] = signature
            else:
                if is_blank(block.get("thinking")):
                    continue
                part = {"text": sanitize_surrogates(block["thinking"])}
            parts.append(part)
        elif kind == "toolCall":
            signature = _signature(same, block.get("thoughtSignature"))
            args = block.get("arguments")
            call: dict[str, Any] = {
                "name": block.get("name", MISSING),
                "args": {} if args is None else args,
            }
            if needs_call_ids(target.model):
                call["id"] = block.get("id", MISSING)
            part = {"functionCall": call}
            if signature:
                part["thoughtSignature"] = signature
            parts.append(part)
    return parts


def _tool_results(
    run: list[dict[str, Any]], target: Target, contents: list[dict[str, Any]]
) -> None:
    for msg in run:
        _tool_result(msg, target, contents)


def _tool_result(msg: dict[str, Any], target: Target, contents: list[dict[str, Any]]) -> None:
    blocks = blocks_of(msg)
    text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    images = [b for b in blocks if b.get("type") == "image"] if target.images else []
    if not is_blank(text):
        value = sanitize_surrogates(text)
    else:
        value = "(see attached image)" if images else ""
    inside = _images_inside(target.model)
    response: dict[str, Any] = {
        "name": msg.get("toolName", MISSING),
        "response": {"error": value} if msg.get("isError") else {"output": value},
    }
    if images and inside:
        response["parts"] = [_inline(b) for b in images]
    if needs_call_ids(target.model):
        response["id"] = msg.get("toolCallId", MISSING)
    part = {"functionResponse": response}
    last = contents[-1] if contents else None
    if (
        last is not None
        and last["role"] == "user"
        and any("functionResponse" in p for p in last["parts"])
    ):
        last["parts"].append(part)
    else:
        contents.append({"role": "user", "parts": [part]})
    if images and not inside:
        contents.append(
            {
                "role": "user",
                "parts": [{"text": "Tool result image:"}, *(_inline(b) for b in images)],
            }
        )


_NAME_MAPS = frozenset(
    ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
)
_SUBSCHEMAS = frozenset(
    (
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "items",
        "prefixItems",
        "additionalItems",
        "unevaluatedItems",
        "contains",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    )
)


def const_as_enum(schema: Any) -> Any:
    """pi-ai's ``rewriteConstAsEnum``: a string or number ``const`` becomes a one-value ``enum``.

    Only in schema positions (not under a property name map's keys, not in literal data
    such as ``default`` or ``examples``).  Returns a new value; iterative.

    >>> const_as_enum({"properties": {"const": {"const": "x"}}, "default": {"const": 1}})
    {'properties': {'const': {'enum': ['x']}}, 'default': {'const': 1}}
    """
    root: list[Any] = [None]
    # (parent, key, value, is_name_map, is_schema)
    stack: list[tuple[Any, Any, Any, bool, bool]] = [(root, 0, schema, False, True)]
    fixups: list[dict[str, Any]] = []
    while stack:
        parent, key, value, is_name_map, is_schema = stack.pop()
        if not is_schema:
            parent[key] = value
            continue
        if isinstance(value, list):
            new_list: list[Any] = [None] * len(value)
            parent[key] = new_list
            for i, item in enumerate(value):
                stack.append((new_list, i, item, False, True))
            continue
        if not isinstance(value, dict):
            parent[key] = value
            continue
        new: dict[str, Any] = {}
        parent[key] = new
        for k, v in value.items():
            new[k] = None
            if is_name_map or k in _SUBSCHEMAS:
                stack.append((new, k, v, False, True))
            elif k in _NAME_MAPS:
                stack.append((new, k, v, True, True))
            else:
                stack.append((new, k, v, False, False))
        if not is_name_map:
            fixups.append(new)
    for obj in fixups:
        if "const" in obj and "enum" not in obj:
            value = obj["const"]
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                del obj["const"]
                obj["enum"] = [value]
    return root[0]


def build(request: Request) -> dict[str, Any]:
    """The conversation fields of the Gemini body as it goes on the wire."""
    contents = convert(request, _user, _model, _tool_results)
    body: dict[str, Any] = {"contents": contents}
    if request.system:
        body["systemInstruction"] = {
            "parts": [{"text": sanitize_surrogates(request.system)}],
            "role": "user",
        }
    if request.tools:
        body["tools"] = [
            {
                "functionDeclarations": [
                    {
                        "name": t.get("name", MISSING),
                        "description": t.get("description", MISSING),
                        "parametersJsonSchema": (
                            const_as_enum(t["parameters"]) if "parameters" in t else MISSING
                        ),
                    }
                    for t in request.tools
                ]
            }
        ]
    return body


_LENGTH = frozenset(("MAX_TOKENS", "CONTINUATION"))
_ERRORS = frozenset(
    (
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "SAFETY",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "IMAGE_OTHER",
        "RECITATION",
        "FINISH_REASON_UNSPECIFIED",
        "OTHER",
        "LANGUAGE",
        "MALFORMED_FUNCTION_CALL",
        "UNEXPECTED_TOOL_CALL",
        "TOO_MANY_TOOL_CALLS",
        "NO_IMAGE",
    )
)
_call_numbers = itertools.count(1)


def parse(response: dict[str, Any], target: Target) -> dict[str, Any]:
    """pi-ai's message for a Gemini reply (streamed as one chunk).

    A function call without an id, or with one an earlier call of the reply has, gets
    pi-ai's made-up id ``<name>_<milliseconds>_<counter>``.
    """
    out = new_message(target)
    out["api"] = "google-generative-ai"
    content: list[dict[str, Any]] = out["content"]
    if "responseId" in response:
        out["responseId"] = response["responseId"]  # pi-ai keeps even an empty one
    candidates = response.get("candidates")
    candidate = candidates[0] if isinstance(candidates, list) and candidates else None
    current: dict[str, Any] | None = None
    candidate_content = candidate.get("content") if isinstance(candidate, dict) else None
    parts = candidate_content.get("parts") if isinstance(candidate_content, dict) else None
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, dict):
            continue
        signature = part.get("thoughtSignature")
        signature = signature if isinstance(signature, str) and signature else None
        if "text" in part:
            piece = "null" if part["text"] is None else str(part["text"])
            thought = part.get("thought") is True
            if current is None or (current["type"] == "thinking") != thought:
                current = (
                    {"type": "thinking", "thinking": ""}
                    if thought
                    else {"type": "text", "text": ""}
                )
                content.append(current)
            if thought:
                current["thinking"] += piece
                if signature:
                    current["thinkingSignature"] = signature
            else:
                current["text"] += piece
                if signature:
                    current["textSignature"] = signature
        call = part.get("functionCall")
        if isinstance(call, dict):
            current = None
            name = call.get("name")
            given = call.get("id")
            if not given or any(b["type"] == "toolCall" and b["id"] == given for b in content):
                # Google's SDK passes the content on as it came: a null name shows "null"
                shown = template(call.get("name", MISSING))
                given = f"{shown}_{int(time.time() * 1000)}_{next(_call_numbers)}"
            args = call.get("args")
            block: dict[str, Any] = {
                "type": "toolCall",
                "id": given,
                "name": name if truthy(name) else "",
                "arguments": {} if args is None else args,
            }
            if signature:
                block["thoughtSignature"] = signature
            content.append(block)
    reason = candidate.get("finishReason") if isinstance(candidate, dict) else None
    error: str | None = None
    if reason:
        out["rawStopReason"] = reason
        if reason == "STOP":
            out["stopReason"] = (
                "toolUse" if any(b["type"] == "toolCall" for b in content) else "stop"
            )
        elif reason in _LENGTH:
            out["stopReason"] = "length"
        elif reason in _ERRORS:
            out["stopReason"] = "error"
            error = f"Provider stopped with: {reason}"
        else:
            out["stopReason"] = "error"
            error = f"Unhandled stop reason: {reason}"
    meta = response.get("usageMetadata")
    # pi-ai throws on an unknown finish reason before it reads the usage of that chunk
    if isinstance(meta, dict) and not (reason and error and reason not in _ERRORS):
        cached = num(meta.get("cachedContentTokenCount"))
        thoughts = num(meta.get("thoughtsTokenCount"))
        out["usage"] = {
            "input": num(meta.get("promptTokenCount")) - cached,
            "output": num(meta.get("candidatesTokenCount")) + thoughts,
            "cacheRead": cached,
            "cacheWrite": 0,
            "reasoning": thoughts,
            "totalTokens": num(meta.get("totalTokenCount")),
        }
        priced(out["usage"])
    if out["stopReason"] == "pending":
        out["stopReason"] = "error"
        error = "Google stream ended without a finish reason"
    if out["stopReason"] == "error":
        out["errorMessage"] = error
    return out
