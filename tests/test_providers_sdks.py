"""ptree.providers through the real Python SDKs, offline (``httpx2.MockTransport``).

The bodies ``payload`` builds go into the official SDK calls as keyword arguments, and
the mock server checks that they arrive intact; the SDKs' parsed replies go into
``assistant_message`` and must give the same message as the reply's JSON.  No test
reaches the network: every request ends at the mock transport.
"""

from __future__ import annotations

import base64
import json
import re
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from ptree.providers import assistant_message, payload
from tests.helpers import missing

from .provider_cases import seeded_cases
from .provider_replies import REPLIES


def _need(module: str) -> Any:
    try:
        return __import__(module, fromlist=["_"])
    except ImportError:  # pragma: no cover - the test extra installs them
        missing(f"{module} is not installed (pip install -e '.[test]')", module_level=True)


httpx2 = _need("httpx2")
openai = _need("openai")
anthropic = _need("anthropic")
genai = _need("google.genai")
genai_types = _need("google.genai.types")

Handler = Callable[[Any], Any]


def _client(handler: Handler) -> Any:
    return httpx2.Client(transport=httpx2.MockTransport(handler))


class Server:
    """A mock server that records request bodies and answers with one canned reply."""

    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply = reply
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: Any) -> Any:
        self.bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=self.reply)


def _lone_surrogate(value: Any) -> bool:
    text = json.dumps(value)
    return (
        re.search(r"\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])|(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f]", text)
        is not None
    )


def _cases(api: str, count: int) -> list[dict[str, Any]]:
    # A body with an unpaired surrogate (in ids or arguments, where pi-ai keeps it too)
    # cannot go through the Python SDKs: they encode with UTF-8 strictly and raise
    # UnicodeEncodeError.  Google's SDK also refuses an empty conversation.
    out = []
    for case in seeded_cases(count * 6, seed=7):
        if case["api"] != api:
            continue
        body = _payload(case)
        if _lone_surrogate(body):
            continue
        if api == "google-generative-ai" and not (body["contents"] and _object_arguments(case)):
            continue
        out.append(case)
    assert len(out) >= count // 2
    return out


def _object_arguments(case: dict[str, Any]) -> bool:
    # google-genai's FunctionCall.args is typed as an object (pi-ai tool calls always
    # have one; the generator also makes others, to test pi-ai's handling)
    return all(
        isinstance(block.get("arguments"), dict)
        for message in case["messages"]
        if message["role"] == "assistant"
        for block in message["content"]
        if block["type"] == "toolCall"
    )


def _payload(case: dict[str, Any]) -> dict[str, Any]:
    return payload(
        case["messages"],
        api=case["api"],
        provider=case["provider"],
        model=case["model"],
        system=case["system"],
        tools=case["tools"],
        reasoning=case["reasoning"],
        images=case["images"],
    )


def _reply(api: str) -> dict[str, Any]:
    return next(r[4] for r in REPLIES if r[1] == api)


def _same_message(
    sdk_object: Any, reply: dict[str, Any], api: str, provider: str, model: str
) -> None:
    from_sdk = assistant_message(sdk_object, api=api, provider=provider, model=model)
    from_json = assistant_message(reply, api=api, provider=provider, model=model)
    from_sdk.pop("timestamp")
    from_json.pop("timestamp")
    if api == "openai-responses":
        # A reasoning item's signature is its JSON text; from a parsed object the keys
        # come in the SDK's field order, not the server's: the same item, reordered.
        for msg in (from_sdk, from_json):
            for block in msg["content"]:
                if block["type"] == "thinking":
                    block["thinkingSignature"] = json.loads(block["thinkingSignature"])
    assert from_sdk == from_json


class TestOpenAI:
    """The openai SDK takes Chat Completions and Responses bodies as they are."""

    def test_chat_completions(self) -> None:
        """Every generated body arrives intact; the parsed ChatCompletion reads back."""
        reply = _reply("openai-completions")
        server = Server(reply)
        client = openai.OpenAI(
            api_key="sk-test", base_url="http://mock.invalid/v1", http_client=_client(server)
        )
        for case in _cases("openai-completions", 60):
            body = _payload(case)
            completion = client.chat.completions.create(model=case["model"], **body)
            sent = server.bodies[-1]
            assert sent["model"] == case["model"]
            assert {k: sent[k] for k in body} == body
        _same_message(completion, reply, "openai-completions", "openai", "gpt-5")

    def test_responses(self) -> None:
        """Every generated body arrives intact; the parsed Response reads back."""
        reply = _reply("openai-responses")
        server = Server(reply)
        client = openai.OpenAI(
            api_key="sk-test", base_url="http://mock.invalid/v1", http_client=_client(server)
        )
        for case in _cases("openai-responses", 60):
            body = _payload(case)
            response = client.responses.create(model=case["model"], **body)
            assert {k: server.bodies[-1][k] for k in body} == body
        _same_message(response, reply, "openai-responses", "openai", "gpt-5")

    @pytest.mark.parametrize(
        "name", [r[0] for r in REPLIES if r[1] in ("openai-completions", "openai-responses")]
    )
    def test_parsed_replies(self, name: str) -> None:
        """Each hand-written reply, parsed by the SDK, gives the message its JSON gives."""
        _, api, provider, model, reply = next(r for r in REPLIES if r[0] == name)
        kind = (
            openai.types.chat.ChatCompletion
            if api == "openai-completions"
            else openai.types.responses.Response
        )
        # The SDK builds its objects from server JSON without validation (construct).
        parsed = kind.construct(**reply)
        _same_message(parsed, reply, api, provider, model)


