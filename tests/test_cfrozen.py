"""freeze's common case in C (ptree/_cfrozen.c): the same values as the Python path.

The reference is ``freeze`` with the compiled path switched off (the Python path the
rest of the suite tests), never the compiled code itself.
"""

from __future__ import annotations

import gc
import math
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ptree import frozen
from ptree.frozen import MAX_DEPTH, FrozenDict, FrozenList, freeze

from .frozen_values import same_value
from .helpers import missing

if not frozen.COMPILED:  # pragma: no cover - the extension is built by pip install
    missing("ptree/_cfrozen.c was not built here", module_level=True)

from ptree import _cfrozen


def python_freeze(value: Any, where: str = "value") -> Any:
    """freeze with the compiled path switched off."""
    saved = frozen._compiled
    frozen._compiled = None
    try:
        return freeze(value, where=where)
    finally:
        frozen._compiled = saved


def outcome(fn: Any, value: Any) -> Any:
    try:
        return ("ok", fn(value))
    except Exception as exc:
        return ("error", type(exc), str(exc))


def assert_same_outcome(value: Any) -> None:
    """freeze gives what the Python path gives: the same value (types, key order, the
    caller's atoms shared), or the same error type with the same text."""
    got, expected = outcome(freeze, value), outcome(python_freeze, value)
    assert got[0] == expected[0]
    if got[0] == "ok":
        assert same_value(got[1], expected[1], same_atoms=True)
    else:
        assert got[1:] == expected[1:]


class Sub(dict[str, Any]):
    pass


class IntSub(int):
    pass


def values() -> st.SearchStrategy[Any]:
    atoms = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.integers(min_value=2**64, max_value=2**200)
        | st.floats()  # NaN and infinities too: the Python path refuses them
        | st.text()
    )
    odd = st.sampled_from(
        [{1, 2}, b"x", IntSub(3), frozenset(), object, FrozenDict(a=1), FrozenList([1])]
    )

    def containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        keys = st.text(max_size=4) | st.integers(0, 3)
        return (
            st.lists(inner, max_size=4)
            | st.lists(inner, max_size=3).map(tuple)
            | st.dictionaries(keys, inner, max_size=4)
            | st.dictionaries(st.text(max_size=3), inner, max_size=3).map(Sub)
        )

    return st.recursive(atoms | odd, containers, max_leaves=30)


@pytest.fixture
def compiled_off() -> Iterator[None]:
    saved = frozen._compiled
    frozen._compiled = None
    yield
    frozen._compiled = saved


class TestSameAsPython:
    @settings(max_examples=int(os.environ.get("PTREE_CFROZEN_EXAMPLES", "2000")), deadline=None)
    @given(values())
    def test_any_value(self, value: Any) -> None:
        """Any value, plain or not: the same frozen value (types, key order, the
        caller's atoms shared) or the same error with the same text."""
        event("compiled" if _cfrozen.freeze_plain(value) is not None else "declined")
        assert_same_outcome(value)

    @pytest.mark.parametrize("levels", [1, 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 300])
    def test_depths(self, levels: int) -> None:
        """Right at the limit and past it: the same value, or the same TooDeepError."""
        value: Any = "x"
        for i in range(levels):
            value = [value] if i % 2 else {"k": value}
        assert_same_outcome(value)

    def test_a_cycle(self) -> None:
        """A dict holding itself: the Python path's TooDeepError, not a crash."""
        value: dict[str, Any] = {}
        value["self"] = value
        assert outcome(freeze, value)[0] == "error"
        assert_same_outcome(value)

    @pytest.mark.parametrize(
        "value",
        [
            {"a": float("nan")},
            {"a": [1, math.inf]},
            {1: "int key"},
            {"a": {2, 3}},
            {"a": FrozenDict(b=1)},
            [FrozenList([1])],
            {"a": Sub(b=1)},
            (IntSub(1),),
            {"a": b"bytes"},
        ],
    )
    def test_leaves_the_unusual_to_python(self, value: Any) -> None:
        """Anything but exact plain JSON types: the compiled path declines (None)
        and freeze gives exactly what the Python path gives."""
        assert _cfrozen.freeze_plain(value) is None
        assert_same_outcome(value)

    def test_caller_changes_never_show(self) -> None:
        message = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
        value = freeze(message)
        message["content"][0]["text"] = "changed"  # type: ignore[index]
        message["role"] = "assistant"
        assert value == {"role": "user", "content": [{"type": "text", "text": "hi"}]}


class TestCollector:
    def test_frozen_containers_are_untracked(self) -> None:
        """A frozen plain value cannot be in a cycle: the collector never walks it."""
        value = freeze({"a": [1, {"b": "c"}], "d": {}, "e": ()})
        assert not any(gc.is_tracked(v) for v in (value, value["a"], value["a"][1], value["d"]))
        assert type(value["e"]) is FrozenList

    def test_changed_against_its_promise_tracked_again(self) -> None:
        value = freeze({"d": {}})
        dict.__setitem__(value["d"], "x", [])
        assert gc.is_tracked(value["d"])
