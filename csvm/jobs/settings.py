"""Every limit of the job pool in one place, each overridable by an environment variable.

A classroom server is configured before it starts, e.g.::

    CSVM_MAX_WORKERS=4 CSVM_MAX_JOB_SECONDS=300 streamlit run app.py

and the pages build their pool from :meth:`PoolSettings.from_env`.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

__all__ = ["ENV_VARS", "PoolSettings"]

#: field name -> environment variable that overrides it.
ENV_VARS: dict[str, str] = {
    "max_workers": "CSVM_MAX_WORKERS",
    "lease_seconds": "CSVM_LEASE_SECONDS",
    "max_active_per_owner": "CSVM_MAX_ACTIVE_PER_SESSION",
    "max_job_seconds": "CSVM_MAX_JOB_SECONDS",
    "finished_bytes_budget": "CSVM_FINISHED_BYTES",
    "max_points_per_series": "CSVM_MAX_POINTS_PER_SERIES",
    "max_array_points_per_series": "CSVM_MAX_ARRAY_POINTS_PER_SERIES",
    "max_finished": "CSVM_MAX_FINISHED",
    "spares": "CSVM_SPARE_WORKERS",
    "start_method": "CSVM_START_METHOD",
    "fair_share_seconds": "CSVM_FAIR_SHARE_SECONDS",
    "max_suspended": "CSVM_MAX_SUSPENDED",
    "max_active_per_address": "CSVM_PER_ADDRESS_JOBS",
    "share_jobs": "CSVM_SHARE_JOBS",
    "shared_results": "CSVM_SHARED_RESULTS",
    "shared_results_bytes": "CSVM_SHARED_RESULTS_BYTES",
}

_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}
#: Fields given in bytes, which accept units ("256M").
_BYTES = ("finished_bytes_budget", "shared_results_bytes")


def _parse_bytes(text: str) -> int:
    """``"268435456"``, ``"256M"``, ``"256 MB"``, ``"1g"`` -> bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b)?\s*", text, flags=re.IGNORECASE)
    if match is None:
        raise ValueError(text)
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


