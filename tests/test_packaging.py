"""The package installs as a scikit-learn user would install it.

``pip install .`` gives the library alone (no Streamlit, Plotly, Dask, mlxtend): it imports,
fits on its bundled digits and runs the ``csvm`` command from another folder; ``.[app]``
adds what the app imports.  The two install tests build a fresh environment with uv from
the interpreter's real base (so they work when the suite itself runs inside a venv), with
the versions pinned to the ones this suite runs with.  They are slow (a minute or two, the
first time longer while uv downloads the wheels); run them alone with
``python -m pytest -q tests/test_packaging.py``.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
#: Distributions the library alone must not pull in: the app's, the cluster's and mlxtend.
NOT_IN_THE_LIBRARY = ("streamlit", "plotly", "pandas", "dask", "distributed", "mlxtend")


def _name(requirement: str) -> str:
    """The normalised distribution name of a PEP 508 line (``psycopg[binary]>=3`` → psycopg)."""
    return re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _requirement_lines(path: Path) -> list[str]:
    lines = (line.split("#")[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


# -- what is declared ---------------------------------------------------------------------
def test_requirements_txt_installs_the_project_with_both_extras():
    assert _requirement_lines(ROOT / "requirements.txt") == ["-e .[app,dask]"]
    assert set(PROJECT["optional-dependencies"]) == {"app", "dask"}
    assert PROJECT["scripts"]["csvm"] == "csvm.cli:main"


def test_no_dependency_is_declared_twice():
    """pyproject.toml is the one list: requirements-dev.txt adds only the test tools."""
    declared = [_name(r) for r in PROJECT["dependencies"]]
    for extra in PROJECT["optional-dependencies"].values():
        declared += [_name(r) for r in extra]
    assert len(declared) == len(set(declared)), declared
    dev = _requirement_lines(ROOT / "requirements-dev.txt")
    assert dev[0] == "-r requirements.txt"
    assert not {_name(r) for r in dev[1:]} & set(declared)


def test_the_library_needs_neither_the_app_nor_the_cluster():
    core = {_name(r) for r in PROJECT["dependencies"]}
    assert not core & set(NOT_IN_THE_LIBRARY)
    app = {_name(r) for r in PROJECT["optional-dependencies"]["app"]}
    assert {"streamlit", "plotly", "starlette", "streamlit-drawable-canvas"} <= app
    assert {_name(r) for r in PROJECT["optional-dependencies"]["dask"]} == {"dask"}
    everything = (ROOT / "pyproject.toml").read_text() + (ROOT / "requirements-dev.txt").read_text()
    assert "mlxtend" not in everything  # the bundled digits replaced it


def test_version_agrees():
    import csvm

    assert csvm.__version__ == PROJECT["version"]


# -- what installs ------------------------------------------------------------------------
def _constraints(path: Path) -> Path:
    """The versions installed here, so the fresh environment matches what the suite tests
    (and uv finds most of them in its cache)."""
    pins = {}
    for dist in importlib.metadata.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name and name != PROJECT["name"] and "+" not in dist.version:  # no local builds
            pins.setdefault(name, f"{name}=={dist.version}")
    path.write_text("\n".join(sorted(pins.values())) + "\n")
    return path


def _uv(*args: str, cwd: Path) -> None:
    """``uv pip install``, from the index and uv's cache, else from the cache alone."""
    command = [sys.executable, "-m", "uv", "pip", "install", "-q", *args]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:  # no index reachable: what uv has cached may be enough
        done = subprocess.run([*command, "--offline"], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


def _run(args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A fresh environment with the project installed from a copy of the checkout (so no
    build/ or egg-info is left here), without extras."""
    pytest.importorskip("uv", reason="uv is not installed (pip install -r requirements-dev.txt)")
    tmp = tmp_path_factory.mktemp("packaging")
    source = tmp / "source"
    shutil.copytree(ROOT / "csvm", source / "csvm", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    done = _run([sys.executable, "-m", "uv", "venv", "-q", str(tmp / "venv"), "--python",
                 sys.executable], cwd=tmp)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    python = tmp / "venv" / "bin" / "python"
    _uv("--python", str(python), "-c", str(_constraints(tmp / "pins.txt")), str(source), cwd=tmp)
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    return python, source, elsewhere


# Run in the fresh environment, from a folder outside the checkout.
_LIBRARY_SCRIPT = """
import importlib, importlib.util, pkgutil
import csvm
from csvm import KernelCSVM
from csvm.data import load_pair
from csvm.exceptions import CSVMError
from csvm.parallel import backend
from csvm.runs.cost import load_model
from csvm.runs.presets import load_presets

assert "site-packages" in csvm.__file__, csvm.__file__
present = [m for m in {absent!r} if importlib.util.find_spec(m) is not None]
assert not present, f"installed without being asked for: {{present}}"
assert load_presets() and load_model()

data = load_pair("mnist-5k", 3, 5, n_train=40)  # the bundled .npz
clf = KernelCSVM(image_shape=(28, 28), filter_shape=(5, 5), n_iter=2, random_state=0)
accuracy = clf.fit(data.X_train, data.y_train).score(data.X_test, data.y_test)
assert 0.5 < accuracy <= 1.0, accuracy

try:
    with backend("tcp://127.0.0.1:9"):
        raise AssertionError("a cluster without dask installed")
except CSVMError as exc:
    assert "csvm-explorer[dask]" in str(exc), exc

# Every module imports without the extras, but the Plotly figures (csvm.figures).
broken = {{}}
for info in pkgutil.walk_packages(csvm.__path__, "csvm."):
    try:
        importlib.import_module(info.name)
    except ImportError as exc:
        broken[info.name] = exc.name
assert broken == {{"csvm.figures": "plotly"}}, broken
print("accuracy", accuracy)
"""


@pytest.mark.slow
def test_the_library_installs_alone_fits_and_has_a_command(venv):
    python, _, elsewhere = venv
    done = _run([str(python), "-c", _LIBRARY_SCRIPT.format(absent=NOT_IN_THE_LIBRARY)], elsewhere)
    assert done.returncode == 0 and "accuracy" in done.stdout, done.stderr[-3000:]
    csvm = str(python.parent / "csvm")
    help_ = _run([csvm, "--help"], elsewhere)
    assert help_.returncode == 0 and "train" in help_.stdout, help_.stderr
    train = _run([csvm, "train", "--help"], elsewhere)
    assert train.returncode == 0 and "--n-iter" in train.stdout, train.stderr[-2000:]
    plot = _run([csvm, "train", "--pair", "3", "5", "--plot", str(elsewhere / "pics")], elsewhere)
    assert plot.returncode == 2 and "csvm-explorer[app]" in plot.stderr, plot.stderr[-2000:]


# Run in the fresh environment from the checkout, where app.py and explorer/ live.
_APP_SCRIPT = """
import importlib, importlib.util, pkgutil
import explorer
for info in pkgutil.walk_packages(explorer.__path__, "explorer."):
    importlib.import_module(info.name)
import psycopg, starlette.middleware  # noqa: F401
# The canvas registers itself with a running Streamlit only (the Filter lab imports it then).
assert importlib.util.find_spec("streamlit_drawable_canvas") is not None
from streamlit.testing.v1 import AppTest

at = AppTest.from_file("pages/about.py", default_timeout=120).run()
assert not at.exception, at.exception
print("title", at.title[0].value)
"""


@pytest.mark.slow
def test_the_app_extra_runs_the_app(venv, tmp_path):
    python, source, _ = venv
    _uv("--python", str(python), "-c", str(_constraints(tmp_path / "pins.txt")),
        f"{source}[app]", cwd=tmp_path)  # fmt: skip
    env_store = f"sqlite:///{tmp_path}/runs.sqlite"  # never the user's run store
    done = subprocess.run(
        [str(python), "-c", _APP_SCRIPT],
        cwd=ROOT,
        env={
            **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
            "CSVM_RUN_STORE": env_store,
        },  # fmt: skip
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0 and "title" in done.stdout, done.stderr[-3000:]
