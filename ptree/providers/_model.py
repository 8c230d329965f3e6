"""The target model as pi-ai's converters see it, and the steps common to every API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from ..js import ordered_keys
from ._js import is_blank, sanitize_surrogates

__all__ = ["Request", "Target", "convert", "fold_system", "instructions", "transform_messages"]

USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
ERROR_IMAGE_PLACEHOLDER = "(image attached after the tool results)"
NO_RESULT = "No result provided"


@attrs.frozen
class Target:
    """The model a body is built for: what pi-ai's ``Model`` holds that changes the body."""

    api: str
    provider: str
    model: str
    reasoning: bool = False
    images: bool = True

    def same_model(self, message: dict[str, Any]) -> bool:
        """Whether an assistant message came from this very model (provider, api and id)."""
        return (
            message.get("provider") == self.provider
            and message.get("api") == self.api
            and message.get("model") == self.model
        )


#: An API's rewrite of a tool-call id (the id, the assistant message it came from).
NormalizeId = Callable[[str, dict[str, Any]], str]
#: An API's converter of one user message's content, one assistant message, or a run of
#: consecutive tool results: it appends what they give to the output (the last argument).
Converter = Callable[[Any, Target, list[dict[str, Any]]], None]


@attrs.frozen
class Request:
    """What an API's ``build`` makes a body of: the steps every API shares are done.

    Attributes:
        target: the model the body is for.
        system: the prompt, with the conversation's system messages folded in
            (:func:`fold_system`; ``""`` for none).
        tools: the tool definitions in force at the end of the conversation.
        messages: the conversation after :func:`transform_messages`, tool-call ids
            normalised the API's way.
    """

    target: Target
    system: str
    tools: list[dict[str, Any]]
    messages: list[dict[str, Any]]


def convert(
    request: Request, user: Converter, assistant: Converter, tool_results: Converter
) -> list[dict[str, Any]]:
    """The API's messages for ``request.messages``, each through its role's converter.

    ``user`` gets a user message's content, ``assistant`` the assistant message, and
    ``tool_results`` each run of consecutive tool results as one list (pi-ai answers a
    batch of parallel calls in one message, or adds their images after the last);
    other roles give nothing.  Cost: O(total size of the messages) plus the converters'.
    """
    out: list[dict[str, Any]] = []
    messages = request.messages
    i, n = 0, len(messages)
    while i < n:
        msg = messages[i]
        role = msg.get("role")
        i += 1
        if role == "user":
            user(msg["content"], request.target, out)
        elif role == "assistant":
            assistant(msg, request.target, out)
        elif role == "toolResult":
            run = [msg]
            while i < n and messages[i].get("role") == "toolResult":
                run.append(messages[i])
                i += 1
            tool_results(run, request.target, out)
    return out


def instructions(system: str, developer: bool) -> list[dict[str, Any]]:
    """The OpenAI APIs' leading prompt message (none for an empty prompt), as pi-ai
    writes it: role ``developer`` where the model takes it, else ``system``.  O(len)."""
    if not system:
        return []
    role = "developer" if developer else "system"
    return [{"role": role, "content": sanitize_surrogates(system)}]


def replace_images(content: list[Any], placeholder: str) -> list[Any]:
    """Each run of image blocks becomes one placeholder text (none right after one)."""
    out: list[Any] = []
    previous_was_placeholder = False
    for block in content:
        if isinstance(block, dict) and block.get("type") == "image":
            if not previous_was_placeholder:
                out.append({"type": "text", "text": placeholder})
            previous_was_placeholder = True
            continue
        out.append(block)
        previous_was_placeholder = isinstance(block, dict) and block.get("text") == placeholder
    return out


