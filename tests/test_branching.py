"""Tests of the branch operations: move with a summary, fork, labels, diffs."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptree
from ptree import SessionHeader, SessionTree, build_context
from ptree.branching import (
    BranchDiff,
    BranchOrigin,
    clear_label,
    diff,
    diff_branches,
    fork,
    labelled,
    move_with_summary,
    set_label,
    summary_entries,
)

from .strategies import trees

TS = "2026-01-01T00:00:00.000Z"


def u(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def a(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "provider": "anthropic",
        "model": "claude-opus-4-5",
    }


def ids(entries: tuple[ptree.Entry, ...]) -> list[str]:
    return [e.id for e in entries]


def two_branches() -> SessionTree:
    """1u → 2a → 3u → 4a, and 2a → 5u → 6a; the leaf is 6."""
    t = SessionTree()
    for i, m in (("1", u("1")), ("2", a("2")), ("3", u("3")), ("4", a("4"))):
        t = t.append(m, id=i, timestamp=TS)
    return t.move_to("2").append(u("5"), id="5").append(a("6"), id="6")


class TestSummaryEntries:
    """summary_entries: from the old leaf back to the common ancestor, oldest first."""

    def test_to_another_branch(self) -> None:
        """Leaving 6 for 4 abandons 5 and 6 (the common ancestor 2 is excluded)."""
        assert ids(summary_entries(two_branches(), "4")) == ["5", "6"]

    def test_to_an_ancestor(self) -> None:
        """Going back to 1 abandons everything after it."""
        assert ids(summary_entries(two_branches(), "1")) == ["2", "5", "6"]

    def test_to_a_descendant_or_itself(self) -> None:
        """Nothing is abandoned when the target is the leaf or below it."""
        t = two_branches().move_to("5")
        assert summary_entries(t, "6") == ()
        assert summary_entries(t, "5") == ()

    def test_no_leaf(self) -> None:
        """A tree without a leaf abandons nothing."""
        assert summary_entries(two_branches().move_to(None), "3") == ()

    def test_other_root(self) -> None:
        """A target under another root abandons the whole path."""
        t = two_branches().move_to(None).append(u("r"), id="r").move_to("6")
        assert ids(summary_entries(t, "r")) == ["1", "2", "5", "6"]

    def test_unknown_target(self) -> None:
        """An unknown target raises UnknownEntryError."""
        with pytest.raises(ptree.UnknownEntryError):
            summary_entries(two_branches(), "nope")


class TestMoveWithSummary:
    """move_with_summary: Pi's tree navigation."""

    def test_to_assistant_message(self) -> None:
        """The leaf goes to the target; the summary hangs under it, naming the old leaf."""
        t = two_branches()
        r = move_with_summary(t, "4", "tried 5 and 6", details={"readFiles": []})
        r.tree._check()
        s = r.tree.leaf
        assert isinstance(s, ptree.BranchSummary)
        assert (s.id, s.parent_id, s.from_id, s.summary, s.details) == (
            r.summary_id,
            "4",
            "6",
            "tried 5 and 6",
            {"readFiles": []},
        )
        assert (r.edit, r.edit_text) == (None, None)
        assert t.leaf_id == "6"  # the old value is unchanged

    def test_to_user_message_hands_it_back(self) -> None:
        """A user message target: the leaf goes to its parent and the message comes back."""
        t = two_branches()
        r = move_with_summary(t, "3", "s")
        assert r.tree.leaf.parent_id == "2"  # type: ignore[union-attr]
        assert r.edit is t["3"]
        assert r.edit_text == "3"

    def test_to_custom_message(self) -> None:
        """A custom message target behaves like a user message, text blocks joined."""
        t = SessionTree().append(u("1"), id="1")
        t = t.append_custom_message(
            "n",
            [
                {"type": "text", "text": "a"},
                {"type": "image", "data": "x"},
                {"type": "text", "text": "b"},
            ],
            id="c",
        )
        t = t.append(a("2"), id="2")
        r = move_with_summary(t, "c", None)
        assert (r.tree.leaf_id, r.edit_text, r.summary_id) == ("1", "ab", None)

    def test_to_root_user_message(self) -> None:
        """Re-editing the first message: the summary becomes a root, fromId the old leaf."""
        r = move_with_summary(two_branches(), "1", "everything")
        s = r.tree.leaf
        assert isinstance(s, ptree.BranchSummary)
        assert (s.parent_id, s.from_id) == (None, "6")
        r.tree._check()

    def test_pi_convention(self) -> None:
        """from_id='new_leaf' writes what Pi writes: the new leaf, or 'root'."""
        r = move_with_summary(two_branches(), "4", "s", from_id="new_leaf")
        assert r.tree.leaf.from_id == "4"  # type: ignore[union-attr]
        r = move_with_summary(two_branches(), "1", "s", from_id="new_leaf")
        assert r.tree.leaf.from_id == "root"  # type: ignore[union-attr]
        with pytest.raises(ValueError, match="from_id"):
            move_with_summary(two_branches(), "1", "s", from_id="x")  # type: ignore[arg-type]

    def test_without_summary_only_moves(self) -> None:
        """No summary (None or empty) writes no entry, as Pi does."""
        t = two_branches()
        for summary in (None, ""):
            r = move_with_summary(t, "4", summary)
            assert (len(r.tree), r.tree.leaf_id, r.summary_id) == (len(t), "4", None)

    def test_to_current_leaf_changes_nothing(self) -> None:
        """Moving to the leaf returns the same tree, as Pi returns early."""
        t = two_branches()
        assert move_with_summary(t, "6", "s").tree is t

    def test_label(self) -> None:
        """A label goes on the summary entry, or on the target without a summary."""
        r = move_with_summary(two_branches(), "4", "s", label="attempt 1")
        assert r.tree.label_of(r.summary_id) == "attempt 1"  # type: ignore[arg-type]
        r = move_with_summary(two_branches(), "4", None, label="here")
        assert r.tree.label_of("4") == "here"
        assert build_context(r.tree).messages == build_context(two_branches(), "4").messages

    def test_context_after_move(self) -> None:
        """Pi's vector through the operation: the summary joins the context of the new leaf."""
        t = SessionTree()
        for i, m in (("1", u("1")), ("2", a("2")), ("3", u("3"))):
            t = t.append(m, id=i, timestamp=TS)
        r = move_with_summary(t, "2", "tried 3")
        t2 = r.tree.append(u("5"), id="5")
        roles = [m["role"] for m in build_context(t2).messages]
        assert roles == ["user", "assistant", "branchSummary", "user"]
        assert build_context(t2).messages[2]["fromId"] == "3"

    @settings(max_examples=100)
    @given(trees(max_steps=20), st.data())
    def test_random_moves(self, tree: SessionTree, data: st.DataObject) -> None:
        """On random trees: the new leaf is where Pi puts it and the source is unchanged."""
        if not tree:
            return
        target = data.draw(st.sampled_from(tree.ids()))
        before = (tree.entries(), tree.leaf_id)
        r = move_with_summary(tree, target, "summary")
        r.tree._check()
        assert (tree.entries(), tree.leaf_id) == before
        if target == tree.leaf_id:
            assert r.tree is tree
            return
        expected_leaf = tree[target].parent_id if r.edit is not None else target
        assert r.tree.leaf.parent_id == expected_leaf  # type: ignore[union-attr]
        origin = ptree.branching.branch_origin(r.tree, r.summary_id)  # type: ignore[arg-type]
        assert origin.returned_to == expected_leaf
        if expected_leaf != tree.leaf_id:
            assert origin == BranchOrigin(expected_leaf, tree.leaf_id, "ptree")


