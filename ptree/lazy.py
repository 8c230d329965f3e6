"""How a package loads what it exports when first asked for it (PEP 562).

The front door and each layer's package list their public names and the module each
lives in; :func:`exports` gives the package's ``__getattr__`` and ``__dir__``.  A name is
imported on first use and kept in the package's namespace, so later uses cost a plain
attribute read; a subpackage or module of the package (``ptree.stores``) loads the
same way.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping

__all__ = ["exports"]


def exports(
    package: str, names: Mapping[str, str], public: Iterable[str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``(__getattr__, __dir__)`` pair of a package that loads ``names`` lazily.

    Cost: O(p log p) for the p public names (sorted once); the ``__getattr__`` imports
    a name's module on its first use.

    Args:
        package: the package's ``__name__``.
        names: each exported name and the module (relative to ``package``) it lives in.
        public: the package's ``__all__``, listed by ``dir()`` before anything loads.

    Returns:
        ``__getattr__`` importing ``package.names[name]`` on first use (or the
        submodule ``package.name``; any other name is an :class:`AttributeError`), and
        ``__dir__``.  O(1) per name after its module is imported.

    Raises:
        AttributeError: (from the ``__getattr__`` it gives) a name the package does
            not have; ``ModuleNotFoundError`` of a module a listed name lives in.

    >>> getattr_, dir_ = exports("ptree", {"SessionTree": "tree"}, ["SessionTree"])
    >>> getattr_("SessionTree").__name__, "SessionTree" in dir_()
    ('SessionTree', True)
    >>> getattr_("nothing_here")
    Traceback (most recent call last):
    ...
    AttributeError: module 'ptree' has no attribute 'nothing_here'
    """
    listed = sorted(public)

    def __getattr__(name: str) -> object:
        module = names.get(name)
        if module is not None:
            value = getattr(importlib.import_module(f"{package}.{module}"), name)
            setattr(sys.modules[package], name, value)
            return value
        if not name.startswith("_"):
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as e:
                if e.name != f"{package}.{name}":
                    raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *listed})

    return __getattr__, __dir__
