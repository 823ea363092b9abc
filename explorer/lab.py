"""The Filter lab's state and actions, apart from its widgets: the filters being edited,
the SVM solved at them (here or in the worker pool), the lab's jobs and a learned filter.

Everything lives in ``st.session_state`` under ``lab_*`` keys (the tests read
``lab_filters``, ``lab_result``, ``lab_jobs``, ``lab_landscape_1d``); the maths is
:mod:`csvm.analysis.lab`.  The SVM keywords travel as one :class:`LabSettings`.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import numpy as np
import streamlit as st
from threadpoolctl import threadpool_limits

from csvm.analysis.lab import (
    solve_fixed_filter,
    solve_raw_pixels,
    starting_filters,
    step_scale,
)
from csvm.runs.config import MODEL_LABELS, SPECS, RunConfig
from csvm.runs.fields import fmt
from csvm.runs.lab_job import lab_job
from csvm.runs.summary import task_words
from explorer.datasets import data_for
from explorer.glossary import value_words
from explorer.lab_settings import LabSettings
from explorer.lab_url import FILTER_PARAM, SOURCE_PARAM, linked, parse_filters
from explorer.owner_cookie import owner
from explorer.pool import get_pool
from explorer.runs import poll_run, runs

#: Up to this many training images a re-solve runs in the page: measured about 0.06 s on
#: the classroom split and 0.5 s on the thesis's 1,895 (bench/bench_lab.py, one BLAS
#: thread); larger problems go to the worker pool.
IN_PROCESS_MAX = 3000


def in_process(data) -> bool:
    """Whether a re-solve runs in the page (``lab_in_process_max`` in the session state
    overrides the limit: the tests use it to send the solve to the worker pool)."""
    limit = st.session_state.get("lab_in_process_max", IN_PROCESS_MAX)
    return len(data.y_train) <= limit


GRID_1D = np.linspace(-2.0, 2.0, 21)
GRID_2D = np.linspace(-2.0, 2.0, 15)
LABELS = {
    "identity": "Identity",
    "box": "Box blur",
    "gaussian": "Gaussian",
    "sobel_x": "Sobel x",
    "sobel_y": "Sobel y",
    "laplacian": "Laplacian",
    "random": "Random",
}


# -- settings and state --------------------------------------------------------------------
def data_spec(config: RunConfig) -> dict[str, Any]:
    keys = ("dataset", "class_a", "class_b", "protocol", "n_train", "seed")
    return {k: getattr(config, k) for k in keys}


def signature(config: RunConfig) -> str:
    """What a result depends on besides the filter: a stale result shows as such."""
    settings = LabSettings.from_config(config).as_kwargs()
    return repr(sorted({**data_spec(config), **settings}.items()))


def set_filters(filters: np.ndarray, source: str) -> None:
    """Replace the filters (a callback: runs before the widgets are drawn)."""
    st.session_state["lab_filters"] = np.array(filters, dtype=np.float64)
    st.session_state["lab_source"] = source
    # New editor keys: a data editor keeps its own edits, so fresh values need a fresh one.
    st.session_state["lab_version"] = st.session_state.get("lab_version", 0) + 1


def kernel_words(config: RunConfig) -> str:
    """The kernel with only the parameters it uses: "RBF kernel (γ 0.02)", "polynomial
    kernel (degree 2, γ 1, coef0 1)"."""
    used = [
        n
        for n in ("degree", "gamma", "coef0")
        if SPECS[n].kernels is None or config.kernel in SPECS[n].kernels
    ]
    params = ", ".join(f"{SPECS[n].label.lower()} {fmt(getattr(config, n))}" for n in used)
    return f"{value_words(config.kernel)} kernel" + (f" ({params})" if params else "")


def _filters_words(config: RunConfig) -> str:
    """The filters in words: "1 filter of 5×5", "2 filters of 5×5"."""
    n, k = config.n_filters, config.filter_size
    return f"{n} filter{'' if n == 1 else 's'} of {k}×{k}"


def settings_summary(config: RunConfig, data) -> str:
    """The header's one line: data, kernel (its own parameters only), C, filters, r(f), η."""
    c = "no limit" if config.C is None else f"{config.C:g}"
    return (
        f"{data.dataset} {task_words(config)} · {len(data.y_train)} training "
        f"/ {len(data.y_test)} test images · {kernel_words(config)} · C {c} · "
        f"{_filters_words(config)} · "
        f"{value_words(config.regulariser)} λ {config.lam:g} · η {config.eta:g}"
    )


