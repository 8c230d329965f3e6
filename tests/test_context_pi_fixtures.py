"""The context of real Pi sessions, and of random trees, is exactly what Pi computes.

Two kinds of check:

- the real recordings in ``shared/fixtures/pi`` give the numbers in their README (446
  messages starting with a ``compactionSummary``, 914 messages, the models and thinking
  levels), with no other tool needed;
- where Node and Pi's published package are installed (``.ci/run`` puts it in
  ``.cache/pi``), Pi's own ``buildSessionContext`` and ``convertToLlm`` run on the same
  files and on random trees, and their output must equal ptree's, field for field.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import ptree
from ptree import Context, SessionTree, build_context, thaw
from ptree.context import ModelRef, PiVersion, to_provider_messages
from tests.helpers import PI_FIXTURES, missing, require_shared

from .strategies import json_values, trees

ROOT = Path(__file__).resolve().parent.parent
TS = "2026-01-01T00:00:00.000Z"
PI_PACKAGE = ROOT / ".cache" / "pi" / "node_modules" / "@mariozechner" / "pi-coding-agent"

EXPECTED = {
    # file: (messages, first role, model, thinking level), from the fixtures' README
    "before-compaction.jsonl": (
        446,
        "compactionSummary",
        ModelRef("anthropic", "claude-opus-4-5"),
        "off",
    ),
    "large-session.jsonl": (914, "user", ModelRef("anthropic", "claude-sonnet-4-5"), "off"),
}


@pytest.fixture(scope="module")
def contexts(pi_fixtures_dir: Path) -> dict[str, Context]:
    """ptree's context of each real Pi file, at its leaf."""
    return {name: build_context(ptree.load(pi_fixtures_dir / name)) for name in EXPECTED}


@pytest.fixture(scope="module")
def pi_fixtures_dir() -> Path:
    """The shared folder of real Pi files (read-only)."""
    return require_shared(PI_FIXTURES)


class TestRealPiFiles:
    """The numbers Pi computes for its own recordings (fixtures README)."""

    @pytest.mark.parametrize("name", sorted(EXPECTED))
    def test_context_matches_pi(self, contexts: dict[str, Context], name: str) -> None:
        """Message count, first role, model and thinking level are Pi's."""
        count, first_role, model, thinking = EXPECTED[name]
        ctx = contexts[name]
        assert (len(ctx.messages), ctx.messages[0]["role"], ctx.model, ctx.thinking_level) == (
            count,
            first_role,
            model,
            thinking,
        )

    def test_before_compaction_keeps_the_latest_compaction(
        self, contexts: dict[str, Context], pi_fixtures_dir: Path
    ) -> None:
        """The summary is the second (latest) compaction's, with its tokensBefore."""
        lines = (pi_fixtures_dir / "before-compaction.jsonl").read_text().splitlines()
        compactions = [json.loads(x) for x in lines if '"type":"compaction"' in x]
        first = contexts["before-compaction.jsonl"].messages[0]
        assert (first["summary"], first["tokensBefore"]) == (
            compactions[-1]["summary"],
            compactions[-1]["tokensBefore"],
        )
        assert first["timestamp"] == ptree.context.iso_to_ms(compactions[-1]["timestamp"])

    def test_provider_messages(self, contexts: dict[str, Context]) -> None:
        """Every message of both files has a provider form; the summary becomes user text."""
        for name, ctx in contexts.items():
            out = to_provider_messages(ctx.messages)
            assert len(out) == len(ctx.messages), name
            assert {m["role"] for m in out} <= {"user", "assistant", "toolResult"}
        summary = to_provider_messages(contexts["before-compaction.jsonl"].messages)[0]
        assert summary["content"][0]["text"].startswith(ptree.context.COMPACTION_SUMMARY_PREFIX)

    def test_messages_are_the_stored_ones(self, contexts: dict[str, Context]) -> None:
        """large-session has no compaction: every message is a stored message, in order."""
        ctx = contexts["large-session.jsonl"]
        assert all(type(m) is ptree.FrozenDict for m in ctx.messages)
        assert json.loads(json.dumps(list(ctx.messages))) == thaw(ctx.messages)


# --------------------------------------------------------------------- against Pi itself

