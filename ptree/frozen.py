"""Deeply immutable JSON values: what a tree stores in place of the caller's dicts.

A message handed to :meth:`SessionTree.append` is copied once into a
:class:`FrozenDict` (a ``dict`` that refuses every change) whose lists are
:class:`FrozenList` (a ``tuple`` that compares equal to the list it came from).
Nothing the caller keeps, and nothing the API hands out, can reach the stored copy.
Both types are real ``dict``/``tuple`` subclasses, so ``json.dumps`` accepts them
as they are; :func:`thaw` gives back plain, mutable ``dict``/``list`` values for code
that wants to change them (a provider SDK that adds fields, say).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NoReturn, Self, SupportsIndex, TypeAlias

from .errors import InvalidMessageError, TooDeepError

__all__ = ["MAX_DEPTH", "FrozenDict", "FrozenList", "JSONValue", "Message", "freeze", "thaw"]

MAX_DEPTH = 100
"""How deeply a frozen value may nest: containers on the way down, the value itself
counting as 1 (``{"a": [1]}`` nests 2 deep).

One limit for everything ptree stores, so that every operation works on whatever
ptree accepted: pickling, ``==``, ``repr``, ``hash``, :func:`~ptree.pi.dump` and
:func:`~ptree.pi.load` all walk a value with Python's (or the C parser's) recursion,
which needs about four frames a level at most; 100 levels leave room under Python's
default limit of 1,000 frames even when called from a deep stack.  A file line (an
entry wrapping its values) may nest one level more.  Real messages nest well under
20 levels; deeper input is refused where it comes in, with :class:`~ptree.TooDeepError`.
"""

# Why Any and not a recursive union of the JSON types: a union would make every read
# (``message["content"][0]["text"]``) need narrowing, and refuse the ``dict[str,
# object]`` that type checkers infer for most message literals.  What is JSON is
# checked when a value is frozen, with an error naming the path to what is not.
JSONValue: TypeAlias = Any
"""A JSON-like value: ``None``, ``bool``, ``int``, ``float``, ``str``, lists (any
sequence but ``str``/``bytes``) and string-keyed mappings of those."""

Message: TypeAlias = Mapping[str, JSONValue]
"""A message as ptree takes one: a string-keyed mapping of JSON values with a string
``role`` (a ``dict``, a :class:`FrozenDict`, a pyrsistent ``PMap``, …)."""


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    """Refused: a frozen value never changes.  O(1).

    Args:
        *args: ignored.
        **kwargs: ignored.

    Raises:
        TypeError: always.
    """
    raise TypeError(f"{type(self).__name__} is immutable: build a new value instead")


class _Immutable:
    """What both frozen containers share: a copy, shallow or deep, is the value itself."""

    __slots__ = ()

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: object) -> Self:
        return self


class FrozenDict(dict[str, Any], _Immutable):
    """A ``dict`` whose contents can never change, hashable, with frozen values.

    ``FrozenDict(mapping_or_pairs, **kwargs)`` freezes what it is given, as
    :func:`freeze` does, so every value inside is frozen too.  Reading is plain
    ``dict`` reading (same speed); every mutating method raises ``TypeError``.

    Args:
        *args: at most one mapping or iterable of pairs, as ``dict()`` takes.
        **kwargs: more keys and their values.

    >>> m = freeze({"role": "user", "content": [{"type": "text", "text": "hi"}]})
    >>> m["content"][0]["text"]
    'hi'
    >>> m == {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    True
    >>> m["role"] = "assistant"
    Traceback (most recent call last):
    ...
    TypeError: FrozenDict is immutable: build a new value instead
    """

    __slots__ = ("_hash",)

    def __new__(cls, *args: Any, **kwargs: Any) -> FrozenDict:
        # Whatever comes in is frozen: a FrozenDict never holds a list someone else
        # can change.  (ptree's own code, whose values are frozen already, builds
        # them with frozen_dict_unchecked and skips this walk.)
        frozen: FrozenDict = freeze(dict(*args, **kwargs), where="FrozenDict")
        if cls is FrozenDict:
            return frozen
        self = _dict_new(cls)
        _dict_init(self, frozen)
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass  # everything happened in __new__; calling this again changes nothing

    __setitem__ = _refuse
    __delitem__ = _refuse
    __ior__ = _refuse
    clear = _refuse
    pop = _refuse
    popitem = _refuse
    setdefault = _refuse
    update = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return self._hash  # type: ignore[attr-defined, no-any-return]
        except AttributeError:
            h = hash(frozenset(self.items()))
            object.__setattr__(self, "_hash", h)
            return h

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt without a second walk: what is inside was frozen (and checked) when
        # it was pickled, and unpickled bottom-up.
        return (frozen_dict_unchecked, (dict(self),))

    @classmethod
    def fromkeys(cls, iterable: Iterable[str], value: Any = None) -> FrozenDict:  # type: ignore[override]
        """A frozen dict mapping each key of ``iterable`` to ``value`` (frozen).

        Cost: O(number of keys + size of value).

        Args:
            iterable: the keys, strings.
            value: the value of every key (frozen once, shared).

        Raises:
            InvalidMessageError: ``value`` is not JSON, or a key is not a string.
        """
        return freeze(dict.fromkeys(iterable, value))  # type: ignore[no-any-return]


_dict_new = dict.__new__
_dict_init = dict.__init__
_tuple_new = tuple.__new__
_tuple_hash = tuple.__hash__


def frozen_dict_unchecked(d: Mapping[str, Any]) -> FrozenDict:
    """Internal API: a FrozenDict of ``d``, whose values must be frozen already.

    Nothing is checked (the JSON reader and context building build values bottom-up,
    already frozen): a mutable value inside breaks the promise that a FrozenDict never
    changes.  Everyone else calls :func:`freeze` or ``FrozenDict(...)``.  O(len).
    """
    self = _dict_new(FrozenDict)
    _dict_init(self, d)
    return self


def frozen_list_unchecked(items: Iterable[Any]) -> FrozenList:
    """Internal API: a FrozenList of ``items``, which must be frozen already (no check,
    as :func:`frozen_dict_unchecked`).  O(len)."""
    return _tuple_new(FrozenList, items)


class FrozenList(tuple[Any, ...], _Immutable):
    """A ``tuple`` that stands for a JSON array: equal to the list it was made from.

    >>> freeze([1, [2, 3]]) == [1, [2, 3]]
    True
    >>> freeze([1, 2])
    [1, 2]
    """

    __slots__ = ()

    def __new__(cls, iterable: Iterable[Any] = ()) -> FrozenList:
        # Like FrozenDict: what comes in is frozen.
        frozen = freeze(list(iterable), where="FrozenList")
        return frozen if cls is FrozenList else _tuple_new(cls, frozen)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple)):
            return len(self) == len(other) and all(
                a is b or a == b for a, b in zip(self, other, strict=True)
            )
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        # Through a Python frame, not ``__hash__ = tuple.__hash__``: tuple's C hash
        # recurses with no depth check, and a FrozenList nested 200,000 deep (before
        # freeze counted frozen values inside towards MAX_DEPTH) crashed CPython; a
        # frame here counts towards the recursion limit, should one ever be built.
        return _tuple_hash(self)

    def __repr__(self) -> str:
        return repr(list(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (frozen_list_unchecked, (tuple(self),))

    def __add__(self, other: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(self) + tuple(other)

    def __mul__(self, n: SupportsIndex) -> tuple[Any, ...]:
        return tuple(self) * n


# freeze's common case (a plain value of exact dicts, lists and tuples) in C, where
# the extension is built (setup.py): the same value, its containers untracked by the
# garbage collector; anything else (and every error) the Python way below.
try:
    from . import _cfrozen
except ImportError:  # pragma: no cover - built where a C compiler is found
    _compiled = None
else:
    _cfrozen.setup(FrozenDict, FrozenList, MAX_DEPTH)
    _compiled = _cfrozen.freeze_plain

COMPILED = _compiled is not None
"""Whether freeze's common case runs in C (``ptree/_cfrozen.c``, built at install where
a C compiler is found); the results are the same either way."""


class _Bad(Exception):
    """Internal: carries the path to a bad value up through the copying functions."""

    def __init__(self, reason: str, *, deep: bool = False) -> None:
        self.reason = reason
        self.deep = deep
        self.steps: list[str] = []


_INF = math.inf


def _too_deep() -> _Bad:
    return _Bad(f"nested deeper than {MAX_DEPTH} levels", deep=True)


def _check_height(value: Any, room: int) -> None:
    """Raise ``_Bad`` if the frozen container ``value`` nests more than ``room`` levels.

    Frozen values inside a new one are kept as they are, but their depth adds to it:
    without this, ``freeze([v])`` again and again would build any depth.  Iterative;
    O(size of ``value``) (an empty container costs nothing).
    """
    if not value:
        if room < 1:
            raise _too_deep()
        return
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, level = stack.pop()
        if level > room:
            raise _too_deep()
        for item in v.values() if type(v) is FrozenDict else v:
            t = type(item)
            if t is FrozenDict or t is FrozenList:
                stack.append((item, level + 1))


def _freeze_mapping(d: Mapping[Any, Any], depth: int) -> FrozenDict:
    # The careful path: any mapping, any key, and the path to a bad value.  It stays
    # careful all the way down: were it to try the fast path again below, each level
    # would walk the levels under it twice (2**depth for a bad value deep down).
    if depth > MAX_DEPTH:
        raise _too_deep()
    out: dict[str, Any] = {}
    for k, v in d.items():
        if type(k) is not str:
            if isinstance(k, str):
                k = str.__str__(k)
            else:
                bad = _Bad(f"keys must be strings, not {type(k).__name__} {k!r}")
                raise bad
        t = type(v)
        # Exact-type checks first: they are the common case and cost one comparison.
        if t is str or t is int or t is bool or v is None:
            out[k] = v
            continue
        try:
            out[k] = _freeze_item(v, depth)
        except _Bad as bad:
            bad.steps.append(f"[{k!r}]")
            raise
    return frozen_dict_unchecked(out)


def _freeze_seq(seq: Iterable[Any], depth: int) -> FrozenList:
    # The careful path for lists, as _freeze_mapping is for dicts.
    if depth > MAX_DEPTH:
        raise _too_deep()
    out: list[Any] = []
    for i, v in enumerate(seq):
        t = type(v)
        if t is str or t is int or t is bool or v is None:
            out.append(v)
            continue
        try:
            out.append(_freeze_item(v, depth))
        except _Bad as bad:
            bad.steps.append(f"[{i}]")
            raise
    return frozen_list_unchecked(out)


def _freeze_item(v: Any, depth: int) -> Any:
    # The careful path for one value (no str, int, bool or None) inside a container at
    # ``depth``: the one dispatch _freeze_mapping and _freeze_seq share.
    t = type(v)
    if t is FrozenDict or t is FrozenList:
        _check_height(v, MAX_DEPTH - depth)
        return v
    if t is dict:
        return _freeze_mapping(v, depth + 1)
    if t is list or t is tuple:
        return _freeze_seq(v, depth + 1)
    return _freeze_other(v, depth + 1)


_set_item = dict.__setitem__


def _freeze_dict(d: Mapping[Any, Any], depth: int) -> FrozenDict:
    # The common case, a plain dict of JSON values, in one pass: the dict is copied at
    # C speed and only its containers are replaced.  Anything unusual (a key that is not
    # a str, a subclass, a bad number, a frozen value inside, too deep) takes the
    # careful path from this level down, which gives the same value or names the
    # culprit.  Measured: 18% less time on real Pi messages.
    if type(d) is not dict or depth > MAX_DEPTH:
        return _freeze_mapping(d, depth)
    # frozen_dict_unchecked inlined (this runs for every dict of every message); its
    # containers are replaced below, before anyone sees it.
    out = _dict_new(FrozenDict)
    _dict_init(out, d)
    try:
        for k, v in d.items():
            if type(k) is not str:
                break
            t = type(v)
            if t is str or t is int or t is bool or v is None:
                continue
            if t is float and v - v == 0.0:  # finite: NaN and infinities give NaN
                continue
            if t is dict:
                _set_item(out, k, _freeze_dict(v, depth + 1))
            elif t is list or t is tuple:
                _set_item(out, k, _freeze_list(v, depth + 1))
            else:
                break
        else:
            return out
    except _Bad as bad:  # from below, where the careful path named the rest of the way
        bad.steps.append(f"[{k!r}]")
        raise
    return _freeze_mapping(d, depth)


def _freeze_list(seq: Iterable[Any], depth: int) -> FrozenList:
    # The fast path for lists and tuples, as _freeze_dict is for dicts.
    t = type(seq)
    if (t is not list and t is not tuple) or depth > MAX_DEPTH:
        return _freeze_seq(seq, depth)
    out: list[Any] = []
    append = out.append
    try:
        for v in seq:
            t = type(v)
            if t is str or t is int or t is bool or v is None or (t is float and v - v == 0.0):
                append(v)
            elif t is dict:
                append(_freeze_dict(v, depth + 1))
            elif t is list or t is tuple:
                append(_freeze_list(v, depth + 1))
            else:
                break
        else:
            return _tuple_new(FrozenList, out)
    except _Bad as bad:
        bad.steps.append(f"[{len(out)}]")  # the item being frozen
        raise
    return _freeze_seq(seq, depth)


# Sequences that are not JSON arrays: bytes are not text, and a str never gets here.
_NOT_ARRAYS = (str, bytes, bytearray, memoryview)


def _freeze_other(v: Any, depth: int) -> Any:
    if isinstance(v, bool):
        return bool(v)
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        if v != v or v == _INF or v == -_INF:
            raise _Bad(f"{v!r} is not a JSON number")
        return float(v)
    if isinstance(v, str):
        return str.__str__(v)
    # Any mapping or sequence of JSON values (a pyrsistent PMap or PVector, a
    # MappingProxyType, a deque): the careful paths copy them.  Only
    # here, after the exact-type checks, so plain dicts and lists pay nothing for it.
    if isinstance(v, Mapping):
        return _freeze_dict(v, depth)
    if isinstance(v, Sequence) and not isinstance(v, _NOT_ARRAYS):
        return _freeze_list(v, depth)
    raise _Bad(f"{type(v).__name__} is not a JSON value ({v!r:.60})")


def _path(where: str, steps: list[str]) -> str:
    """``where`` and the steps to the culprit (gathered innermost first), shortened."""
    if len(steps) > 12:
        return where + "".join(reversed(steps[-6:])) + "…" + "".join(reversed(steps[:6]))
    return where + "".join(reversed(steps))


def freeze(value: Any, *, where: str = "value") -> Any:
    """Return a deeply immutable copy of a JSON-like value.

    Mappings become :class:`FrozenDict`, lists, tuples and any other sequence
    (``collections.abc.Sequence``, not ``str`` or ``bytes``) :class:`FrozenList`;
    strings, numbers, booleans and ``None`` are kept.  So a pyrsistent ``PMap`` or
    ``PVector`` is frozen exactly as the dict or list it stands for.  A value that is already frozen
    is returned as it is, so freezing what a tree handed out costs nothing.

    Cost: O(size of the value); O(1) for a value that is already a ``FrozenDict``.

    Args:
        value: the value to copy.
        where: how to name the value in an error (``"message"``, say).

    Raises:
        InvalidMessageError: a part that is not JSON (a set, bytes, NaN, a non-string
            key), naming the path to it.
        TooDeepError: (an ``InvalidMessageError`` and a ``ValueError``) the value
            nests deeper than :data:`MAX_DEPTH` levels, counting the frozen values
            inside it; the path leads to the level that is one too many (or to the
            frozen value inside that goes too deep).

    >>> freeze({"a": [1, {"b": None}]})
    {'a': [1, {'b': None}]}
    >>> freeze({"a": {1, 2}})
    Traceback (most recent call last):
    ...
    ptree.InvalidMessageError: value['a']: set is not a JSON value ({1, 2})
    >>> deep = []
    >>> for _ in range(MAX_DEPTH):
    ...     deep = [deep]
    >>> freeze(deep)
    Traceback (most recent call last):
    ...
    ptree.TooDeepError: value[0][0][0][0][0][0]…[0][0][0][0][0][0]: nested deeper than 100 levels
    """
    t = type(value)
    if t is FrozenDict or t is FrozenList or t is str or t is int or t is bool or value is None:
        return value
    if _compiled is not None and (t is dict or t is list or t is tuple):
        frozen = _compiled(value)
        if frozen is not None:
            return frozen
    try:
        if t is dict:
            return _freeze_dict(value, 1)
        if t is list or t is tuple:
            return _freeze_list(value, 1)
        return _freeze_other(value, 1)
    except _Bad as bad:
        where = _path(where, bad.steps)
        if bad.deep:
            raise TooDeepError(where, bad.reason, MAX_DEPTH) from None
        raise InvalidMessageError(where, bad.reason) from None


def thaw(value: Any) -> Any:
    """Return a plain, mutable, ``json.dumps``-able copy of a JSON-like value.

    The inverse of :func:`freeze`: every mapping becomes a new ``dict``, every array (a
    list, a tuple, or, as :func:`freeze` takes them, any other sequence but ``str`` and
    ``bytes``: a context's :class:`~ptree.Messages`) a new ``list``.  Changing the
    result never changes the value it came from.

    Cost: O(size of the value).

    Args:
        value: a JSON-like value, frozen or not.

    >>> m = freeze({"role": "user", "content": ["hi"]})
    >>> plain = thaw(m)
    >>> plain["content"].append("there")
    >>> type(plain), m["content"]
    (<class 'dict'>, ['hi'])
    """
    try:
        return _thaw(value)
    except RecursionError:
        # Two frames a level: a value freeze took (one frame a level, or frozen values
        # nested again) can be too deep for this.  The loop below has no limit.
        return _thaw_deep(value)


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or _other_array(value):
        return [_thaw(v) for v in value]
    return value


def _other_array(value: Any) -> bool:
    """Whether a value that is no list or tuple is an array as :func:`freeze` reads
    one (any other sequence but text and bytes)."""
    return isinstance(value, Sequence) and not isinstance(value, _NOT_ARRAYS)


def _thaw_deep(value: Any) -> Any:
    """:func:`thaw` with a stack of its own instead of recursion.  O(size)."""

    def fresh(v: Any) -> Any:
        if isinstance(v, Mapping):
            out: Any = {}
        elif isinstance(v, (list, tuple)) or _other_array(v):
            out = []
        else:
            return v
        todo.append((v, out))
        return out

    todo: list[tuple[Any, Any]] = []
    root = fresh(value)
    while todo:
        src, dst = todo.pop()
        if type(dst) is dict:
            for k, v in src.items():
                dst[k] = fresh(v)  # the container first, filled when popped
        else:
            dst.extend([fresh(v) for v in src])
    return root
