"""The Filter lab's section for a stack of layers: a run's learned stack held fixed, its
SVM solved again, and where dT/df points for every layer (the maths is
:mod:`csvm.analysis.lab_layers`)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from csvm import figures
from csvm.analysis.lab_layers import solve_fixed_stack
from csvm.exceptions import CSVMError
from csvm.figures.layers import layer_filters_figure
from csvm.runs.config import RunConfig
from explorer.datasets import data_for
from explorer.display import chart
from explorer.lab import finished_csvm_runs
from explorer.settings import md_escape

#: The lab solves a stack in the page's own process up to this many training images.
MAX_IMAGES = 2000


def _stack_runs() -> dict[str, tuple[str, RunConfig, list]]:
    """This session's finished runs with a stack of layers: id -> (label, config, filters)."""
    found = {}
    for run_id, run, result in finished_csvm_runs("layer_filters"):
        label = (
            f"run {run_id}: layers {run.config.layers}, {run.config.dataset} "
            f"{run.config.class_a} vs {run.config.class_b}, test "
            f"{100 * result.get('test_accuracy', float('nan')):.2f} %"
        )
        found[run_id] = (label, run.config, result["layer_filters"])
    return found


def stack_section(config: RunConfig) -> None:
    """Section 6, a learned stack held fixed (drawn only when there is a stack to show)."""
    found = _stack_runs()
    if not found and not config.layers:
        return
    st.header("6. A learned stack of layers, held fixed")
    if not found:
        st.caption(
            "Your settings describe a stack of layers: train it on the Train page, and its "
            "learned filters appear here, held fixed, with the gradient of every layer."
        )
        return
    run_id = st.selectbox(
        "Run", list(found), format_func=lambda r: found[r][0], key="lab_stack_run"
    )
    _label, run_config, filters = found[run_id]
    try:
        data = data_for(run_config)
        if len(data.y_train) > MAX_IMAGES:
            st.caption(
                f"This run trained on {len(data.y_train):,} images; the lab solves stacks of "
                f"up to {MAX_IMAGES:,} here. Train one on fewer images to study it."
            )
            return
        result = _solve(run_id, run_config, data, filters)
    except (CSVMError, ValueError) as exc:
        st.error(md_escape(str(exc)))
        return
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("train accuracy", f"{100 * result.train_accuracy:.2f} %")
    c2.metric("test accuracy", f"{100 * (result.test_accuracy or 0):.2f} %")
    c3.metric("objective T", f"{result.objective:.4g}")
    c4.metric("support vectors", result.n_support)
    norms = ", ".join(f"layer {i + 1}: {n:.3g}" for i, n in enumerate(result.gradient_norms()))
    st.caption(
        f"The SVM solved again on the run's learned stack. ‖dT/df‖ per layer: {norms}. Each "
        "layer's filters move against their own gradient (a relative step moves every "
        "layer by the same fraction of its norm, whatever these sizes)."
    )
    g1 = result.layer_gradients[0]
    chart(
        figures.filter_figure(
            g1,
            None,
            "Layer 1: dT/df (the filters move against it)",
            value_label="dT/df",
            values=len(g1) <= 2,
        ),
        f"lab_stack_g1_{run_id}",
    )
    for number, grad in enumerate(result.layer_gradients[1:], start=2):
        fig = layer_filters_figure(grad, number)
        fig.update_layout(title=f"Layer {number}: dT/df, one cell per filter")
        chart(fig, f"lab_stack_g{number}_{run_id}")


@st.cache_data(max_entries=4, show_spinner="Solving the SVM on the stack…")
def _solve(run_id: str, config: RunConfig, _data, filters: list):
    """One solve per run (cached: the page reruns on every widget change)."""
    return solve_fixed_stack(
        _data.X_train,
        _data.y_train,
        [np.asarray(f) for f in filters],
        config.layers,
        kernel=config.kernel,
        degree=config.degree,
        gamma=config.gamma,
        coef0=config.coef0,
        C=config.C,
        regulariser=config.regulariser,
        lam=config.lam,
        X_test=_data.X_test,
        y_test=_data.y_test,
    )
