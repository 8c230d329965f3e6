"""FrozenDict, FrozenList, freeze and thaw: deep immutability at the cost of one copy."""

from __future__ import annotations

import copy
import json
import pickle
from collections import OrderedDict, deque
from collections.abc import Sequence
from enum import IntEnum
from types import MappingProxyType
from typing import Any, overload

import pyrsistent
import pytest
from hypothesis import given

import ptree
from ptree import FrozenDict, FrozenList, SessionTree, freeze, thaw

from .strategies import json_values


class Color(IntEnum):
    RED = 1


class TestFreeze:
    @given(json_values(12))
    def test_freeze_is_equal_and_thaw_gives_it_back(self, value: Any) -> None:
        """freeze(v) == v, thaw(freeze(v)) == v, and json agrees."""
        frozen = freeze(value)
        assert frozen == value
        assert thaw(frozen) == value
        assert json.loads(json.dumps(frozen)) == json.loads(json.dumps(value))

    @given(json_values(12))
    def test_frozen_values_are_hashable_and_pickle(self, value: Any) -> None:
        """Frozen values hash, and pickle back to equal frozen values of the same types."""
        frozen = freeze(value)
        hash(frozen)
        back = pickle.loads(pickle.dumps(frozen))
        assert back == frozen
        assert type(back) is type(frozen)

    def test_types(self) -> None:
        """Mappings become FrozenDict, lists and tuples FrozenList, scalars stay."""
        f = freeze({"a": [1, (2, 3)], "b": OrderedDict(x=1), "c": None, "d": 1.5})
        assert type(f) is FrozenDict
        assert type(f["a"]) is FrozenList
        assert type(f["a"][1]) is FrozenList
        assert type(f["b"]) is FrozenDict

    def test_subclasses_of_scalars_become_plain(self) -> None:
        """An IntEnum or a str subclass is stored as a plain int or str."""

        class S(str):
            pass

        f = freeze({"n": Color.RED, "s": S("x"), S("k"): True})
        assert type(f["n"]) is int
        assert type(f["s"]) is str
        assert [type(k) for k in f] == [str, str, str]

    def test_frozen_value_is_returned_as_is(self) -> None:
        """Freezing a FrozenDict again costs nothing: the same object comes back."""
        f = freeze({"a": [1]})
        assert freeze(f) is f

    @pytest.mark.parametrize(
        ("value", "where", "reason"),
        [
            ({"a": {1}}, "value['a']", "set is not a JSON value"),
            ({"a": [b"x"]}, "value['a'][0]", "bytes is not a JSON value"),
            ({"a": float("inf")}, "value['a']", "inf is not a JSON number"),
            ({1: "x"}, "value", "keys must be strings"),
            (object(), "value", "object is not a JSON value"),
        ],
    )
    def test_non_json_is_refused_with_its_path(self, value: Any, where: str, reason: str) -> None:
        """A value that is not JSON raises InvalidMessageError naming the path."""
        with pytest.raises(ptree.InvalidMessageError) as info:
            freeze(value)
        assert info.value.where == where
        assert info.value.reason.startswith(reason)

    def test_too_deep_is_an_error_not_a_crash(self) -> None:
        """Absurdly deep nesting gives TooDeepError (a ValueError), not RecursionError."""
        deep: list[Any] = []
        for _ in range(100_000):
            deep = [deep]
        with pytest.raises(ptree.TooDeepError, match="nested deeper than 100 levels"):
            freeze({"x": deep})


