"""Generated conversations for the provider tests, and the pi-ai reference that judges them.

One generator serves two drivers: a seeded :class:`random.Random` (hundreds of fixed cases
per run, batched through one Node process) and Hypothesis (``cases()``, which shrinks a
failure to a small conversation).  The conversations mix same-model and cross-model turns,
thinking with and without signatures (JSON reasoning items, OpenRouter details, base64,
redacted), parallel, orphaned and renamed tool calls, tool errors with images, aborted and
errored turns, long and odd ids, and unicode including unpaired surrogates.
"""

from __future__ import annotations

import base64
import json
import random
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import strategies as st

from tests.helpers import missing

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "pi-ai"
PIN = "1.6.0"
PACKAGE = CACHE / "node_modules" / "@earendil-works" / "pi-ai"
HARNESS = Path(__file__).resolve().parent / "providers" / "pi_ai_reference.mjs"
BODY_KEYS = ("messages", "input", "system", "contents", "systemInstruction", "tools")

T = TypeVar("T")

# (api, provider, model, reasoning, images): targets that exercise every provider rule.
TARGETS: list[tuple[str, str, str, bool, bool]] = [
    ("openai-completions", "openai", "gpt-5", True, True),
    ("openai-completions", "openai", "gpt-4o-mini", False, False),
    ("openai-completions", "openrouter", "anthropic/claude-sonnet-4.5", True, True),
    ("openai-completions", "openrouter", "openai/gpt-5", True, True),
    ("openai-completions", "deepseek", "deepseek-reasoner", True, False),
    ("openai-completions", "opencode-go", "kimi-k2", True, True),
    ("openai-completions", "groq", "llama-3.3-70b", False, True),
    ("openai-responses", "openai", "gpt-5", True, True),
    ("openai-responses", "openai", "gpt-4.1", False, False),
    ("openai-responses", "openai-codex", "gpt-5-codex", True, True),
    ("openai-responses", "opencode", "gpt-5", True, True),
    ("openai-responses", "github-copilot", "gpt-5", True, True),
    ("openai-responses", "xai", "grok-4", True, True),
    ("anthropic-messages", "anthropic", "claude-sonnet-4-5", True, True),
    ("anthropic-messages", "anthropic", "claude-3-5-haiku", False, False),
    ("anthropic-messages", "openrouter", "anthropic/claude-sonnet-4.5", True, True),
    ("google-generative-ai", "google", "gemini-2.5-pro", True, True),
    ("google-generative-ai", "google", "gemini-2.5-flash", True, False),
    ("google-generative-ai", "google", "gemini-3-pro-preview", True, True),
    ("google-generative-ai", "google", "gemini-live-3.1-flash", True, True),
    ("google-generative-ai", "google", "claude-sonnet-4-5", True, True),
    ("google-generative-ai", "google", "gpt-oss-120b", True, True),
]
# Where assistant messages come from: every target, plus hosts never targeted.
SOURCES: list[tuple[str, str, str]] = [(a, p, m) for a, p, m, _, _ in TARGETS] + [
    ("bedrock-converse-stream", "amazon-bedrock", "claude-sonnet-4-5"),
    ("mistral-conversations", "mistral", "mistral-large"),
    ("openai-completions", "openai", "gpt-5"),
]

TEXTS = [
    "",
    " ",
    "\n\t",
    "\xa0",  # NBSP: blank for JavaScript
    "\u3000\ufeff",
    "\x1c",  # not blank for JavaScript (Python's strip would remove it)
    "\x1f\x1e",
    "hello",
    "Hello, world!",
    "multi\nline\r\ntext",
    "émoji 😀 and 中文",
    "cut emoji \ud83d end",  # an unpaired high surrogate
    "\ude00 lone low",
    'tab\tquote"back\\slash',
    "\u2028\u2029 separators",
    "(image omitted: model does not support images)",
    "(tool image omitted: model does not support images)",
    "x" * 300,
]
IDS = [
    "call_1",
    "call_2",
    "toolu_01ABCdef",
    "call_abc|fc_123",
    "call_abc|rs_999",
    "call_x|fc_" + "Q" * 80 + "+/=",
    "call_Y|" + "a" * 450,
    "weird id!@#$",
    "emoji😀id",
    "a" * 70,
    "b" * 41,
    "c|d|e",
    "|fc_only",
    "tail___|fc_x__",
    "",
    "call_\ud83d",
]
B64 = ["QUJD", "c2lnbmF0dXJl", "c2ln", "bad sig", "YWJj=", "AAAA" * 20, "a-_b"]


