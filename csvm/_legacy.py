"""The flat module names of csvm 0.1 (``csvm.config``, ``csvm.kernelised``, ...), kept
importable so that scripts written for 0.1 — the ``reproduce.py`` inside every exported
run bundle among them — still run.  Each old name is a thin module that forwards to the
module's new home in the layered package and warns once with the new name.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType

#: Old name -> new home.  ``csvm.datasets`` is still a real module (a contract name) and
#: ``csvm.runs`` is now a package, so neither is here.
MOVED: dict[str, str] = {
    **{
        f"csvm.{name}": f"csvm.model.{name}"
        for name in (
            "conv kernels regularisers validation kernelised linear multiclass prediction "
            "virtual baselines"
        ).split()
    },
    "csvm.images": "csvm.data.images",
    "csvm.deskew": "csvm.data.deskew",
    **{
        f"csvm.{name}": f"csvm.analysis.{name}"
        for name in "stats tuning lab lab_filters reproduced mnist10 progress".split()
    },
    "csvm.ablation": "csvm.analysis.ablation",
    **{
        f"csvm.{name}": f"csvm.runs.{name}"
        for name in "config sweeps cost summary persistence".split()
    },
    "csvm.cli_sweep": "csvm.cli.sweep",
}


class _Forwarder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old names; each becomes a module whose attributes are the new module's."""

    def find_spec(self, fullname, path=None, target=None):  # noqa: D102 - importlib API
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):  # noqa: D102 - importlib API: the default module
        return None

    def exec_module(self, module: ModuleType) -> None:  # noqa: D102 - importlib API
        new = MOVED[module.__name__]
        warnings.warn(
            f"{module.__name__} moved to {new} in csvm 0.2; import it from there.",
            FutureWarning,
            stacklevel=2,
        )
        real = importlib.import_module(new)
        module.__doc__ = real.__doc__
        module.__all__ = list(getattr(real, "__all__", ()))
        module.__getattr__ = lambda name: getattr(real, name)  # PEP 562


def install() -> None:
    """Put the forwarder on ``sys.meta_path`` once (after the normal finders)."""
    if not any(isinstance(f, _Forwarder) for f in sys.meta_path):
        sys.meta_path.append(_Forwarder())
