"""No two modules of csvm, or of the app's explorer package, import each other, directly or
round a loop.

Every ``import`` statement counts, also those inside functions: an import put off into a
function still makes the two modules one unit that neither can be understood, tested or
moved without.  The graph is read from the source with :mod:`ast`, so nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (ROOT / "csvm", ROOT / "explorer")


def _modules() -> dict[str, Path]:
    """Every module of csvm and explorer by its dotted name (a package by its ``__init__``)."""
    found = {}
    for path in (p for package in PACKAGES for p in package.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The csvm and explorer modules that ``name`` imports anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, one level up per extra dot
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:  # `from csvm.a import b`: the module b, else csvm.a
                sub = f"{base}.{alias.name}"
                targets.add(sub if sub in modules else base)
    return {t for t in targets if t in modules and t != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imported(name, path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_is_read():
    """The walk sees the library's real imports, the deferred ones included."""
    graph = _graph()
    assert len(graph) > 100
    assert "csvm.runs.config" in graph["csvm.runs.targets"]
    assert "csvm.runs.comparison_models" in graph["csvm.runs.targets"]  # inside a function
    assert "csvm.model.kernelised" in graph["csvm"]
    assert "explorer.runs" in graph["explorer.run_store"]
    assert "csvm.runs.config" in graph["explorer.runs"]


def test_a_cycle_is_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_csvm_and_explorer_have_no_import_cycle():
    cycles = _cycles(_graph())
    assert cycles == [], "modules that import each other (any import, at any level): " + str(cycles)