class TestAnthropic:
    """The anthropic SDK takes Messages bodies as they are."""

    def test_messages(self) -> None:
        """Every generated body arrives intact through beta.messages; the Message reads back."""
        reply = _reply("anthropic-messages")
        server = Server(reply)
        client = anthropic.Anthropic(
            api_key="sk-test", base_url="http://mock.invalid", http_client=_client(server)
        )
        for case in _cases("anthropic-messages", 60):
            body = _payload(case)
            message = client.beta.messages.create(model=case["model"], max_tokens=1024, **body)
            assert {k: server.bodies[-1][k] for k in body} == body
        _same_message(message, reply, "anthropic-messages", "anthropic", "claude-sonnet-4-5")

    @pytest.mark.parametrize("name", [r[0] for r in REPLIES if r[1] == "anthropic-messages"])
    def test_parsed_replies(self, name: str) -> None:
        """Each hand-written reply, parsed by the SDK, gives the message its JSON gives."""
        _, api, provider, model, reply = next(r for r in REPLIES if r[0] == name)
        parsed = anthropic.types.beta.BetaMessage.construct(**reply)  # as the SDK builds it
        _same_message(parsed, reply, api, provider, model)


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


_BYTES_KEYS = frozenset(("data", "thoughtSignature"))


def _wire_form(value: Any) -> Any:
    """google-genai's body in the API's own spelling: camelCase keys, standard base64.

    The SDK writes ``inline_data`` for ``inlineData`` and bytes as URL-safe base64; the
    API reads both spellings.  Only keys outside schemas and arguments are renamed.
    """
    if isinstance(value, list):
        return [_wire_form(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = _camel(key)
        if name in ("args", "parametersJsonSchema", "response"):
            out[name] = item  # user data: kept as sent
        elif name in _BYTES_KEYS and isinstance(item, str):
            out[name] = base64.b64encode(
                base64.urlsafe_b64decode(item + "=" * (-len(item) % 4))
            ).decode()
        else:
            out[name] = _wire_form(item)
    return out


class TestGoogle:
    """google-genai takes Gemini bodies through generate_content."""

    def test_generate_content(self) -> None:
        """Every generated body arrives intact (decoded); the parsed response reads back."""
        reply = _reply("google-generative-ai")
        server = Server(reply)
        client = genai.Client(
            api_key="test",
            http_options=genai_types.HttpOptions(
                base_url="http://mock.invalid", httpx_client=_client(server)
            ),
        )
        for case in _cases("google-generative-ai", 60):
            body = _payload(case)
            config = genai_types.GenerateContentConfig(
                system_instruction=body.get("systemInstruction"),
                tools=body.get("tools"),
                automatic_function_calling=genai_types.AutomaticFunctionCallingConfig(disable=True),
            )
            response = client.models.generate_content(
                model=case["model"], contents=body["contents"], config=config
            )
            sent = _wire_form(server.bodies[-1])
            assert sent["contents"] == body["contents"]
            for key in ("systemInstruction", "tools"):
                assert sent.get(key) == body.get(key)
        _same_message(response, reply, "google-generative-ai", "google", "gemini-3-pro-preview")

    @pytest.mark.parametrize("name", [r[0] for r in REPLIES if r[1] == "google-generative-ai"])
    def test_parsed_replies(self, name: str) -> None:
        """Each hand-written reply, parsed by the SDK, gives the message its JSON gives."""
        _, api, provider, model, reply = next(r for r in REPLIES if r[0] == name)
        with warnings.catch_warnings():
            # google-genai warns about a finish reason it does not know, and keeps it
            warnings.simplefilter("ignore", UserWarning)
            parsed = genai_types.GenerateContentResponse.model_validate(reply)
        from_sdk = assistant_message(parsed, api=api, provider=provider, model=model)
        from_json = assistant_message(reply, api=api, provider=provider, model=model)
        for msg in (from_sdk, from_json):
            msg.pop("timestamp")
            for block in msg["content"]:
                if block["type"] == "toolCall" and re.fullmatch(r".+_\d+_\d+", block["id"]):
                    block["id"] = "<made up>"
        assert from_sdk == from_json