def ensure_filters(config: RunConfig, channels: int) -> np.ndarray:
    shape = (config.n_filters, channels, config.filter_size, config.filter_size)
    f = st.session_state.get("lab_filters")
    if f is None:  # a reload: the filter a link carried, if it fits the settings
        given = linked(st.session_state)
        restored = parse_filters(given.get(FILTER_PARAM), shape)
        if restored is not None:
            set_filters(restored, given.get(SOURCE_PARAM) or "the link's filter")
            f = restored
    if f is None or f.shape != shape:
        start_from("random", config, channels)
    return st.session_state["lab_filters"]


def start_from(name: str, config: RunConfig, channels: int) -> None:
    k, size = config.n_filters, config.filter_size
    seed = int(st.session_state.get("lab_seed", config.seed))
    f = starting_filters(name, size, n_filters=k, seed=seed)[:, None]
    f = np.repeat(f, channels, axis=1) / channels
    label = f"{LABELS[name]} (seed {seed})" if name == "random" else LABELS[name]
    set_filters(f, label)


def choose_start(name: str, config: RunConfig, data) -> None:
    """A starting-point button (callback): the filter, and its SVM solved at once, so no
    choice leaves the previous filter's numbers on the page."""
    start_from(name, config, data.image_shape[0])
    resolve(config, data, st.session_state["lab_filters"])


def fresh_result(config: RunConfig, filters: np.ndarray):
    """The last solve if it was at these filters and settings, else None."""
    result = st.session_state.get("lab_result")
    if result is None or st.session_state.get("lab_result_sig") != signature(config):
        return None
    return result if np.array_equal(result.filters, filters) else None


# -- solving ---------------------------------------------------------------------------------
def solve_here(config: RunConfig, data, filters: np.ndarray) -> None:
    # One BLAS thread, as the worker pool runs jobs: on shared cores two threads per
    # process make the gradient's small products many times slower (bench/bench_lab.py).
    with threadpool_limits(1):
        result = solve_fixed_filter(
            data.X_train,
            data.y_train,
            filters,
            X_test=data.X_test,
            y_test=data.y_test,
            **LabSettings.from_config(config).as_kwargs(),
        )
    store_result(result, signature(config))


def store_result(result, signature: str) -> None:
    """Keep a solve's result; if it is the learned filter's, keep its row for the table."""
    st.session_state["lab_result"] = result
    st.session_state["lab_result_sig"] = signature
    learned = st.session_state.get("lab_learned")
    if (
        learned is not None
        and "row" not in learned
        and np.array_equal(learned["filters"], result.filters)
    ):
        learned["row"] = row(result)


def submit(task: str, config: RunConfig, filters: np.ndarray, **extra: Any) -> None:
    group = st.session_state.setdefault("session_group", uuid.uuid4().hex)
    kwargs = {
        "task": task,
        "data": data_spec(config),
        "filters": filters,
        "settings": LabSettings.from_config(config).as_kwargs(),
        **extra,
    }
    try:
        job = submit_to_pool(kwargs, task, group)
    except Exception as exc:  # noqa: BLE001 - e.g. the server's cap on a session's jobs
        st.session_state["lab_error"] = f"The {task} job could not start: {exc}"
        return
    jobs = st.session_state.setdefault("lab_jobs", {})
    jobs[task] = {
        "id": job,
        "sig": signature(config),
        "filters": filters,
        "started": time.time(),
        **extra,
    }


def submit_to_pool(kwargs: dict[str, Any], task: str, group: str) -> str:
    return get_pool().submit(lab_job, kwargs, name=f"lab:{task}", group=group, owner=owner())


#: Seconds after a Re-solve click in which a hand edit still counts as made before it.
#: The grid sends a cell's edit when it loses focus, which the click itself causes: the
#: click's rerun could arrive first and solve the old filter (once in two tries).
LATE_EDIT_SECONDS = 2.0


def resolve_clicked(config: RunConfig, data, filters: np.ndarray) -> None:
    """The Re-solve button: solve at ``filters`` and remember when it was asked."""
    st.session_state["lab_resolve_at"] = time.monotonic()
    resolve(config, data, filters)


