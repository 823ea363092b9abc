"""Every module of csvm says what it offers: ``__all__`` lists each public function and
class defined in it, and names only what exists."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

CSVM = Path(__file__).resolve().parents[1] / "csvm"
MODULES = sorted(
    p.relative_to(CSVM.parent)
    .with_suffix("")
    .as_posix()
    .replace("/", ".")
    .removesuffix(".__init__")
    for p in CSVM.rglob("*.py")
    if p.name not in ("__main__.py", "_legacy.py")
)


def _public_defs(module: str) -> set[str]:
    path = CSVM.parent / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = CSVM.parent / module.replace(".", "/") / "__init__.py"
    tree = ast.parse(path.read_text())
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_")
    }


@pytest.mark.parametrize("module", MODULES)
def test_all_lists_every_public_function_and_class(module):
    mod = importlib.import_module(module)
    defs = _public_defs(module)
    if not defs and not hasattr(mod, "__all__"):
        return  # a package folder with nothing of its own
    assert hasattr(mod, "__all__"), f"{module} has public names but no __all__"
    missing = defs - set(mod.__all__)
    assert not missing, f"{module}.__all__ lacks {sorted(missing)}"
    absent = [name for name in mod.__all__ if not hasattr(mod, name)]
    assert not absent, f"{module}.__all__ names what it lacks: {absent}"


def test_the_contract_names_import_from_csvm():
    import csvm

    for name in (
        "KernelCSVM",
        "LinearCSVM",
        "SmallCNN",
        "RunConfig",
        "DivergenceError",
        "recommended",
    ):
        assert name in csvm.__all__ and hasattr(csvm, name)
