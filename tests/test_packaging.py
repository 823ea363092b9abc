"""The package installs: ``pip install .`` gives a ``csvm`` command and an importable
library outside the checkout, with its package data (presets, cost model)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]


def _requirements() -> list[str]:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()]


def test_dependencies_agree_with_requirements_txt():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["dependencies"] == _requirements()
    assert project["scripts"]["csvm"] == "csvm.cli:main"


def test_version_agrees():
    import csvm

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert csvm.__version__ == project["version"]


@pytest.mark.slow
def test_pip_install_gives_a_working_command(tmp_path):
    """A clean venv that sees the already-installed dependencies (no network needed), the
    project installed from a copy of the checkout, then used from another folder."""
    # A copy of what a clone holds (no build/ or egg-info left in the checkout).
    source = tmp_path / "source"
    shutil.copytree(ROOT / "csvm", source / "csvm", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "requirements.txt"):
        shutil.copy(ROOT / name, source / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    script = (
        "import csvm, sys; from csvm import KernelCSVM; "
        "from csvm.runs.presets import load_presets; from csvm.runs.cost import load_model; "
        "assert load_presets() and load_model(); "
        "assert 'site-packages' in csvm.__file__, csvm.__file__; print(csvm.__version__)"
    )
    out = subprocess.run(
        [str(python), "-c", script], cwd=elsewhere, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert re.fullmatch(r"\d+\.\d+\.\d+\s*", out.stdout)
    command = subprocess.run(
        [str(venv / "bin" / "csvm"), "--help"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
    )
    assert command.returncode == 0 and "train" in command.stdout, command.stderr
    train = subprocess.run(
        [str(venv / "bin" / "csvm"), "train", "--help"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
    )
    assert train.returncode == 0 and "--n-iter" in train.stdout, train.stderr[-2000:]
