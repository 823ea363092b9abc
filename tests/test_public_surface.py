"""The public/private line of ``csvm`` and ``explorer`` (and of the pages that use them),
drawn once.

A name another module uses is either public (no underscore, in its module's ``__all__``,
documented) or it lives in a private module (a name starting with ``_``, such as
``csvm/figures/_style.py``) that only modules of its own package import.  Read from the
source with :mod:`ast`, so nothing is imported and a new module is checked the day it is
written.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("csvm", "explorer")
#: Scripts that belong to no package: they may use public names only.
SCRIPTS = ("pages", "app.py")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, tuple[Path, ast.Module]]:
    found = {}
    for package in PACKAGES + SCRIPTS:
        top = ROOT / package
        for path in sorted(top.rglob("*.py")) if top.is_dir() else [top]:
            found[_module_name(path)] = (path, ast.parse(path.read_text(encoding="utf-8")))
    return found


SOURCES = _sources()
PACKAGE_NAMES = {_module_name(path) for path, _ in SOURCES.values() if path.name == "__init__.py"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _package_of(module: str) -> str:
    return module if module in PACKAGE_NAMES else module.rpartition(".")[0]


def _may_import(importer: str, target: str) -> bool:
    """Whether ``importer`` may import the module ``target``: a module under a private
    component is for the package holding that component only."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if _private(part):
            owner = ".".join(parts[:i])
            return importer == owner or importer.startswith(owner + ".")
    return True


def _may_use(importer: str, module: str, name: str) -> bool:
    """Whether ``importer`` may use ``module.name``."""
    if not _may_import(importer, module):
        return False
    if not _private(name):
        return True
    if f"{module}.{name}" in SOURCES:  # a private submodule: for its own package only
        return _may_import(importer, f"{module}.{name}")
    if importer == module:
        return True
    # A private name of a private module, used within that module's package.
    last = module.rpartition(".")[2]
    package = _package_of(module)
    return _private(last) and (importer == package or importer.startswith(package + "."))


def _ours(module: str | None) -> bool:
    return bool(module) and module.split(".")[0] in PACKAGES


def _crossings() -> Iterator[str]:
    for importer, (path, tree) in SOURCES.items():
        where = path.relative_to(ROOT)
        modules: dict[str, str] = {}  # local name -> module of ours it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if _ours(alias.name) and not _may_import(importer, alias.name):
                        yield f"{where}:{node.lineno}: import {alias.name}"
                    if alias.asname and alias.name in SOURCES:
                        modules[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and _ours(node.module):
                for alias in node.names:
                    if not _may_use(importer, node.module, alias.name):
                        yield f"{where}:{node.lineno}: from {node.module} import {alias.name}"
                    if f"{node.module}.{alias.name}" in SOURCES:
                        modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
                and not _may_use(importer, modules[node.value.id], node.attr)
            ):
                yield f"{where}:{node.lineno}: {node.value.id}.{node.attr}"


def test_no_private_name_is_used_across_modules():
    assert sorted(_crossings()) == []


def _bound_names(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level (in ``if`` and ``try`` blocks too)."""
    names: set[str] = set()
    body = list(tree.body)
    while body:
        node = body.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.If | ast.Try | ast.With):
            body += node.body + getattr(node, "orelse", []) + getattr(node, "finalbody", [])
            for handler in getattr(node, "handlers", []):
                body += handler.body
    return names


def _all_of(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                return list(ast.literal_eval(node.value))
    return None


def _all_problems() -> Iterator[str]:
    for module, (_, tree) in SOURCES.items():
        names = _all_of(tree)
        if names is None:
            continue
        bound = _bound_names(tree)
        if "__getattr__" in bound:  # a module that makes its names on first use
            continue
        submodules = {m.rpartition(".")[2] for m in SOURCES if m.rpartition(".")[0] == module}
        yield from (f"{module}: {n} is not defined" for n in names if n not in bound | submodules)
        yield from (f"{module}: {n} is private" for n in names if _private(n))
        yield from (f"{module}: {n} listed twice" for n in set(names) if names.count(n) > 1)


def test_every_name_in_all_exists_and_is_public():
    assert sorted(_all_problems()) == []


def test_the_rule_itself():
    """The checks above see what they are meant to (so an empty list means something)."""
    assert _may_use("csvm.figures.filters", "csvm.figures._style", "LAYOUT")
    assert _may_use("csvm.figures.filters", "csvm.figures._style", "_x")
    assert not _may_use("csvm.figures.filters", "csvm.figures.style", "_x")
    assert not _may_use("explorer.lab", "csvm.figures._style", "LAYOUT")
    assert _may_use("csvm", "csvm", "_legacy")
    assert not _may_use("explorer.app", "csvm", "_legacy")
    assert _may_use("csvm.figures.style", "csvm.figures.style", "_x")
