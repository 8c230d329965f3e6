"""Cross-checks with Pi's own package (``@mariozechner/pi-coding-agent`` 0.73.1) via Node.js.

Both directions: files ptree writes are opened by Pi's ``SessionManager``, which must see
the same entries, labels, name and context as ptree; files Pi writes load in ptree with
the same entries, leaf and context as Pi shows.  The package lives in ``.cache/pi`` (put
there by ``.ci/run``); when Node.js is present but the package is not, the
``pi_package`` fixture installs it there itself.  The tests skip, saying why, only where
Node.js or npm is missing.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import ptree
from ptree import SessionHeader, SessionTree, SessionWriter, dump, load
from tests.helpers import missing

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "pi"
PACKAGE = CACHE / "node_modules" / "@mariozechner" / "pi-coding-agent"
PIN = "0.73.1"
SCRIPTS = Path(__file__).resolve().parent / "interop"
TS = "2026-01-01T00:00:00.000Z"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def pi_package() -> Path:
    """Pi's published package, installed into ``.cache/pi`` if it is not there yet."""
    if shutil.which("node") is None:
        missing("Node.js is not installed: the cross-checks run Pi's own package in it")
    if not (PACKAGE / "package.json").is_file():
        npm = shutil.which("npm")
        if npm is None:
            missing("npm is not installed: it is needed to fetch Pi's package")
        CACHE.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(CACHE),
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                f"@mariozechner/pi-coding-agent@{PIN}",
            ],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"npm could not install Pi's package into {CACHE}:\n{done.stderr}")
    version = json.loads((PACKAGE / "package.json").read_text())["version"]
    assert version == PIN, f"{PACKAGE} is version {version}, the tests pin {PIN}"
    return PACKAGE


def node(script: str, *args: object) -> Any:
    """Run one of the interop scripts and return the JSON it prints."""
    done = subprocess.run(
        ["node", str(SCRIPTS / script), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stderr}"
    return json.loads(done.stdout)


def pi_views(package: Path, files: list[Path], tmp: Path) -> list[dict[str, Any]]:
    """What Pi's SessionManager sees in each file (opened from a copy: Pi may rewrite)."""
    copies = []
    for i, f in enumerate(files):
        copy = tmp / f"pi-copy-{i}.jsonl"
        shutil.copyfile(f, copy)
        copies.append(copy)
    views: list[dict[str, Any]] = node("pi_read.mjs", package, *copies)
    return views


def plain(value: Any) -> Any:
    """A frozen value as plain JSON data."""
    return json.loads(json.dumps(value))


def ptree_context(tree: SessionTree) -> dict[str, Any]:
    """ptree's context in the shape of Pi's buildSessionContext result."""
    context = ptree.build_context(tree)
    model = context.model
    return {
        "messages": plain(list(context.messages)),
        "thinkingLevel": context.thinking_level,
        "model": None if model is None else {"provider": model.provider, "modelId": model.model_id},
    }


def assert_pi_sees(tree: SessionTree, view: dict[str, Any]) -> None:
    """Pi's view of a file ptree wrote matches the tree (leaf records aside, and the
    ``ptreeBatch`` mark of a multi-line commit, a field Pi keeps but ignores)."""
    entries = [
        {k: v for k, v in e.items() if k != "ptreeBatch"}
        for e in view["entries"]
        if e["type"] != "leaf"
    ]
    assert entries == [e.to_json() for e in tree.entries()]
    assert view["labels"] == tree.labels()
    assert view["name"] == tree.session_name
    assert view["context"] == ptree_context(tree)
    last = view["entries"][-1] if view["entries"] else None
    if last is not None and last["type"] == "leaf":
        # Pi's leaf is the record; its path runs through the record's parent, our leaf.
        assert view["leafId"] == last["id"]
        assert last["parentId"] == tree.leaf_id
    else:
        assert view["leafId"] == tree.leaf_id


def assert_ptree_sees(tree: SessionTree, view: dict[str, Any]) -> None:
    """ptree's tree of a file Pi wrote matches Pi's view exactly."""
    tree._check()
    assert [e.to_json() for e in tree.entries()] == view["entries"]
    assert tree.leaf_id == view["leafId"]
    assert tree.labels() == view["labels"]
    assert tree.session_name == view["name"]
    assert ptree_context(tree) == view["context"]
    assert tree.header is not None
    assert tree.header.to_json() == view["header"]


def user(text: str) -> dict[str, Any]:
    """A user message as Pi stores it."""
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(
    text: str, provider: str = "anthropic", model: str = "claude-sonnet-4-5"
) -> dict[str, Any]:
    """An assistant message as Pi stores it."""
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "provider": provider,
        "model": model,
        "stopReason": "stop",
        "timestamp": 2,
    }


