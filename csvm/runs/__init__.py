"""Runs of the explorer: :class:`RunConfig` (the one home of every setting), the job
targets a worker process executes, run control (pause/step/stop), the views a page draws
from a run's events, sweeps, the cost model and export/import (never pickle).

Imports every layer below it (model, data, analysis); never :mod:`csvm.jobs`,
:mod:`csvm.figures` or :mod:`csvm.cli`.
"""

from csvm.runs.config import RunConfig, parse

__all__ = ["RunConfig", "parse"]
