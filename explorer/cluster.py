"""The Dask cluster a page's cells may run on (``CSVM_DASK_SCHEDULER``), shared by the Sweep
and Learning-curves pages: connected once per server, an unreachable one named and kept a
minute, and its futures seen as the pool's jobs are."""

from __future__ import annotations

import os
from dataclasses import dataclass

import streamlit as st

from csvm.exceptions import CSVMError
from csvm.parallel import sweep_executor


def executor_address() -> str:
    """The Dask scheduler named by ``CSVM_DASK_SCHEDULER`` ("" for the server's own pool)."""
    return os.environ.get("CSVM_DASK_SCHEDULER", "").strip()


@st.cache_resource(show_spinner="Connecting to the Dask cluster…")
def _connected(address: str):
    """The Dask cluster at ``address``, connected once per server (failures are not kept)."""
    return sweep_executor(address)


@st.cache_data(ttl=60, show_spinner=False)
def _cluster_problem(address: str) -> str:
    """Why the cluster at ``address`` cannot be used ("" when it can); a failure is kept a
    minute, so the page does not wait for the connection timeout on every rerun."""
    try:
        _connected(address)
    except CSVMError as exc:
        return str(exc)
    return ""


def cluster(address: str):
    """The Dask cluster named by ``CSVM_DASK_SCHEDULER`` and the reason it cannot be used:
    ``(None, "")`` for the server's own pool, ``(None, reason)`` when it is unreachable."""
    if not address:
        return None, ""
    problem = _cluster_problem(address)
    return (None, problem) if problem else (_connected(address), "")


@dataclass
class FutureView:
    """A cell on the Dask cluster, seen as the pages see a job of the pool."""

    name: str
    state: str
    result: dict | None = None
    error: str = ""


def future_view(name: str, future) -> FutureView:
    if future.cancelled():
        return FutureView(name, "stopped")
    if not future.done():
        return FutureView(name, "running")
    if future.exception() is not None:
        return FutureView(name, "error", error=str(future.exception()))
    return FutureView(name, "done", result=future.result())