def rich_tree() -> SessionTree:
    """A tree with every kind Pi knows, branches, labels, a compaction and a name."""
    t = SessionTree(header=SessionHeader(id="s1", timestamp=TS, cwd="/w"))
    t = t.append(user("Which plan?"), timestamp=TS)
    t = t.append_thinking_level_change("high", timestamp=TS)
    t = t.append(assistant("Plan A."), timestamp=TS)
    t = t.append_label("e3", "plan A", timestamp=TS)
    t = t.append_model_change("openai", "gpt-5.1-codex", timestamp=TS)
    t = t.append(user("Details?"), timestamp=TS)
    t = t.append(assistant("A, in steps.", "openai", "gpt-5.1-codex"), timestamp=TS)
    t = t.move_to("e1").append(assistant("Plan B."), timestamp=TS)
    t = t.move_to("e6").append_branch_summary(
        "e8", "Plan B was worse.", details={"files": ["b.md"]}, timestamp=TS
    )
    t = t.append_custom("ext", {"n": 1}, timestamp=TS)
    t = t.append_custom_message("ext", "Injected.", details={"k": 1}, timestamp=TS)
    t = t.append_custom_message(
        "ext", [{"type": "text", "text": "Hidden."}], display=False, timestamp=TS
    )
    t = t.append(user("Go on."), timestamp=TS)
    t = t.append_compaction("All so far.", "e6", 4242, timestamp=TS)
    t = t.append(user("After."), timestamp=TS)
    t = t.append_session_info("  Interop  ", timestamp=TS)
    t = t.append_active_tools_change(["read", "bash"], timestamp=TS)
    t = t.insert(
        ptree.UnknownEntry(
            id="u1", parent_id=t.leaf_id, timestamp=TS, entry_type="future_kind", extra={"x": [1]}
        )
    )
    t = t.append_label("e1", "question", timestamp=TS).append_label("e1", None, timestamp=TS)
    return t.append(assistant("Done."), timestamp=TS)


def random_tree(rng: random.Random, steps: int) -> SessionTree:
    """A random tree of Pi's kinds with moves anywhere, from a seeded generator."""
    t = SessionTree(header=SessionHeader(id="r", timestamp=TS, cwd="/w"))
    for _ in range(steps):
        ids = t.ids()
        if ids and rng.random() < 0.2:
            t = t.move_to(rng.choice((None, *ids)))
        kind = rng.choice(
            [
                "user",
                "assistant",
                "assistant",
                "thinking",
                "model",
                "branch",
                "custom_message",
                "label",
                "compaction",
                "name",
                "custom",
            ]
        )
        if kind in ("label", "compaction") and not ids:
            kind = "user"
        if kind == "user":
            t = t.append(user(f"u{len(t)}"), timestamp=TS)
        elif kind == "assistant":
            t = t.append(assistant(f"a{len(t)}", model=rng.choice(["m1", "m2"])), timestamp=TS)
        elif kind == "thinking":
            t = t.append_thinking_level_change(rng.choice(["off", "low", "high"]), timestamp=TS)
        elif kind == "model":
            t = t.append_model_change("p", rng.choice(["x", "y"]), timestamp=TS)
        elif kind == "branch":
            t = t.append_branch_summary("root", rng.choice(["", "went back"]), timestamp=TS)
        elif kind == "custom_message":
            t = t.append_custom_message("ext", "note", display=rng.random() < 0.5, timestamp=TS)
        elif kind == "label":
            t = t.append_label(rng.choice(ids), rng.choice(["L", "", None]), timestamp=TS)
        elif kind == "compaction":
            t = t.append_compaction("sum", rng.choice(ids), 7, timestamp=TS)
        elif kind == "name":
            t = t.append_session_info(rng.choice(["n", " "]), timestamp=TS)
        else:
            t = t.append_custom("ext", {"i": len(t)}, timestamp=TS)
    if t and rng.random() < 0.5:
        t = t.move_to(rng.choice((None, *t.ids())))
    return t


