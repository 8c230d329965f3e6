"""OpenAI Codex CLI rollouts (``~/.codex/sessions/…/rollout-*.jsonl``) as Pi sessions.

A rollout is one linear history, replayed in file order (``formats.md`` in the
shared docs gives the whole mapping):

- A run of consecutive model items (``reasoning``, assistant ``message``,
  ``function_call``, ``custom_tool_call``, ``local_shell_call``, ``tool_search_call``,
  ``web_search_call``, ``image_generation_call``), events between them ignored, is
  one Pi assistant message: reasoning is a thinking block whose
  ``thinkingSignature`` is the whole reasoning item as JSON (as Pi's own OpenAI
  Responses provider keeps it), calls are toolCall blocks.  ``web_search_call`` and
  ``image_generation_call`` (run by the server) are ``custom`` entries beside it.
  Usage comes from the next ``token_count`` event.
- Each ``*_output`` item is a ``toolResult`` placed right after its call's message
  and the results already there, before anything written between the call and the
  output (a prompt typed during a tool run), so calls and results stay adjacent.
- ``user`` messages are user messages; ``developer`` and ``system`` messages are
  ``custom_message`` entries (``codex.developer``, not displayed) that the model reads.
- ``compacted`` is a ``compaction`` entry followed by its ``replacement_history``
  (the history the model continued from) as new messages.
- ``thread_rolled_back`` abandons the last ``num_turns`` user turns: they stay in the
  tree as a branch, and the conversation continues from before them.
- ``turn_context`` gives ``model_change`` / ``thinking_level_change`` entries when
  the model or the reasoning effort changes.
- Every line is kept: what has no Pi equivalent (``session_meta``, ``turn_context``,
  every ``event_msg``, unknown items) is a ``custom`` entry ``codex.<type>`` holding
  the payload, which never reaches the model.

Entry ids come from line numbers: ``<n>`` for the entry of line ``n``, ``<n>.<k>`` for
further entries made from it (an assistant message made of several lines has the
id of its first line and lists them all in ``codex.lines``).  The leaf is the last
entry of the final line of history.  Files from before about 0.30 (no
``{timestamp, type, payload}`` wrapper) are read too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from ..js import stringify
from ..tree import SessionTree
from ._common import (
    EPOCH,
    ZERO_USAGE,
    ImportedSession,
    Node,
    Report,
    assemble,
    call_arguments,
    collector_paused,
    imported,
    imported_header,
    kind,
    ms,
    read_json_lines,
    reporter,
    tool_result,
)
from .errors import ImportFormatError

__all__ = ["FORMAT", "read", "sessions"]

FORMAT = "codex"

_MODEL_ITEMS = frozenset(
    {
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "tool_search_call",
        "web_search_call",
        "image_generation_call",
    }
)
_SERVER_ITEMS = frozenset({"web_search_call", "image_generation_call"})
_WRAPPERS = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
_INJECTED = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<user_shell_command>",
    "<turn_aborted>",
)
_EFFORT = {
    "none": "off",
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
}


def read(src: str | os.PathLike[str], *, on_report: Report | None = None) -> ImportedSession:
    """Read a Codex rollout file into a session (rolled-back turns kept as a branch).

    See the module documentation for the mapping.  Cost: O(size of the file),
    plus, for each tool output, a walk back along the current line to its call
    (short in practice: outputs follow their calls closely).

    Args:
        src: the rollout file, ``rollout-<time>-<id>.jsonl``.
        on_report: what every importer takes, for a line about each thing left out or
            kept only as text; Codex's conversion leaves nothing out, so it is never
            called today.

    Raises:
        ImportFormatError: (a ``ValueError``) a line that is not a JSON object, not
            UTF-8 or torn, or an item whose fields are not Codex's, naming the file
            and the line.
        OSError: the file cannot be read.

    >>> import tempfile, pathlib
    >>> lines = [
    ...   {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
    ...    "payload": {"id": "s1", "cwd": "/w", "cli_version": "0.1"}},
    ...   {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item", "payload": {
    ...    "type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}},
    ...   {"timestamp": "2026-01-01T00:00:02Z", "type": "response_item", "payload": {
    ...    "type": "message", "role": "assistant",
    ...    "content": [{"type": "output_text", "text": "hello"}]}}]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = pathlib.Path(d, "rollout.jsonl")
    ...     _ = p.write_text("".join(json.dumps(x) + "\\n" for x in lines))
    ...     s = read(p)
    >>> s.source_id, [e.id for e in s.tree.path()], s.tree.leaf.message["content"][0]["text"]
    ('s1', ['1', '2', '3'], 'hello')
    """
    path = Path(src)
    reporter(on_report, path)  # nothing to report yet; the shape is every importer's
    with collector_paused():
        return imported(FORMAT, path, _Reader(path).run())


def sessions(src: str | os.PathLike[str], **options: Any) -> Iterator[ImportedSession]:
    """``iter([read(src, ...)])``: a rollout holds one session.  Raises as :func:`read`.

    The whole file is read before this returns.  Cost: O(size of the file), as
    :func:`read`.

    Args:
        src: the rollout file.
        **options: :func:`read`'s keyword options (``on_report``).
    """
    return iter([read(src, **options)])


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.nodes: list[Node] = []
        self.line: list[Node] = []  # the current history; each the child of the one before
        self.base: str | None = None  # the parent of line[0]
        self.open: Node | None = None  # the assistant message a run of model items builds
        self.calls: dict[str, tuple[Node, str]] = {}
        self.last_result: dict[str, Node] = {}  # assistant id -> its last placed result
        self.unpriced: Node | None = None  # the latest assistant message without usage
        self.provider = "openai"
        self.model: str | None = None
        self.effort: str | None = None
        self.tokens = 0
        self.time = EPOCH
        self.lineno = 0
        self.sub = 0  # entries made so far from the current line

    # ---------------------------------------------------------------- plumbing

    def fail(self, reason: str) -> NoReturn:
        raise ImportFormatError(self.path, self.lineno, reason)

    def next_id(self) -> str:
        self.sub += 1
        return str(self.lineno) if self.sub == 1 else f"{self.lineno}.{self.sub - 1}"

    def add(self, fields: dict[str, Any]) -> Node:
        fields.setdefault("timestamp", self.time)
        node = Node(self.next_id(), fields, self.path, self.lineno)
        self.nodes.append(node)
        self.line.append(node)
        return node

    def custom(self, what: str, data: Any) -> Node:
        return self.add({"type": "custom", "customType": f"codex.{what}", "data": data})

    # ---------------------------------------------------------------- reading

    def run(self) -> SessionTree:
        records = read_json_lines(self.path)
        meta: dict[str, Any] = {}
        first_time: str | None = None
        for lineno, raw in records:
            self.lineno, self.sub = lineno, 0
            stamp = raw.get("timestamp")
            if isinstance(stamp, str) and stamp:
                self.time = stamp
                first_time = first_time or stamp
            try:
                kind_ = raw.get("type")
                payload = raw.get("payload")
                if kind_ in _WRAPPERS and "payload" in raw:
                    if not isinstance(payload, dict):
                        self.fail(f"'payload' must be an object, not {kind(payload)}")
                    if kind_ == "session_meta":
                        meta = meta or payload
                        if isinstance(payload.get("model_provider"), str):
                            self.provider = payload["model_provider"]
                        if first_time is None and isinstance(payload.get("timestamp"), str):
                            first_time = payload["timestamp"]
                        self.custom("session_meta", payload)
                    elif kind_ == "turn_context":
                        self.turn_context(payload)
                    elif kind_ == "response_item":
                        self.item(payload)
                    elif kind_ == "event_msg":
                        self.event(payload)
                    else:
                        self.compacted(payload)
                elif "record_type" in raw:  # an old file's state line
                    self.custom("state", raw)
                elif not meta and not self.nodes and "id" in raw and "type" not in raw:
                    meta = raw  # an old file's first line: the session meta itself
                    if first_time is None and isinstance(raw.get("timestamp"), str):
                        first_time = raw["timestamp"]
                    self.custom("session_meta", raw)
                elif isinstance(kind_, str) and "payload" not in raw:
                    self.item(raw)  # an old file's bare response item
                else:
                    self.custom(kind_ if isinstance(kind_, str) else "unknown", raw)
            except RecursionError:
                self.fail("nested too deeply to import")
        self.close()
        self.link(self.line, self.base)
        leaf = self.line[-1].id if self.line else (self.nodes[-1].id if self.nodes else None)
        session_id = meta.get("id") if isinstance(meta.get("id"), str) else None
        session_id = session_id or self.path.stem
        version = meta.get("cli_version")
        header = imported_header(
            session_id,
            first_time or EPOCH,
            meta["cwd"] if isinstance(meta.get("cwd"), str) else "",
            {
                "format": FORMAT,
                "sessionId": session_id,
                "file": self.path.name,
                "version": version if isinstance(version, str) else None,
            },
        )
        return assemble(self.nodes, leaf, header)

    @staticmethod
    def link(nodes: list[Node], base: str | None) -> None:
        parent = base
        for node in nodes:
            node.parent = parent
            parent = node.id

    def close(self) -> None:
        """End the current run of model items: its assistant message is complete."""
        self.open = None

    # ---------------------------------------------------------------- lines

    def turn_context(self, payload: dict[str, Any]) -> None:
        self.custom("turn_context", payload)
        model = payload.get("model")
        if isinstance(model, str) and model and model != self.model:
            self.model = model
            self.add({"type": "model_change", "provider": self.provider, "modelId": model})
        effort = payload.get("effort")
        level = _EFFORT.get(effort) if isinstance(effort, str) else None
        if level is not None and level != self.effort:
            self.effort = level
            self.add({"type": "thinking_level_change", "thinkingLevel": level})

    def event(self, payload: dict[str, Any]) -> None:
        etype = payload.get("type")
        if etype == "token_count":
            info = payload.get("info")
            last = info.get("last_token_usage") if isinstance(info, dict) else None
            if isinstance(last, dict):
                total = last.get("total_tokens")
                if isinstance(total, int) and not isinstance(total, bool):
                    self.tokens = total
                if self.unpriced is not None:
                    self.unpriced.fields["message"]["usage"] = _usage(last)
                    self.unpriced = None
        elif etype == "thread_rolled_back":
            self.close()
            turns = payload.get("num_turns")
            self.roll_back(turns if isinstance(turns, int) and not isinstance(turns, bool) else 1)
        self.custom("event_msg", payload)

    def roll_back(self, turns: int) -> None:
        starts = [i for i, n in enumerate(self.line) if _is_turn_start(n)]
        if not starts or turns < 1:
            return
        cut = starts[-turns] if turns <= len(starts) else starts[0]
        abandoned = self.line[cut:]
        base = self.line[cut - 1].id if cut > 0 else self.base
        self.link(abandoned, base)
        del self.line[cut:]

    def compacted(self, payload: dict[str, Any]) -> None:
        self.close()
        message = payload.get("message")
        node = self.add(
            {
                "type": "compaction",
                "summary": message if isinstance(message, str) else "",
                "firstKeptEntryId": "",
                "tokensBefore": self.tokens,
            }
        )
        node.fields["firstKeptEntryId"] = node.id
        history = payload.get("replacement_history")
        if history is None:
            return
        if not isinstance(history, list):
            self.fail(f"'replacement_history' must be a list, not {kind(history)}")
        for i, item in enumerate(history):
            if not isinstance(item, dict):
                self.fail(f"'replacement_history[{i}]' must be an object, not {kind(item)}")
            self.item(item)
        self.close()

    # ---------------------------------------------------------------- response items

    def item(self, item: dict[str, Any]) -> None:
        itype = item.get("type")
        role = item.get("role")
        if (itype == "message" and role == "assistant") or itype in _MODEL_ITEMS:
            self.model_item(item)
        elif itype == "message":
            self.close()
            self.message(item, role)
        elif isinstance(itype, str) and itype.endswith("_output"):
            self.close()
            self.output(item)
        else:  # ghost snapshots, encrypted compaction items, anything new: kept, not sent
            self.custom("response_item", item)

    def assistant(self) -> Node:
        if self.open is None:
            self.open = self.add(
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": [],
                        "api": "openai-responses",
                        "provider": self.provider,
                        "model": self.model or "unknown",
                        "usage": ZERO_USAGE,
                        "stopReason": "stop",
                        "timestamp": ms(self.time),
                    },
                    "codex": {"lines": []},
                }
            )
            self.unpriced = self.open
        lines = self.open.fields["codex"]["lines"]
        if not lines or lines[-1] != self.lineno:
            lines.append(self.lineno)
        return self.open

    def model_item(self, item: dict[str, Any]) -> None:
        itype = item.get("type")
        message = self.assistant()
        if itype in _SERVER_ITEMS:
            self.custom("response_item", item)
            return
        blocks: list[dict[str, Any]] = message.fields["message"]["content"]
        if itype == "reasoning":
            texts = [
                p["text"]
                for key in ("summary", "content")
                for p in (item.get(key) or ())
                if isinstance(p, dict) and isinstance(p.get("text"), str)
            ]
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": "\n".join(texts),
                    # Pi's Responses provider writes it with JSON.stringify
                    "thinkingSignature": stringify(item),
                }
            )
            return
        if itype == "message":
            content = item.get("content")
            if isinstance(content, str):
                blocks.append({"type": "text", "text": content})
            elif isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and part.get("type") in ("output_text", "text"):
                        text = part.get("text")
                        blocks.append(
                            {"type": "text", "text": text if isinstance(text, str) else ""}
                        )
                    elif isinstance(part, dict) and part.get("type") == "refusal":
                        text = part.get("refusal")
                        blocks.append(
                            {"type": "text", "text": text if isinstance(text, str) else ""}
                        )
            else:
                self.fail(f"a message's 'content' must be a list, not {kind(content)}")
            return
        call_id = item.get("call_id") or item.get("id")
        if not isinstance(call_id, str) or not call_id:
            self.fail(f"a {itype} item needs a string 'call_id'")
        if itype == "function_call":
            name = item.get("name")
            args: Any = call_arguments(item.get("arguments"))
        elif itype == "custom_tool_call":
            name = item.get("name")
            args = {"input": item.get("input")}
        elif itype == "local_shell_call":
            name = "local_shell"
            action = item.get("action")
            args = action if isinstance(action, dict) else {"action": action}
        else:  # tool_search_call
            name = "tool_search"
            given = item.get("arguments")
            args = (
                given
                if isinstance(given, dict)
                else {k: v for k, v in item.items() if k not in ("type", "call_id", "id")}
            )
        name = name if isinstance(name, str) and name else "unknown"
        blocks.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
        message.fields["message"]["stopReason"] = "toolUse"
        self.calls.setdefault(call_id, (message, name))

    def message(self, item: dict[str, Any], role: object) -> None:
        content = item.get("content")
        blocks: list[dict[str, Any]] = []
        if isinstance(content, str):
            blocks.append({"type": "text", "text": content})
        elif isinstance(content, list):
            for part in content:
                if not isinstance(part, dict):
                    continue
                if part.get("type") in ("input_text", "text", "output_text"):
                    text = part.get("text")
                    blocks.append({"type": "text", "text": text if isinstance(text, str) else ""})
                elif part.get("type") == "input_image":
                    blocks.append(_image(part.get("image_url")))
        else:
            self.fail(f"a message's 'content' must be a list, not {kind(content)}")
        if role == "user":
            self.add(
                {
                    "type": "message",
                    "message": {"role": "user", "content": blocks, "timestamp": ms(self.time)},
                }
            )
        else:
            what = role if isinstance(role, str) and role else "system"
            self.add(
                {
                    "type": "custom_message",
                    "customType": f"codex.{what}",
                    "content": blocks,
                    "display": False,
                }
            )

    def output(self, item: dict[str, Any]) -> None:
        call_id = item.get("call_id") or item.get("id")
        if not isinstance(call_id, str) or not call_id:
            self.fail(f"a {item.get('type')} item needs a string 'call_id'")
        output = item.get("output")
        error = item.get("success") is False
        if isinstance(output, dict):
            error = error or output.get("success") is False
            inner = output.get("content", output.get("output"))
            output = inner if inner is not None else json.dumps(output, ensure_ascii=False)
        content: list[dict[str, Any]] = []
        if isinstance(output, str):
            content.append({"type": "text", "text": output})
        elif isinstance(output, list):
            for part in output:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    content.append({"type": "text", "text": part["text"]})
                elif isinstance(part, dict) and part.get("type") in ("input_image", "image"):
                    content.append(_image(part.get("image_url")))
                else:
                    content.append({"type": "text", "text": json.dumps(part, ensure_ascii=False)})
        elif output is not None:
            content.append({"type": "text", "text": json.dumps(output, ensure_ascii=False)})
        call = self.calls.get(call_id)
        name = call[1] if call is not None else "unknown"
        fields = {
            "type": "message",
            "timestamp": self.time,
            "message": tool_result(call_id, name, content, error, ms(self.time)),
        }
        node = Node(self.next_id(), fields, self.path, self.lineno)
        self.nodes.append(node)
        at = self.position_after(call[0]) if call is not None else None
        if at is None:
            self.line.append(node)
        else:
            self.line.insert(at, node)
        if call is not None:
            self.last_result[call[0].id] = node

    def position_after(self, message: Node) -> int | None:
        """Where a result of ``message`` goes on the line: after it and its results so far."""
        target = self.last_result.get(message.id, message)
        for i in range(len(self.line) - 1, -1, -1):
            if self.line[i] is target:
                return i + 1
        if target is not message:  # its last result was rolled back: try the message
            for i in range(len(self.line) - 1, -1, -1):
                if self.line[i] is message:
                    return i + 1
        return None


def _is_turn_start(node: Node) -> bool:
    message = node.fields.get("message")
    if node.fields.get("type") != "message" or not isinstance(message, dict):
        return False
    if message.get("role") != "user":
        return False
    texts = [b.get("text", "") for b in message.get("content", ()) if b.get("type") == "text"]
    first = texts[0].lstrip() if texts else ""
    return not first.startswith(_INJECTED)


def _image(url: object) -> dict[str, Any]:
    """A ``data:`` URL as a Pi image block; any other reference as text."""
    if isinstance(url, str) and url.startswith("data:") and "," in url:
        head, data = url[5:].split(",", 1)
        mime = head.split(";", 1)[0] or "image/png"
        if head.endswith(";base64"):
            return {"type": "image", "data": data, "mimeType": mime}
    return {"type": "text", "text": f"[image: {url}]"}


def _usage(last: dict[str, Any]) -> dict[str, Any]:
    def count(key: str) -> int:
        value = last.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    cached = count("cached_input_tokens")
    total = count("total_tokens") or count("input_tokens") + count("output_tokens")
    return {
        "input": max(count("input_tokens") - cached, 0),
        "output": count("output_tokens"),
        "cacheRead": cached,
        "cacheWrite": 0,
        "totalTokens": total,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