class TestFrozenDict:
    @pytest.mark.parametrize(
        "mutate",
        [
            lambda d: d.__setitem__("a", 2),
            lambda d: d.__delitem__("a"),
            lambda d: d.clear(),
            lambda d: d.pop("a"),
            lambda d: d.popitem(),
            lambda d: d.setdefault("b", 1),
            lambda d: d.update(b=1),
            lambda d: d.__ior__({"b": 1}),
        ],
    )
    def test_every_mutator_refuses(self, mutate: Any) -> None:
        """Every dict method that would change the value raises TypeError."""
        d = freeze({"a": 1})
        with pytest.raises(TypeError, match="immutable"):
            mutate(d)
        assert d == {"a": 1}

    def test_constructor_freezes_what_it_is_given(self) -> None:
        """FrozenDict(...) freezes its values: no list inside it can be changed later."""
        inner = [1, {"a": [2]}]
        d = FrozenDict({"x": inner}, y=[3])
        inner.append(4)
        inner[1]["a"].append(5)  # type: ignore[index]
        assert d == {"x": [1, {"a": [2]}], "y": [3]}
        assert type(d["x"]) is FrozenList
        assert type(d["x"][1]) is FrozenDict
        FrozenDict.__init__(d, {"z": 1})  # calling __init__ again changes nothing
        assert "z" not in d
        t = SessionTree().append(FrozenDict({"role": "user", "content": inner}))
        inner.clear()
        assert t.current_path()[0]["content"] == [1, {"a": [2, 5]}, 4]

    def test_constructor_refuses_non_json(self) -> None:
        """FrozenDict and FrozenList refuse what freeze refuses, naming where."""
        with pytest.raises(ptree.InvalidMessageError, match="FrozenDict\\['x'\\]"):
            FrozenDict(x=float("nan"))
        with pytest.raises(ptree.InvalidMessageError, match="FrozenList\\[0\\]"):
            FrozenList([{1, 2}])

    def test_copies_are_plain_and_separate(self) -> None:
        """dict(d), d.copy() and d | x give new plain dicts; copy.copy gives d itself."""
        d = freeze({"a": [1]})
        assert type(dict(d)) is dict
        assert type(d | {"b": 1}) is dict
        assert copy.copy(d) is d
        assert copy.deepcopy(d) is d
        assert FrozenDict.fromkeys(["x"], 0) == {"x": 0}

    def test_hash_is_by_content(self) -> None:
        """Equal frozen dicts hash alike, whatever their key order."""
        assert hash(freeze({"a": 1, "b": [2]})) == hash(freeze({"b": [2], "a": 1}))


class TestFrozenList:
    def test_equal_to_lists_and_tuples(self) -> None:
        """A FrozenList equals the list (and tuple) it came from, both ways round."""
        f = freeze([1, [2]])
        assert f == [1, [2]]
        assert [1, [2]] == f  # noqa: SIM300 - the reflected comparison is the point
        assert f == (1, (2,))
        assert f != [1, [3]]
        assert f != [1]
        assert repr(f) == "[1, [2]]"

    def test_constructor_freezes_what_it_is_given(self) -> None:
        """FrozenList(...) freezes its items: a dict inside it cannot be changed later."""
        item = {"a": [1]}
        f = FrozenList([item])
        item["a"].append(2)
        assert f == [{"a": [1]}]
        assert type(f[0]) is FrozenDict

    def test_no_mutation(self) -> None:
        """A FrozenList has no append, and item assignment fails."""
        f = freeze([1])
        assert not hasattr(f, "append")
        with pytest.raises(TypeError):
            f[0] = 2

    def test_freezing_frozen_values_again_cannot_pass_the_limit(self) -> None:
        """Frozen values inside a new one count towards MAX_DEPTH: freezing a frozen
        value again and again stops at the limit (it once reached 200,000 levels,
        which crashed tuple's own hash)."""
        x = freeze(["leaf"])  # 1 level
        for _ in range(ptree.frozen.MAX_DEPTH - 1):
            x = freeze([x])
        with pytest.raises(ptree.TooDeepError) as info:
            freeze([x])
        assert info.value.where == "value[0]"
        assert isinstance(info.value, ValueError)
        hash(x)  # the deepest value there is hashes

    def test_hash_agrees_with_tuples(self) -> None:
        """A FrozenList hashes as the equal tuple does (it is one)."""
        assert hash(freeze([1, [2, "x"]])) == hash((1, (2, "x")))
        assert hash(FrozenList((1,))) == hash(FrozenList([1])) == hash(FrozenList([1.0]))

    def test_concatenation_gives_plain_tuples(self) -> None:
        """+ and * give plain tuples, not frozen lists."""
        f = freeze([1])
        assert type(f + (2,)) is tuple  # noqa: RUF005 - concatenation is the point
        assert type(f * 2) is tuple


