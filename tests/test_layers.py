"""The folder listing is the architecture: lower layers never import higher ones.

Every ``import`` in ``csvm/`` is read from the source (lazy imports inside functions
count too; only ``if TYPE_CHECKING:`` blocks are exempt), and each must point to the same
layer or a lower one.  ``csvm/__init__.py``, ``csvm/__main__.py`` and the contract module
``csvm/datasets.py`` are the package's front door and may import anything.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CSVM = Path(__file__).resolve().parents[1] / "csvm"

#: Lowest first.  events, exceptions, parallel and _version (the package's version) are
#: importable from every layer.
LAYERS = ("base", "model", "data", "analysis", "runs", "store", "jobs", "figures", "cli")
FRONT_DOOR = {"csvm/__init__.py", "csvm/__main__.py", "csvm/datasets.py", "csvm/_legacy.py"}
BASE = {"events", "exceptions", "parallel", "_version"}


def layer_of(module: str) -> str | None:
    """The layer of a dotted ``csvm`` module name (None outside csvm or for the package)."""
    parts = module.split(".")
    if parts[0] != "csvm" or len(parts) == 1:
        return None
    head = parts[1]
    if head in BASE:
        return "base"
    return head if head in LAYERS else "front"


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in ast.walk(node):
                if hasattr(inner, "lineno"):
                    lines.add(inner.lineno)
    return lines


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every csvm module a file imports, with its line (``from csvm import x`` counts as
    ``csvm.x``)."""
    tree = ast.parse(path.read_text())
    skip = _type_checking_lines(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("csvm")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "csvm":
                found += [(node.lineno, f"csvm.{a.name}") for a in node.names]
            elif node.module.startswith("csvm."):
                found.append((node.lineno, node.module))
    return found


def _files() -> list[Path]:
    return sorted(CSVM.rglob("*.py"))


def test_every_module_has_a_layer():
    for path in _files():
        rel = path.relative_to(CSVM.parent).as_posix()
        if rel in FRONT_DOOR:
            continue
        module = rel[:-3].replace("/", ".").removesuffix(".__init__")
        assert layer_of(module) in LAYERS, f"{rel} is in no layer: put it in one of {LAYERS}"


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.relative_to(CSVM.parent).as_posix())
def test_no_upward_import(path):
    rel = path.relative_to(CSVM.parent).as_posix()
    if rel in FRONT_DOOR:
        return
    own = LAYERS.index(layer_of(rel[:-3].replace("/", ".").removesuffix(".__init__")))
    upward = [
        f"line {line}: {name} ({layer_of(name)})"
        for line, name in imports_of(path)
        if layer_of(name) in LAYERS and LAYERS.index(layer_of(name)) > own
    ]
    front = [f"line {line}: {name}" for line, name in imports_of(path) if layer_of(name) == "front"]
    assert not upward, f"{rel} ({LAYERS[own]}) imports a higher layer: {upward}"
    assert not front, f"{rel} imports the package's front door instead of a layer: {front}"


def test_the_checker_sees_an_upward_import(tmp_path):
    """The test above can fail: a lazy import of a higher layer inside a function is found."""
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from csvm.runs.config import RunConfig\n    import csvm.cli\n")
    names = [name for _, name in imports_of(src)]
    assert names == ["csvm.runs.config", "csvm.cli"]
    assert LAYERS.index(layer_of(names[0])) > LAYERS.index("analysis")


def test_the_library_never_imports_streamlit():
    for path in _files():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n.split(".")[0] == "streamlit" for n in names), path
