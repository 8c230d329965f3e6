"""pydantic-ai message history in a ptree tree: :func:`append_messages`, :func:`to_messages`.

pydantic-ai hands its user a flat ``message_history`` list.  Kept in a ptree tree, the
history branches: append a run's new messages to the tree, move the leaf back to an
earlier message, and give ``to_messages(tree)`` to the next run; the old branch stays.

The mapping to Pi messages (so that the tree opens in ``ptree show`` and in Pi):

- a ``ModelResponse`` is one Pi ``assistant`` message: ``TextPart`` → text,
  ``ThinkingPart`` → thinking (its signature as ``thinkingSignature``),
  ``ToolCallPart`` → a ``toolCall`` block (id = ``tool_call_id``, arguments parsed);
  ``model_name`` → ``model``, ``provider_name`` → ``provider``, tokens →
  ``usage.input``/``usage.output``/``cacheRead``/``cacheWrite``, ``finish_reason`` →
  ``stopReason``;
- a ``ModelRequest`` is one Pi message per part that has one: each
  ``UserPromptPart`` a ``user`` message (text, and images given as bytes); each
  ``ToolReturnPart`` a ``toolResult`` (``isError`` unless its ``outcome`` is
  ``'success'``, so a ``'retried'`` return is an error result); a ``RetryPromptPart``
  a ``toolResult`` when it names a tool, else a ``user`` message; a
  ``RetryFeedbackPart`` a ``user`` message with the text the model is shown; a
  ``SystemPromptPart`` a Pi 1.6 ``system`` message (Pi 1.6 keeps its prompt in the
  transcript; Pi 0.73.1 passes it over).  Instructions have no Pi message (pydantic-ai
  gives them again on every run).  A request none of whose parts has one is a
  ``custom`` entry of type ``pydantic-ai-message``.

Lossless, by either route: the first Pi message of each pydantic-ai message carries
the whole message, as pydantic-ai's ``ModelMessagesTypeAdapter`` writes it, in its
``pydanticAiMessage`` field (a field Pi ignores; the other Pi messages of a request
say ``"pydanticAiPart": true``).  The field travels with the message into
:func:`~ptree.build_context`, so ``to_messages(tree)`` and
``to_messages(build_context(tree))`` both give back messages ``==`` to those appended:
the system prompt, timestamps, ``run_id``, ``conversation_id``, usage and all.  Messages
without that field (written by Pi or by other code) are converted from their Pi form.

Imports: the core, and ``pydantic_ai`` (the extra ``ptree[pydantic-ai]``).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from ..context import Context, to_provider_messages
from ..entries import Custom, MessageEntry
from ..errors import InvalidMessageError
from ..frozen import FrozenDict, thaw
from ..tree import SessionTree

__all__ = [
    "CUSTOM_TYPE",
    "PART_FIELD",
    "RECORD_FIELD",
    "append_messages",
    "pi_messages",
    "to_messages",
]

RECORD_FIELD = "pydanticAiMessage"
"""The Pi message field that carries a whole pydantic-ai message (its JSON form)."""

PART_FIELD = "pydanticAiPart"
"""The Pi message field (``true``) of a request's further Pi messages: the request's
first Pi message carries it whole."""

CUSTOM_TYPE = "pydantic-ai-message"
"""The ``customType`` of entries keeping a request that has no Pi message."""

_STOP_REASONS = {"stop": "stop", "length": "length", "tool_call": "toolUse"}
_FINISH_REASONS = {"stop": "stop", "length": "length", "toolUse": "toolUse"}


def _ms(when: datetime | None) -> int:
    if when is None:
        return 0
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1000)


def _when(ms: object) -> datetime:
    if isinstance(ms, int | float) and not isinstance(ms, bool):
        try:
            return datetime.fromtimestamp(ms / 1000, tz=UTC)
        except (OverflowError, OSError, ValueError):
            pass
    return datetime.fromtimestamp(0, tz=UTC)


def _user_content(content: str | Sequence[UserContent]) -> str | list[dict[str, Any]] | None:
    """Pi content of a user prompt: text and byte images; ``None`` if nothing maps."""
    if isinstance(content, str):
        return content
    blocks: list[dict[str, Any]] = []
    for item in content:
        if isinstance(item, str):
            blocks.append({"type": "text", "text": item})
        elif isinstance(item, BinaryContent) and item.is_image:
            data = base64.b64encode(item.data).decode("ascii")
            blocks.append({"type": "image", "data": data, "mimeType": item.media_type})
    return blocks or None


def _request_messages(message: ModelRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, SystemPromptPart):
            out.append(
                {"role": "system", "content": part.content, "timestamp": _ms(part.timestamp)}
            )
        elif isinstance(part, UserPromptPart):
            content = _user_content(part.content)
            if content is not None:
                out.append({"role": "user", "content": content, "timestamp": _ms(part.timestamp)})
        elif isinstance(part, ToolReturnPart):
            out.append(
                {
                    "role": "toolResult",
                    "toolCallId": part.tool_call_id,
                    "toolName": part.tool_name,
                    "content": [{"type": "text", "text": part.model_response_str()}],
                    "isError": part.outcome != "success",
                    "timestamp": _ms(part.timestamp),
                }
            )
        elif isinstance(part, RetryPromptPart):  # deprecated, still in old histories
            text = part.model_response()
            if part.tool_name is not None:
                out.append(
                    {
                        "role": "toolResult",
                        "toolCallId": part.tool_call_id,
                        "toolName": part.tool_name,
                        "content": [{"type": "text", "text": text}],
                        "isError": True,
                        "timestamp": _ms(part.timestamp),
                    }
                )
            else:
                out.append({"role": "user", "content": text, "timestamp": _ms(part.timestamp)})
        elif isinstance(part, RetryFeedbackPart):
            out.append(
                {"role": "user", "content": part.model_response(), "timestamp": _ms(part.timestamp)}
            )
    return out


def _response_message(message: ModelResponse) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    calls = False
    for part in message.parts:
        if isinstance(part, TextPart):
            blocks.append({"type": "text", "text": part.content})
        elif isinstance(part, ThinkingPart):
            block = {"type": "thinking", "thinking": part.content}
            if part.signature is not None:
                block["thinkingSignature"] = part.signature
            blocks.append(block)
        elif isinstance(part, ToolCallPart):
            calls = True
            blocks.append(
                {
                    "type": "toolCall",
                    "id": part.tool_call_id,
                    "name": part.tool_name,
                    "arguments": part.args_as_dict(),
                }
            )
    out: dict[str, Any] = {"role": "assistant", "content": blocks, "api": "pydantic-ai"}
    if message.model_name is not None:
        out["provider"] = message.provider_name or "unknown"
        out["model"] = message.model_name
    u = message.usage
    out["usage"] = {
        "input": u.input_tokens,
        "output": u.output_tokens,
        "cacheRead": u.cache_read_tokens,
        "cacheWrite": u.cache_write_tokens,
        "totalTokens": u.input_tokens + u.output_tokens,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    reason = message.finish_reason
    if reason is None:
        out["stopReason"] = "toolUse" if calls else "stop"
    else:
        out["stopReason"] = _STOP_REASONS.get(reason, "error")
    out["timestamp"] = _ms(message.timestamp)
    return out


def pi_messages(message: ModelMessage) -> list[dict[str, Any]]:
    """The Pi messages that stand for one pydantic-ai message (see the module doc).

    One ``assistant`` message for a response; for a request, one message per part
    that has one (possibly none).  Cost: O(size of the message).

    >>> from pydantic_ai.messages import ModelRequest, SystemPromptPart, UserPromptPart
    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> for m in pi_messages(ModelRequest(parts=[SystemPromptPart("Be brief.", timestamp=t),
    ...                                          UserPromptPart("Hi", timestamp=t)])):
    ...     print(m)
    {'role': 'system', 'content': 'Be brief.', 'timestamp': 1767225600000}
    {'role': 'user', 'content': 'Hi', 'timestamp': 1767225600000}
    """
    if isinstance(message, ModelResponse):
        return [_response_message(message)]
    return _request_messages(message)


def append_messages(tree: SessionTree, messages: Iterable[ModelMessage]) -> SessionTree:
    """A tree with pydantic-ai messages added under the leaf, in order.

    Typically ``append_messages(tree, result.new_messages())`` after a run that was
    given ``message_history=to_messages(tree)``.  Each message becomes the entries
    described in the module doc; the first keeps the whole message, so
    :func:`to_messages` gives it back ``==``.  The last entry is the new leaf.
    Cost: O(size of the messages).

    Raises:
        InvalidMessageError: (a ``ValueError``) one of ``messages`` is not a
            ``ModelRequest`` or ``ModelResponse``; nothing is added.

    >>> from pydantic_ai.messages import ModelRequest, UserPromptPart
    >>> m = ModelRequest(parts=[UserPromptPart("Hi")])
    >>> t = append_messages(SessionTree(), [m])
    >>> t.current_path()[0]["content"], to_messages(t) == [m]
    ('Hi', True)
    """
    messages = list(messages)
    for i, message in enumerate(messages):
        if not isinstance(message, ModelRequest | ModelResponse):
            raise InvalidMessageError(
                f"messages[{i}]",
                f"must be a ModelRequest or ModelResponse, not {type(message).__name__}",
            )
    records = ModelMessagesTypeAdapter.dump_python(messages, mode="json")
    for message, record in zip(messages, records, strict=True):
        found = pi_messages(message)
        timestamp = tree.clock()
        head_id = tree.id_factory(tree)
        if not found:
            tree = tree.append_custom(CUSTOM_TYPE, record, id=head_id, timestamp=timestamp)
            continue
        for i, pi in enumerate(found):
            entry_id = head_id if i == 0 else tree.id_factory(tree)
            pi = {**pi, RECORD_FIELD: record} if i == 0 else {**pi, PART_FIELD: True}
            tree = tree.append_entry(
                MessageEntry(id=entry_id, parent_id=tree.leaf_id, timestamp=timestamp, message=pi)
            )
    return tree


class _Builder:
    """Collects the messages of a path: whole ones kept, and ones converted from Pi."""

    def __init__(self) -> None:
        self.out: list[ModelMessage | FrozenDict] = []
        self.parts: list[ModelRequestPart] = []
        self.when: datetime | None = None

    def flush(self) -> None:
        if self.parts:
            self.out.append(ModelRequest(parts=self.parts, timestamp=self.when))
            self.parts = []

    def record(self, record: FrozenDict) -> None:
        self.flush()
        self.out.append(record)

    def pi(self, message: Mapping[str, Any]) -> None:
        """Convert one Pi message (user, assistant, toolResult, system; others are dropped)."""
        role = message.get("role")
        when = _when(message.get("timestamp"))
        if not self.parts:
            self.when = when
        if role == "assistant":
            self.flush()
            self.out.append(_from_assistant(message, when))
        elif role == "user":
            content = _from_user_content(message.get("content"))
            if content is not None:
                self.parts.append(UserPromptPart(content, timestamp=when))
        elif role == "system":
            # Pi 1.6 keeps the prompt in the transcript: its text and its sections'.
            sections = message.get("sections")
            texts = _texts(message.get("content"))
            if isinstance(sections, Mapping):
                texts += [v for v in sections.values() if isinstance(v, str)]
            prompt = "\n\n".join(t for t in texts if t)
            if prompt:
                self.parts.append(SystemPromptPart(prompt, timestamp=when))
        elif role == "toolResult":
            texts = _texts(message.get("content"))
            self.parts.append(
                ToolReturnPart(
                    tool_name=str(message.get("toolName") or ""),
                    content="\n".join(texts),
                    tool_call_id=str(message.get("toolCallId") or ""),
                    timestamp=when,
                    outcome="failed" if message.get("isError") else "success",
                )
            )

    def result(self) -> list[ModelMessage]:
        self.flush()
        records = [thaw(m) for m in self.out if isinstance(m, FrozenDict)]
        whole = iter(ModelMessagesTypeAdapter.validate_python(records) if records else [])
        return [next(whole) if isinstance(m, FrozenDict) else m for m in self.out]


def _texts(content: object) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, Sequence):
        return []
    return [
        b["text"]
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def _from_user_content(content: object) -> str | list[UserContent] | None:
    if isinstance(content, str):
        return content
    if not isinstance(content, Sequence):
        return None
    out: list[UserContent] = []
    for block in content:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            out.append(block["text"])
        elif block.get("type") == "image" and isinstance(block.get("data"), str):
            try:
                data = base64.b64decode(block["data"], validate=True)
            except (binascii.Error, ValueError):
                continue
            out.append(BinaryContent(data=data, media_type=str(block.get("mimeType") or "")))
    if len(out) == 1 and isinstance(out[0], str):
        return out[0]
    return out or None


def _from_assistant(message: Mapping[str, Any], when: datetime) -> ModelResponse:
    parts: list[ModelResponsePart] = []
    content = message.get("content")
    if isinstance(content, str):
        parts.append(TextPart(content))
        content = ()
    for block in content if isinstance(content, Sequence) else ():
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(TextPart(block["text"]))
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            signature = block.get("thinkingSignature")
            parts.append(
                ThinkingPart(
                    block["thinking"], signature=signature if isinstance(signature, str) else None
                )
            )
        elif kind == "toolCall" and isinstance(block.get("name"), str):
            args = block.get("arguments")
            parts.append(
                ToolCallPart(
                    block["name"],
                    thaw(args) if isinstance(args, Mapping) else None,
                    tool_call_id=str(block.get("id") or ""),
                )
            )
    usage = message.get("usage")
    u = usage if isinstance(usage, Mapping) else {}

    def tokens(key: str) -> int:
        value = u.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    model = message.get("model")
    provider = message.get("provider")
    reason = message.get("stopReason")
    return ModelResponse(
        parts=parts,
        usage=RequestUsage(
            input_tokens=tokens("input"),
            output_tokens=tokens("output"),
            cache_read_tokens=tokens("cacheRead"),
            cache_write_tokens=tokens("cacheWrite"),
        ),
        model_name=model if isinstance(model, str) else None,
        provider_name=provider if isinstance(provider, str) else None,
        timestamp=when,
        finish_reason=(
            "tool_call"
            if reason == "toolUse"
            else reason
            if reason in ("stop", "length")
            else "error"
            if isinstance(reason, str)
            else None
        ),
    )


def _read(builder: _Builder, messages: Iterable[Mapping[str, Any]]) -> None:
    """Add Pi messages (a path's or a context's, in order) to ``builder``.

    A message carrying a whole pydantic-ai message gives it back; the further Pi
    messages of that request are then passed over.  One marked as such whose carrier is
    not before it (a compaction kept the request's tail only) is converted from its Pi
    form, like every message pydantic-ai did not write.
    """
    carried = False
    for message in messages:
        record = message.get(RECORD_FIELD)
        if type(record) is FrozenDict:
            builder.record(record)
            carried = True
        elif message.get(PART_FIELD) is True and carried:
            continue
        else:
            carried = False
            for m in to_provider_messages([message]):
                builder.pi(m)


def to_messages(source: SessionTree | Context) -> list[ModelMessage]:
    """The pydantic-ai message history of a branch, for ``agent.run(message_history=...)``.

    From a :class:`~ptree.SessionTree`: every message on the path from the root to
    the leaf (Pi's compaction is not applied: the whole branch).  Messages that
    :func:`append_messages` wrote come back ``==`` to those appended; other Pi
    messages are converted (``user`` → ``UserPromptPart``, ``system`` (Pi 1.6) →
    ``SystemPromptPart`` with its text and its sections', ``toolResult`` →
    ``ToolReturnPart``, consecutive ones in one ``ModelRequest``; ``assistant`` →
    ``ModelResponse`` with text, thinking and tool calls, model, provider and token
    counts); branch summaries, custom messages and other roles go through
    :func:`~ptree.context.to_provider_messages` first, so they arrive as user text.

    From a :class:`~ptree.Context` (``build_context(tree, leaf)``): the messages Pi's
    model would see.  The Pi messages that :func:`append_messages` wrote carry their
    pydantic-ai message, so these come back ``==`` too, system prompt included; a
    request with no Pi message (a ``custom`` entry) is not in a context, and what a
    compaction summarised arrives as its summary.

    Cost: O(path length + size of the messages).

    Args:
        source: the tree (its current branch is read) or a context built from one.

    >>> from pydantic_ai.messages import ModelRequest, UserPromptPart
    >>> t = SessionTree().append({"role": "user", "content": "from Pi", "timestamp": 0})
    >>> [type(p).__name__ for p in to_messages(t)[0].parts]
    ['UserPromptPart']
    """
    builder = _Builder()
    if isinstance(source, Context):
        _read(builder, source.messages)
        return builder.result()
    run: list[Mapping[str, Any]] = []
    for entry in source.path():
        if isinstance(entry, MessageEntry):
            message: Mapping[str, Any] = entry.message
            if RECORD_FIELD in entry.extra or PART_FIELD in entry.extra:
                # written before the record moved into the message: kept beside it
                old = entry.extra.get(RECORD_FIELD)
                message = {**message, RECORD_FIELD: old} if old else {**message, PART_FIELD: True}
            run.append(message)
        elif type(entry) is Custom and entry.custom_type == CUSTOM_TYPE:
            _read(builder, run)
            run = []
            if type(entry.data) is FrozenDict:
                builder.record(entry.data)
    _read(builder, run)
    return builder.result()
