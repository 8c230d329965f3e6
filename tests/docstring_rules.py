"""What a public name's docstring must say (issue #28): a summary line, every
parameter, the exceptions the code raises itself, and the cost.  Used by
tests/test_docstrings.py; run as a script, it lists every gap."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

import ptree


def public_modules() -> list[str]:
    """ptree and every module or package under it with no private part in its name."""
    names = ["ptree"]
    for info in pkgutil.walk_packages(ptree.__path__, "ptree."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


def public_callables() -> Iterator[tuple[str, Callable[..., Any], type | None]]:
    """(qualified name, object) of each function and class in an ``__all__``, and of
    each public method a class defines itself, once each (where it is defined)."""
    seen: set[int] = set()
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or id(obj) in seen:
                continue
            if not getattr(obj, "__module__", "").startswith("ptree"):
                continue
            seen.add(id(obj))
            where = f"{obj.__module__}.{obj.__qualname__}"
            if obj.__module__ == "ptree":  # public errors read ptree.X
                where = f"{module_name}.{name}"
            yield where, obj, None
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_") and attr != "__init__":
                        continue
                    if isinstance(member, (staticmethod, classmethod)):
                        member = member.__func__
                    if not getattr(member, "__module__", "").startswith("ptree"):
                        continue  # typing's Protocol.__init__, and the like
                    if inspect.isfunction(member) and id(member) not in seen:
                        seen.add(id(member))
                        yield f"{where}.{attr}", member, obj


def _raises_itself(func: Callable[..., Any]) -> bool:
    """Whether the function's own body has a ``raise`` of a named exception."""
    try:
        source = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError):
        return False
    tree = ast.parse(source)
    body = tree.body[0]
    for node in ast.walk(body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not body:
            continue
        if isinstance(node, ast.Raise) and node.exc is not None:
            return True
    return False


def gaps(name: str, obj: Callable[..., Any], owner: type | None = None) -> list[str]:
    """What the docstring of ``obj`` lacks: 'summary', 'parameter X', 'raises', 'cost'.

    A class needs a summary; its ``__init__``'s parameters may be named in the docstring
    of the class or of a base class (the reference shows the two as one) and need no
    cost of their own; an exception's methods need no cost.  A generated ``__init__``
    (attrs) is left out: its parameters are the fields, documented with the class.
    """
    doc = inspect.getdoc(obj) if obj.__doc__ else None
    if inspect.isclass(obj):
        return [] if doc and doc.strip() else ["summary"]
    is_init = obj.__name__ == "__init__"
    if is_init:
        try:
            inspect.getsource(obj)
        except (OSError, TypeError):
            return []
        classes = owner.__mro__[:-1] if owner is not None else ()
        doc = "\n".join(d for d in (*(c.__doc__ for c in classes), obj.__doc__) if d)
    if not doc or not doc.strip().splitlines()[0].strip():
        return ["summary"]
    missing = []
    try:
        params = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        params = []
    for p in params:
        if p.name in ("self", "cls") or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name not in doc:
            missing.append(f"parameter {p.name}")
    if _raises_itself(obj) and "raise" not in doc.lower():
        missing.append("raises")
    exempt = is_init or (owner is not None and issubclass(owner, BaseException))
    if not exempt and "cost" not in doc.lower() and "o(" not in doc.lower():
        missing.append("cost")
    return missing


def all_gaps() -> dict[str, list[str]]:
    found = {}
    for name, obj, owner in public_callables():
        g = gaps(name, obj, owner)
        if g:
            found[name] = g
    return found


if __name__ == "__main__":
    for name, g in sorted(all_gaps().items()):
        print(name, ", ".join(g))
