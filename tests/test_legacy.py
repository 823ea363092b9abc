"""Scripts written for csvm 0.1 still run: the reproduce.py inside a run bundle exported
before the package was layered imports ``csvm.config`` and ``csvm.datasets``."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pytest

from csvm._legacy import MOVED

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / "tests" / "fixtures" / "export_v0.1.zip"


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_old_name_forwards_with_a_warning(old):
    import importlib

    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    new = importlib.import_module(MOVED[old])
    assert any(MOVED[old] in str(w.message) for w in caught), [str(w.message) for w in caught]
    for name in getattr(new, "__all__", ()):
        assert getattr(module, name) is getattr(new, name)


def test_the_old_bundles_reproduce_script_runs(tmp_path):
    with zipfile.ZipFile(io.BytesIO(BUNDLE.read_bytes())) as zf:
        script = zf.read("reproduce.py").decode()
    assert "from csvm.config import parse" in script  # written by 0.1
    path = tmp_path / "reproduce.py"
    path.write_text(script)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-W", "always::FutureWarning", str(path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "test accuracy:" in done.stdout
    assert "csvm.config moved to csvm.runs.config" in done.stderr