def blocks_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's content blocks that are objects, as pi-ai reads them (``None`` or
    missing content: none).  O(number of blocks)."""
    content = message.get("content")
    return [] if content is None else [b for b in content if isinstance(b, dict)]


def transform_messages(
    messages: list[dict[str, Any]],
    target: Target,
    normalize_id: NormalizeId | None,
) -> list[dict[str, Any]]:
    """pi-ai's ``transformMessages``: the steps every API shares, in its order.

    Null content becomes empty; images for a text-only model become placeholders;
    assistant messages from other models lose thinking and signatures and get their
    tool-call ids normalised (later tool results follow the new ids); failed turns are
    left out; unanswered tool calls get a synthetic error result.  The messages are plain
    dicts owned by the caller (copied before), so they are changed in place where that is
    cheaper.  Cost: O(total size of the messages).
    """
    id_map: dict[str, str] = {}
    transformed: list[dict[str, Any]] = []
    for msg in messages:
        if msg.get("content") is None:
            msg["content"] = []
        role = msg.get("role")
        if not target.images:
            if role == "user" and isinstance(msg["content"], list):
                msg["content"] = replace_images(msg["content"], USER_IMAGE_PLACEHOLDER)
            elif role == "toolResult":
                msg["content"] = replace_images(msg["content"], TOOL_IMAGE_PLACEHOLDER)
        if role == "toolResult":
            new_id = id_map.get(msg.get("toolCallId"))  # type: ignore[arg-type]
            if new_id and new_id != msg.get("toolCallId"):
                msg["toolCallId"] = new_id
        elif role == "assistant":
            same = target.same_model(msg)
            content: list[Any] = []
            for block in msg["content"]:
                kind = block.get("type") if isinstance(block, dict) else None
                if kind == "thinking":
                    if not same:
                        continue
                    if (
                        block.get("redacted")
                        or block.get("thinkingSignature")
                        or not is_blank(block.get("thinking"))
                    ):
                        content.append(block)
                elif kind == "text":
                    content.append(block if same else {"type": "text", "text": block.get("text")})
                elif kind == "toolCall":
                    if not same:
                        block.pop("thoughtSignature", None)
                        if normalize_id is not None:
                            old = block.get("id")
                            new = normalize_id(old, msg)
                            if new != old:
                                id_map[old] = new
                                block["id"] = new
                    content.append(block)
                else:
                    content.append(block)
            msg["content"] = content
        transformed.append(msg)

    result: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    answered: set[Any] = set()

    def close_pending() -> None:
        nonlocal pending, answered
        for call in pending:
            if call.get("id") not in answered:
                result.append(
                    {
                        "role": "toolResult",
                        "toolCallId": call.get("id"),
                        "toolName": call.get("name"),
                        "content": [{"type": "text", "text": NO_RESULT}],
                        "isError": True,
                    }
                )
        pending = []
        answered = set()

    for msg in transformed:
        role = msg.get("role")
        if role == "assistant":
            close_pending()
            if msg.get("stopReason") in ("error", "aborted"):
                continue
            calls = [
                b for b in msg["content"] if isinstance(b, dict) and b.get("type") == "toolCall"
            ]
            if calls:
                pending = calls
                answered = set()
            result.append(msg)
        elif role == "toolResult":
            answered.add(msg.get("toolCallId"))
            result.append(msg)
        elif role == "user":
            close_pending()
            result.append(msg)
        else:
            result.append(msg)
    close_pending()
    return result


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        _join_text(b.get("text"))
        for b in content
        if isinstance(b, dict) and b.get("type") == "text"
    )


def _join_text(value: Any) -> str:
    # Array.prototype.join writes null and undefined as ""
    return "" if value is None else str(value)


def fold_system(
    system: str | None,
    tools: list[dict[str, Any]],
    messages: list[dict[str, Any]],
) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """pi-ai's ``normalizeContext`` then ``collapseSystemMessages``, for models without
    mid-conversation system messages.

    The prompt and tools given as arguments lead; each ``system`` message of the
    conversation (Pi 1.6 keeps the prompt and tool changes in the transcript) is folded
    in: non-empty contents joined by a blank line, ``sections`` set or removed (``None``)
    by name, ``toolsRemoved`` then ``toolsAdded`` applied by name.  Returns the prompt
    text (contents, then section texts, non-empty ones joined by a blank line), the
    resulting tools, and the messages without the system messages.
    """
    system_messages: list[dict[str, Any]] = []
    if system or tools:
        head: dict[str, Any] = {"role": "system", "content": system or "", "timestamp": 0}
        if tools:
            head["toolsAdded"] = tools
        system_messages.append(head)
    rest: list[dict[str, Any]] = []
    for m in messages:
        (system_messages if m.get("role") == "system" else rest).append(m)
    if not system_messages:
        return "", [], rest
    texts: list[str] = []
    sections: dict[str, Any] = {}
    current: dict[Any, dict[str, Any]] = {}
    for m in system_messages:
        text = _content_text(m.get("content"))
        if text:
            texts.append(text)
        raw_sections = m.get("sections")
        if isinstance(raw_sections, dict):
            for name in ordered_keys(raw_sections):
                value = raw_sections[name]
                if value is None:
                    sections.pop(name, None)
                else:
                    sections[name] = value
        for tool in m.get("toolsRemoved") or ():
            if isinstance(tool, dict):
                current.pop(tool.get("name"), None)
        for tool in m.get("toolsAdded") or ():
            if isinstance(tool, dict):
                current[tool.get("name")] = tool
    tools_now = list(current.values())
    if not tools_now and all(m.get("timestamp") is None for m in system_messages):
        # pi-ai builds the leading message only when some system message has a
        # timestamp or tools remain; otherwise the system messages just vanish
        return "", [], rest
    # the fold's sections become a JavaScript object again: array-index names first
    parts = ["\n\n".join(texts), *(sections[k] for k in ordered_keys(sections))]
    prompt = "\n\n".join(p for p in parts if isinstance(p, str) and p)
    return prompt, tools_now, rest