class TestBranchOrigin:
    """branch_origin reads both conventions of fromId."""

    def test_ptree_convention(self) -> None:
        """fromId naming the abandoned leaf is read as such."""
        r = move_with_summary(two_branches(), "4", "s")
        assert ptree.branching.branch_origin(r.tree, r.summary_id) == BranchOrigin(  # type: ignore[arg-type]
            "4", "6", "ptree"
        )

    def test_pi_convention(self) -> None:
        """fromId equal to the parent (or 'root' for a root) is Pi's: abandoned unknown."""
        r = move_with_summary(two_branches(), "4", "s", from_id="new_leaf")
        assert ptree.branching.branch_origin(r.tree, r.summary_id) == BranchOrigin(  # type: ignore[arg-type]
            "4", None, "pi"
        )
        t = SessionTree().append_branch_summary("root", "s", id="b")
        assert ptree.branching.branch_origin(t, "b") == BranchOrigin(None, None, "pi")

    def test_written_by_pi(self) -> None:
        """An entry as Pi's writer makes it (read from JSON) is read as Pi's."""
        t = SessionTree().append(u("1"), id="1")
        t = t.insert(
            ptree.entries.entry_from_json(
                {
                    "type": "branch_summary",
                    "id": "b",
                    "parentId": "1",
                    "timestamp": TS,
                    "fromId": "1",
                    "summary": "s",
                }
            )
        )
        assert ptree.branching.branch_origin(t, "b") == BranchOrigin("1", None, "pi")

    def test_not_a_branch_summary(self) -> None:
        """Another kind of entry raises InvalidEntryError naming it."""
        with pytest.raises(ptree.InvalidEntryError) as info:
            ptree.branching.branch_origin(two_branches(), "1")
        assert info.value.entry_id == "1"


