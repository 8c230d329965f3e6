"""Which tool wrote a file: a look at its first records, for ``ptree import SRC``.

>>> import tempfile, pathlib, json
>>> with tempfile.TemporaryDirectory() as d:
...     p = pathlib.Path(d, "rollout.jsonl")
...     _ = p.write_text(json.dumps({"type": "session_meta", "payload": {}}) + "\\n")
...     detect(p)
'codex'
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .importers import IMPORTERS

__all__ = ["FORMATS", "detect"]

#: The formats ``ptree import`` reads, with what each is.
FORMATS: dict[str, str] = {name: i.description for name, i in IMPORTERS.items()}

_CODEX = frozenset({"session_meta", "response_item", "turn_context", "event_msg", "compacted"})
_CLAUDE = frozenset(
    {
        "user",
        "assistant",
        "system",
        "progress",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "custom-title",
        "last-prompt",
        "attachment",
    }
)
_SNIFF = 64 * 1024 * 1024  # a JSON export is parsed whole only up to this size


def detect(path: str | os.PathLike[str]) -> str | None:
    """The format of ``path`` (a key of :data:`FORMATS`), or ``None`` when none fits.

    JSON Lines files are recognised by their first 20 records (Codex's
    ``{timestamp, type, payload}`` wrapper or its old bare session line; Claude Code's
    record types with ``uuid``/``sessionId``); JSON documents by their shape (a list
    of conversations with ``mapping``: ChatGPT; with ``chat``/``history``: Open
    WebUI; an object with ``conversationId`` and messages: LibreChat).  Lines that are
    not JSON are passed over: reading the file is what reports them.  Cost: reads the
    first records, or parses the whole document (up to 64 MB).

    Args:
        path: the file.
    """
    p = Path(path)
    with p.open("rb") as f:
        head = f.read(1 << 16)
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"["):
        return _document(p)
    records: list[dict[str, object]] = []
    with p.open("rb") as f:
        for n, line in enumerate(f):
            if n >= 20 or len(records) >= 20:
                break
            try:
                value = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(value, dict):
                records.append(value)
    if not records:
        return None
    if len(records) == 1 and text.startswith(b"{") and b"\n" not in text.strip():
        found = _shape(records[0])
        if found is not None:
            return found
    for r in records:
        if r.get("type") in _CODEX and "payload" in r:
            return "codex"
        if "record_type" in r:
            return "codex"
    for r in records:
        if r.get("type") in _CLAUDE and (
            "uuid" in r or "sessionId" in r or "leafUuid" in r or "messageId" in r
        ):
            return "claude-code"
    first = records[0]
    if (
        "id" in first
        and "timestamp" in first
        and "type" not in first
        and ("instructions" in first or "git" in first)
    ):
        return "codex"
    if p.stat().st_size <= _SNIFF and text.startswith(b"{"):
        return _document(p)
    return None


def _document(p: Path) -> str | None:
    if p.stat().st_size > _SNIFF:
        return None
    try:
        value = json.loads(p.read_bytes())
    except (ValueError, RecursionError):
        return None
    if isinstance(value, list):
        first = next((v for v in value if isinstance(v, dict)), None)
        return None if first is None else _shape(first)
    return _shape(value) if isinstance(value, dict) else None


def _shape(value: dict[str, object]) -> str | None:
    if "mapping" in value:
        return "chatgpt"
    if "chat" in value or "history" in value:
        return "openwebui"
    if "conversationId" in value and ("messages" in value or "messagesTree" in value):
        return "librechat"
    return None
