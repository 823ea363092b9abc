"""Which Train jobs a class shares: the digest of the data split that a run reads.

A Train job's result is fixed by its settings (its kwargs) and by the data split it trains
and is scored on.  Submitted with ``share=split_share(config)``, identical jobs of
different students (a class pressing Start on one preset) are computed once by the pool
(:mod:`csvm.jobs.shared`); each student keeps a job of its own to watch and control.
"""

from __future__ import annotations

import streamlit as st

from csvm.jobs.shared import digest
from csvm.runs.config import RunConfig
from csvm.runs.targets import load_data

__all__ = ["data_key", "split_share"]


def data_key(config: RunConfig) -> RunConfig:
    """``config``'s data settings alone (everything else at its default): what fixes the
    split a run reads, so the key of every cache of splits."""
    return RunConfig(
        dataset=config.dataset,
        class_a=config.class_a,
        class_b=config.class_b,
        classes=config.classes,
        protocol=config.protocol,
        n_train=config.n_train,
        seed=config.seed,
    )


@st.cache_data(max_entries=64, show_spinner=False)
def _split_digest(key: RunConfig) -> str:
    data = load_data(key)
    return digest(data.X_train, data.y_train, data.X_val, data.y_val, data.X_test, data.y_test)


def split_share(config: RunConfig) -> str:
    """The digest of the data split ``config`` names (its data settings only), for the
    pool's ``share``: the worker loads the same split from the same settings, and the
    digest tells a changed file (an upload replaced under its name) from the same data.

    Parameters
    ----------
    config : RunConfig

    Returns
    -------
    str
    """
    return _split_digest(data_key(config))
