"""The layering rules, checked on the source: who may import whom, and who may touch
which private name.  Read from the files with ``ast``; nothing is imported.

Layers (see ``ptree/__init__.py``): the core (modules directly in ``ptree/``), then
``pi`` (core only), ``providers`` (core only), ``formats`` and ``stores`` (core and
``pi``), ``integrations`` (anything but ``cli``), ``cli`` (anything).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ptree"

ALLOWED: dict[str, set[str]] = {
    "core": {"core"},
    "pi": {"core", "pi"},
    "providers": {"core", "providers"},
    "formats": {"core", "pi", "formats"},
    "stores": {"core", "pi", "stores"},
    "integrations": {"core", "pi", "providers", "formats", "stores", "integrations"},
    "cli": {"core", "pi", "providers", "formats", "stores", "integrations", "cli"},
}
FRONT_DOOR = "ptree/__init__.py"
# Underscore names that are other libraries' public API.
FOREIGN_API = {
    "_SubParsersAction",  # argparse: the only name of the type add_subparsers returns
    "_asdict",  # namedtuple's public methods
    "_replace",
    "_fields",
}


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _name_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in ALLOWED and parts[1] != "core":
        return parts[1]
    return "core"


def _package_of(path: Path) -> str:
    name = _name_of(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = _package_of(path).split(".")
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) for every import of a ptree module in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _absolute(path, node)
            if target == "ptree" or target.startswith("ptree."):
                out.append((node.lineno, target, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ptree"):
                    out.append((node.lineno, alias.name, []))
    return out


class TestLayers:
    def test_the_layer_packages_exist_with_a_docstring_naming_their_imports(self) -> None:
        """Each layer is a package whose docstring has an ``Imports:`` paragraph naming
        exactly the layers it may import (the cli: anything)."""
        for layer in ALLOWED:
            if layer == "core":
                continue
            init = PACKAGE / layer / "__init__.py"
            assert init.is_file(), f"ptree/{layer}/ is missing"
            doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
            assert doc is not None, f"ptree/{layer}/__init__.py has no docstring"
            paragraph = next((p for p in doc.split("\n\n") if "Imports:" in p), None)
            assert paragraph is not None, f"ptree/{layer}: no 'Imports:' paragraph"
            said = paragraph[paragraph.index("Imports:") :]
            if layer == "cli":
                assert "anything" in said, said
                continue
            named = {other for other in ALLOWED if re.search(rf"\bptree\.{other}\b", said)}
            if "core" in said:
                named.add("core")
            assert named == ALLOWED[layer] - {layer}, (
                f"ptree/{layer} says it imports {sorted(named)}, "
                f"the rule is {sorted(ALLOWED[layer] - {layer})}"
            )

    @pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_no_inner_layer_imports_an_outer_one(self, path: Path) -> None:
        """Core imports only core; pi only core; and so on (the front door imports all)."""
        rel = str(path.relative_to(PACKAGE.parent))
        if rel == FRONT_DOOR or path.name == "__main__.py":
            return
        mine = _layer(_name_of(path))
        for line, target, names in _imports(path):
            targets = [target]
            if target == "ptree":
                targets = [f"ptree.{n}" for n in names]
            for t in targets:
                theirs = _layer(t)
                assert theirs in ALLOWED[mine], (
                    f"{rel}:{line}: the {mine} layer imports {t} (layer {theirs})"
                )


def _defined_names(tree: ast.Module) -> set[str]:
    """Every name a module defines anywhere: functions, classes, attributes it assigns,
    ``__slots__`` entries and names set with ``setattr(obj, "name", ...)``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__slots__" for target in node.targets
        ):
            names.update(
                c.value
                for c in ast.walk(node.value)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            )
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            name = node.args[1]
            if (
                called in ("setattr", "__setattr__")
                and isinstance(name, ast.Constant)
                and isinstance(name.value, str)
            ):
                names.add(name.value)
    return names


class TestPrivates:
    @pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_no_private_name_is_imported_from_another_package(self, path: Path) -> None:
        """``from X import _name`` only inside the package that owns X."""
        mine = _package_of(path)
        for line, target, names in _imports(path):
            owner = target.rpartition(".")[0] if target.rpartition(".")[2] else target
            for name in names:
                private = name.startswith("_") and not name.startswith("__")
                module_private = any(
                    p.startswith("_") and not p.startswith("__") for p in target.split(".")
                )
                if private or module_private:
                    inside = target == mine or target.startswith(mine + ".")
                    assert inside or owner == mine, (
                        f"{path.relative_to(PACKAGE.parent)}:{line}: imports {name} "
                        f"from {target}, private to {owner}"
                    )

    @pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_no_private_attribute_of_another_module_is_read(self, path: Path) -> None:
        """``obj._name`` only where this module (or its package) defines ``_name``."""
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = _defined_names(tree)
        for sibling in path.parent.glob("*.py"):  # a package owns its privates
            if sibling.name.startswith("_") and sibling != path:
                own |= _defined_names(ast.parse(sibling.read_text(encoding="utf-8")))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            attr = node.attr
            if not attr.startswith("_") or attr.startswith("__") or attr in FOREIGN_API:
                continue
            assert attr in own, (
                f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: reads {attr}, "
                "which another module owns"
            )


