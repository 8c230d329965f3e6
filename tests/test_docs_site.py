"""The documentation site builds (``mkdocs build --strict``) as a fresh clone's
``pip install -e '.[docs]'`` builds it: offline (every network connection refused) and
with none of the modules only the other extras install.  And it is complete:

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
import dataclasses
import functools
import http.server
import importlib
import importlib.metadata
import importlib.util
import json
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
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.docstring_rules import public_modules

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("PTREE_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


# Runs ``mkdocs`` as a fresh clone's ``pip install -e '.[docs]'`` has it, offline: every
# connection to a network address is refused (and written down), and every module that
# only another extra installs (a framework, psycopg, pytest, ...) is absent.
GUARD = """
import importlib.abc, json, os, socket, sys

report = {"connections": [], "imports": []}
blocked = set(json.loads(os.environ["PTREE_DOCS_BLOCKED"]))


def refuse(what, where):
    report["connections"].append(f"{what} {where!r}")
    raise OSError(f"the site's build reached for the network: {what} {where!r}")


def connect(self, address, *args):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        refuse("connect", address)
    return plain_connect(self, address, *args)


def connect_ex(self, address, *args):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        refuse("connect_ex", address)
    return plain_connect_ex(self, address, *args)


def getaddrinfo(host, *args, **kwargs):
    refuse("getaddrinfo", host)


plain_connect, plain_connect_ex = socket.socket.connect, socket.socket.connect_ex
socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
socket.getaddrinfo = getaddrinfo


class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in blocked:
            frame = sys._getframe(1)
            while frame.f_code.co_filename.startswith("<frozen"):  # the import system
                frame = frame.f_back
            report["imports"].append([name, frame.f_code.co_filename])
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Absent())
try:
    from mkdocs.__main__ import cli

    cli(prog_name="mkdocs")
finally:
    with open(os.environ["PTREE_DOCS_REPORT"], "w") as out:
        json.dump(report, out)
"""


def docs_extra_closure() -> set[str]:
    """The distributions ``pip install -e '.[docs]'`` installs: ptree, its dependencies
    and the docs extra's, followed through each requirement's own (with its extras),
    as the installed metadata gives them."""
    seen: set[tuple[str, frozenset[str]]] = set()
    todo: list[tuple[str, frozenset[str]]] = [("ptree", frozenset({"docs"}))]
    while todo:
        name, extras = todo.pop()
        if (canonicalize_name(name), extras) in seen:
            continue
        seen.add((canonicalize_name(name), extras))
        try:
            requires = importlib.metadata.distribution(name).requires or []
        except importlib.metadata.PackageNotFoundError:
            continue  # an optional requirement this environment lacks: absent anyway
        for line in requires:
            req = Requirement(line)
            wanted = req.marker is None or any(
                req.marker.evaluate({"extra": extra}) for extra in extras | {""}
            )
            if wanted:
                todo.append((req.name, frozenset(req.extras)))
    return {name for name, _ in seen}


def only_other_extras() -> list[str]:
    """Top-level modules installed here that a docs-only install would not have
    (what the test and dev extras add), but pip's and setuptools' own."""
    docs = docs_extra_closure() | {"pip", "setuptools", "wheel"}
    return sorted(
        module
        for module, dists in importlib.metadata.packages_distributions().items()
        if not any(canonicalize_name(dist) in docs for dist in dists)
    )


@dataclasses.dataclass(frozen=True)
class Built:
    """The built site, and what its build tried: network connections, and imports of
    modules a docs-only install lacks."""

    path: Path
    connections: list[str]
    imports: list[tuple[str, str]]  # (module, the file that imported it)


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The site, built once with ``mkdocs build --strict`` from this checkout, offline
    and without the modules only other extras install."""
    if importlib.util.find_spec("mkdocs") is None:
        if os.environ.get("CI"):
            pytest.fail("mkdocs is missing: the test extra installs the docs extra")
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    report = tmp_path_factory.mktemp("report") / "report.json"
    done = subprocess.run(
        [sys.executable, "-c", GUARD, "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "NO_MKDOCS_2_WARNING": "1",
            "PTREE_DOCS_BLOCKED": json.dumps(only_other_extras()),
            "PTREE_DOCS_REPORT": str(report),
        },
        check=False,
    )
    assert done.returncode == 0, done.stderr
    tried = json.loads(report.read_text(encoding="utf-8"))
    return Built(out, tried["connections"], [(m, f) for m, f in tried["imports"]])


@pytest.fixture(scope="module")
def site(build: Built) -> Path:
    return build.path


class TestAFreshCloneBuilds:
    """``pip install -e '.[docs]' && mkdocs build --strict``, as the README says, works
    with nothing but the docs extra and no network."""

    def test_the_build_reaches_for_no_network(self, build: Built) -> None:
        assert build.connections == []

    def test_the_build_needs_only_the_docs_extra(self, build: Built) -> None:
        """The build succeeded (the fixture checks) with every module of the other
        extras absent, and neither ptree nor the site's hooks even tried one (an
        optional import that fell back would document less without saying so).  The
        build tools' own optional imports (ruff to format signatures, ...) may try."""
        assert "agents" in only_other_extras()  # the test extra's are here to block
        assert "mkdocs" not in only_other_extras()
        ours = [
            (module, importer)
            for module, importer in build.imports
            if any(Path(importer).is_relative_to(ROOT / d) for d in ("ptree", "docs"))
        ]
        assert ours == []


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
    """No page refers a script, style sheet, font or image to another host, and none
    holds an analytics snippet."""
    loads = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*?(?:src|href)=["']?(https?:)?//""")
    found = {
        str(page.relative_to(site))
        for page in site.rglob("*.html")
        if loads.search(page.read_text(encoding="utf-8"))
    }
    assert found == set()
    analytics = re.compile(r"googletagmanager|google-analytics|gtag\(|plausible\.io")
    assert [p.name for p in site.rglob("*.html") if analytics.search(p.read_text("utf-8"))] == []
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
