"""Open WebUI exports (``chat-export-*.json``): every branch kept; what becomes what is
described in :mod:`ptree.formats.chatgpt`, which reads the same kind of tree.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ._chat_export import (
    Conversation,
    ExportFormat,
    assistant,
    custom_message,
    need_mapping,
    text_block,
    to_seconds,
    user,
)
from ._common import ImportedSession, Report, only, parse_json

__all__ = ["FORMAT", "read", "sessions"]

FORMAT = "openwebui"


# ------------------------------------------------------------------ Open WebUI


# Open WebUI writes reasoning and tool calls into an answer's text as <details> blocks,
# attribute values HTML-escaped (so a value holds no '"' and no '>').  A reasoning
# block may be cut off (a stopped answer), so it may run to the end of the text.
_DETAILS = re.compile(r"<details\b([^>]*)>(.*?)(</details>|\Z)", re.DOTALL)
_ATTRIBUTE = re.compile(r'([\w-]+)="([^"]*)"')
_SUMMARY = re.compile(r"^\s*<summary>(.*?)</summary>", re.DOTALL)
#: The attributes a tool call becomes (the rest are kept in the result's details).
_CALL_ATTRIBUTES = frozenset({"type", "id", "name", "arguments", "result", "done"})
_KEPT = (
    ("sources", "sources"),
    ("citations", "citations"),
    ("statusHistory", "statusHistory"),
    ("error", "error"),
    ("usage", "usage"),
    ("done", "done"),
)

# A step of an answer: its assistant blocks, then the results of the calls among them.
_Step = tuple[list[dict[str, Any]], list[dict[str, Any]]]


def _unquote(block: str) -> str:
    """The reasoning inside a ``<details type="reasoning">`` block: its summary line
    dropped and the ``> `` quoting Open WebUI adds to every line removed."""
    body = _SUMMARY.sub("", block, count=1).strip("\n")
    lines = []
    for line in body.split("\n"):
        if line.startswith("> "):
            line = line[2:]
        elif line.startswith(">"):
            line = line[1:]
        lines.append(line)
    return "\n".join(lines).strip()


def _json_attribute(value: str) -> Any:
    """An attribute's JSON value (Open WebUI writes ``html.escape(json.dumps(v))``), or
    its text when it is not JSON."""
    text = html.unescape(value)
    try:
        return parse_json(text)
    except ValueError:
        return text


def _as_text(value: Any) -> str:
    """A tool's output as the text of a result: a string as it is, else its JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _arguments(value: str) -> dict[str, Any]:
    """A call's arguments: an object, also when written as a JSON string of one."""
    args = _json_attribute(value)
    if isinstance(args, str):
        with contextlib.suppress(ValueError):  # a plain string argument
            args = parse_json(args)
    if isinstance(args, dict):
        return args
    return {} if args in ("", None) else {"input": args}