class TestPiReadsWhatPtreeWrites:
    def test_dumped_files(self, pi_package: Path, tmp_path: Path) -> None:
        """dump of a rich tree, with the leaf at the end, moved back, and unset."""
        t = rich_tree()
        trees = [t, t.move_to("e8"), t.move_to("e3"), t.move_to(None)]
        files = []
        for i, tree in enumerate(trees):
            files.append(tmp_path / f"t{i}.jsonl")
            dump(tree, files[-1])
        for tree, view in zip(trees, pi_views(pi_package, files, tmp_path), strict=True):
            assert_pi_sees(tree, view)

    def test_writer_files_with_moves_between_commits(
        self, pi_package: Path, tmp_path: Path
    ) -> None:
        """A writer's file with leaf records in the middle and at the end."""
        p = tmp_path / "live.jsonl"
        t = rich_tree()
        with SessionWriter(p, header=t.header) as w:
            for entry in t.entries():
                w.commit(w.value.move_to(entry.parent_id).append_entry(entry.evolve()))
                if len(w.value) % 4 == 0:
                    w.commit(w.value.move_to("e1"))
            final = w.commit(w.value.move_to("e7"))
        assert any(
            line["type"] == "leaf" for line in map(json.loads, p.read_text().split("\n")[:-1])
        )
        [view] = pi_views(pi_package, [p], tmp_path)
        assert_pi_sees(final, view)

    def test_random_trees(self, pi_package: Path, tmp_path: Path) -> None:
        """Seeded random trees of Pi's kinds: Pi sees ptree's entries, labels and context."""
        rng = random.Random(20260101)
        trees = [random_tree(rng, rng.randint(0, 40)) for _ in range(40)]
        files = []
        for i, tree in enumerate(trees):
            files.append(tmp_path / f"r{i}.jsonl")
            dump(tree, files[-1])
        for tree, view in zip(trees, pi_views(pi_package, files, tmp_path), strict=True):
            assert_pi_sees(tree, view)

    def test_pi_appends_after_a_leaf_record(self, pi_package: Path, tmp_path: Path) -> None:
        """Pi's CLI appending to a file that ends in a leaf record: both see one context."""
        t = rich_tree().move_to("e8")
        p = tmp_path / "s.jsonl"
        dump(t, p)
        view = node("pi_append.mjs", pi_package, p)
        again = load(p)
        again._check()
        assert again.leaf_id == view["leafId"]
        assert ptree_context(again) == view["context"]
        new_user = again.path()[-2]
        assert new_user.parent_id == "e8"  # under the target, not under the record
        with SessionWriter(p) as w:  # and ptree carries on appending to it
            w.commit(w.value.append(user("ptree again"), timestamp=TS))


class TestPtreeReadsWhatPiWrites:
    def test_pi_session(self, pi_package: Path, tmp_path: Path) -> None:
        """Pi writes branches, labels, summaries, a compaction, custom entries, a name:
        ptree loads the same entries, leaf, labels, name and context."""
        made = node("pi_write.mjs", pi_package, tmp_path / "pi")
        path = Path(made["file"])
        [view] = pi_views(pi_package, [path], tmp_path)
        tree = load(path)
        assert_ptree_sees(tree, view)
        kinds = {e.type for e in tree.entries()}
        assert kinds >= {
            "message",
            "label",
            "branch_summary",
            "compaction",
            "custom",
            "custom_message",
            "session_info",
            "model_change",
            "thinking_level_change",
        }
        assert len(tree.leaves()) >= 3

    def test_round_trip_through_ptree_keeps_pis_view(
        self, pi_package: Path, tmp_path: Path
    ) -> None:
        """Pi's file, loaded and dumped by ptree, reads the same in Pi."""
        made = node("pi_write.mjs", pi_package, tmp_path / "pi")
        [before] = pi_views(pi_package, [Path(made["file"])], tmp_path)
        out = tmp_path / "ptree.jsonl"
        dump(load(made["file"]), out)
        [after] = pi_views(pi_package, [out], tmp_path)
        assert after == before

    def test_lenient_set_aside_fields_reach_the_context(
        self, pi_package: Path, tmp_path: Path
    ) -> None:
        """A custom message's ``display`` or ``content`` of the wrong type, set aside by
        the lenient loader, reaches the context exactly as Pi 0.73.1 passes it."""
        lines = [
            {"type": "session", "version": 3, "id": "s", "timestamp": TS, "cwd": "/w"},
            {
                "type": "message",
                "id": "u1",
                "parentId": None,
                "timestamp": TS,
                "message": user("hi"),
            },
            {
                "type": "custom_message",
                "id": "c1",
                "parentId": "u1",
                "timestamp": TS,
                "customType": "n",
                "content": "a",
                "display": "yes",
            },
            {
                "type": "custom_message",
                "id": "c2",
                "parentId": "c1",
                "timestamp": TS,
                "customType": "n",
                "content": 5,
                "display": 0,
            },
            {
                "type": "custom_message",
                "id": "c3",
                "parentId": "c2",
                "timestamp": TS,
                "customType": "n",
                "content": False,
            },
        ]
        path = tmp_path / "aside.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))
        [view] = pi_views(pi_package, [path], tmp_path)
        with pytest.warns(ptree.SessionFileWarning):
            tree = load(path, strict=False)
        assert ptree_context(tree) == view["context"]
        messages = view["context"]["messages"]
        assert [x.get("display", "absent") for x in messages[1:]] == ["yes", 0, "absent"]

    @pytest.mark.parametrize("name", ["before-compaction.jsonl", "large-session.jsonl"])
    def test_real_v1_fixtures(
        self, pi_package: Path, pi_fixtures: Path, tmp_path: Path, name: str
    ) -> None:
        """The real v1 files: Pi migrates (its ids are random) and ptree computes the
        same context messages, model and thinking level."""
        [view] = pi_views(pi_package, [pi_fixtures / name], tmp_path)
        tree = load(pi_fixtures / name)
        assert len(tree) == len(view["entries"])
        assert ptree_context(tree) == view["context"]
