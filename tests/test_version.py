"""One version, written in pyproject.toml: the package reads it (from its metadata once
installed, from the checkout's pyproject.toml when run from one), and it is typed (PEP 561)."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import tomllib

import csvm
from csvm import _version

ROOT = Path(__file__).resolve().parents[1]


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_version_is_written_once():
    assert csvm.__version__ == _project()["project"]["version"]
    sources = [p for p in (ROOT / "csvm").rglob("*.py") if p.name != "_version.py"]
    written = [p for p in sources if re.search(r"__version__\s*=\s*['\"]", p.read_text())]
    assert written == []


def test_a_checkout_reads_its_own_pyproject(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "csvm-explorer"\nversion = "7.8.9"\n')
    assert _version._checkout_version(pyproject) == "7.8.9"
    pyproject.write_text('[project]\nname = "another-project"\nversion = "1.0"\n')
    assert _version._checkout_version(pyproject) is None  # a parent folder's other project
    assert _version._checkout_version(tmp_path / "missing.toml") is None


def test_installed_reads_the_metadata_with_a_fallback(monkeypatch):
    monkeypatch.setattr(_version, "_checkout_version", lambda path: None)
    monkeypatch.setattr(metadata, "version", lambda name: {"csvm-explorer": "3.1.4"}[name])
    assert _version.version() == "3.1.4"

    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    assert _version.version() == _version.UNKNOWN


def test_the_package_is_typed_and_ships_the_marker():
    assert (ROOT / "csvm" / "py.typed").is_file()
    data = _project()["tool"]["setuptools"]["package-data"]["csvm"]
    assert "py.typed" in data