_NODE_SCRIPT = r"""
import { readFileSync } from "node:fs";
const [sessionManagerUrl, messagesUrl] = process.argv.slice(2);
const sm = await import(sessionManagerUrl);
const msgs = await import(messagesUrl);
const jobs = JSON.parse(readFileSync(0, "utf8"));
const out = [];
for (const job of jobs) {
    let entries = job.entries;
    if (job.file) {
        const all = sm.parseSessionEntries(readFileSync(job.file, "utf8"));
        sm.migrateSessionEntries(all);
        entries = all.filter((e) => e.type !== "session");
    }
    out.push(job.leaves.map((leaf) => {
        const ctx = sm.buildSessionContext(entries, leaf === null ? undefined : leaf);
        return { ...ctx, llm: msgs.convertToLlm(ctx.messages) };
    }));
}
process.stdout.write(JSON.stringify(out));
"""


def _pi_available() -> bool:
    return shutil.which("node") is not None and (PI_PACKAGE / "package.json").is_file()


@pytest.fixture
def pi_context_package() -> None:
    if not _pi_available():
        missing("Node and Pi's package (.cache/pi, set up by .ci/run) are absent")


needs_pi = pytest.mark.usefixtures("pi_context_package")


def run_pi(jobs: list[dict[str, Any]], tmp: Path) -> list[list[dict[str, Any]]]:
    """Pi's own buildSessionContext and convertToLlm, run by Node on each job."""
    script = tmp / "pi_context.mjs"
    script.write_text(_NODE_SCRIPT)
    dist = PI_PACKAGE / "dist" / "core"
    done = subprocess.run(
        [
            "node",
            str(script),
            (dist / "session-manager.js").as_uri(),
            (dist / "messages.js").as_uri(),
        ],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout, parse_int=_js_int)  # type: ignore[no-any-return]


def _js_int(text: str) -> int | float:
    """A JSON integer as JavaScript reads it: every number is a double, so integer text
    beyond 2**53 (how JavaScript prints a large double) stands for the nearest double."""
    value = int(text)
    return value if abs(value) <= 2**53 else float(text)


def assert_same_as_pi(
    ours: Context, pi: dict[str, Any], where: object = None, version: PiVersion = "0.73.1"
) -> None:
    """Messages, provider messages (as ``version`` makes them), model and thinking level
    agree field for field."""
    assert thaw(ours.messages) == pi["messages"], where
    assert thaw(to_provider_messages(ours.messages, pi=version)) == pi["llm"], where
    # Pi's model from an assistant message without provider/model has undefined fields
    # (absent in JSON): it names no model, which ptree says with None.
    provider, model_id = (pi["model"] or {}).get("provider"), (pi["model"] or {}).get("modelId")
    model = ModelRef(provider, model_id) if provider is not None and model_id is not None else None
    assert (ours.model, ours.thinking_level) == (model, pi["thinkingLevel"]), where


_any = json_values(3) | st.floats(allow_nan=False, allow_infinity=False)
_odd_messages = st.fixed_dictionaries(
    {"role": st.just("bashExecution")},
    optional=dict.fromkeys(
        (
            "command",
            "output",
            "exitCode",
            "cancelled",
            "truncated",
            "fullOutputPath",
            "excludeFromContext",
            "timestamp",
        ),
        _any,
    ),
) | st.fixed_dictionaries(
    {"role": st.just("custom")},
    optional={"content": _any, "customType": _any, "display": _any, "timestamp": _any},
)


