"""Tests of the fast paths that the benchmarks led to: they must agree with the slow ones."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptree import (
    FrozenDict,
    FrozenList,
    InvalidMessageError,
    MessageEntry,
    SessionTree,
    freeze,
    thaw,
)

from .strategies import json_values


def _assert_frozen_copy(frozen: Any, value: Any) -> None:
    """The definition of freeze, checked part by part without calling ptree: every dict
    is a FrozenDict with the same keys, every list or tuple a FrozenList of the same
    length, every scalar the same value of the same type.  (FrozenDict(...) and
    FrozenList(...) would not do as the expected value: they call freeze.)"""
    todo = [(frozen, value, "value")]
    while todo:
        f, v, where = todo.pop()
        if isinstance(v, dict):
            assert type(f) is FrozenDict, where
            assert list(f) == list(v), where
            todo.extend((f[k], v[k], f"{where}[{k!r}]") for k in v)
        elif isinstance(v, (list, tuple)):
            assert type(f) is FrozenList, where
            assert len(f) == len(v), where
            todo.extend((f[i], v[i], f"{where}[{i}]") for i in range(len(v)))
        else:
            assert type(f) is type(v), where
            assert f == v, where


class TestFreezeFastPath:
    @given(json_values(max_leaves=30))
    def test_same_value_as_the_careful_definition(self, value: Any) -> None:
        """freeze gives exactly the value (and the types) of the definition."""
        frozen = freeze(value)
        _assert_frozen_copy(frozen, value)
        assert thaw(frozen) == value

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


class TestAddedSinceAcrossBranchedStores:
    @settings(max_examples=50)
    @given(st.lists(st.integers(0, 30), min_size=1, max_size=40), st.data())
    def test_agrees_with_the_versions_lineage(self, moves: list[int], data: st.DataObject) -> None:
        """added_since gives what was appended since ``older`` when the newest version
        grew from it, and None when it did not, whatever chain of stores is under it.

        (The expectation comes from how the versions were made, not from the tree.)
        """
        versions = [SessionTree()]
        made_from = [-1]  # the version each one was appended to
        for k in moves:
            at = k % len(versions)  # often an older version: the storage branches
            versions.append(versions[at].append({"role": "user", "content": str(len(versions))}))
            made_from.append(at)
        lineage = [len(versions) - 1]  # the newest version and every version it grew from
        while made_from[lineage[-1]] >= 0:
            lineage.append(made_from[lineage[-1]])
        lineage.reverse()
        older = data.draw(st.sampled_from(range(len(versions))))
        added = versions[-1].added_since(versions[older])
        if older in lineage:
            # Each version on the way appended one message naming its own number.
            expected = [str(v) for v in lineage[lineage.index(older) + 1 :]]
            assert added is not None
            assert [e.message["content"] for e in added if isinstance(e, MessageEntry)] == (
                expected
            )
            assert len(added) == len(expected)
        else:
            assert added is None
        versions[-1]._check()
