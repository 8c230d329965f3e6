"""Every public name's docstring has a summary line, names every parameter, says what
the code raises and what it costs (issue #28; the rules: tests/docstring_rules.py).

The reference pages of the documentation site show these docstrings.  KNOWN_GAPS is
what was missing when the rule came in: the test fails on any new gap, and on a gap
that has been filled but is still listed, so the list only shrinks.
"""

from __future__ import annotations

from tests.docstring_rules import all_gaps, gaps, public_callables

# Empty: the 95 names the sections rule found short when it came in are all filled, and a
# public name documents itself when it is added.
KNOWN_GAPS: dict[str, list[str]] = {}


def test_the_rules_see_the_public_names() -> None:
    names = {name for name, _obj, _owner in public_callables()}
    assert {
        "ptree.tree.SessionTree.append",
        "ptree.stores.open",
        "ptree.pi.reader.load",
    } <= names
    assert len(names) > 250


def test_no_new_gaps() -> None:
    """A public name added or changed has its summary, parameters, raises and cost."""
    new = {
        name: [g for g in gaps if g not in KNOWN_GAPS.get(name, [])]
        for name, gaps in all_gaps().items()
    }
    assert {name: gaps for name, gaps in new.items() if gaps} == {}


def test_filled_gaps_leave_the_list() -> None:
    """A gap listed in KNOWN_GAPS that is filled now: remove it from the list."""
    now = all_gaps()
    filled = {
        name: [g for g in gaps if g not in now.get(name, [])] for name, gaps in KNOWN_GAPS.items()
    }
    assert {name: gaps for name, gaps in filled.items() if gaps} == {}


def _prose_only(tree: object, depth: int) -> int:
    """Count the nodes of the tree down to depth, in O(n).

    The depth is the limit; the tree is walked.
    """
    raise ValueError(tree, depth)


def _sections_wrong(tree: object) -> int:
    """Count the nodes of the tree.

    Args:
        tree: the tree.

    Raises:
        a bad tree: the tree is bad.

    >>> len("tree")  # O(n)
    4
    """
    raise ValueError(tree)


def _all_said(tree: object, *rest: object, **options: object) -> int:
    """Count the nodes of the tree.

    Cost: O(n) for n nodes.

    Args:
        tree: the tree.
        *rest: more trees.
        **options: how to count.

    Raises:
        ValueError: the tree is bad.
    """
    raise ValueError(tree, rest, options)


class TestGaps:
    def test_parameters_named_only_in_the_prose_are_gaps(self) -> None:
        """A parameter counts only as an entry of Args, not as a word of the prose."""
        assert gaps("f", _prose_only) == ["parameter tree", "parameter depth", "raises"]

    def test_raises_entries_name_exceptions_and_doctests_state_no_cost(self) -> None:
        """A Raises entry that is not an exception class, and an O() only in a doctest."""
        assert gaps("f", _sections_wrong) == ["raises entry a bad tree", "cost"]

    def test_a_complete_docstring_has_no_gap(self) -> None:
        """Args with starred names, Raises naming ValueError, a Cost line: nothing missing."""
        assert gaps("f", _all_said) == []