def _reasoning_item(chooser: Chooser) -> str:
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": "rs_" + chooser.choice(["1", "abc", "x" * 70]),
        "summary": [{"type": "summary_text", "text": chooser.choice(TEXTS)}],
    }
    if chooser.boolean():
        item["encrypted_content"] = chooser.choice(B64)
    return json.dumps(item)


def _openrouter_details(chooser: Chooser) -> str:
    kinds = [
        {
            "type": "reasoning.text",
            "text": "step",
            "signature": None,
            "format": "anthropic-claude-v1",
        },
        {"type": "reasoning.summary", "summary": "sum", "index": 0},
        {"type": "reasoning.encrypted", "data": "enc", "id": "r1"},
        {"type": "reasoning.unknown", "x": 1},
        {"type": "reasoning.text", "text": 3},
    ]
    return json.dumps([chooser.choice(kinds) for _ in range(chooser.integer(0, 3))])


def _thinking_signature(chooser: Chooser, api: str) -> Any:
    if api == "openai-responses":
        return chooser.choice([None, "", _reasoning_item(chooser)])
    return chooser.choice(
        [
            None,
            "",
            "  ",
            "reasoning",
            "reasoning_content",
            "reasoning_text",
            "other_field",
            _openrouter_details(chooser),
            *B64,
        ]
    )


def _text_signature(chooser: Chooser) -> Any:
    return chooser.choice(
        [
            None,
            "",
            "msg_abc",
            json.dumps({"v": 1, "id": "msg_1", "phase": "commentary"}),
            json.dumps({"v": 1, "id": "msg_2", "phase": "final_answer"}),
            json.dumps({"v": 1, "id": "msg_3", "phase": "other"}),
            json.dumps({"v": 1, "id": ""}),
            json.dumps({"v": 2, "id": "msg_4"}),
            "{not json",
            "msg_" + "z" * 70,
            *B64[:3],
        ]
    )


def _json_value(chooser: Chooser, depth: int = 0) -> Any:
    kind = chooser.integer(0, 9 if depth < 2 else 5)
    if kind == 0:
        return chooser.choice([None, True, False])
    if kind == 1:
        return chooser.choice([0, 1, -7, 2**53 + 1, 10**21, 123456789])
    if kind == 2:
        return chooser.choice([1.0, 100.0, 1e-7, 1e21, 0.1, -2.5e-10, 1.5e300, 123.456, -0.0])
    if kind in (3, 4, 5):
        return chooser.choice([*TEXTS, "\x00\x07\x0b", "key"])
    if kind in (6, 7):
        return [_json_value(chooser, depth + 1) for _ in range(chooser.integer(0, 3))]
    keys = ["b", "a", "10", "2", "01", "4294967295", "-1", "1.5", "é", "😀", "", "0"]
    return {
        chooser.choice(keys): _json_value(chooser, depth + 1) for _ in range(chooser.integer(0, 4))
    }


def _arguments(chooser: Chooser) -> Any:
    value = _json_value(chooser, 1)
    if chooser.integer(0, 3) and not isinstance(value, dict):
        value = {"path": value, "10": 1.0, "n": chooser.choice([1e-7, 7.0, 2**60])}
    return value


def _image(chooser: Chooser) -> dict[str, Any]:
    return {
        "type": "image",
        "data": chooser.choice(["iVBORw0K", "R0lGODlh"]),
        "mimeType": "image/png",
    }


def _text_block(chooser: Chooser) -> dict[str, Any]:
    return {"type": "text", "text": chooser.choice(TEXTS)}


def _user(chooser: Chooser) -> dict[str, Any]:
    if chooser.integer(0, 2) == 0:
        content: Any = chooser.choice(TEXTS)
    else:
        content = [
            _image(chooser) if chooser.integer(0, 2) == 0 else _text_block(chooser)
            for _ in range(chooser.integer(0, 4))
        ]
    if chooser.integer(0, 15) == 0:
        content = None
    return {"role": "user", "content": content, "timestamp": 1}


