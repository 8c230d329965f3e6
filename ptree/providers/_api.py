"""The public entry points: :func:`payload` and :func:`assistant_message`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from ..context import Context, to_provider_messages
from . import _anthropic, _completions, _google, _responses
from ._js import drop_missing, plain
from ._model import NormalizeId, Request, Target, fold_system, transform_messages
from ._reply import as_json
from ._responses import input_by_message
from .errors import ProviderError

__all__ = ["APIS", "ProviderError", "assistant_message", "payload", "responses_items"]


class _Api(NamedTuple):
    normalize_id: Callable[[Target], NormalizeId]
    build: Callable[[Request], dict[str, Any]]
    parse: Callable[[dict[str, Any], Target], dict[str, Any]]


_BUILDERS = {
    "openai-completions": _Api(_completions.normalize_id, _completions.build, _completions.parse),
    "openai-responses": _Api(_responses.normalize_id, _responses.build, _responses.parse),
    "anthropic-messages": _Api(_anthropic.normalize_id, _anthropic.build, _anthropic.parse),
    "google-generative-ai": _Api(_google.normalize_id, _google.build, _google.parse),
}
APIS: tuple[str, ...] = tuple(_BUILDERS)
"""The APIs ptree builds bodies for, by pi-ai's names."""


def _module(api: str) -> _Api:
    module = _BUILDERS.get(api)
    if module is None:
        known = ", ".join(repr(a) for a in APIS)
        raise ProviderError(api, "api", f"unknown api {api!r}; known: {known}")
    return module


