"""The house's size rules, checked on every Python file of the project: no function over
80 lines and no file over 600 (DEVELOPERS.md, "Standards").  Read with :mod:`ast`, so
nothing is imported; a docstring counts as part of its function."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("csvm", "explorer", "pages", "bench", "tests")
MAX_FUNCTION_LINES = 80
MAX_FILE_LINES = 600


def _files() -> list[Path]:
    found = [ROOT / "app.py"]
    for folder in FOLDERS:
        found += sorted((ROOT / folder).rglob("*.py"))
    return [p for p in found if p.is_file()]


def _long_functions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    return [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1})"
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]


def test_the_walk_sees_the_project():
    files = {p.relative_to(ROOT).as_posix() for p in _files()}
    assert {"app.py", "csvm/model/kernelised.py", "pages/train.py"} <= files
    assert "tests/test_house_style.py" in files


def test_a_long_function_is_found(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "m.py").write_text(f"def f():\n{body}\n")
    global ROOT
    root, ROOT = ROOT, tmp_path
    try:
        assert _long_functions(tmp_path / "m.py") == ["m.py:1 f (81)"]
    finally:
        ROOT = root


def test_no_function_is_over_80_lines():
    found = [f for path in _files() for f in _long_functions(path)]
    assert found == [], "split these functions: " + "; ".join(found)


def test_no_file_is_over_600_lines():
    found = [
        f"{p.relative_to(ROOT)} ({n})"
        for p in _files()
        if (n := p.read_text().count("\n")) > MAX_FILE_LINES
    ]
    assert found == [], "split these files by what they do: " + "; ".join(found)
