"""The Train page's jobs on the Dask cluster named by ``CSVM_DASK_SCHEDULER``.

Each job still goes through the server's pool (caps, fair share, leases), with
:func:`csvm.jobs.dask_backend.relay` as its target: see that module for how events and
commands travel.  A cluster that cannot be reached (checked once a minute, as the Sweep
page does) leaves the jobs on the server's own workers, and the page says so.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from csvm.jobs.dask_backend import relay
from explorer.cluster import cluster, executor_address

__all__ = ["on_cluster", "show_cluster_note"]

_NOTE = "cluster_note"


def on_cluster(targets: dict[str, tuple[Any, dict]]) -> dict[str, tuple[Any, dict]]:
    """The Train run's jobs (model -> (target, kwargs)) as they should be submitted: each
    wrapped in a relay to the Dask cluster when one is named and reachable, else as they
    are (with a note for :func:`show_cluster_note` when the named one is unreachable)."""
    address = executor_address()
    st.session_state.pop(_NOTE, None)
    if not address:
        return targets
    _, problem = cluster(address)
    if problem:
        st.session_state[_NOTE] = (
            f"This run trains on the server's own workers: the Dask cluster at {address} "
            f"cannot be used ({problem})"
        )
        return targets
    return {
        model: (relay, {"scheduler": address, "target": target, "kwargs": kwargs})
        for model, (target, kwargs) in targets.items()
    }


def show_cluster_note() -> None:
    """Say, above the run, that its jobs fell back to the server's workers (if they did)."""
    note = st.session_state.get(_NOTE)
    if note:
        st.warning(note, icon=":material/cloud_off:")
