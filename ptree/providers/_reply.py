"""Pieces every reply parser shares: the empty message, SDK objects as JSON, arguments."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Mapping
from typing import Any

from ..js import trim
from ._model import Target

__all__ = ["as_json", "new_message", "num", "parse_arguments", "priced", "total_usage", "zero_cost"]


def new_message(target: Target) -> dict[str, Any]:
    """pi-ai's starting assistant message: no content, zero usage, ``pending``."""
    return {
        "role": "assistant",
        "content": [],
        "api": target.api,
        "provider": target.provider,
        "model": target.model,
        "usage": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 0,
            "cost": zero_cost(),
        },
        "stopReason": "pending",
        "timestamp": int(time.time() * 1000),
    }


def zero_cost() -> dict[str, float]:
    """Usage cost without a price table: all zero."""
    return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}


def priced(usage: dict[str, Any]) -> dict[str, Any]:
    """What pi-ai's ``calculateCost`` leaves without a price table: zero costs, marked."""
    usage["cost"] = {**zero_cost(), "totalFromProvider": False}
    return usage


def total_usage(usage: dict[str, Any]) -> None:
    """Anthropic's rule: the total is the sum of the parts."""
    usage["totalTokens"] = (
        usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
    )


def num(value: Any) -> Any:
    """JavaScript's ``value || 0`` for a token count."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) and value else 0


def as_json(response: Any) -> dict[str, Any]:
    """A reply as JSON values: a mapping as it is, an SDK's pydantic object dumped.

    Fields the server did not send stay out (``exclude_unset``), names are the wire's
    (``by_alias``: google-genai's camelCase), and bytes (google-genai's thought
    signatures) become standard base64 text, as on the wire.  Iterative.
    """
    if isinstance(response, Mapping):
        data: Any = response
    elif hasattr(response, "model_dump"):
        # warnings=False: an SDK builds replies without validation, so a field may hold
        # what its type does not say (a list as tool input); the dump keeps it as it is
        data = response.model_dump(mode="python", by_alias=True, exclude_unset=True, warnings=False)
    elif hasattr(response, "to_dict"):
        data = response.to_dict()
    else:
        kind = type(response).__name__
        raise TypeError(f"a reply must be a JSON mapping or an SDK response object, not {kind}")
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, data)]
    while stack:
        parent, key, value = stack.pop()
        if isinstance(value, Mapping):
            new: Any = {}
            parent[key] = new
            for k, v in value.items():
                new[k] = None
                stack.append((new, k, v))
        elif isinstance(value, list | tuple):
            new = [None] * len(value)
            parent[key] = new
            for i, v in enumerate(value):
                stack.append((new, i, v))
        elif isinstance(value, bytes | bytearray):
            parent[key] = base64.b64encode(value).decode("ascii")
        elif hasattr(value, "value") and type(value).__module__.startswith("google"):
            parent[key] = value.value  # google-genai's enums (finish reasons)
        else:
            parent[key] = value
    result = root[0]
    if not isinstance(result, dict):
        raise TypeError("a reply must be a JSON object")
    return result


_CONTROL = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_VALID_ESCAPES = frozenset('"\\/bfnrt')
_HEX = frozenset("0123456789abcdefABCDEF")


def _repair(text: str) -> str:
    """pi-ai's ``repairJson``: escape raw control characters and lone backslashes in strings."""
    out: list[str] = []
    in_string = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if not in_string:
            out.append(ch)
            if ch == '"':
                in_string = True
            i += 1
            continue
        if ch == '"':
            out.append(ch)
            in_string = False
        elif ch == "\\":
            nxt = text[i + 1] if i + 1 < n else None
            if nxt is None:
                out.append("\\\\")
            elif nxt == "u" and len(text[i + 2 : i + 6]) == 4 and set(text[i + 2 : i + 6]) <= _HEX:
                out.append(text[i : i + 6])
                i += 5
            elif nxt in _VALID_ESCAPES:
                out.append("\\" + nxt)
                i += 1
            else:
                out.append("\\\\")
        elif ord(ch) < 0x20:
            out.append(_CONTROL.get(ch) or f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_no_constants)


def parse_arguments(text: Any) -> dict[str, Any]:
    """pi-ai's ``parseToolCallArguments``: ``{"arguments": …}`` and maybe ``argumentsError``.

    Empty text gives ``{}``; text that is not a JSON object (after pi-ai's repair of raw
    control characters and bad escapes) gives ``{}`` and an error that ends with the text
    received.  The error's first line is Python's wording where pi-ai would give V8's.
    """
    if not isinstance(text, str) or not trim(text):
        return {"arguments": {}}
    try:
        try:
            parsed = _loads(text)
        except ValueError:
            repaired = _repair(text)
            if repaired == text:
                raise
            parsed = _loads(repaired)
        if not isinstance(parsed, dict):
            raise ValueError("Tool arguments must be a JSON object")
    except (ValueError, RecursionError) as e:
        return {"arguments": {}, "argumentsError": f"{e}\n\nReceived arguments:\n{text}"}
    return {"arguments": parsed}
