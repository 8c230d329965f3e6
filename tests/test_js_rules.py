"""JavaScript's rules (``ptree.js``) against JavaScript itself, and their one owner.

- ``template``, ``trim``, ``stringify``, ``number`` and ``utf16_len`` give, on hand-picked
  and seeded JSON values, what Node gives for ``${v}``, ``v.trim()``,
  ``JSON.stringify(v)`` and ``v.length``;
- a session whose ``bashExecution`` has a 401-digit ``exitCode`` gives, through
  ``build_context``, ``to_provider_messages`` and every provider body, what Pi 0.73.1,
  Pi 1.6 and pi-ai 1.6.0 give (JavaScript reads the number as ``Infinity``);
- no module of ``ptree/`` but ``ptree/js.py`` implements one of these rules again.
"""

from __future__ import annotations

import ast
import json
import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ptree import build_context, load, thaw
from ptree.context import to_provider_messages
from ptree.js import number, stringify, template, trim, utf16_len
from ptree.providers import payload

from .provider_cases import Reference, body_part, install_reference
from .test_context_pi_fixtures import PI_PACKAGE, run_pi
from .test_pi16 import PI16
from .test_pi16 import run as run_pi16

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "ptree"
OWNER = PACKAGE / "js.py"
TS = "2026-12-03T10:00:00.000Z"
BIG = 10**400 + 7  # 401 digits: no double holds it, JavaScript reads Infinity


def _require_node(*packages: Path) -> None:
    missing = shutil.which("node") is None or not all(
        (p / "package.json").is_file() for p in packages
    )
    if missing:
        reason = f"Node or a package is missing: {', '.join(map(str, packages))}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


# ----------------------------------------------------------------- the rules themselves

_NODE_RULES = r"""
const values = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = values.map((v) => ({
  template: `${v}`,
  json: JSON.stringify(v),
  trim: typeof v === "string" ? v.trim() : null,
  length: typeof v === "string" ? v.length : null,
}));
process.stdout.write(JSON.stringify(out));
"""

HAND_PICKED: list[Any] = [
    None,
    True,
    False,
    0,
    -0.0,
    1,
    -17,
    2**53,
    2**53 + 1,
    2**60,
    -(2**70),
    10**21,
    10**400,
    -(10**400),
    0.1,
    1e21,
    1e-7,
    123e-20,
    5e-324,
    1.7976931348623157e308,
    "",
    " \t\n",
    "\ufeff name \u3000",
    " \x1c \x85 ",
    "a😀b",
    "lone \ud83d surrogate",
    'quote " and \\ and \x00\x1f\u2028',
    [],
    [None],
    [1, None, [2.5, [True, None]], {}],
    [[], [[]]],
    {},
    {"b": 1.0, "10": [1e21, 1e-7], "2": "é\n", "01": None},
    {"4294967294": 1, "4294967295": 2, "a": {"z": [10**400]}},
]


def _seeded(count: int, seed: int) -> list[Any]:
    rng = random.Random(seed)
    leaves: list[Any] = [*HAND_PICKED[:20], "x", "ß", "\u2003", "😀", "\ud800"]

    def value(depth: int) -> Any:
        kind = rng.randrange(6 if depth < 4 else 3)
        if kind == 0:
            return rng.choice(leaves)
        if kind == 1:
            return rng.choice([rng.randint(-(2**64), 2**64), rng.uniform(-1e30, 1e30)])
        if kind == 2:
            return "".join(rng.choice(" \ta\u00a0\u3000\ufeff\x1c😀\ud83d") for _ in range(5))
        if kind in (3, 4):
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice(["a", "1", "07", "b"]): value(depth + 1) for _ in range(3)}

    return [value(0) for _ in range(count)]