class TestFork:
    """fork: a new session holding one path."""

    def test_at(self) -> None:
        """position 'at' copies the root→target path, ending at the target."""
        f = fork(two_branches(), "5")
        assert (ids(f.entries()), f.leaf_id) == (["1", "2", "5"], "5")
        f._check()

    def test_before(self) -> None:
        """position 'before' ends at the parent of a user message."""
        f = fork(two_branches(), "5", position="before")
        assert ids(f.entries()) == ["1", "2"]

    def test_before_root_gives_empty_session(self) -> None:
        """Forking before the first message gives an empty session with a header."""
        f = fork(two_branches(), "1", position="before", parent_session="/s.jsonl")
        assert (len(f), f.leaf_id, f.header.parent_session) == (  # type: ignore[union-attr]
            0,
            None,
            "/s.jsonl",
        )

    def test_before_needs_user_message(self) -> None:
        """'before' on anything but a user message raises InvalidEntryError."""
        with pytest.raises(ptree.InvalidEntryError) as info:
            fork(two_branches(), "2", position="before")
        assert info.value.entry_id == "2"
        assert "not a message with role 'assistant'" in str(info.value)

    def test_bad_position(self) -> None:
        """An unknown position raises ValueError; an unknown id UnknownEntryError."""
        with pytest.raises(ValueError, match="position"):
            fork(two_branches(), "2", position="after")  # type: ignore[arg-type]
        with pytest.raises(ptree.UnknownEntryError):
            fork(two_branches(), "nope")

    def test_labels_left_out_relinked_and_rewritten(self) -> None:
        """Label entries leave the path, which is re-linked; copied targets keep labels."""
        t = SessionTree().append(u("1"), id="1").append_label("1", "first", id="L1")
        t = t.append(a("2"), id="2").append_label("2", "x", id="L2")
        t = t.append_label("2", None, id="L3")  # cleared again
        t = t.append(u("3"), id="3")
        t = t.move_to("3").append_label("3", "third", id="L4").move_to("3")
        t = t.move_to("2").append(u("other"), id="o").append_label("o", "elsewhere", id="L5")
        f = fork(t, "3")
        f._check()
        assert [(e.id, e.type, e.parent_id) for e in f.entries()][:3] == [
            ("1", "message", None),
            ("2", "message", "1"),
            ("3", "message", "2"),
        ]
        assert f.labels() == {"1": "first", "3": "third"}
        labels = [e for e in f.entries() if isinstance(e, ptree.Label)]
        assert [e.parent_id for e in labels] == ["3", labels[0].id]
        assert f.leaf_id == labels[-1].id

    def test_compaction_kept_from_a_label_entry(self) -> None:
        """A compaction kept from a left-out label entry keeps from the next copied entry."""
        t = SessionTree().append(u("1"), id="1").append_label("1", "x", id="L")
        t = t.append(u("2"), id="2").append_compaction("s", "L", 5, id="C")
        f = fork(t, "C")
        compaction = f["C"]
        assert isinstance(compaction, ptree.Compaction)
        assert compaction.first_kept_entry_id == "2"
        assert build_context(f).messages == build_context(t, "C").messages
        assert [m["role"] for m in build_context(f).messages] == ["compactionSummary", "user"]

    def test_context_is_the_source_context(self) -> None:
        """The fork's context is the source's context at the target."""
        t = two_branches().append_thinking_level_change("high")
        assert build_context(fork(t, "6")).messages == build_context(t, "6").messages

    def test_header(self) -> None:
        """A new header: new id, the source's cwd, parent_session naming the source."""
        src = SessionHeader(id="src", timestamp=TS, cwd="/work")
        t = two_branches().with_header(src)
        f = fork(t, "4")
        assert f.header is not None
        assert (f.header.parent_session, f.header.cwd) == ("src", "/work")
        assert f.header.id != "src"
        f = fork(t, "4", parent_session="/sessions/src.jsonl")
        assert f.header.parent_session == "/sessions/src.jsonl"  # type: ignore[union-attr]

    @settings(max_examples=100)
    @given(trees(max_steps=25), st.data())
    def test_random_forks(self, tree: SessionTree, data: st.DataObject) -> None:
        """At any entry: same context as the source there, no label entries but the
        rewritten ones, every copied label kept, the source unchanged."""
        if not tree:
            return
        target = data.draw(st.sampled_from(tree.ids()))
        before = tree.entries()
        f = fork(tree, target)
        f._check()
        assert tree.entries() == before
        assert build_context(f).messages == build_context(tree, target).messages
        path_ids = {e.id for e in tree.path(target) if not isinstance(e, ptree.Label)}
        assert {e.id for e in f.entries() if not isinstance(e, ptree.Label)} == path_ids
        # The source's labels, resolved here from its label entries (latest wins, an
        # empty label clears), of the entries the fork copied.
        labels: dict[str, str] = {}
        for e in tree.entries():
            if isinstance(e, ptree.Label):
                if e.label:
                    labels[e.target_id] = e.label
                else:
                    labels.pop(e.target_id, None)
        assert f.labels() == {k: v for k, v in labels.items() if k in path_ids}


