"""The importers' one tree builder (``assemble``) makes the entries the checked path makes.

``assemble`` makes plain message entries without attrs' validators after its own
checks, and links them parents first.  The reference here is the other, checked path:
:func:`ptree.entries.entry_from_json` on each node's fields and
:meth:`SessionTree.from_entries`.  Nodes are given as a chain in the order they are
written (each the parent of the next, the last the leaf), so the order is known by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptree import SessionTree
from ptree.entries import entry_from_json
from ptree.formats import ImportFormatError
from ptree.formats._common import Node, assemble, imported_header

HEADER = imported_header("s", "2026-01-01T00:00:00.000Z", "", {"format": "test"})

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)
# Anything a buggy importer could put in: JSON, and values that are not (a set, NaN).
values = st.one_of(
    json_values, json_values, json_values, st.sampled_from([{1, 2}, float("nan"), b"x"])
)
keys = st.sampled_from(
    ["librechat", "claudeCode", "ptreeBatch", "id", "parentId", "type", "content", "label"]
)


@st.composite
def fields_of(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["message", "message", "message", "label", "session_info"]))
    fields: dict[str, Any] = {"type": kind}
    fields["timestamp"] = draw(st.sampled_from(["2026-01-01T00:00:00.000Z", "t", "t", 7]))
    if kind == "message":
        message: dict[str, Any] = {"role": draw(st.sampled_from(["user", "assistant", 3, 4]))}
        if message["role"] == 4:
            del message["role"]
        message.update(draw(st.dictionaries(st.sampled_from(["content", "x"]), values)))
        fields["message"] = draw(st.sampled_from([message] * 5 + [[message]]))
    elif kind == "label":
        fields["targetId"] = "n0"
        fields["label"] = draw(st.sampled_from(["good", None]))
    else:
        fields["name"] = "title"
    fields.update(draw(st.dictionaries(keys, values, max_size=2)))
    return fields


def checked(nodes: list[Node]) -> SessionTree | str:
    """What the checked path gives for a chain of nodes: the tree, or the error reason."""
    made = []
    parent = None
    for n in nodes:
        try:
            made.append(entry_from_json({**n.fields, "id": n.id, "parentId": parent}))
        except (ValueError, TypeError) as exc:  # the reason is what is compared
            return f"cannot be stored: {exc}"
        parent = n.id
    return SessionTree.from_entries(made, leaf_id=nodes[-1].id if nodes else None, header=HEADER)


@settings(max_examples=300, deadline=None)
@given(st.lists(fields_of(), max_size=5))
def test_entries_as_the_checked_path_makes_them(chain: list[dict[str, Any]]) -> None:
    nodes = [
        Node(f"n{i}", f, Path("src"), i + 1, parent=f"n{i - 1}" if i else None)
        for i, f in enumerate(chain)
    ]
    expected = checked(nodes)
    if isinstance(expected, str):
        with pytest.raises(ImportFormatError) as caught:
            assemble(nodes, nodes[-1].id, HEADER)
        assert caught.value.reason == expected
        return
    got = assemble(nodes, nodes[-1].id if nodes else None, HEADER)
    assert got == expected
    assert [type(e) for e in got.entries()] == [type(e) for e in expected.entries()]
    assert [e.to_json() for e in got.entries()] == [e.to_json() for e in expected.entries()]
    assert [(e.depth, e.seq) for e in got.entries()] == [
        (e.depth, e.seq) for e in expected.entries()
    ]
    assert got.counter == expected.counter
    assert got.leaf_id == expected.leaf_id


def test_a_leaf_with_children_comes_last() -> None:
    """A leaf named above its own replies (a malformed source) is written after them."""
    fields = {"type": "message", "timestamp": "t", "message": {"role": "user"}}
    nodes = [
        Node("a", fields, None, 1),
        Node("b", fields, None, 2, parent="a"),
        Node("c", fields, None, 3, parent="b"),
    ]
    tree = assemble(nodes, "b", HEADER)
    assert [e.id for e in tree.entries()] == ["a", "c", "b"]
    assert tree.leaf_id == "b"
    assert tree["c"].parent_id == "b"


def test_a_title_whose_id_a_node_has_is_refused() -> None:
    fields = {"type": "message", "timestamp": "t", "message": {"role": "user"}}
    title = Node("x", {"type": "session_info", "timestamp": "t", "name": "T"}, None, None)
    with pytest.raises(ValueError, match="'x'"):
        assemble([Node("x", fields, None, 1)], "x", HEADER, above=title)
