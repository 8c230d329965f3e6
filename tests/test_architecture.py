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
        """Each layer is a package whose docstring says what it may import."""
        for layer in ALLOWED:
            if layer == "core":
                continue
            init = PACKAGE / layer / "__init__.py"
            assert init.is_file(), f"ptree/{layer}/ is missing"
            doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
            assert doc is not None, f"ptree/{layer}/__init__.py has no docstring"
            assert "Imports" in doc or "imports" in doc, f"ptree/{layer}: imports not stated"

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
    """Every name a module defines anywhere: functions, classes, attributes, slots."""
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
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)  # __slots__ entries and the like
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
