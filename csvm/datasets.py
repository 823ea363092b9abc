"""``csvm.datasets``: the data loaders under their contract name (see DESIGN.md).

The loaders live in :mod:`csvm.data`; this module re-exports its public names so that
``from csvm.datasets import load_pair`` keeps working.
"""

from csvm.data import *  # noqa: F403 - the whole public API of csvm.data, by design
from csvm.data import __all__  # noqa: F401