class TestMessageKindTests:
    @pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_message_entries_are_told_by_isinstance(self, path: Path) -> None:
        """``type(e) is MessageEntry`` (or ``kind is MessageEntry``) misses a message a
        reader has not decoded yet (a :class:`~ptree.entries.LazyMessageEntry`); only
        isinstance sees both."""
        if path.name == "entries.py":
            return
        text = path.read_text(encoding="utf-8")
        pattern = re.compile(r"\bis (not )?MessageEntry\b")
        for lineno, line in enumerate(text.splitlines(), 1):
            assert not pattern.search(line), (
                f"{path.relative_to(PACKAGE.parent)}:{lineno}: use isinstance(..., MessageEntry)"
            )


def _module_level_imports(path: Path) -> set[str]:
    """The ptree modules ``path`` imports when it is itself imported: statements at
    module level (inside ``if``/``try`` too), not in functions, not ``TYPE_CHECKING``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If):
            if "TYPE_CHECKING" in ast.unparse(node.test):
                todo.extend(node.orelse)
                continue
            todo.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            todo.extend(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                todo.extend(handler.body)
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(path, node)
            if target == "ptree" or target.startswith("ptree."):
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    found.add(sub if sub in _MODULE_NAMES else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("ptree"))
    return found


# Python modules and the C extensions (named by their .pyi stubs).
_MODULE_NAMES = {_name_of(p) for p in [*_modules(), *PACKAGE.rglob("*.pyi")]}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (or a module importing
    itself): Tarjan's algorithm, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    found.append(sorted(component))
    return found


class TestImportCycles:
    def test_the_cycle_finder_finds_a_cycle(self) -> None:
        """The checker itself: a -> b -> c -> a is one cycle; d -> a is none."""
        graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
        assert sorted(_cycles(graph)) == [["a", "b", "c"], ["e"]]

    def test_no_module_level_import_cycle(self) -> None:
        """No ptree module imports, at module level, one that imports it back (directly
        or through others); the front door, which imports its layers, is left out as
        a target: modules import their owners, never ``ptree`` itself."""
        graph = {
            _name_of(p): {m for m in _module_level_imports(p) if m != "ptree"} for p in _modules()
        }
        assert _cycles(graph) == []


ARCHITECTURE_PAGE = PACKAGE.parent / "docs" / "explanation" / "architecture.md"


def test_the_architecture_page_names_every_module() -> None:
    """docs/explanation/architecture.md names each module (``reader.py``, ``_scan.c``)
    of each layer: a new module without a line there fails."""
    page = ARCHITECTURE_PAGE.read_text(encoding="utf-8")
    missing = []
    for path in sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.c")]):
        if path.name in ("__init__.py", "__main__.py"):
            continue
        layer = path.parent.relative_to(PACKAGE).as_posix()
        heading = {".": "The core", "": "The core"}.get(layer, f"`ptree/{layer}/`")
        if f"`{path.name}`" not in page or (layer not in (".", "") and heading not in page):
            missing.append(str(path.relative_to(PACKAGE.parent)))
    assert missing == [], f"not named on {ARCHITECTURE_PAGE.name}: {missing}"


class TestStartup:
    """The front door and ``ptree --help`` load only what they need (issue 23's start-up
    targets, measured in benchmarks/startup.py, hold only while this does)."""

    @staticmethod
    def _loaded(code: str) -> set[str]:
        import json
        import subprocess
        import sys

        script = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            cwd=PACKAGE.parent,
        )
        return {m for m in json.loads(done.stdout.splitlines()[-1]) if m.startswith("ptree")}

    def test_import_ptree_loads_no_layer(self) -> None:
        """``import ptree`` loads the errors and the lazy loader, nothing else."""
        assert self._loaded("import ptree") == {"ptree", "ptree.errors", "ptree.lazy"}

    def test_help_loads_no_tree_reader_importer_or_store(self) -> None:
        """``ptree --help`` builds the parser without the tree, Pi's reader, an
        importer, a store or a framework."""
        loaded = self._loaded(
            "import contextlib, io\nimport ptree.cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        ptree.cli.main(['--help'])\n"
            "    except SystemExit:\n        pass"
        )
        heavy = {"ptree.tree", "ptree.entries", "ptree.pi", "ptree.stores", "ptree.context"}
        assert loaded & heavy == set()
        assert not any(m.startswith(("ptree.integrations", "ptree.providers")) for m in loaded)

    def test_the_lazy_table_names_what_type_checkers_see(self) -> None:
        """Each name the front door loads on first use (``_MODULES``) is imported from
        the same module under ``TYPE_CHECKING``, and the other way round: the two lists
        of the front door cannot drift apart."""
        import ptree

        source = (PACKAGE / "__init__.py").read_text(encoding="utf-8")
        guarded = next(
            node
            for node in ast.parse(source).body
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        )
        seen = {
            (alias.asname or alias.name, node.module)
            for node in guarded.body
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
            for alias in node.names
            if alias.name != node.module  # from . import x as x: the submodules
        }
        lazy = {
            (name, module) for module, names in ptree._MODULES.items() for name in names.split()
        }
        assert lazy == seen
        assert {name for name, _ in lazy} <= set(ptree.__all__)
