"""A griffe extension: ptree's docstrings, written for ``help()`` and doctest, shown in
Markdown.

Two things in them would otherwise misrender: Sphinx roles (``:class:`FrozenDict```),
shown here as code, and the doctest examples at the end of a docstring, whose output
(``[0]``, ``['e2', 'e3']``) Markdown would read as links: they become ``pycon`` code
blocks.  The docstrings themselves stay as they are (doctest runs them).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:class|func|meth|data|attr|mod|exc|obj|const|py:\w+):`~?([^`]+)`")


def markdown(text: str) -> str:
    """``text`` with Sphinx roles as code spans and doctest runs fenced."""
    text = _ROLE.sub(lambda m: f"`{m.group(1)}`", text)
    out: list[str] = []
    fenced = False  # inside a ``` block of the docstring itself
    in_doctest = False
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
        if not fenced and not in_doctest and stripped.startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}```pycon")
            in_doctest = True
        elif in_doctest and stripped == "":
            out.append(f"{indent}```")
            in_doctest = False
        out.append(line)
    if in_doctest:
        out.append(f"{indent}```")
    return "\n".join(out)


class PtreeDocstrings(griffe.Extension):
    """Rewrite every docstring as :func:`markdown` says, before it is parsed."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
