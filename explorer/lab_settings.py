"""The SVM settings the Filter lab solves with, as one value (``csvm.analysis.lab``'s
``SETTING_NAMES``): read from the session's RunConfig, passed on as keywords."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from csvm.runs.config import RunConfig

#: The settings a plain SVM on raw pixels has no use for (it has no filter).
FILTER_ONLY = ("regulariser", "lam")


@dataclass(frozen=True)
class LabSettings:
    """Kernel, C and regulariser of the SVM at a fixed filter."""

    kernel: str
    degree: int
    gamma: float
    coef0: float
    C: float | None
    regulariser: str
    lam: float

    @classmethod
    def from_config(cls, config: RunConfig) -> LabSettings:
        """The lab's settings out of a run's configuration."""
        return cls(
            kernel=config.kernel,
            degree=config.degree,
            gamma=config.gamma,
            coef0=config.coef0,
            C=config.C,
            regulariser=config.regulariser,
            lam=config.lam,
        )

    def as_kwargs(self) -> dict[str, Any]:
        """Keywords of :func:`csvm.analysis.lab.solve_fixed_filter` (and of ``lab_job``'s
        ``settings``), in ``SETTING_NAMES`` order."""
        return asdict(self)

    def raw_pixel_kwargs(self) -> dict[str, Any]:
        """Keywords of :func:`csvm.analysis.lab.solve_raw_pixels`: no regulariser."""
        return {k: v for k, v in self.as_kwargs().items() if k not in FILTER_ONLY}
