"""The ``jsonl:`` store's files with Pi's own package (0.73.1, under Node.js): Pi opens
them and sees what ptree saved; Pi appends to one and the store carries on from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptree import SessionHeader, stores
from tests.test_pi_interop import (
    assert_pi_sees,
    node,
    pi_package,  # noqa: F401 - the fixture
    pi_views,
    rich_tree,
    user,
)

pytestmark = pytest.mark.slow
TS = "2026-01-01T00:00:00.000Z"


def test_pi_opens_every_saved_version(pi_package: Path, tmp_path: Path) -> None:  # noqa: F811
    """After each save of a growing session (appends, leaf moves, labels, a name),
    Pi's SessionManager sees the same entries, labels, name and context as ptree."""
    d = tmp_path / "store"
    tree = rich_tree()
    assert tree.header is not None
    sid = tree.header.id
    versions = [tree, tree.move_to("e3"), tree.move_to("e3").append(user("branch"))]
    versions.append(versions[-1].append_label("e1", "first").append_session_info("Named"))
    versions.append(versions[-1].move_to("e2"))
    files = []
    with stores.open(f"jsonl://{d}") as store:
        for i, version in enumerate(versions):
            store.save(version)
            copy = tmp_path / f"v{i}.jsonl"
            copy.write_bytes((d / f"{sid}.jsonl").read_bytes())
            files.append(copy)
    views = pi_views(pi_package, files, tmp_path)
    for version, view in zip(versions, views, strict=True):
        assert_pi_sees(version, view)


def test_the_store_goes_on_after_pi_appends(pi_package: Path, tmp_path: Path) -> None:  # noqa: F811
    """Pi appends two messages to a store's file: the store loads them as part of the
    session, a save from before them conflicts, and a save after them appends."""
    d = tmp_path / "store"
    header = SessionHeader(id="s-pi", timestamp=TS, cwd="/w")
    # With an assistant message: Pi writes a file that has none again from the start.
    tree = rich_tree().with_header(header)
    with stores.open(f"jsonl://{d}") as store:
        saved = store.save(tree)
        view = node("pi_append.mjs", pi_package, d / "s-pi.jsonl")
        loaded = store.load("s-pi")
        assert [e.to_json() for e in loaded.entries()] == [
            e for e in view["entries"] if e["type"] != "leaf"
        ]
        assert loaded.leaf_id == view["leafId"]
        with pytest.raises(stores.ConflictError):
            store.save(saved.append(user("stale")))
        later = store.save(loaded.append(user("after Pi")))
    with stores.open(f"jsonl://{d}") as store:
        assert store.load("s-pi") == later


def test_pi_opens_a_pruned_session(pi_package: Path, tmp_path: Path) -> None:  # noqa: F811
    """After a prune, Pi sees in the rewritten file what ptree loads: the kept entries,
    labels, name, leaf and the context at the leaf."""
    d = tmp_path / "store"
    tree = rich_tree()
    assert tree.header is not None
    sid = tree.header.id
    tree = tree.move_to("e3").append(user("a branch to prune")).append(user("its end"))
    tree = tree.append_label("e1", "first").append_session_info("Named").move_to("e2")
    with stores.open(f"jsonl://{d}") as store:
        store.save(tree)
        report = store.prune(sid, keep=[])
        assert report.removed
        pruned = store.load(sid)
    copy = tmp_path / "pruned.jsonl"
    copy.write_bytes((d / f"{sid}.jsonl").read_bytes())
    (view,) = pi_views(pi_package, [copy], tmp_path)
    assert_pi_sees(pruned, view)
