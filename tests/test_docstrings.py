"""Every public name's docstring has a summary line, names every parameter, says what
the code raises and what it costs (issue #28; the rules: tests/docstring_rules.py).

The reference pages of the documentation site show these docstrings.  KNOWN_GAPS is
what was missing when the rule came in: the test fails on any new gap, and on a gap
that has been filled but is still listed, so the list only shrinks.
"""

from __future__ import annotations

from tests.docstring_rules import all_gaps, public_callables

# Empty since every gap was filled: a public name documents itself when it is added.
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