def _tool_call(
    attributes: dict[str, str], body: str, number: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A ``<details type="tool_calls">`` block with its attributes as a Pi toolCall block
    and the content of its toolResult message."""
    call_id = html.unescape(attributes.get("id", "")) or f"call-{number}"
    name = html.unescape(attributes["name"])
    result = _json_attribute(attributes["result"])
    details: dict[str, Any] = {
        key: _json_attribute(value)
        for key, value in attributes.items()
        if key not in _CALL_ATTRIBUTES and value
    }
    summary = _SUMMARY.match(body)
    rest = body[summary.end() :] if summary else body
    if summary is not None and summary.group(1).strip():
        details["summary"] = summary.group(1).strip()
    if rest.strip():
        details["body"] = rest.strip()
    out: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [
            text_block(
                result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
            )
        ],
        "isError": False,
    }
    if details:
        out["details"] = {"openwebui": details}
    call = {
        "type": "toolCall",
        "id": call_id,
        "name": name,
        "arguments": _arguments(attributes.get("arguments", "")),
    }
    return call, out


def _text_steps(text: str, report: Callable[[str], None], where: str) -> list[_Step]:
    """An answer's text split into steps: reasoning blocks as thinking, tool-call blocks
    that carry their call (``name`` and ``result`` attributes) as toolCall blocks with
    their results, the rest as text.  Cost: O(length of the text)."""
    steps: list[_Step] = [([], [])]
    at = 0
    calls = 0
    for found in _DETAILS.finditer(text):
        attributes = dict(_ATTRIBUTE.findall(found.group(1)))
        kind = attributes.get("type")
        closed = bool(found.group(3))
        is_call = kind == "tool_calls" and closed and "name" in attributes
        if is_call and "result" not in attributes:
            is_call = False
        if kind == "tool_calls" and not is_call:
            report(f"{where}: a tool call without its name and result kept as text")
        if kind != "reasoning" and not is_call:
            continue  # stays in the text
        before = text[at : found.start()].strip()
        blocks, results = steps[-1]
        if before or not is_call:
            if results:
                blocks, results = [], []
                steps.append((blocks, results))
            if before:
                blocks.append(text_block(before))
        if is_call:
            calls += 1
            call, result = _tool_call(attributes, found.group(2), calls)
            blocks.append(call)
            results.append(result)
        else:
            blocks.append({"type": "thinking", "thinking": _unquote(found.group(2))})
        at = found.end()
    rest = text[at:].strip() if at else text
    blocks, results = steps[-1]
    if rest or not blocks:
        if results:
            blocks, results = [], []
            steps.append((blocks, results))
        blocks.append(text_block(rest))
    return steps


def _output_steps(output: list[Any], report: Callable[[str], None], where: str) -> list[_Step]:
    """The steps of a structured ``output`` (newer versions): ``reasoning`` items as
    thinking, ``message`` items as text, ``function_call`` items as toolCall blocks
    with their ``function_call_output`` as results.  Cost: O(size of the output)."""
    steps: list[_Step] = [([], [])]
    results_of: dict[str, dict[str, Any]] = {}
    for item in output:
        if isinstance(item, Mapping) and item.get("type") == "function_call_output":
            call_id = item.get("call_id")
            if isinstance(call_id, str):
                results_of[call_id] = dict(item)
    for i, item in enumerate(output):
        if not isinstance(item, Mapping):
            report(f"{where}.output[{i}]: not an object, left out")
            continue
        itype = item.get("type")
        if itype == "function_call_output" and item.get("call_id") in results_of:
            continue
        blocks, results = steps[-1]
        if itype == "function_call":
            call_id = item.get("call_id") or item.get("id") or f"call-{i}"
            name = item.get("name")
            args = item.get("arguments")
            call_id = str(call_id)
            blocks.append(
                {
                    "type": "toolCall",
                    "id": call_id,
                    "name": name if isinstance(name, str) and name else "unknown",
                    "arguments": _arguments(args)
                    if isinstance(args, str)
                    else (args if isinstance(args, dict) else {}),
                }
            )
            done = results_of.get(call_id)
            value = done.get("output") if done is not None else None
            results.append(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": blocks[-1]["name"],
                    "content": [
                        text_block(
                            value
                            if isinstance(value, str)
                            else json.dumps(value, ensure_ascii=False)
                        )
                    ],
                    "isError": done is None,
                }
            )
            if done is None:
                report(f"{where}.output[{i}]: a call without its output (its result says so)")
                results[-1]["content"] = [text_block("(no output was recorded for this call)")]
            continue
        parts = [
            p.get("text")
            for key in ("summary", "content")
            for p in (item.get(key) or ())
            if isinstance(p, Mapping)
        ]
        joined = "\n".join(t for t in parts if isinstance(t, str))
        if results:
            blocks, results = [], []
            steps.append((blocks, results))
        if itype == "reasoning":
            blocks.append({"type": "thinking", "thinking": joined})
        elif itype == "message":
            if joined:
                blocks.append(text_block(joined))
        else:
            report(f"{where}.output[{i}]: a {itype!r} item kept as text")
            blocks.append(text_block(json.dumps(item, ensure_ascii=False)))
    return steps


def _answer(
    message: Mapping[str, Any], text: str, seconds: float, report: Callable[[str], None], where: str
) -> list[dict[str, Any]]:
    """An assistant message as entries: one assistant message per step of the answer,
    each followed by the results of its tool calls."""
    output = message.get("output")
    steps = _output_steps(output, report, where) if isinstance(output, list) and output else []
    if not any(blocks for blocks, _ in steps):
        steps = _text_steps(text, report, where)
    model = message.get("model")
    made: list[dict[str, Any]] = []
    for i, (blocks, results) in enumerate(steps):
        fields = assistant(
            blocks,
            seconds,
            api="openwebui-export",
            provider="openwebui",
            model=model if isinstance(model, str) and model else "unknown",
        )
        if results:
            fields["message"] = {**fields["message"], "stopReason": "toolUse"}
        if i == 0:
            kept = {
                name: message[key]
                for key, name in _KEPT
                if key in message and message[key] not in (None, [], {})
            }
            if kept:
                fields["openwebui"] = kept
        made.append(fields)
        for result in results:
            made.append(
                {
                    "type": "message",
                    "timestamp": fields["timestamp"],
                    "message": {**result, "timestamp": fields["message"]["timestamp"]},
                }
            )
    last = made[-1]
    if last["message"]["role"] == "assistant":
        if message.get("done") is False:
            last["message"] = {**last["message"], "stopReason": "aborted"}
        elif message.get("error"):
            last["message"] = {
                **last["message"],
                "stopReason": "error",
                "errorMessage": str(message["error"])[:2000],
            }
    return made


def _openwebui_fields(
    message: Mapping[str, Any], default_time: float, report: Callable[[str], None], where: str
) -> dict[str, Any] | list[dict[str, Any]] | None:
    role = message.get("role")
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    if isinstance(content, list):  # some versions keep OpenAI-style content parts
        text = "\n".join(
            p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)
        )
        others = sum(
            1 for p in content if not (isinstance(p, Mapping) and isinstance(p.get("text"), str))
        )
        if others:
            report(f"{where}.content: {others} part(s) without text left out")
    seconds = to_seconds(message.get("timestamp"))
    seconds = default_time if seconds is None else seconds
    if role == "user":
        return user(text, seconds)
    if role == "assistant":
        made = _answer(message, text, seconds, report, where)
        return made[0] if len(made) == 1 else made
    if not text.strip():
        return None
    return custom_message(
        f"openwebui.{role if isinstance(role, str) else 'system'}", text, seconds, display=False
    )


def _openwebui_conversation(
    item: Mapping[str, Any], path: object, where: str, number: int, report: Report
) -> Conversation:
    chat = need_mapping(item.get("chat", item), path, f"{where}.chat")
    history = need_mapping(chat.get("history"), path, f"{where}.chat.history")
    messages = need_mapping(history.get("messages"), path, f"{where}.chat.history.messages")
    conv_id = item.get("id") or chat.get("id")
    conv_id = conv_id if isinstance(conv_id, str) and conv_id else str(number)
    title = item.get("title") or chat.get("title")
    title = title if isinstance(title, str) and title else None
    created = to_seconds(item.get("created_at"))
    if created is None:
        created = to_seconds(chat.get("timestamp"))
    if created is None:
        times = [
            to_seconds(m.get("timestamp")) for m in messages.values() if isinstance(m, Mapping)
        ]
        created = min((t for t in times if t is not None), default=0.0)
    return Conversation(
        conv_id,
        title,
        created,
        messages,
        f"{where}.chat.history.messages",
        ("parentId", "childrenIds"),
        lambda message, at: _openwebui_fields(message, created, report, at),
        history.get("currentId"),
    )


_EXPORT = ExportFormat(
    FORMAT, "chats", lambda d: "chat" in d or "history" in d, _openwebui_conversation
)


def sessions(
    src: str | os.PathLike[str] | Any,
    *,
    on_report: Report | None = None,
    strict: bool = False,
    cwd: str | None = None,
) -> Iterator[ImportedSession]:
    """Read an Open WebUI chat export: one session per chat.

    The export is a list of chats (``{"id", "title", "chat": {"history":
    {"messages": {id: {"parentId", "childrenIds", "role", "content",
    "timestamp", "model"?}}, "currentId"}}, "created_at"}``), or one chat.
    Every branch is kept; the leaf is ``currentId``.  The file is read and parsed
    before this returns; each chat is converted as the iterator reaches it.

    Cost: O(total number of messages).

    Args:
        src: the export's path, or its parsed JSON.
        on_report: called with one line for each chat skipped, and each part of a
            message kept only as text (default: a
            :class:`~ptree.pi.SessionFileWarning`).
        strict: a broken chat stops the import (by default it is skipped and
            reported, unless no chat can be read).
        cwd: the working directory written in each header (default: this one).

    Raises:
        ImportFormatError: (a ``ValueError``) not JSON, or not an Open WebUI export.
        OSError: the file cannot be read.

    >>> chat = {"id": "c1", "title": "Hi", "created_at": 0, "chat": {"history": {
    ...     "currentId": "m2", "messages": {
    ...         "m1": {"id": "m1", "parentId": None, "childrenIds": ["m2"],
    ...                "role": "user", "content": "hello", "timestamp": 1},
    ...         "m2": {"id": "m2", "parentId": "m1", "childrenIds": [],
    ...                "role": "assistant", "content": "hi!", "timestamp": 2,
    ...                "model": "llama3"}}}}}
    >>> [s] = sessions([chat], cwd="/")
    >>> s.filename, s.tree.leaf.message["model"], len(s.tree)
    ('hi-c1.jsonl', 'llama3', 3)
    """
    return _EXPORT.sessions(src, on_report=on_report, strict=strict, cwd=cwd)


def read(src: str | os.PathLike[str] | Any, **options: Any) -> ImportedSession:
    """The one chat of an export: :func:`sessions` (strict), which takes the same options.

    Cost: O(total number of messages), as :func:`sessions`: every chat of the export is
    converted (to tell one from several).

    Args:
        src: the export's path, or its parsed JSON (as :func:`sessions` takes it).
        **options: the keyword options of :func:`sessions` other than ``strict``.

    Raises:
        ImportFormatError: as :func:`sessions`, or the export holds no chat or several.
        OSError: the file cannot be read.
    """
    return only(sessions(src, strict=True, **options), src)