class TestThaw:
    @pytest.mark.parametrize("kind", ["list", "dict"])
    def test_thaw_takes_whatever_freeze_took(self, kind: str) -> None:
        """A value nested as deep as freeze allows (building it by freezing frozen values
        again) thaws, and so does its entry's to_json."""
        x: Any = freeze("leaf")
        for _ in range(ptree.frozen.MAX_DEPTH):
            x = freeze([x] if kind == "list" else {"k": x, "n": 1})
        entry = ptree.Custom(id="c", parent_id=None, timestamp="t", custom_type="deep", data=x)
        step: Any = 0 if kind == "list" else "k"
        plain: Any
        for plain in (thaw(x), entry.to_json()["data"]):
            levels = 0
            while plain != "leaf":
                assert type(plain).__name__ == kind  # plain list or dict
                plain = plain[step]
                levels += 1
            assert levels == ptree.frozen.MAX_DEPTH

    def test_thaw_gives_independent_mutable_values(self) -> None:
        """thaw gives new dicts and lists; changing them changes nothing frozen."""
        f = freeze({"a": [{"b": 1}]})
        t = thaw(f)
        t["a"][0]["b"] = 2
        t["a"].append(3)
        assert f == {"a": [{"b": 1}]}
        assert type(t) is dict
        assert type(t["a"]) is list


def _same_frozen(a: Any, b: Any) -> None:
    """Assert that two frozen values are equal *and* of the same types all the way down."""
    todo = [(a, b, "value")]
    while todo:
        x, y, where = todo.pop()
        assert type(x) is type(y), f"{where}: {type(x).__name__} != {type(y).__name__}"
        if type(x) is FrozenDict:
            assert x.keys() == y.keys(), where  # a PMap has no insertion order to keep
            todo.extend((x[k], y[k], f"{where}[{k!r}]") for k in x)
        elif type(x) is FrozenList:
            assert len(x) == len(y), where
            todo.extend((u, v, f"{where}[{i}]") for i, (u, v) in enumerate(zip(x, y, strict=True)))
        else:
            assert x == y, where


class _Seq(Sequence[Any]):
    """A read-only sequence that is neither a list nor a tuple."""

    def __init__(self, *items: Any) -> None:
        self._items = items

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        return self._items[i]

    def __len__(self) -> int:
        return len(self._items)


class TestValuesIn:
    """Any Mapping or Sequence of JSON values is frozen as a dict or list would be."""

    @given(json_values(12))
    def test_pyrsistent_values_freeze_like_dicts_and_lists(self, value: Any) -> None:
        """freeze(pyrsistent.freeze(v)) is freeze(v): equal, with the same types inside."""
        _same_frozen(freeze(pyrsistent.freeze(value)), freeze(value))

    def test_pmap_message_with_pvector_content(self) -> None:
        """A PMap message with a PVector of PMaps is stored as FrozenDict/FrozenList."""
        msg = pyrsistent.pmap(
            {"role": "user", "content": pyrsistent.pvector([pyrsistent.pmap({"text": "hi"})])}
        )
        stored = SessionTree().append(msg).current_path()[0]
        _same_frozen(stored, FrozenDict({"role": "user", "content": [{"text": "hi"}]}))

    def test_other_mappings_and_sequences(self) -> None:
        """A MappingProxyType, a deque and a user-defined Sequence are accepted too."""
        value = {
            "proxy": MappingProxyType({"a": 1}),
            "deque": deque([1, "x"]),
            "seq": _Seq(None, _Seq(True)),
        }
        _same_frozen(
            freeze(value),
            FrozenDict({"proxy": {"a": 1}, "deque": [1, "x"], "seq": [None, [True]]}),
        )

    @pytest.mark.parametrize(
        ("value", "where", "reason"),
        [
            (pyrsistent.pvector([1, {2}]), "message[1]", "set is not a JSON value"),
            (
                pyrsistent.pmap({"c": pyrsistent.pvector([pyrsistent.pset([1])])}),
                "message['c'][0]",
                "PSet is not a JSON value",
            ),
            ({"c": _Seq(b"x")}, "message['c'][0]", "bytes is not a JSON value"),
            ({"c": bytearray(b"x")}, "message['c']", "bytearray is not a JSON value"),
            ({"c": memoryview(b"x")}, "message['c']", "memoryview is not a JSON value"),
        ],
    )
    def test_non_json_inside_is_still_refused_with_its_path(
        self, value: Any, where: str, reason: str
    ) -> None:
        """Bytes, sets and other non-JSON values inside them name the path to the culprit."""
        with pytest.raises(ptree.InvalidMessageError) as info:
            freeze(value, where="message")
        assert info.value.where == where
        assert info.value.reason.startswith(reason)
