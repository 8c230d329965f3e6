"""The pictures of a tree: text drawing, JSON form, Graphviz DOT, Mermaid."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings

from ptree import SessionTree
from ptree.cli.render import render_dot, render_mermaid, render_text, tree_to_json
from ptree.entries import MessageEntry
from tests.strategies import trees


def plans() -> SessionTree:
    """A question, two answers (siblings), a follow-up on the second, a label."""
    t = SessionTree().append({"role": "user", "content": "Which plan?"})
    t = t.append({"role": "assistant", "content": "Plan A."}).move_to("e1")
    t = t.append({"role": "assistant", "content": "Plan B."})
    t = t.append({"role": "user", "content": "Go on."}).append_label("e2", "first try")
    return t.move_to("e4")


def chain(n: int) -> SessionTree:
    """A linear session of n messages, built in one step."""
    t = SessionTree()
    entries = [
        MessageEntry(
            id=f"m{i}",
            parent_id=f"m{i - 1}" if i else None,
            timestamp="t",
            message={"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"},
        )
        for i in range(n)
    ]
    return t.from_entries(entries)


# Characters a session file may hold that no drawing may pass on as they are: an
# escape sequence that clears a terminal, a bell, a NUL, a right-to-left override,
# a lone surrogate (valid JSON, "\\ud800"), and newlines.
HOSTILE = "a\x1b[2J\x07b\x00c\u202ed\ud800e\nf\r\ng"


def hostile() -> SessionTree:
    """A message, its id and its label full of unprintable characters."""
    t = SessionTree().append({"role": "user", "content": HOSTILE}, id="id\n\x1b[31m")
    t = t.append_label("id\n\x1b[31m", HOSTILE)
    return t.append({"role": "assistant", "content": "ok"}, id="e9")


def printable(text: str) -> bool:
    """Nothing a terminal obeys, nothing that reorders a line, nothing unencodable."""
    return (
        re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]", text)
        is None
    )


class TestRenderText:
    def test_branches_current_path_labels_and_leaf(self) -> None:
        """Siblings get branch lines, the current path '*', labels '[..]', the leaf a mark."""
        expected = [
            "* e1 user: Which plan?",
            "  ├─ e2 [first try] assistant: Plan A.",
            "* └─ e3 assistant: Plan B.",
            "*    e4 user: Go on.  ← leaf",
            "     e5 label e2: first try",
        ]
        assert expected == list(render_text(plans()))

    def test_ascii(self) -> None:
        """--ascii draws the same picture with ASCII characters only."""
        lines = list(render_text(plans(), ascii_only=True))
        assert lines[1] == "  |- e2 [first try] assistant: Plan A."
        assert lines[3].endswith("<- leaf")
        assert all(line.isascii() for line in lines)

    def test_linear_chain_is_not_indented(self) -> None:
        """A chain of single children stays in one column, whatever its length."""
        lines = list(render_text(chain(50)))
        assert len(lines) == 50
        assert all(line.startswith("* m") for line in lines)

    def test_continuation_under_a_branch_keeps_the_branch_line(self) -> None:
        """A chain inside a non-last branch is drawn under a '│' so the branch stays visible."""
        t = SessionTree().append({"role": "user", "content": "q"})
        t = t.append({"role": "assistant", "content": "a"}).append({"role": "user", "content": "b"})
        t = t.move_to("e1").append({"role": "assistant", "content": "c"})
        assert list(render_text(t)) == [
            "* e1 user: q",
            "  ├─ e2 assistant: a",
            "  │  e3 user: b",
            "* └─ e4 assistant: c  ← leaf",
        ]

    def test_several_roots_are_branches_of_an_invisible_top(self) -> None:
        """Two roots are drawn as two branches."""
        t = SessionTree().append({"role": "user", "content": "one"})
        t = t.move_to(None).append({"role": "user", "content": "two"})
        assert list(render_text(t)) == ["  ├─ e1 user: one", "* └─ e2 user: two  ← leaf"]

    def test_no_leaf_marks_nothing(self) -> None:
        """After move_to(None) no line is on the current path."""
        lines = list(render_text(plans().move_to(None)))
        assert not any(line.startswith("*") or "leaf" in line.split(":")[-1] for line in lines)

    def test_empty_tree_draws_nothing(self) -> None:
        """An empty tree has no lines."""
        assert list(render_text(SessionTree())) == []

    def test_fold_hides_the_middle_of_long_runs(self) -> None:
        """With fold=4 the 99 entries above the leaf show as 2 + '… 95 more' + 2 lines."""
        lines = list(render_text(chain(100), fold=4))
        assert lines == [
            "* m0 user: message 0",
            "* m1 assistant: message 1",
            "* … 95 more",
            "* m97 assistant: message 97",
            "* m98 user: message 98",
            "* m99 assistant: message 99  ← leaf",
        ]

    def test_fold_keeps_labelled_entries_and_the_leaf(self) -> None:
        """Folding never hides a labelled entry or the leaf."""
        t = chain(100).append_label("m50", "middle").move_to("m70")
        text = "\n".join(render_text(t, fold=2))
        assert "m50 [middle]" in text
        assert "m70 user: message 70  ← leaf" in text

    def test_width_shortens_previews(self) -> None:
        """With a width, long previews end in '…' and lines fit."""
        t = SessionTree().append({"role": "user", "content": "word " * 100})
        [line] = render_text(t, width=60)
        assert line.endswith("…  ← leaf")
        assert len(line) <= 60 + len("  ← leaf")

    def test_color_adds_ansi_and_same_text(self) -> None:
        """Colour adds escape codes and nothing else."""
        plain = list(render_text(plans()))
        colored = list(render_text(plans(), color=True))
        assert all("\x1b[" in line for line in colored)
        assert [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in colored] == plain

    def test_deep_tree_is_drawn_iteratively(self) -> None:
        """A 100,000-deep path with a branch at the bottom draws without recursion."""
        t = chain(100_000)
        t = t.move_to("m99990").append({"role": "user", "content": "fork"})
        lines = list(render_text(t))
        assert len(lines) == 100_001
        assert lines[-1].startswith("* └─ ")
        assert lines[99_991].startswith("  ├─ m99991")

    @settings(max_examples=60)
    @given(trees())
    def test_every_entry_once_and_marks_match_the_path(self, tree: SessionTree) -> None:
        """Each entry has exactly one line; '*' lines are exactly the current path."""
        lines = list(render_text(tree, ascii_only=True))
        assert len(lines) == len(tree)
        marked = [line for line in lines if line.startswith("*")]
        assert len(marked) == (len(tree.path()) if tree.leaf is not None else 0)


class TestUnprintable:
    def test_text_drawing_keeps_one_line_per_entry_and_no_control_characters(self) -> None:
        """Ids, labels and previews with escapes and newlines draw one clean line each."""
        lines = list(render_text(hostile()))
        assert len(lines) == 3
        assert all(printable(line) for line in lines)
        assert lines[0] == (
            "* id \ufffd[31m [a\ufffd[2J\ufffdb\ufffdc\ufffdd\ufffde f g] "
            "user: a\ufffd[2J\ufffdb\ufffdc\ufffdd\ufffde f g"
        )

    def test_dot_and_mermaid_have_no_control_characters(self) -> None:
        """Both pictures are clean text that any encoding of Unicode can write."""
        for render in (render_dot, render_mermaid):
            text = "\n".join(render(hostile()))
            assert printable(text), render.__name__
            text.encode("utf-8")

    def test_json_keeps_one_line_previews(self) -> None:
        """The JSON picture's previews are clean too (ids stay exact: they are data)."""
        entries = tree_to_json(hostile())["entries"]
        assert all(printable(e["preview"]) for e in entries)
        assert entries[0]["id"] == "id\n\x1b[31m"