class TestLabels:
    """set_label, clear_label, labelled: labels resolve over all entries."""

    def test_set_and_clear(self) -> None:
        """A label is set, read, cleared; the old values keep theirs."""
        t = two_branches()
        t1 = set_label(t, "3", "good")
        t2 = clear_label(t1, "3")
        assert (t.label_of("3"), t1.label_of("3"), t2.label_of("3")) == (None, "good", None)
        t2._check()

    def test_no_change_returns_same_tree(self) -> None:
        """Setting the same label or clearing no label returns the tree itself."""
        t = set_label(two_branches(), "3", "good")
        assert set_label(t, "3", "good") is t
        assert clear_label(t, "4") is t

    def test_empty_label_refused(self) -> None:
        """set_label refuses an empty label (clearing is clear_label's job)."""
        with pytest.raises(ValueError, match="label"):
            set_label(two_branches(), "3", "")

    def test_unknown_entry(self) -> None:
        """Labelling an unknown entry raises UnknownEntryError."""
        with pytest.raises(ptree.UnknownEntryError):
            set_label(two_branches(), "nope", "x")
        with pytest.raises(ptree.UnknownEntryError):
            clear_label(two_branches(), "nope")

    def test_resolve_over_all_entries_not_the_branch(self) -> None:
        """A label set on another branch still counts; the latest wins."""
        t = set_label(two_branches(), "3", "a")
        t = t.move_to("4")
        t = set_label(t, "3", "b").move_to("6")
        assert t.label_of("3") == "b"
        assert t.labels() == {"3": "b"}

    def test_session_name_over_all_entries(self) -> None:
        """The session name is the latest over all entries, whatever the branch."""
        t = two_branches().append_session_info("first").move_to("4")
        t = t.append_session_info(" second ").move_to("1")
        assert t.session_name == "second"

    def test_labelled(self) -> None:
        """labelled finds the entries carrying a label now, in labelling order."""
        t = set_label(set_label(set_label(two_branches(), "4", "x"), "1", "x"), "2", "y")
        assert labelled(t, "x") == ("4", "1")
        assert labelled(clear_label(t, "4"), "x") == ("1",)

    def test_labels_do_not_change_the_context(self) -> None:
        """Setting a label moves the leaf onto the label entry; the context is unchanged."""
        t = two_branches()
        assert build_context(set_label(t, "1", "x")).messages == build_context(t).messages