def _system(chooser: Chooser) -> dict[str, Any]:
    """A Pi 1.6 system message: a prompt patch, sections and tool changes."""
    msg: dict[str, Any] = {"role": "system", "timestamp": 0}
    msg["content"] = chooser.choice(
        ["", "Base prompt.", "Later \ud83d note", [_text_block(chooser), _image(chooser)], []]
    )
    if chooser.boolean():
        names = ["preamble", "tools", "10", "2", "skills"]
        msg["sections"] = {
            chooser.choice(names): chooser.choice([None, "", "S text", "<tools>x</tools>"])
            for _ in range(chooser.integer(0, 3))
        }
    if chooser.boolean():
        msg["toolsAdded"] = [
            {"name": name, "description": "d " + name, "parameters": chooser.choice(SCHEMAS)}
            for name in chooser.choice([["read"], ["bash", "read"], ["grep"]])
        ]
    if chooser.integer(0, 2) == 0:
        msg["toolsRemoved"] = [{"name": chooser.choice(["read", "bash", "nope"])}]
    return msg


def _assistant(chooser: Chooser, state: dict[str, Any]) -> dict[str, Any]:
    api, provider, model = chooser.choice(state["sources"])
    content: list[dict[str, Any]] = []
    for _ in range(chooser.integer(0, 5)):
        kind = chooser.integer(0, 5)
        if kind in (0, 1):
            block = _text_block(chooser)
            signature = _text_signature(chooser)
            if api == "google-generative-ai":
                signature = chooser.choice([None, *B64])
            if signature is not None:
                block["textSignature"] = signature
        elif kind == 2:
            block = {"type": "thinking", "thinking": chooser.choice(TEXTS)}
            signature = _thinking_signature(chooser, api)
            if signature is not None:
                block["thinkingSignature"] = signature
            if chooser.integer(0, 6) == 0 and api != "openai-responses":
                block["redacted"] = True
        else:
            call_id = chooser.choice(IDS)
            if api == "openai-responses" and chooser.boolean():
                call_id = f"call_{state['n']}|fc_{state['n']}"
            state["n"] += 1
            block = {
                "type": "toolCall",
                "id": call_id,
                "name": chooser.choice(["read", "bash", "edit", "web_search"]),
                "arguments": _arguments(chooser),
            }
            if chooser.integer(0, 3) == 0:
                block["thoughtSignature"] = chooser.choice(
                    [*B64, json.dumps({"type": "reasoning.encrypted", "id": "r9", "data": "enc"})]
                )
            if chooser.integer(0, 5) == 0:
                block["namespace"] = "ns"
        content.append(block)
    stop = chooser.choice(["stop", "toolUse", "toolUse", "length", "error", "aborted"])
    return {
        "role": "assistant",
        "content": content,
        "api": api,
        "provider": provider,
        "model": model,
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": stop,
        "timestamp": 2,
    }