def _messages(api: str, messages: Context | Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(messages, Context):
        # Pi 1.6's convertToLlm passes system messages through; their place among the
        # others does not matter, since they are folded into the leading prompt
        agent = messages.messages
        systems = [m for m in agent if m.get("role") == "system"]
        messages = systems + to_provider_messages(m for m in agent if m.get("role") != "system")
    out = plain(list(messages))
    for i, m in enumerate(out):
        if not isinstance(m, dict):
            raise ProviderError(api, f"messages[{i}]", f"messages[{i}] is not a message object")
        content = m.get("content")
        if content is not None and not isinstance(content, str | list):
            raise ProviderError(
                api, f"messages[{i}]", f"messages[{i}] has content that is not a string or list"
            )
        if isinstance(content, str) and m.get("role") in ("assistant", "toolResult"):
            # pi-ai fails on these too: its assistant and tool-result content is a list
            raise ProviderError(
                api,
                f"messages[{i}]",
                f"messages[{i}] is a {m['role']} message whose content is a string, not a list "
                "of blocks",
            )
        if isinstance(content, list):
            for j, block in enumerate(content):
                if not isinstance(block, dict):
                    raise ProviderError(
                        api,
                        f"messages[{i}].content[{j}]",
                        f"messages[{i}].content[{j}] is not a content block object",
                    )
    return out  # type: ignore[no-any-return]


def payload(
    messages: Context | Iterable[Mapping[str, Any]],
    *,
    api: str,
    provider: str,
    model: str,
    system: str | None = None,
    tools: Iterable[Mapping[str, Any]] = (),
    reasoning: bool = False,
    images: bool = True,
) -> dict[str, Any]:
    """The conversation part of a request body, exactly as pi-ai 1.6.0 builds it.

    pi-ai's rules apply (see the package docstring and the README): thinking from other
    models is dropped and same-model signatures kept; tool-call ids are normalised the way
    the target API needs, and tool results follow the new ids; tool calls without a result
    get pi-ai's synthetic error result; aborted and errored turns are left out; images
    become placeholders for a text-only model; tool-call arguments are written as
    JavaScript's ``JSON.stringify`` writes them.

    Args:
        messages: Pi LLM messages (``user``, ``assistant``, ``toolResult``), oldest first,
            or a :class:`ptree.Context` (converted with :func:`ptree.context.to_provider_messages`).
        api: ``"openai-completions"``, ``"openai-responses"``, ``"anthropic-messages"`` or
            ``"google-generative-ai"``.
        provider: the provider the request goes to, by Pi's names (``"openai"``,
            ``"anthropic"``, ``"google"``, ``"openrouter"``, ``"deepseek"``, …).
        model: the model id.
        system: the system prompt (``None`` or empty: none).
        tools: Pi tool definitions ``{name, description, parameters}``.
        reasoning: whether the model is a reasoning model (pi-ai's ``model.reasoning``).
        images: whether the model takes images (pi-ai's ``"image" in model.input``).

    Returns:
        A new ``dict`` of plain JSON values holding the fields that carry the
        conversation: ``messages``/``tools`` (Chat Completions), ``input``/``tools``
        (Responses), ``messages``/``system``/``tools`` (Anthropic),
        ``contents``/``systemInstruction``/``tools`` (Gemini, as sent on the wire).
        The caller adds the model and the request options.

    Raises:
        ProviderError: (a ``ValueError``) an unknown ``api`` (the message lists the known
            ones), a message that is not an object, or (Responses) a same-model thinking
            signature that is not JSON.

    Cost: O(total size of the messages and tools); the inputs are copied, never changed.

    >>> body = payload([{"role": "user", "content": "Hi"}], api="anthropic-messages",
    ...                provider="anthropic", model="claude-sonnet-4-5", system="Be brief.")
    >>> body["system"]
    [{'type': 'text', 'text': 'Be brief.', 'cache_control': {'type': 'ephemeral'}}]
    >>> body["messages"]
    [{'role': 'user', 'content': [{'type': 'text', 'text': 'Hi', 'cache_control': {'type': 'ephemeral'}}]}]
    """  # noqa: E501
    module = _module(api)
    target = Target(api, provider, model, bool(reasoning), bool(images))
    converted = _messages(api, messages)
    tool_list = plain(list(tools))
    if system is not None and not isinstance(system, str):
        raise ProviderError(api, "system", "system must be a string or None")
    prompt, current_tools, conversation = fold_system(system, tool_list, converted)
    try:
        transformed = transform_messages(conversation, target, module.normalize_id(target))
        body = module.build(Request(target, prompt, current_tools, transformed))
    except ProviderError:
        raise
    except ValueError as e:
        raise ProviderError(api, "messages", str(e)) from None
    return drop_missing(body)  # type: ignore[no-any-return]


def responses_items(
    messages: Iterable[Mapping[str, Any]],
    *,
    provider: str,
    model: str,
    reasoning: bool = False,
    images: bool = True,
) -> list[list[dict[str, Any]]]:
    """The OpenAI Responses input items of each Pi message, as pi-ai 1.6.0 sends them.

    The same conversion as :func:`payload` with ``api="openai-responses"`` (its
    ``input`` is these lists joined), told message by message: ``out[i]`` holds the
    items that ``messages[i]`` gives — none for a failed turn or a ``system`` message
    (:func:`payload` makes those the instructions).  A result pi-ai makes up for a tool
    call left unanswered comes first among the items of the message that closes the
    call's turn (the next user or assistant message); at the very end of the
    conversation it is left out, as pi-ai adds it only because the request ends there.
    For code that keeps its own items beside Pi's messages
    (``ptree.integrations.openai_agents``).

    Args:
        messages: Pi LLM messages, oldest first (the whole conversation: ids, failed
            turns and unanswered calls are decided across messages).
        provider: the target, as for :func:`payload`.
        model: as for :func:`payload`.
        reasoning: as for :func:`payload`.
        images: as for :func:`payload`.

    Returns:
        One new list of plain JSON items per message.

    Raises:
        ProviderError: (a ``ValueError``) as for :func:`payload`.

    Cost: O(total size of the messages); the inputs are copied, never changed.

    >>> responses_items([{"role": "user", "content": "Hi"}, {"role": "system", "content": "S"}],
    ...                 provider="openai", model="gpt-5")
    [[{'role': 'user', 'content': [{'type': 'input_text', 'text': 'Hi'}]}], []]
    """
    api = "openai-responses"
    target = Target(api, provider, model, bool(reasoning), bool(images))
    converted = _messages(api, messages)
    kept = [i for i, m in enumerate(converted) if m.get("role") != "system"]
    try:
        per_message = input_by_message([converted[i] for i in kept], target)
    except ValueError as e:
        raise ProviderError(api, "messages", str(e)) from None
    out: list[list[dict[str, Any]]] = [[] for _ in converted]
    for i, items in zip(kept, per_message, strict=True):
        out[i] = drop_missing(items)
    return out


def assistant_message(response: Any, *, api: str, provider: str, model: str) -> dict[str, Any]:
    """The Pi assistant message for a provider's non-streaming reply, as pi-ai builds it.

    pi-ai reads streams; this reads the whole reply and gives the message pi-ai builds
    from the same reply streamed: content blocks (text, thinking with its signature, tool
    calls with parsed arguments), ``stopReason``, ``usage`` (token counts; costs are zero,
    as ptree has no price table), ``api``, ``provider``, ``model``, ``timestamp`` (now,
    in milliseconds) and, when known, ``responseId``, ``responseModel`` (the model that
    served, when it is not the one asked for) and ``errorMessage``.  Append it to a tree
    with ``tree.append(Message(message))`` (or the writer).

    Args:
        response: the reply as its JSON body (a mapping), or the official SDK's parsed
            object: ``openai``'s ``ChatCompletion`` or ``Response``, ``anthropic``'s
            ``Message`` (or ``BetaMessage``), ``google-genai``'s
            ``GenerateContentResponse``.  Only the first choice/candidate is read.
        api: the API that answered (as for :func:`payload`).
        provider: the provider that answered, by Pi's names.
        model: the model id the request asked for.

    Returns:
        A new ``dict``: the Pi assistant message.  A reply that stopped with an error
        (a refusal, a content filter, an incomplete response) keeps its partial content
        and has ``stopReason`` ``"error"`` and an ``errorMessage``, as in pi-ai;
        :func:`payload` leaves such a turn out of the next request.

    Raises:
        ProviderError: (a ``ValueError``) an unknown ``api``.
        TypeError: ``response`` is neither a mapping nor an SDK object.

    Tool-call arguments that are not a JSON object give ``{}`` and an
    ``argumentsError`` ending in the text received, as in pi-ai; its first line is
    Python's wording of the parse error where pi-ai would give V8's.

    Cost: O(size of the reply).

    >>> reply = {"id": "msg_1", "type": "message", "role": "assistant",
    ...          "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
    ...          "content": [{"type": "text", "text": "Hello!"}],
    ...          "usage": {"input_tokens": 12, "output_tokens": 3}}
    >>> message = assistant_message(reply, api="anthropic-messages",
    ...                             provider="anthropic", model="claude-sonnet-4-5")
    >>> message["content"], message["stopReason"], message["usage"]["totalTokens"]
    ([{'type': 'text', 'text': 'Hello!'}], 'stop', 15)
    """
    module = _module(api)
    target = Target(api, provider, model)
    return module.parse(as_json(response), target)
