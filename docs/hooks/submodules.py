"""An MkDocs hook: a reference page lists every public module of a package, found when
the site is built, so a module added to ``ptree.formats`` or ``ptree.integrations`` is
documented without touching the page.

A line ``<!-- ptree-submodules PACKAGE -->`` becomes one ``::: PACKAGE.MODULE`` line per
module of PACKAGE whose name has no leading underscore, in name order (mkdocstrings
then expands each from its docstrings).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Any

MARKER = re.compile(r"^<!-- ptree-submodules ([\w.]+) -->$", re.MULTILINE)


def submodules(package: str) -> list[str]:
    """The public modules directly under ``package``, in name order."""
    path = importlib.import_module(package).__path__
    return sorted(
        f"{package}.{info.name}"
        for info in pkgutil.iter_modules(path)
        if not info.name.startswith("_")
    )


def expand(markdown: str) -> str:
    """``markdown`` with each marker replaced by the ``:::`` lines it stands for."""
    return MARKER.sub(
        lambda m: "\n\n".join(f"::: {name}" for name in submodules(m.group(1))), markdown
    )


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs calls this for every page."""
    return expand(markdown)
