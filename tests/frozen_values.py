"""Comparing frozen values exactly: what ``==`` does not see."""

from __future__ import annotations

from typing import Any


def same_value(a: Any, b: Any, *, same_atoms: bool = False) -> bool:
    """Equal, and of the same type all the way down (FrozenDict, FrozenList, int, bool,
    float with its sign, str), keys in the same order.  With ``same_atoms``, strings
    and numbers must be the very same objects (freeze shares the caller's).
    Iterative."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if list(x) != list(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, tuple):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif same_atoms:
            if x is not y:
                return False
        elif isinstance(x, float):
            if repr(x) != repr(y):
                return False
        elif x != y:
            return False
    return True