@dataclass(frozen=True)
class PoolSettings:
    """The limits of a :class:`~csvm.jobs.JobPool`.

    Parameters
    ----------
    max_workers : int
        Jobs running at once (``CSVM_MAX_WORKERS``; default: the number of cores).  Later
        jobs wait in one FIFO queue shared by every session.
    lease_seconds : float
        A queued or running job that nobody polls, and whose owner sends no heartbeat, for
        this long is stopped, so closed tabs free the cores; an owner silent this long
        no longer protects its finished jobs from eviction (``CSVM_LEASE_SECONDS``, 180).
    max_active_per_owner : int
        Queued plus running jobs one owner (browser session) may have
        (``CSVM_MAX_ACTIVE_PER_SESSION``, 8).
    max_job_seconds : float
        CPU seconds one job may use; 0 means no limit (``CSVM_MAX_JOB_SECONDS``, 600).
    finished_bytes_budget : int
        Total pickled size of the events and results kept for finished jobs
        (``CSVM_FINISHED_BYTES``, 256 MiB; accepts ``"256M"``, ``"1G"``).
    max_points_per_series : int
        Events kept per (kind, model, classifier, step) series of one job
        (``CSVM_MAX_POINTS_PER_SERIES``, 1000).
    max_array_points_per_series : int
        Events per series that keep their array payloads (filters, maps, gradients);
        the last event always does (``CSVM_MAX_ARRAY_POINTS_PER_SERIES``, 32).
    max_finished : int
        Secondary bound: finished jobs kept whatever their size (``CSVM_MAX_FINISHED``, 200).
    spares : int or None
        Idle workers kept warm (``CSVM_SPARE_WORKERS``; default ``max_workers + 1``, enough
        for a run's three jobs to start without waiting for imports).
    start_method : {"forkserver", "spawn"}
        How worker processes start (``CSVM_START_METHOD``).  "forkserver" (default where
        available) forks each worker from a server process that imported the preload
        modules once: a fresh process per job in tens of milliseconds.  "spawn" starts a
        new interpreter per worker, which imports everything again (1-3 s of CPU).
    fair_share_seconds : float
        A fair share between browsers: when every worker is busy and a browser with
        nothing running has a job queued, a job that has run this long since it last
        started is suspended (SIGSTOP, no CPU) and the newcomer's job takes its worker;
        suspended jobs go on (SIGCONT) as workers free up, browsers with the fewest
        running jobs first (``CSVM_FAIR_SHARE_SECONDS``, 5; 0 turns suspension off).
    max_suspended : int or None
        Jobs suspended at once; each keeps its process's memory (``CSVM_MAX_SUSPENDED``;
        default ``4 * max_workers``).
    max_active_per_address : int or None
        Queued plus running jobs of all the browsers that connect from one network
        address together (``CSVM_PER_ADDRESS_JOBS``; default ``max_active_per_owner``), and
        the unit of the fair share: a student who clears the owner cookie, or opens many
        private windows, is still one address, with one address's share of the workers
        and one browser's cap.  0 turns it off: caps and shares go by browser only, for a
        class whose students all reach the server through one router (NAT) or through a
        proxy that is not trusted (see ``CSVM_TRUST_FORWARDED`` in the README).
    share_jobs : bool
        Whether jobs submitted with ``share=`` (the Train page's) are computed once for
        everyone who submits the same job (:mod:`csvm.jobs.shared`; ``CSVM_SHARE_JOBS``,
        1; 0 computes every submission on its own, as before).
    shared_results : int
        Finished results of shared work kept for identical jobs submitted later
        (:mod:`csvm.jobs.shared`; ``CSVM_SHARED_RESULTS``, 32; 0 keeps none, work that is
        queued or running is still shared).
    shared_results_bytes : int
        Their total pickled size (``CSVM_SHARED_RESULTS_BYTES``, 64 MiB; accepts ``"64M"``).
    tick_seconds : float
        How often a background thread starts queued jobs, reaps ended processes and expires
        leases (not an environment variable: it is not a policy).
    """

    max_workers: int = 0
    lease_seconds: float = 180.0
    max_active_per_owner: int = 8
    max_job_seconds: float = 600.0
    finished_bytes_budget: int = 256 * 2**20
    max_points_per_series: int = 1000
    max_array_points_per_series: int = 32
    max_finished: int = 200
    spares: int | None = None
    start_method: str = ""
    fair_share_seconds: float = 5.0
    max_suspended: int | None = None
    max_active_per_address: int | None = None
    share_jobs: bool = True
    shared_results: int = 32
    shared_results_bytes: int = 64 * 2**20
    tick_seconds: float = 0.5

    def __post_init__(self) -> None:
        # 0 workers means "the number of cores"; resolved here so readers see a number.
        if not self.max_workers:
            object.__setattr__(self, "max_workers", os.cpu_count() or 1)
        if not self.start_method:
            methods = mp.get_all_start_methods()
            object.__setattr__(
                self, "start_method", "forkserver" if "forkserver" in methods else "spawn"
            )
        if self.start_method not in ("forkserver", "spawn"):
            raise ValueError(
                f"PoolSettings.start_method = {self.start_method!r}: use 'forkserver' or "
                f"'spawn' (environment variable {ENV_VARS['start_method']})"
            )
        checks = {
            "max_workers": self.max_workers >= 1,
            "lease_seconds": self.lease_seconds > 0,
            "max_active_per_owner": self.max_active_per_owner >= 1,
            "max_job_seconds": self.max_job_seconds >= 0,
            "finished_bytes_budget": self.finished_bytes_budget >= 0,
            "max_points_per_series": self.max_points_per_series >= 2,
            "max_array_points_per_series": self.max_array_points_per_series >= 1,
            "max_finished": self.max_finished >= 0,
            "spares": self.spares is None or self.spares >= 0,
            "fair_share_seconds": self.fair_share_seconds >= 0,
            "max_suspended": self.max_suspended is None or self.max_suspended >= 0,
            "max_active_per_address": self.max_active_per_address is None
            or self.max_active_per_address >= 0,
            "shared_results": self.shared_results >= 0,
            "shared_results_bytes": self.shared_results_bytes >= 0,
            "tick_seconds": self.tick_seconds > 0,
        }
        for name, ok in checks.items():
            if not ok:
                minimum = {
                    "max_points_per_series": "at least 2",
                    "max_job_seconds": ">= 0",
                    "fair_share_seconds": ">= 0",
                    "max_suspended": ">= 0",
                    "max_active_per_address": ">= 0",
                    "shared_results": ">= 0",
                    "shared_results_bytes": ">= 0",
                }
                raise ValueError(
                    f"PoolSettings.{name} = {getattr(self, name)!r} is out of range "
                    f"(must be {minimum.get(name, 'positive')}); fix it or the environment "
                    f"variable {ENV_VARS.get(name, '(none)')}"
                )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> PoolSettings:
        """Defaults, overridden by the ``CSVM_*`` variables set, then by ``overrides``.

        Parameters
        ----------
        environ : mapping, optional
            Where to read the variables (default ``os.environ``).
        **overrides
            Field values that win over the environment (e.g. from old keyword arguments).

        Raises
        ------
        ValueError
            A variable that is not a number of the right kind, naming it and its value.
        """
        environ = os.environ if environ is None else environ
        kinds = {f.name: f.type for f in fields(cls)}
        values: dict[str, Any] = {}
        for name, var in ENV_VARS.items():
            text = environ.get(var, "").strip()
            if not text:
                continue
            try:
                if name in _BYTES:
                    values[name] = _parse_bytes(text)
                elif name == "start_method":
                    values[name] = text
                elif "bool" in str(kinds[name]):
                    values[name] = {"0": False, "1": True}[text]
                elif "float" in str(kinds[name]):
                    values[name] = float(text)
                else:
                    values[name] = int(text)
            except (KeyError, ValueError):
                kind = (
                    "a number of bytes such as 268435456 or 256M"
                    if name in _BYTES
                    else ("a number" if "float" in str(kinds[name]) else "a whole number")
                )
                kind = "0 or 1" if "bool" in str(kinds[name]) else kind
                raise ValueError(
                    f"environment variable {var}={text!r} is not {kind}; fix or unset it"
                ) from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    @property
    def spare_workers(self) -> int:
        """Idle workers to keep warm: ``spares``, or ``max_workers + 1`` when unset."""
        return self.max_workers + 1 if self.spares is None else int(self.spares)

    @property
    def suspended_limit(self) -> int:
        """Jobs that may be suspended at once: ``max_suspended``, or ``4 * max_workers``."""
        return 4 * self.max_workers if self.max_suspended is None else int(self.max_suspended)

    @property
    def address_limit(self) -> int:
        """Active jobs one network address may have (0: addresses are not counted):
        ``max_active_per_address``, or ``max_active_per_owner`` when unset."""
        if self.max_active_per_address is None:
            return self.max_active_per_owner
        return int(self.max_active_per_address)

    def with_(self, **changes: Any) -> PoolSettings:
        """A copy with some fields changed (``None`` values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})