class TestPreview:
    def test_empty_aborted_or_failed_reply_says_why(self) -> None:
        """An assistant message with no content that was aborted shows '(aborted: …)'."""
        t = SessionTree().append(
            {
                "role": "assistant",
                "content": [],
                "stopReason": "aborted",
                "errorMessage": "Request was aborted.",
            }
        )
        t = t.append({"role": "assistant", "content": [], "stopReason": "error"})
        t = t.append({"role": "assistant", "content": [], "stopReason": "stop"})
        assert list(render_text(t)) == [
            "* e1 assistant: (aborted: Request was aborted.)",
            "* e2 assistant: (error)",
            "* e3 assistant:  ← leaf",
        ]


class TestTreeToJson:
    def test_fields(self) -> None:
        """Each entry gives id, parent, kind, preview, depth, path flag, children, label."""
        doc = tree_to_json(plans())
        assert doc["leafId"] == "e4"
        by_id = {e["id"]: e for e in doc["entries"]}
        assert by_id["e1"] == {
            "id": "e1",
            "parentId": None,
            "type": "message",
            "kind": "user",
            "preview": "user: Which plan?",
            "depth": 0,
            "onPath": True,
            "children": ["e2", "e3"],
        }
        assert by_id["e2"]["label"] == "first try"
        assert by_id["e5"]["kind"] == "label"
        assert not by_id["e2"]["onPath"]

    def test_deep_tree_dumps_as_json(self) -> None:
        """The JSON form is flat, so json.dumps works at any depth."""
        doc = tree_to_json(chain(20_000))
        assert json.loads(json.dumps(doc))["entries"][-1]["depth"] == 19_999


