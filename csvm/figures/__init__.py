"""Plotly figures.

TEMPORARY SHIM on the ``playground`` branch only: a ``csvm/figures/`` package hides the
flat ``csvm/figures.py`` module, so until the figures split lands this re-exports that
module's names.  On merge, take the split's own ``__init__.py`` instead of this file.
"""

import importlib.util as _util
from pathlib import Path as _Path

_spec = _util.spec_from_file_location(
    "csvm._figures_flat", _Path(__file__).resolve().parent.parent / "figures.py"
)
_flat = _util.module_from_spec(_spec)
_spec.loader.exec_module(_flat)
globals().update({k: v for k, v in vars(_flat).items() if not k.startswith("__")})