def catch_late_edit(config: RunConfig, data, filters: np.ndarray) -> None:
    """Solve again when the grid's edit reached the page just after a Re-solve click."""
    asked = st.session_state.get("lab_resolve_at")
    if asked is None or time.monotonic() - asked > LATE_EDIT_SECONDS:
        return
    if fresh_result(config, filters) is None and not _solving(filters):
        st.session_state.pop("lab_resolve_at")  # once: a later edit waits for a click
        resolve(config, data, filters)


def _solving(filters: np.ndarray) -> bool:
    """Whether a solve of these very filters is already in the worker pool."""
    job = st.session_state.get("lab_jobs", {}).get("solve")
    return job is not None and np.array_equal(job["filters"], filters)


def resolve(config: RunConfig, data, filters: np.ndarray) -> None:
    if in_process(data):
        solve_here(config, data, filters)
    else:
        submit("solve", config, filters)


def take_step(config: RunConfig, data, eta: float) -> None:
    """Button callback: one gradient step from the solved filter, then solve there."""
    result = st.session_state.get("lab_result")
    if result is None:
        return
    scale = step_scale(result.filters, result.gradient, eta, config.step)
    new = result.filters - scale * result.gradient
    st.session_state["lab_last_step"] = {"objective": result.objective, "filters": new}
    rule = "relative" if config.step != "constant" else "constant"
    source = st.session_state.get("lab_source", "filter")
    set_filters(new, f"{source} + {rule} gradient step η={eta:g}")
    resolve(config, data, new)


@st.cache_data(max_entries=8, show_spinner="Solving the plain SVM on raw pixels…")
def raw_pixels(spec: dict[str, Any], settings: LabSettings) -> dict[str, Any]:
    data = data_for(RunConfig(**spec))
    kwargs = settings.raw_pixel_kwargs()
    with threadpool_limits(1):
        r = solve_raw_pixels(
            data.X_train, data.y_train, X_test=data.X_test, y_test=data.y_test, **kwargs
        )
    return row(r)


def row(r) -> dict[str, Any]:
    return {
        "train accuracy": 100 * r.train_accuracy,
        "test accuracy": None if r.test_accuracy is None else 100 * r.test_accuracy,
        "support vectors": r.n_support,
        "T(f)": r.objective,
        "Σα": r.sum_alpha,
        "½ aᵀKa": r.margin_term,
        "r(f)": r.regulariser,
        "seconds": r.seconds["total"],
    }


# -- the learned filter ------------------------------------------------------------------
def finished_csvm_runs(key: str):
    """This session's finished CSVM runs whose result holds ``key``: (id, run, result)."""
    for run_id, run in runs().items():
        view = poll_run(run).get("csvm")
        if view is not None and view.state == "done" and view.result:
            if view.result.get(key) is not None:
                yield run_id, run, view.result


def learned_runs() -> dict[str, tuple[str, np.ndarray]]:
    """This session's finished two-class runs that learned filters: id -> (label, filters).
    (A run of several classes learned a filter per sub-problem, not one for the lab's pair.)"""
    found = {}
    for run_id, run, result in finished_csvm_runs("filters"):
        if run.config.multiclass:
            continue
        c = run.config.to_dict()
        label = (
            f"run {run_id}: {MODEL_LABELS.get(c.get('model'), 'CSVM')} "
            f"{c.get('dataset')} {c.get('class_a')} vs {c.get('class_b')}, "
            f"test {100 * result.get('test_accuracy', float('nan')):.2f} %"
        )
        found[run_id] = (label, np.asarray(result["filters"], dtype=np.float64))
    return found


def use_learned(filters: np.ndarray, label: str, config: RunConfig, data) -> None:
    """Load a learned filter (callback); keep its numbers for the comparison table."""
    expected = (config.n_filters, data.image_shape[0], config.filter_size, config.filter_size)
    f = np.asarray(filters, dtype=np.float64)
    f = f[:, None] if f.ndim == 3 else (f[None, None] if f.ndim == 2 else f)
    if f.shape != expected:
        st.session_state["lab_error"] = (
            f"The learned filters have shape {f.shape[:1] + f.shape[2:]} but the settings ask "
            f"for {_filters_words(config)}: "
            "change the filter size or count on the Train page to match."
        )
        return
    set_filters(f, f"learned ({label})")
    st.session_state["lab_learned"] = {"label": label, "filters": f}
    resolve(config, data, f)
