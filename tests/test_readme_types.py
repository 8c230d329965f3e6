"""The examples of the README and of every page of the documentation site (``docs/``)
type-check: each page's examples, taken in order as one module, ``mypy
--check-untyped-defs`` finds no error in them.

The examples are what a user copies first, so they must be correct for a type checker
too, not only at run time (the doctest run of ``README.md`` checks that).  Every
fenced block that holds doctest examples, and every ``python`` block without them, is
taken in the order it appears, as pytest's doctest run of the README does: one
namespace for the whole file.  A new README section is checked without any change here.
"""

from __future__ import annotations

import doctest
import re
import sys
from pathlib import Path

import pytest
from mypy import api as mypy_api

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# The README and every page of the site: pytest runs the examples of each as doctests.
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]

_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
_PYTHON = {"python", "py", "python3", "pycon"}


def readme_module(text: str) -> tuple[str, list[int]]:
    """The README's examples as one module, and the README line of each module line.

    A block with doctest examples gives their source (not their expected output); a
    ``python`` block without any is taken whole.  Other blocks (shell, text) are left.
    """
    lines: list[str] = []
    origin: list[int] = []
    parser = doctest.DocTestParser()
    for m in _FENCE.finditer(text):
        lang, body = m.group(1), m.group(2)
        first = text.count("\n", 0, m.start(2)) + 1  # README line of the body's first line
        examples = parser.get_examples(body)
        if examples:
            for ex in examples:
                for k, line in enumerate(ex.source.splitlines()):
                    lines.append(line)
                    origin.append(first + ex.lineno + k)
        elif lang in _PYTHON:
            for k, line in enumerate(body.splitlines()):
                lines.append(line)
                origin.append(first + k)
    return "\n".join(lines) + "\n", origin


def page_name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("page", PAGES, ids=page_name)
def test_every_doctest_example_is_taken(page: Path) -> None:
    """Each example pytest runs from a page is in the module mypy checks.

    An example outside a fenced block would run under doctest but escape the type
    check; this fails instead.
    """
    text = page.read_text(encoding="utf-8")
    module_lines = readme_module(text)[0].splitlines()
    run = doctest.DocTestParser().get_examples(text)
    # Each example's lines appear in the module, in the README's order (python blocks
    # without examples may come between them).
    at = 0
    for ex in run:
        lines = ex.source.splitlines()
        while at < len(module_lines) and module_lines[at : at + len(lines)] != lines:
            at += 1
        where = f"{page_name(page)}:{ex.lineno + 1}"
        assert at < len(module_lines), f"{where}: not type-checked: {lines[0]}"
        at += len(lines)


def test_the_pages_have_examples() -> None:
    """The parser finds the README's examples and the site's (no page silently lost)."""
    counts = {
        page_name(p): len(doctest.DocTestParser().get_examples(p.read_text(encoding="utf-8")))
        for p in PAGES
    }
    assert counts["README.md"] >= 10
    assert sum(counts.values()) > 150


def run_mypy(module: str, tmp_path: Path) -> list[tuple[int, str]]:
    """mypy --check-untyped-defs over ``module``: (line, message) of each error."""
    return run_mypy_many({"checked": module}, tmp_path)["checked"]


