"""The JSON text of context messages for ``ptree path``, from raw bytes where it can be.

``ptree path`` writes each message of a context on one line, as :data:`compact`
writes it: Python's ``json`` with ``ensure_ascii=False`` and ``", "``/``": "`` as
separators.  A message that the Pi reader has not decoded yet (a
:class:`~ptree.pi.fast.LoadedMessage`) and that the context gives as stored is
written from its JSON bytes instead (:func:`message_json`): msgspec decodes them to
plain values in C, encodes those back compactly, and ``msgspec.json.format`` puts the
spaces after ``,`` and ``:``.  Nothing is frozen or kept, and the entry stays
undecoded.  The text is the one :data:`compact` gives for the decoded message,
character for character, because

- msgspec decodes these bytes to the values the reader's own decoder (``json``) gives:
  the same strings (escapes and surrogate pairs read alike; a lone surrogate, which
  msgspec refuses, goes the ordinary way), integers of any size, the last of
  duplicate keys in the place of the first, nested as deep as the reader allows;
  a number with a fraction or exponent is read by Python's own ``float`` and kept as
  the text ``repr`` gives it (:class:`msgspec.Raw`, written as it is), which is what
  ``json`` writes for a float;
- msgspec escapes a string exactly as ``json`` with ``ensure_ascii=False`` does: ``"``,
  ``\\``, ``\\b``, ``\\f``, ``\\n``, ``\\r``, ``\\t``, the other control characters
  as ``\\u00xx``, nothing else (tests/test_path_stream.py checks every code point);
- ``format`` changes only the whitespace between tokens.

tests/test_path_stream.py compares the output with the ordinary one (every message
decoded at load) on generated and hostile sessions.

Why (benchmarks/README.md, "Big sessions"): for the 24,801 messages on the path of a
90 MB session, decoding and freezing them for the context and encoding them again took
0.86 s; finding them without decoding and writing them this way takes about 0.45 s,
and ``ptree path`` of that file went from 1.55x ``json.loads`` to 0.67x.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ..entries import MessageEntry
from ..pi.fast import LoadedMessage

__all__ = ["compact", "message_json", "raw_message_json"]

try:
    import msgspec
except ImportError:  # pragma: no cover - msgspec is a dependency; a stripped install
    msgspec = None  # type: ignore[assignment]

compact: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode
"""A JSON value on one line, as ``ptree path`` and ``ptree show --json`` write it."""


if msgspec is not None:
    _Raw = msgspec.Raw

    class _FloatTexts(dict[str, msgspec.Raw]):
        """The text json writes for a number with a fraction or exponent: json reads
        it with ``float()`` and writes it with ``float.__repr__`` (the reader refused
        the ones that read as infinity).  Kept, up to a few thousand, since sessions
        repeat their numbers (costs, token rates): a hit is a lookup in C, where a
        Python hook for each of the 56,000 numbers of the benchmark's path cost 0.07 s.
        Threads may both add a text or clear the cache: each text is the same."""

        def __missing__(self, text: str) -> msgspec.Raw:
            if len(self) >= 4096:
                self.clear()
            value = self[text] = _Raw(repr(float(text)).encode())
            return value

    _decode_plain = msgspec.json.Decoder(float_hook=_FloatTexts().__getitem__).decode
    _encode = msgspec.json.Encoder().encode
    _format = msgspec.json.format
    _Failed: tuple[type[BaseException], ...] = (msgspec.MsgspecError, RecursionError)


def raw_message_json(source: Any) -> str | None:
    """``compact(message)`` for the message of these JSON bytes (checked by the Pi
    reader), or ``None`` when they hold what msgspec does not read as ``json`` does
    (a lone surrogate).  O(len(source)), nearly all of it in C.

    Args:
        source: the message's JSON bytes (a buffer of them).

    >>> raw_message_json(b'{"role":"user","content":[{"x":1E2,"y":"\\\\u00e9"}]}')
    '{"role": "user", "content": [{"x": 100.0, "y": "é"}]}'
    """
    if msgspec is None:  # pragma: no cover - msgspec is a dependency
        return None
    try:
        value = _decode_plain(source)
    except _Failed:
        return None
    return _format(_encode(value), indent=0).decode()


def message_json(item: Mapping[str, Any] | MessageEntry) -> str:
    """The line ``ptree path`` writes for one of a context's
    :meth:`ptree.context.Messages.sources`: a message, or an entry standing for its
    own message (written from its bytes while it is undecoded).
    O(size of the message).

    Args:
        item: the message, or the entry holding it.
    """
    if isinstance(item, MessageEntry):
        if type(item) is LoadedMessage:
            source = LoadedMessage.undecoded(item)
            if source is not None:
                text = raw_message_json(source)
                if text is not None:
                    return text
        item = item.message
    return compact(item)