def _results(chooser: Chooser, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for call in calls:
        if chooser.integer(0, 4) == 0:
            continue  # orphaned: pi-ai adds a synthetic result
        content: list[dict[str, Any]] = []
        for _ in range(chooser.integer(0, 3)):
            content.append(_image(chooser) if chooser.integer(0, 2) == 0 else _text_block(chooser))
        out.append(
            {
                "role": "toolResult",
                "toolCallId": call["id"] if chooser.integer(0, 8) else chooser.choice(IDS),
                "toolName": call["name"],
                "content": content,
                "isError": chooser.boolean(),
                "timestamp": 3,
            }
        )
    if chooser.integer(0, 3) == 0:
        out.reverse()
    return out


def conversation(chooser: Chooser) -> dict[str, Any]:
    """One generated payload case: a target, a system prompt, tools and a conversation."""
    # the API first, so each gets a quarter of the cases whatever its number of targets
    api = chooser.choice(sorted({t[0] for t in TARGETS}))
    api, provider, model, reasoning, images = chooser.choice([t for t in TARGETS if t[0] == api])
    sources = list(SOURCES)
    # Same-model turns must be common: weigh the target in.
    sources += [(api, provider, model)] * 6
    state: dict[str, Any] = {"sources": sources, "n": 0}
    messages: list[dict[str, Any]] = []
    for _ in range(chooser.integer(0, 8)):
        roll = chooser.integer(0, 12)
        if roll == 12:
            # a role pi-ai does not know: passed along, counted by Responses' msg_pi ids
            messages.append({"role": "bashExecution", "command": "ls", "content": "x"})
        elif roll >= 10:
            messages.append(_system(chooser))
        elif roll < 3:
            messages.append(_user(chooser))
        else:
            msg = _assistant(chooser, state)
            messages.append(msg)
            calls = [b for b in msg["content"] if b["type"] == "toolCall"]
            if calls and chooser.integer(0, 4):
                messages.extend(_results(chooser, calls))
    for msg in messages:
        # hand-made and old messages lack optional fields now and then
        if chooser.integer(0, 9) == 0:
            optional = {
                "user": ["timestamp", "content"],
                "assistant": ["api", "provider", "model", "usage", "stopReason", "timestamp"],
                "toolResult": ["isError", "toolName", "timestamp"],
                "system": ["timestamp"],  # pi-ai fails on a system message without content
                "bashExecution": ["content"],
            }[msg["role"]]
            msg.pop(chooser.choice(optional), None)
        for block in msg.get("content") or ():
            is_image = isinstance(block, dict) and block.get("type") == "image"
            if is_image and chooser.integer(0, 9) == 0:
                block.pop(chooser.choice(["mimeType", "data"]))
    tools = [
        {
            "name": name,
            "description": chooser.choice(["Read a file", "Run ✓", ""]),
            "parameters": chooser.choice(SCHEMAS),
        }
        for name in ["read", "bash", "edit"][: chooser.integer(0, 3)]
    ]
    return {
        "kind": "payload",
        "api": api,
        "provider": provider,
        "model": model,
        "reasoning": reasoning,
        "images": images,
        "system": chooser.choice([None, "", "You are helpful.", "Sys \ud83d prompt 😀", " "]),
        "tools": tools,
        "messages": messages,
    }


SCHEMAS: list[Any] = [
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    {"type": "object", "properties": {"mode": {"const": "fast"}, "n": {"const": 3}}},
    {"type": "object"},
    {
        "type": "object",
        "properties": {
            "const": {"type": "string", "const": "x", "default": {"const": "keep"}},
            "kind": {"anyOf": [{"const": "a"}, {"const": True}, {"const": 1.5, "enum": [1.5]}]},
        },
        "additionalProperties": False,
        "$defs": {"d": {"const": "y"}},
        "title": "dropped by anthropic",
    },
    {"type": "object", "properties": None, "required": None, "definitions": {}},
]


class Chooser:
    """The choices the generator makes, from a seeded ``random.Random``."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choice(self, options: Sequence[T]) -> T:
        return options[self.integer(0, len(options) - 1)]

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def boolean(self) -> bool:
        return self.integer(0, 1) == 1


class DrawChooser(Chooser):
    """The same choices drawn by Hypothesis (so failures shrink)."""

    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        self.draw = draw

    def integer(self, low: int, high: int) -> int:
        return int(self.draw(st.integers(low, high)))


@st.composite
def cases(draw: Callable[[st.SearchStrategy[Any]], Any]) -> dict[str, Any]:
    """Hypothesis strategy: generated payload cases."""
    return conversation(DrawChooser(draw))


def seeded_cases(count: int, seed: int = 0) -> list[dict[str, Any]]:
    """``count`` generated payload cases from a fixed seed."""
    rng = random.Random(seed)
    return [conversation(Chooser(rng)) for _ in range(count)]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


class Reference:
    """pi-ai 1.6.0 in one Node process: ``ask(case)`` gives its body or message."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            ["node", str(HARNESS), str(CACHE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.lock = threading.Lock()

    def ask(self, case: dict[str, Any]) -> dict[str, Any]:
        return self.ask_many([case])[0]

    def ask_many(self, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        with self.lock:
            # Write and read in a thread each way so a large batch cannot fill both pipes.
            lines = [json.dumps(c) + "\n" for c in cases]

            def write() -> None:
                assert self.proc.stdin is not None
                self.proc.stdin.writelines(lines)
                self.proc.stdin.flush()

            writer = threading.Thread(target=write)
            writer.start()
            out = [json.loads(self.proc.stdout.readline()) for _ in cases]
            writer.join()
        return out

    def close(self) -> None:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()


def install_reference() -> None:
    """Install pi-ai into ``.cache/pi-ai`` when missing; skip (outside CI) without Node."""
    if shutil.which("node") is None:
        missing("Node.js is not installed: the reference runs pi-ai in it")
    manifest = PACKAGE / "package.json"
    if manifest.is_file() and json.loads(manifest.read_text())["version"] == PIN:
        return
    if shutil.which("npm") is None:
        missing("npm is not installed: it is needed to fetch pi-ai")
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            "npm",
            "install",
            "--prefix",
            str(CACHE),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            f"@earendil-works/pi-ai@{PIN}",
        ],
        check=True,
        capture_output=True,
    )


def body_part(body: dict[str, Any]) -> dict[str, Any]:
    """The fields of a pi-ai body that carry the conversation (what payload returns)."""
    return {k: body[k] for k in BODY_KEYS if k in body}
