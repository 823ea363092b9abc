"""Streamlit glue shared by the pages: the worker pool, the session's runs, cached data."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import streamlit as st

from csvm.experiments import DEFAULT_CONFIG, load_data, run_model
from csvm.jobs import JobPool

ASSETS = Path(__file__).resolve().parents[1] / "assets"
FINAL_STATES = {"done", "error", "stopped"}


@st.cache_resource
def get_pool() -> JobPool:
    """One pool of worker processes for the whole server, sized to the cores.

    Idle workers import the library and load the default dataset in advance
    (:mod:`pages.worker_preload`), so a run starts streaming about a second after Start.
    Jobs nobody polls for three minutes are cancelled (closed tabs free the cores).
    """
    return JobPool(
        max_workers=os.cpu_count() or 2,
        lease_seconds=180.0,
        preload=("numpy", "sklearn.svm", "csvm.experiments", "pages.worker_preload"),
    )


@st.cache_data(ttl=60)
def dataset_table() -> list[dict[str, Any]]:
    """Every dataset with its availability (re-checked each minute: a fetch may land)."""
    from csvm.datasets import list_datasets

    return list_datasets()


@st.cache_data
def presets() -> list[dict[str, Any]]:
    """The presets of ``assets/presets.json`` (name, description, optional requires, config)."""
    return json.loads((ASSETS / "presets.json").read_text())


@st.cache_data(max_entries=8, show_spinner="Loading images…")
def cached_data(
    dataset: str, class_a: str, class_b: str, protocol: str | None, n_train: int | None, seed: int
):
    """The pair a run uses (the same call its worker makes, so indices agree)."""
    return load_data(
        {
            "dataset": dataset,
            "class_a": class_a,
            "class_b": class_b,
            "protocol": protocol,
            "n_train": n_train,
            "seed": seed,
        }
    )


def data_for(config: dict[str, Any]):
    """The cached pair a run configuration uses (see :func:`cached_data`)."""
    c = {**DEFAULT_CONFIG, **config}
    return cached_data(
        c["dataset"],
        str(c["class_a"]),
        str(c["class_b"]),
        c["protocol"],
        c["n_train"],
        int(c["seed"]),
    )


def runs() -> dict[str, dict[str, Any]]:
    """This browser session's runs, newest last."""
    return st.session_state.setdefault("runs", {})


def submit_run(config: dict[str, Any]) -> str:
    """Queue the CSVM and the chosen baselines as jobs; returns the run id."""
    pool = get_pool()
    run_id = uuid.uuid4().hex[:8]
    group = st.session_state.setdefault("session_group", uuid.uuid4().hex)
    models = ["csvm"] + [b for b in ("svm", "cnn") if b in config.get("baselines", [])]
    jobs = {
        m: pool.submit(run_model, {"config": config, "model": m}, name=f"{run_id}:{m}", group=group)
        for m in models
    }
    runs()[run_id] = {"id": run_id, "config": dict(config), "jobs": jobs, "created": time.time()}
    st.session_state["current_run"] = run_id
    return run_id


def jobs_param(run: dict[str, Any]) -> str:
    """A run's jobs as one URL value, ``"csvm:ID,svm:ID"``."""
    return ",".join(f"{m}:{j}" for m, j in run["jobs"].items())


def reattach(run_id: str, jobs: str, config: dict[str, Any]) -> None:
    """After a reload, find a run's jobs in the server-wide pool again."""
    if run_id in runs():
        return
    pool = get_pool()
    try:
        pairs = dict(item.split(":", 1) for item in jobs.split(",") if item)
    except ValueError:
        return
    if pairs and all(pool.get(j) is not None for j in pairs.values()):
        runs()[run_id] = {"id": run_id, "config": config, "jobs": pairs, "created": time.time()}
        st.session_state["current_run"] = run_id


def poll_run(run: dict[str, Any]) -> dict[str, Any]:
    """Current views of a run's jobs (draining their new events)."""
    pool = get_pool()
    return {m: pool.poll(j) for m, j in run["jobs"].items()}


def is_running(views: dict[str, Any]) -> bool:
    """Whether any job of a run is still queued or running."""
    return any(v is not None and v.state not in FINAL_STATES for v in views.values())


def result_columns() -> dict[str, Any]:
    """How the pages format accuracy and time columns of a results table."""
    return {
        "train accuracy": st.column_config.NumberColumn(format="%.2f %%"),
        "test accuracy": st.column_config.NumberColumn(format="%.2f %%"),
        "seconds": st.column_config.NumberColumn(format="%.2f s"),
    }