@needs_pi
class TestAgainstPi:
    """ptree's two steps give what Pi's published code gives (Pi 0.73.1, run by Node)."""

    def test_real_files(self, pi_fixtures_dir: Path, tmp_path: Path) -> None:
        """Both real files: the whole context and its provider form equal Pi's."""
        names = sorted(EXPECTED)
        jobs = [{"file": str(pi_fixtures_dir / n), "leaves": [None]} for n in names]
        for name, (pi,) in zip(names, run_pi(jobs, tmp_path), strict=True):
            tree = ptree.load(pi_fixtures_dir / name)
            assert_same_as_pi(build_context(tree, pi="0.73.1"), pi)
            # No 1.6 feature in them: 1.6's meaning is the same.
            assert_same_as_pi(build_context(tree), pi, name, "1.6")

    def test_edge_cases(self, tmp_path: Path) -> None:
        """Hand-made paths at every entry: a leaf on a label or on a compaction, a
        compaction keeping from itself or from an older compaction, a blank branch
        summary, assistant messages naming no model, hidden custom messages, bash
        messages of every kind, a state change just before a compaction."""

        def e(i: str, parent: str | None, kind: str = "message", **fields: Any) -> dict[str, Any]:
            return {"type": kind, "id": i, "parentId": parent, "timestamp": TS, **fields}

        def msg(role: str, **fields: Any) -> dict[str, Any]:
            return {"role": role, "content": [{"type": "text", "text": role}], **fields}

        bash = {"command": "ls", "output": "x", "cancelled": False, "timestamp": 5}
        paths = [
            [
                e("1", None, message=msg("user")),
                e("L", "1", "label", targetId="1", label="x"),
                e("C", "L", "compaction", summary="s", firstKeptEntryId="C", tokensBefore=1),
                e("2", "C", message=msg("user")),
            ],
            [
                e("0", None, "model_change", provider="p", modelId="m"),
                e("1", "0", message=msg("assistant")),
                e("2", "1", message=msg("assistant", provider="x")),
                e("3", "2", "model_change", provider="q", modelId="n"),
                e("4", "3", message=msg("assistant", provider="a", model="b")),
            ],
            [
                e("1", None, message=msg("user")),
                e("B", "1", "branch_summary", fromId="1", summary="  "),
                e("B2", "B", "branch_summary", fromId="1", summary=""),
                e("M", "B2", "custom_message", customType="t", content="hi", display=False),
                e("t", "M", "thinking_level_change", thinkingLevel="high"),
                e("C1", "t", "compaction", summary="s1", firstKeptEntryId="t", tokensBefore=1),
                e("2", "C1", message=msg("user")),
                e("C2", "2", "compaction", summary="s2", firstKeptEntryId="C1", tokensBefore=2),
                e("C3", "C2", "compaction", summary="s3", firstKeptEntryId="9", tokensBefore=3),
            ],
            [
                e(
                    "1",
                    None,
                    message={
                        "role": "bashExecution",
                        **bash,
                        "exitCode": 0,
                        "truncated": True,
                        "fullOutputPath": "/p",
                    },
                ),
                e(
                    "2",
                    "1",
                    message={
                        "role": "bashExecution",
                        **bash,
                        "output": "",
                        "exitCode": None,
                        "excludeFromContext": False,
                    },
                ),
                e(
                    "3",
                    "2",
                    message={"role": "bashExecution", **bash, "exitCode": -1, "cancelled": True},
                ),
                e(
                    "4",
                    "3",
                    message={
                        "role": "bashExecution",
                        **bash,
                        "exitCode": 3,
                        "excludeFromContext": True,
                    },
                ),
                e("5", "4", message={"role": "mystery", "content": "x"}),
                e(
                    "6",
                    "5",
                    message={
                        "role": "custom",
                        "customType": "x",
                        "display": False,
                        "content": [{"type": "text", "text": "t"}],
                    },
                ),
            ],
        ]
        jobs = [{"entries": p, "leaves": [x["id"] for x in p]} for p in paths]
        for entries, per_leaf in zip(paths, run_pi(jobs, tmp_path), strict=True):
            tree = SessionTree.from_entries([ptree.entries.entry_from_json(x) for x in entries])
            for x, pi in zip(entries, per_leaf, strict=True):
                assert_same_as_pi(build_context(tree, x["id"], pi="0.73.1"), pi, x["id"])

    @settings(max_examples=8, phases=[Phase.explicit, Phase.reuse, Phase.generate])
    @given(st.lists(_odd_messages, min_size=40, max_size=40))
    def test_odd_message_fields(
        self, tmp_path_factory: pytest.TempPathFactory, batch: list[dict[str, Any]]
    ) -> None:
        """bashExecution and custom messages whose fields hold any JSON value (numbers,
        lists, objects, null, nothing): the provider text is Pi's, character for character."""
        entries = [
            {
                "type": "message",
                "id": str(i),
                "parentId": None if i == 0 else str(i - 1),
                "timestamp": TS,
                "message": m,
            }
            for i, m in enumerate(batch)
        ]
        (pi,) = run_pi(
            [{"entries": entries, "leaves": [entries[-1]["id"]]}], tmp_path_factory.mktemp("pi")
        )[0:1]
        tree = SessionTree.from_entries([ptree.entries.entry_from_json(x) for x in entries])
        assert_same_as_pi(build_context(tree, pi="0.73.1"), pi[0])

    # No shrinking: each step would run Node again; a failure prints the path instead.
    @settings(max_examples=4, phases=[Phase.explicit, Phase.reuse, Phase.generate])
    @given(st.lists(trees(max_steps=30), min_size=25, max_size=25))
    def test_random_trees(
        self, tmp_path_factory: pytest.TempPathFactory, batch: list[SessionTree]
    ) -> None:
        """Random trees of every kind, at every entry: ptree's context equals Pi's."""
        jobs = [
            {"entries": [e.to_json() for e in t.entries()], "leaves": list(t.ids())} for t in batch
        ]
        results = run_pi(jobs, tmp_path_factory.mktemp("pi"))
        for tree, per_leaf in zip(batch, results, strict=True):
            for leaf, pi in zip(tree.ids(), per_leaf, strict=True):
                where = [e.to_json() for e in tree.path(leaf)]
                assert_same_as_pi(build_context(tree, leaf, pi="0.73.1"), pi, where)

    @settings(
        max_examples=4,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        suppress_health_check=[HealthCheck.data_too_large],
    )
    @given(st.lists(trees(max_steps=20, pi16=True), min_size=10, max_size=10))
    def test_random_trees_with_pi16_kinds(
        self, tmp_path_factory: pytest.TempPathFactory, batch: list[SessionTree]
    ) -> None:
        """Trees holding Pi 1.6's kinds and shapes (usage entries, edits, system messages,
        checkpoints, contentless messages), read by Pi 0.73.1: ``pi="0.73.1"`` gives what
        0.73.1 gives, at every entry."""
        jobs = [
            {"entries": [e.to_json() for e in t.entries()], "leaves": list(t.ids())} for t in batch
        ]
        results = run_pi(jobs, tmp_path_factory.mktemp("pi"))
        for tree, per_leaf in zip(batch, results, strict=True):
            for leaf, pi in zip(tree.ids(), per_leaf, strict=True):
                where = [e.to_json() for e in tree.path(leaf)]
                assert_same_as_pi(build_context(tree, leaf, pi="0.73.1"), pi, where)