def run_mypy_many(modules: dict[str, str], tmp_path: Path) -> dict[str, list[tuple[int, str]]]:
    """One mypy --check-untyped-defs run over several modules (name: source): the
    (line, message) of each error, per module."""
    sources = []
    for name, module in modules.items():
        source = tmp_path / f"{name}.py"
        source.write_text(module, encoding="utf-8")
        sources.append(str(source))
    # A config of its own: not the project's strict one (users' code is not strict),
    # ptree found in this checkout, errors reported only in the module.
    config = tmp_path / "mypy.ini"
    config.write_text(
        "[mypy]\n"
        f"mypy_path = {ROOT}\n"
        "python_version = 3.11\n"
        "check_untyped_defs = True\n"
        "follow_imports = silent\n"
        "warn_unused_configs = True\n",
        encoding="utf-8",
    )
    # mypy's main raises the process's recursion limit to 16,384 and leaves it there:
    # put it back, or every later test (the nesting-limit tests assume the default
    # limit users run with) runs under a limit no user has.
    limit = sys.getrecursionlimit()
    try:
        out, err, status = mypy_api.run(
            [
                "--config-file",
                str(config),
                "--cache-dir",
                str(tmp_path / "cache"),
                "--no-error-summary",
                "--show-error-codes",
                *sources,
            ]
        )
    finally:
        sys.setrecursionlimit(limit)
    assert err == ""
    errors: dict[str, list[tuple[int, str]]] = {name: [] for name in modules}
    for line in out.splitlines():
        where = re.match(r".*?(\w+)\.py:(\d+): error: (.*)", line)
        if where:
            errors[where.group(1)].append((int(where.group(2)), where.group(3)))
        else:
            assert ": note: " in line, line  # anything else is mypy failing to run
    assert (status == 0) == all(e == [] for e in errors.values())
    return errors


# Pages whose examples run as doctests but still have mypy errors, each to be made
# clean: a page merged with errors is listed here until it is.  Empty since issue 28's
# five were fixed; the test fails on a new page with errors, and on a listed page that
# is clean now.
NOT_YET_CLEAN: set[str] = set()


def test_examples_type_check(tmp_path: Path) -> None:
    """mypy --check-untyped-defs over each page's examples (the README's and every
    page of the site, one module per page, in one run) reports no error, but on the
    pages of NOT_YET_CLEAN (which must still have some)."""
    modules = {}
    origins = {}
    for k, page in enumerate(PAGES):
        modules[f"page{k}"], origins[f"page{k}"] = readme_module(page.read_text(encoding="utf-8"))
    found = run_mypy_many(modules, tmp_path)
    errors = [
        f"{page_name(PAGES[int(name[4:])])}:{origins[name][n - 1]}: {msg}"
        for name, page_errors in found.items()
        for n, msg in page_errors
        if page_name(PAGES[int(name[4:])]) not in NOT_YET_CLEAN
    ]
    assert errors == [], "mypy on the pages' examples:\n" + "\n".join(errors)
    with_errors = {page_name(PAGES[int(name[4:])]) for name, e in found.items() if e}
    clean_now = NOT_YET_CLEAN - with_errors
    assert clean_now == set(), f"clean now, take them off NOT_YET_CLEAN: {clean_now}"


ANY_ENTRY = """\
from ptree import MessageEntry, SessionTree
t = SessionTree().append({"role": "user", "content": "hi"})
t["e1"].message
t["e1"].parent_id, t["e1"].timestamp, t["e1"].type
e = t["e1"]
if isinstance(e, MessageEntry):
    e.message["content"]
t.message("e1")["content"]
[c.message for c in t.children(None)]
[p.id for p in t.path()]
t.append(["not", "a", "mapping"])
"""


def test_lookups_are_typed_as_any_entry(tmp_path: Path) -> None:
    """tree[id] and the queries are the union of the kinds: a kind's own field needs
    narrowing (line 3, line 9), the common fields do not, isinstance narrows, and a
    message must be a mapping (line 11)."""
    errors = run_mypy(ANY_ENTRY, tmp_path)
    not_messages = {
        "ThinkingLevelChange",
        "ModelChange",
        "ActiveToolsChange",
        "Compaction",
        "BranchSummary",
        "Custom",
        "CustomMessage",
        "Label",
        "SessionInfo",
        "Usage",
        "ContextEdit",
        "UnknownEntry",
    }
    for line in (3, 9):
        items = {
            m.group(1)
            for n, msg in errors
            if n == line
            and (m := re.match(r'Item "(\w+)" of ".*" has no attribute "message"', msg))
        }
        assert items == not_messages, line
    assert {n for n, _ in errors} == {3, 9, 11}
    assert next(msg for n, msg in errors if n == 11).startswith('Argument 1 to "append"')