class TestRenderDot:
    def test_nodes_edges_and_current_path(self) -> None:
        """Every entry is a node, every parent link an edge, the path bold."""
        text = "\n".join(render_dot(plans()))
        assert text.startswith("digraph ptree {")
        assert text.endswith("}")
        assert '"e1" -> "e2";' in text
        assert '"e1" -> "e3" [color="#1f6fb2", penwidth=2];' in text
        assert '"e2" [label="e2 [first try]\\nassistant: Plan A."];' in text
        assert text.count(" -> ") == 4

    def test_quotes_and_backslashes_are_escaped(self) -> None:
        """A preview with quotes and backslashes stays one valid DOT string."""
        t = SessionTree().append({"role": "user", "content": 'a "b" \\c'}, id='x"y')
        text = "\n".join(render_dot(t))
        assert '"x\\"y" [label="x\\"y\\nuser: a \\"b\\" \\\\c"' in text

    def test_ampersands_are_entities(self) -> None:
        """Graphviz decodes entities in labels: '&amp;' in a message must show as written."""
        t = SessionTree().append({"role": "user", "content": "x &amp; &#1; y"})
        assert 'label="e1\\nuser: x &amp;amp; &amp;#1; y"' in "\n".join(render_dot(t))

    def test_unprintable_ids_get_distinct_names(self) -> None:
        """Ids that differ only in unprintable characters or backslashes stay apart."""
        ids = ["a\x00", "a\x01", "a\\u0000", "a\\u0001", "a\\", "a"]
        t = SessionTree()
        for i in ids:
            t = t.append({"role": "user", "content": "x"}, id=i)
        names = [line.split(" [label=")[0].strip() for line in render_dot(t) if "[label=" in line]
        assert len(set(names)) == len(ids)
        assert names[0] == '"a\\\\u0000"'
        assert all(printable(n) for n in names)


class TestRenderMermaid:
    def test_flowchart(self) -> None:
        """Nodes n0.., edges, classes for the current path and the leaf."""
        lines = list(render_mermaid(plans()))
        assert lines[0] == "flowchart TD"
        assert '  n1["e2 [first try]<br/>assistant: Plan A."]' in lines
        assert "  n0 --> n1" in lines
        assert "  class n0,n2,n3 current" in lines
        assert "  class n3 leaf" in lines

    def test_special_characters_are_entities(self) -> None:
        """Quotes and angle brackets in text become Mermaid entities."""
        t = SessionTree().append({"role": "user", "content": 'say "<hi>" #1'})
        assert '  n0["e1<br/>user: say #quot;#lt;hi#gt;#quot; #35;1"]' in list(render_mermaid(t))

    def test_ampersands_and_backticks_are_entities(self) -> None:
        """'&amp;' would show as '&' (labels are HTML); a leading backtick starts Markdown."""
        t = SessionTree().append({"role": "user", "content": "a &amp; b"}, id="`x`")
        assert '  n0["#96;x#96;<br/>user: a #38;amp; b"]' in list(render_mermaid(t))

    def test_parent_after_child(self) -> None:
        """An entry whose parent comes later in the file still gets its edge."""
        child = MessageEntry(
            id="c", parent_id="p", timestamp="t", message={"role": "user", "content": "child"}
        )
        parent = MessageEntry(
            id="p", parent_id=None, timestamp="t", message={"role": "user", "content": "parent"}
        )
        t = SessionTree.from_entries([child, parent])
        assert "  n1 --> n0" in list(render_mermaid(t))