# ISO-like times, some out of range, in the family iso_to_ms claims to read as V8 does.
_two = st.integers(0, 99).map("{:02d}".format)
_zones = st.sampled_from(["", "Z", "z"]) | st.builds(
    "{}{:02d}{}{:02d}".format,
    st.sampled_from("+-"),
    st.integers(0, 25),
    st.sampled_from([":", ""]),
    st.integers(0, 61),
)


@st.composite
def _iso_like(draw: st.DrawFn) -> str:
    year = draw(
        st.integers(0, 9999).map("{:04d}".format)
        | st.builds("{}{:06d}".format, st.sampled_from("+-"), st.integers(0, 280_000))
    )
    if not draw(st.booleans()):
        # Date only: V8's fallback parser reads impossible dates its own way.
        parts = draw(st.lists(st.integers(1, 12).map("{:02d}".format), max_size=2))
        return "-".join([year, *parts]) if year != "-000000" else "2026"
    sep = draw(st.sampled_from("Tt "))
    if sep == " " and not ("0100" <= year <= "9999"):
        sep = "T"
    out = year + "".join(draw(st.lists(st.builds("-{}".format, _two), max_size=2)))
    out += f"{sep}{draw(_two)}:{draw(_two)}"
    if draw(st.booleans()):
        out += ":" + draw(_two)
        if draw(st.booleans()):
            out += "." + draw(st.text("0123456789", max_size=8))
    zone = draw(_zones)
    if sep == " " and zone[:1] in ("+", "-") and (int(zone[1:3]) > 23 or int(zone[-2:]) > 59):
        zone = "Z"  # V8's fallback parser does arithmetic on impossible offsets
    return out + zone


@needs_pi
class TestIsoToMsAgainstNode:
    """iso_to_ms equals V8's new Date(text).getTime() on ISO-like text, valid or not."""

    @settings(max_examples=5, phases=[Phase.explicit, Phase.reuse, Phase.generate])
    @given(st.lists(_iso_like(), min_size=400, max_size=400))
    def test_random_times(self, texts: list[str]) -> None:
        """Node's answer (TZ=UTC, so local time is UTC as in ptree) for each text."""
        script = (
            "const xs = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
            "process.stdout.write(JSON.stringify(xs.map((x) => new Date(x).getTime())));"
        )
        done = subprocess.run(
            ["node", "-e", script],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
            env={**os.environ, "TZ": "UTC"},
        )
        node = json.loads(done.stdout)
        wrong = [
            (t, n, ptree.context.iso_to_ms(t))
            for t, n in zip(texts, node, strict=True)
            if ptree.context.iso_to_ms(t) != n
        ]
        assert wrong == []
