"""Request bodies for LLM provider APIs, and replies back into Pi messages.

This layer turns a conversation (Pi LLM messages, or a :class:`ptree.Context`) into the
part of a request body that carries it — for OpenAI Chat Completions, OpenAI Responses,
Anthropic Messages and Google Gemini — exactly as Pi's LLM package
(``@earendil-works/pi-ai`` 1.6.0) builds it, and turns a provider's non-streaming reply
back into the Pi assistant message to append to the tree.

It imports only ptree's core, and no provider SDK: the bodies are plain JSON values that
the official SDKs accept as keyword arguments (``client.chat.completions.create(model=…,
**body)``), and :func:`assistant_message` reads either the reply's JSON or the SDK's
parsed object.

Not covered: Pi's model catalogue's per-model ``compat`` overrides (strict tools,
mid-conversation system messages, effort markers, tool-result names for some hosts),
OAuth identities, grammar tools, session ids (prompt-cache keys) and request options
(sampling, token limits, thinking settings): those fields are the caller's.

Imports: the core only.
"""

from __future__ import annotations

from ..errors import name_public
from ._api import APIS, assistant_message, payload, responses_items
from .errors import ProviderError

__all__ = ["APIS", "ProviderError", "assistant_message", "payload", "responses_items"]

name_public(globals(), "ptree.providers")
