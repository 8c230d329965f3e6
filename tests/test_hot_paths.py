"""Tests of the fast paths that the benchmarks led to: they must agree with the slow ones."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptree import FrozenDict, FrozenList, InvalidMessageError, SessionTree, freeze, thaw

from .strategies import json_values


def _careful_freeze(value: Any) -> Any:
    """The obvious recursive definition of freeze, for comparison."""
    if isinstance(value, dict):
        return FrozenDict({k: _careful_freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return FrozenList(_careful_freeze(v) for v in value)
    return value


class TestFreezeFastPath:
    @given(json_values(max_leaves=30))
    def test_same_value_as_the_careful_definition(self, value: Any) -> None:
        """freeze gives exactly the value (and the types) of the obvious recursion."""
        frozen = freeze(value)
        expected = _careful_freeze(value)
        assert expected == frozen
        assert type(expected) is type(frozen)
        assert thaw(frozen) == thaw(value)

    def test_containers_are_frozen_copies(self) -> None:
        """Nested dicts and lists are frozen copies, never the caller's objects."""
        inner = {"a": [1, 2.5]}
        value = {"x": inner, "y": [inner, (3,)]}
        frozen = freeze(value)
        assert type(frozen["x"]) is FrozenDict
        assert frozen["x"] is not inner
        assert type(frozen["x"]["a"]) is FrozenList
        assert type(frozen["y"][1]) is FrozenList
        inner["a"].append(3)
        assert frozen["x"]["a"] == [1, 2.5]

    def test_bad_values_are_named_by_path(self) -> None:
        """A bad value deep inside is reported with its path, as before the fast path."""
        cases = {
            "message['a'][1]['b']": {"a": [1, {"b": float("inf")}]},
            "message['a']['b'][1]": {"a": {"b": [1, {2: 3}]}},
            "message['n']": {"n": float("nan")},
            "message['s']": {"s": {1, 2}},
        }
        for where, value in cases.items():
            with pytest.raises(InvalidMessageError) as info:
                freeze(value, where="message")
            assert str(info.value).startswith(where + ":"), str(info.value)

    def test_subclasses_become_plain(self) -> None:
        """A str subclass key or value and a dict subclass become plain str and FrozenDict."""

        class S(str):
            pass

        frozen = freeze({S("k"): [S("v")], "o": {"z": 1}})
        assert [type(k) for k in frozen] == [str, str]
        assert type(frozen["k"][0]) is str


class TestAddedSinceCost:
    @settings(max_examples=50)
    @given(st.lists(st.integers(0, 30), min_size=1, max_size=40), st.data())
    def test_agrees_with_slicing_across_branched_stores(
        self, moves: list[int], data: st.DataObject
    ) -> None:
        """added_since equals the slice of entries(), whatever chain of stores is under it."""
        versions = [SessionTree()]
        for k in moves:
            base = versions[k % len(versions)]  # an older version: the storage branches
            versions.append(base.append({"role": "user", "content": str(k)}))
        newest = versions[-1]
        older = data.draw(st.sampled_from(versions))
        added = newest.added_since(older)
        if added is not None:
            assert added == newest.entries()[len(older) :]
            newest._check()
