"""What a public name's docstring must say (issue #28): a summary line, every
parameter, the exceptions the code raises itself, and the cost.  Used by
tests/test_docstrings.py; run as a script, it lists every gap.

The docstring is read as the documentation site reads it: griffe's Google-style
parser (griffe comes with mkdocstrings-python, in the ``docs`` extra that the ``test``
extra includes).  The rules, each a gap when broken:

- **summary**: the first line of the docstring is text.
- **parameter X**: every parameter but ``self``/``cls`` is an entry of an ``Args:``
  (or ``Keyword Args:``) section; ``*args``/``**kwargs`` may be written with their
  stars.  A name merely mentioned in the prose does not count.  The parameters of a
  class's own ``__init__`` may instead be entries of the ``Args:`` or ``Attributes:``
  section of the class or of a base class (the reference shows them as one).
- **raises**: when the function's own body raises a named exception, the docstring
  has a ``Raises:`` section; **raises entry X** when an entry of that section does not
  start with an exception class (``ValueError: why``), found as the module sees it,
  a builtin, a class of that name in a loaded ``ptree`` module (one imported inside
  the function), or a dotted ``module.Name``.
- **cost**: the prose (the text outside the sections, doctest examples left out)
  states the cost: it contains big-O notation, ``O(...)`` with a capital O, or the
  word ``cost``/``costs`` (``Cost: one query per entry``).  ``__init__`` and the
  methods of exceptions need no cost.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import pkgutil
import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

from griffe import Docstring, DocstringSectionKind

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


_PARAMETER_KINDS = (DocstringSectionKind.parameters, DocstringSectionKind.other_parameters)
_BIG_O = re.compile(r"\bO\([^)]")
_COST = re.compile(r"\bcosts?\b", re.IGNORECASE)


def _sections(doc: str) -> list[Any]:
    """The docstring's sections as the site's Google-style parser reads them."""
    return list(Docstring(doc, parser="google").parse(warnings=False))


def _names(sections: list[Any], kinds: tuple[Any, ...]) -> set[str]:
    """The entries' names of the sections of those kinds, stars removed."""
    return {
        item.name.lstrip("*")
        for section in sections
        if section.kind in kinds
        for item in section.value
    }


def _prose(sections: list[Any]) -> str:
    """The text sections, without their doctest examples (a ``>>>`` line and the lines
    after it up to a blank line)."""
    kept: list[str] = []
    for section in sections:
        if section.kind is not DocstringSectionKind.text:
            continue
        in_example = False
        for line in section.value.splitlines():
            stripped = line.strip()
            if stripped.startswith(">>>"):
                in_example = True
            elif not stripped:
                in_example = False
            if not in_example:
                kept.append(line)
    return "\n".join(kept)


def _is_exception(name: str, func: Callable[..., Any]) -> bool:
    """Whether ``name`` names an exception class as ``func``'s module sees it."""
    if not re.fullmatch(r"[A-Za-z_][\w.]*", name):
        return False
    first, *rest = name.split(".")
    scope = {**vars(builtins), **getattr(func, "__globals__", {})}
    obj: Any = scope.get(first)
    if obj is None:  # imported inside the function or under TYPE_CHECKING: ptree's own
        obj = next(
            (
                getattr(m, first)
                for n, m in sorted(sys.modules.items())
                if n.split(".")[0] == "ptree" and inspect.isclass(getattr(m, first, None))
            ),
            None,
        )
    if obj is None:
        try:
            obj = importlib.import_module(first)
        except ImportError:
            return False
    for i, part in enumerate(rest):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module(".".join([first, *rest[: i + 1]]))
            except ImportError:
                return False
    return inspect.isclass(obj) and issubclass(obj, BaseException)


def gaps(name: str, obj: Callable[..., Any], owner: type | None = None) -> list[str]:
    """What the docstring of ``obj`` lacks: 'summary', 'parameter X', 'raises',
    'raises entry X', 'cost' (the rules: this module's docstring).

    A generated ``__init__`` (attrs) is left out: its parameters are the fields,
    documented with the class.
    """
    doc = inspect.getdoc(obj) if obj.__doc__ else None
    if inspect.isclass(obj):
        return [] if doc and doc.strip() else ["summary"]
    is_init = obj.__name__ == "__init__"
    documented: set[str] = set()
    if is_init:
        try:
            inspect.getsource(obj)
        except (OSError, TypeError):
            return []
        classes = owner.__mro__[:-1] if owner is not None else ()
        for c in classes:
            if c.__doc__:
                documented |= _names(
                    _sections(inspect.cleandoc(c.__doc__)),
                    (*_PARAMETER_KINDS, DocstringSectionKind.attributes),
                )
        if not doc:
            doc = inspect.getdoc(owner) if owner is not None else None
    if not doc or not doc.strip().splitlines()[0].strip():
        return ["summary"]
    sections = _sections(doc)
    documented |= _names(sections, _PARAMETER_KINDS)
    missing = []
    try:
        params = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        params = []
    for p in params:
        if p.name in ("self", "cls"):
            continue
        if p.name not in documented:
            missing.append(f"parameter {p.name}")
    if _raises_itself(obj):
        raises = [s for s in sections if s.kind is DocstringSectionKind.raises]
        if not raises:
            missing.append("raises")
        for section in raises:
            for item in section.value:
                if not _is_exception(str(item.annotation), obj):
                    missing.append(f"raises entry {item.annotation}")
    exempt = is_init or (owner is not None and issubclass(owner, BaseException))
    prose = _prose(sections)
    if not exempt and not (_BIG_O.search(prose) or _COST.search(prose)):
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