class TestDiff:
    """diff: which entries one version has that the other lacks."""

    def test_later_version(self) -> None:
        """A later version has the added entries; the older has none of its own."""
        v1 = two_branches()
        v2 = v1.append(u("7"), id="7")
        d = diff(v1, v2)
        assert (d.only_a, ids(d.only_b), d.changed, d.leaf_a, d.leaf_b) == ((), ["7"], (), "6", "7")
        d = diff(v2, v1)
        assert (ids(d.only_a), d.only_b) == (["7"], ())

    def test_same_value(self) -> None:
        """A version compared with itself has no difference, and the diff is false."""
        t = two_branches()
        assert not diff(t, t)

    def test_leaf_only(self) -> None:
        """Versions that differ only by their leaf: no entries, but the diff is true."""
        t = two_branches()
        d = diff(t, t.move_to("4"))
        assert (d.only_a, d.only_b, bool(d)) == ((), (), True)

    def test_diverged_versions(self) -> None:
        """Two versions grown from one: each has its own entries."""
        base = two_branches()
        x = base.append(u("x"), id="x")
        y = base.move_to("4").append(u("y"), id="y")
        d = diff(x, y)
        assert (ids(d.only_a), ids(d.only_b), d.changed) == (["x"], ["y"], ())

    def test_same_ids_different_content(self) -> None:
        """Independent trees that reuse ids: the clashing entries are reported as changed."""
        x = SessionTree().append(u("1"), timestamp=TS).append(a("A"), timestamp=TS)
        y = SessionTree().append(u("1"), timestamp=TS).append(a("B"), timestamp=TS)
        d = diff(x, y)
        assert (d.only_a, d.only_b) == ((), ())
        assert [(p.id, q.id) for p, q in d.changed] == [("e2", "e2")]

    @settings(max_examples=100)
    @given(trees(max_steps=15), trees(max_steps=15))
    def test_matches_id_sets(self, a_: SessionTree, b_: SessionTree) -> None:
        """only_a and only_b are exactly the id set differences, in each tree's order."""
        d = diff(a_, b_)
        assert ids(d.only_a) == [i for i in a_.ids() if i not in set(b_.ids())]
        assert ids(d.only_b) == [i for i in b_.ids() if i not in set(a_.ids())]
        assert all(p.id == q.id and p != q for p, q in d.changed)
        if a_ == b_:
            assert not d
        if a_.leaf_id != b_.leaf_id or set(a_.ids()) != set(b_.ids()):
            assert d


class TestDiffBranches:
    """diff_branches: where two branches part, and what each has after."""

    def test_siblings(self) -> None:
        """Two branches from 2: the fork point and both segments, oldest first."""
        d = diff_branches(two_branches(), "4", "6")
        assert (d.fork_point, ids(d.only_a), ids(d.only_b)) == ("2", ["3", "4"], ["5", "6"])

    def test_ancestor(self) -> None:
        """One entry above the other: it is the fork point, its segment empty."""
        tree = two_branches()  # one tree: two builds may differ in their timestamps
        d = diff_branches(tree, "2", "6")
        assert d == BranchDiff("2", (), tuple(tree[i] for i in ("5", "6")))

    def test_same_entry(self) -> None:
        """An entry against itself: itself, nothing on either side."""
        assert diff_branches(two_branches(), "4", "4") == BranchDiff("4", (), ())

    def test_different_roots(self) -> None:
        """Different roots: no fork point, both whole paths."""
        t = two_branches().move_to(None).append(u("r"), id="r")
        d = diff_branches(t, "4", "r")
        assert (d.fork_point, ids(d.only_a), ids(d.only_b)) == (None, ["1", "2", "3", "4"], ["r"])

    def test_unknown(self) -> None:
        """An unknown id raises UnknownEntryError."""
        with pytest.raises(ptree.UnknownEntryError):
            diff_branches(two_branches(), "4", "nope")

    @settings(max_examples=100)
    @given(trees(max_steps=25), st.data())
    def test_random(self, tree: SessionTree, data: st.DataObject) -> None:
        """Fork point is the common ancestor; fork point + segment is each path."""
        if not tree:
            return
        x = data.draw(st.sampled_from(tree.ids()))
        y = data.draw(st.sampled_from(tree.ids()))
        d = diff_branches(tree, x, y)
        assert d.fork_point == tree.common_ancestor(x, y)
        shared = list(tree.path(d.fork_point)) if d.fork_point else []
        assert shared + list(d.only_a) == list(tree.path(x))
        assert shared + list(d.only_b) == list(tree.path(y))

    def test_deep(self) -> None:
        """Two branches parting 50,000 entries deep: found without recursion."""
        t = SessionTree()
        for i in range(50_000):
            t = t.append(u(str(i)))
        t = t.append(a("x"), id="x").move_to("e50000").append(a("y"), id="y")
        d = diff_branches(t, "x", "y")
        assert (d.fork_point, ids(d.only_a), ids(d.only_b)) == ("e50000", ["x"], ["y"])
        assert ids(summary_entries(t, "x")) == ["y"]
