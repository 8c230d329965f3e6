"""The documentation site builds (``mkdocs build --strict``), offline, and is complete:

- every name in ``ptree.__all__`` and in the ``__all__`` of each package and module the
  reference documents has an entry in the built site's inventory (``objects.inv``), and
  every package and core module has a reference page;
- the command reference, written from the parser at build time, names every
  subcommand and option;
- no page loads anything from another host (no web fonts, scripts or analytics);
- the search works in the built pages, served locally, in Debian's Chromium with every
  request to another host refused.

One build for the module (about half a minute).  It needs the docs extra (the test
extra installs it) and, for the search, Chromium: under CI a missing one fails.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.docstring_rules import public_modules

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("PTREE_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once with ``mkdocs build --strict`` from this checkout."""
    if importlib.util.find_spec("mkdocs") is None:
        if os.environ.get("CI"):
            pytest.fail("mkdocs is missing: the test extra installs the docs extra")
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out


def inventory(site: Path) -> set[str]:
    """The names in the site's objects.inv (Sphinx's format, version 2)."""
    data = (site / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):  # four header lines, then zlib
        header_end = data.index(b"\n", header_end) + 1
    body = zlib.decompress(data[header_end:]).decode("utf-8")
    return {line.split(" ", 1)[0] for line in body.splitlines()}


def _submodules_hook() -> Any:
    spec = importlib.util.spec_from_file_location(
        "submodules_hook", ROOT / "docs" / "hooks" / "submodules.py"
    )
    assert spec is not None
    assert spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    return hook


def documented_modules() -> set[str]:
    """The modules named in a ``::: module`` line of a reference page, as the site's
    hook (docs/hooks/submodules.py) expands its markers."""
    expand = _submodules_hook().expand
    found = set()
    for page in (ROOT / "docs" / "reference").glob("*.md"):
        text = expand(page.read_text(encoding="utf-8"))
        found |= set(re.findall(r"^::: ([\w.]+)$", text, re.M))
    return found


class TestReference:
    def test_every_public_module_has_a_page(self) -> None:
        """ptree, each subpackage and every public module in it (a subpackage's page
        lists its modules by itself; a new core module needs a line on a page)."""
        assert set(public_modules()) - documented_modules() == set()

    def test_every_name_in_every_all_has_an_entry(self, site: Path) -> None:
        names = inventory(site)
        missing = [
            f"{module}.{name}"
            for module in sorted(documented_modules())
            for name in importlib.import_module(module).__all__
            if f"{module}.{name}" not in names
        ]
        assert missing == []
        assert {"ptree.SessionTree", "ptree.SessionTree.append", "ptree.stores.open"} <= names

    def test_the_command_reference_has_every_command_and_option(self, site: Path) -> None:
        page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
        parser = importlib.import_module("ptree.cli.main").build_parser()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        assert len(sub.choices) >= 9
        for name, command in sub.choices.items():
            assert f'id="ptree-{name}"' in page, name
            for action in command._actions:
                for option in action.option_strings:
                    if option not in ("-h", "--help"):
                        assert f"<code>{option}" in page, (name, option)


def test_nothing_is_loaded_from_another_host(site: Path) -> None:
    """No page refers a script, style sheet, font or image to another host."""
    loads = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*?(?:src|href)=["']?(https?:)?//""")
    found = {
        str(page.relative_to(site))
        for page in site.rglob("*.html")
        if loads.search(page.read_text(encoding="utf-8"))
    }
    assert found == set()
    css = " ".join(p.read_text(encoding="utf-8") for p in site.rglob("*.css"))
    assert "fonts.googleapis" not in css
    assert "@import url(http" not in css


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_search_works_offline(served: str) -> None:
    """Typing in the search box of the built site, served locally with every other
    host refused, lists the page that documents what was typed."""
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium")
        pytest.skip(f"no Chromium at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    elsewhere: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith(served):
            r.continue_()
        else:
            elsewhere.append(r.request.url)
            r.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            page.route("**/*", route)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(served)
            page.keyboard.press("/")  # Material's key for the search box
            page.locator("input.md-search__input").fill("move_with_summary")
            page.wait_for_selector(".md-search-result__item", timeout=30_000)
            hits = page.eval_on_selector_all(
                ".md-search-result__item a", "as => as.map(a => a.getAttribute('href'))"
            )
        finally:
            browser.close()
    assert any("branch-and-compare" in h for h in hits), hits
    assert errors == []
    assert elsewhere == []