@pytest.fixture(scope="module")
def node_rules() -> list[tuple[Any, dict[str, Any]]]:
    """What Node answers for the hand-picked values and 500 seeded ones."""
    if shutil.which("node") is None:
        if os.environ.get("CI"):
            pytest.fail("Node.js is missing under CI")
        pytest.skip("Node.js is not installed")
    values = HAND_PICKED + _seeded(500, seed=23)
    done = subprocess.run(
        ["node", "-e", _NODE_RULES],
        input=json.dumps(values),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return list(zip(values, json.loads(done.stdout), strict=True))


class TestRulesAgainstNode:
    """Each rule gives what JavaScript gives, value for value."""

    def test_template(self, node_rules: list[tuple[Any, dict[str, Any]]]) -> None:
        """``template(v)`` is ``${v}``."""
        for value, js in node_rules:
            assert template(value) == js["template"], value

    def test_stringify(self, node_rules: list[tuple[Any, dict[str, Any]]]) -> None:
        """``stringify(v)`` is ``JSON.stringify(v)``, character for character."""
        for value, js in node_rules:
            assert stringify(value) == js["json"], value

    def test_trim_and_length(self, node_rules: list[tuple[Any, dict[str, Any]]]) -> None:
        """``trim`` and ``utf16_len`` of strings are ``v.trim()`` and ``v.length``."""
        strings = [(v, js) for v, js in node_rules if isinstance(v, str)]
        assert len(strings) > 20
        for value, js in strings:
            assert (trim(value), utf16_len(value)) == (js["trim"], js["length"]), value

    def test_number_hand_written(self) -> None:
        """A few numbers as JavaScript writes them (written here by hand)."""
        assert [number(x) for x in (1e21, 1e20, 1e-6, 1e-7, -1.5, float("-inf"))] == [
            "1e+21",
            "100000000000000000000",
            "0.000001",
            "1e-7",
            "-1.5",
            "-Infinity",
        ]


# ------------------------------------------------------- a 401-digit exitCode, end to end


def _session(path: Path) -> Path:
    def e(i: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
        return {"type": "message", "id": i, "parentId": parent, "timestamp": TS, "message": message}

    header = {"type": "session", "version": 3, "id": "big", "timestamp": TS, "cwd": "/w"}
    records = [
        header,
        e("a1", None, {"role": "user", "content": "run it", "timestamp": 1}),
        e(
            "a2",
            "a1",
            {"role": "bashExecution", "command": "ls", "output": "out", "exitCode": BIG,
             "cancelled": False, "truncated": False, "timestamp": 2},
        ),
        e(
            "a3",
            "a2",
            {"role": "bashExecution", "command": ["x", BIG, None], "output": 2**60,
             "exitCode": -BIG, "timestamp": 3},
        ),
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


EXPECTED_BASH_TEXTS = [
    "Ran `ls`\n```\nout\n```\n\nCommand exited with code Infinity",
    "Ran `x,Infinity,`\n```\n1152921504606847000\n```\n\nCommand exited with code -Infinity",
]

TARGETS = [
    ("openai-completions", "openai", "gpt-5"),
    ("openai-responses", "openai", "gpt-5"),
    ("anthropic-messages", "anthropic", "claude-sonnet-4-5"),
    ("google-generative-ai", "google", "gemini-2.5-pro"),
]


class TestHugeExitCode:
    """A number no double holds is JavaScript's Infinity in every text Pi makes of it."""

    def test_provider_messages_hand_written(self, tmp_path: Path) -> None:
        """The file loads, keeps the integer, and its provider messages say Infinity."""
        tree = load(_session(tmp_path / "s.jsonl"))
        context = build_context(tree)
        assert context.messages[1]["exitCode"] == BIG
        for pi in ("0.73.1", "1.6"):
            llm = to_provider_messages(context.messages, pi=pi)
            assert [m["content"][0]["text"] for m in llm[1:]] == EXPECTED_BASH_TEXTS

    def test_same_as_pi_and_pi_ai(self, tmp_path: Path) -> None:
        """Pi 0.73.1's and Pi 1.6's convertToLlm, and pi-ai's body for every API."""
        _require_node(PI_PACKAGE, PI16)
        install_reference()
        path = _session(tmp_path / "s.jsonl")
        context = build_context(load(path))
        [[pi073]] = run_pi([{"file": str(path), "leaves": [None]}], tmp_path)
        [pi16] = run_pi16(PI16, [{"open": str(path)}])
        assert thaw(to_provider_messages(context.messages, pi="0.73.1")) == pi073["llm"]
        assert thaw(to_provider_messages(context.messages)) == pi16["context"]["llm"]
        reference = Reference()
        try:
            for api, provider, model in TARGETS:
                case = {"kind": "payload", "api": api, "provider": provider, "model": model,
                        "messages": pi16["context"]["llm"]}  # fmt: skip
                [answer] = reference.ask_many([case])
                ours = payload(context, api=api, provider=provider, model=model)
                assert ours == body_part(answer["body"]), api
        finally:
            reference.close()


# ------------------------------------------------------------------- one owner per rule

# What gives each rule away in source: a string only that rule writes, or its name.
_TELLTALE_STRINGS = {
    "[object Object]": "template text of an object",
    "Infinity": "number text of an infinite number",
    "e+": "number text with an exponent",
}
_TELLTALE_NAMES = {"js_json", "js_trim", "js_number", "_js_text", "utf16_len", "utf16_slice"}
_JS_SPACE = "\u1680"  # in the white-space table of String.prototype.trim, nowhere else


def _other_modules() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if p != OWNER]


def _telltales(path: Path) -> list[str]:
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in _TELLTALE_STRINGS:
                found.append(f"line {node.lineno}: {_TELLTALE_STRINGS[node.value]}")
            if _JS_SPACE in node.value:
                found.append(f"line {node.lineno}: JavaScript's white-space table (trim)")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Assign):
            names = (
                [node.name]
                if not isinstance(node, ast.Assign)
                else [t.id for t in node.targets if isinstance(t, ast.Name)]
            )
            found += [f"line {node.lineno}: defines {n}" for n in names if n in _TELLTALE_NAMES]
    return found


class TestOneOwner:
    """Template text, trim, number text and ``JSON.stringify`` exist only in ptree/js.py."""

    def test_the_owner_has_every_telltale(self) -> None:
        """The check can fail: the owner itself shows every sign it looks for."""
        text = OWNER.read_text(encoding="utf-8")
        assert all(s in text for s in _TELLTALE_STRINGS)
        assert "\\u1680" in text
        assert {"utf16_len", "utf16_slice"} <= set(dir(__import__("ptree.js").js))

    def test_no_second_implementation(self) -> None:
        """No other module of ptree/ writes one of these rules again."""
        found = {
            str(p.relative_to(PACKAGE.parent)): hits
            for p in _other_modules()
            if (hits := _telltales(p))
        }
        assert found == {}

    def test_a_copy_is_found(self, tmp_path: Path) -> None:
        """A module with a copy of the template rule is caught."""
        copy = tmp_path / "copy.py"
        copy.write_text('def f(v):\n    return "[object Object]" if isinstance(v, dict) else v\n')
        assert _telltales(copy) == ["line 2: template text of an object"]
