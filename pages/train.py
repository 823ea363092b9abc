"""Train page: choose a pair and hyperparameters, start a run, watch the filter learn."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pandas as pd
import streamlit as st

from csvm import figures
from csvm.experiments import (
    DEFAULT_CONFIG,
    MODEL_LABELS,
    config_from_query,
    config_to_query,
    pinned_indices,
    python_snippet,
    validate_config,
)
from csvm.kernels import KERNELS
from csvm.regularisers import REGULARISERS
from pages.common import (
    data_for,
    dataset_table,
    get_pool,
    is_running,
    jobs_param,
    poll_run,
    presets,
    reattach,
    result_columns,
    runs,
    submit_run,
)

HELP = {
    "dataset": "Which images to learn from. mnist-5k ships with the app (no download).",
    "class_a": "The class labelled −1.",
    "class_b": "The class labelled +1.",
    "n_train": "How many training images to use (0 = all). More images: slower, usually better.",
    "protocol": "'thesis' uses the exact subsets of the thesis (full datasets only).",
    "model": "K-CSVM: kernel SVM + gradient steps on the filter (Alg. 5). "
    "L-CSVM: alternating linear SVMs for weights and filter (Alg. 4).",
    "kernel": "Kernel on the feature maps: polynomial (γ z·z′ + c)^d or Gaussian RBF.",
    "degree": "Polynomial degree d (typical 2–3).",
    "gamma": "γ: scale of the kernel (poly: 1; RBF: 0.01–0.05 for 28×28 images).",
    "coef0": "c in (γ z·z′ + c)^d (the thesis uses 1).",
    "regulariser": "Penalty r(f) on the filter. DFO keeps its norm near 1.",
    "lam": "λ: strength of the filter penalty (typical 0.01–0.1).",
    "lam_w": "λ_w: weight decay of the SVM weights (typical 0.01–0.1).",
    "lam_f": "λ_f: weight decay of the filter (typical 0.01–0.1).",
    "eta": "η: step size of the filter update (thesis 0.1). Too large and it diverges.",
    "step": "constant η, or Armijo backtracking that shrinks η until the objective falls.",
    "momentum": "Heavy-ball momentum for constant steps (0 = none, 0.9 typical).",
    "C": "Upper bound on each α (soft margin), on a log scale.",
    "C_none": "No upper bound on α: a hard margin, as in the thesis's MNIST runs.",
    "C_last_only": "Train with no bound and apply C only on the last iteration "
    "(the thesis's CIFAR-10 schedule).",
    "n_iter": "Number of SVM solves; the filter moves between them.",
    "filter_size": "Each learned filter is size × size pixels (thesis 5).",
    "n_filters": "Several filters: their feature maps are concatenated (thesis eq. 4.12).",
    "seed": "Seeds the first random filter and the data subsample: same seed, same run.",
    "baselines": "Also train these on the same split, for comparison.",
    "cnn_epochs": "Training epochs of the small CNN.",
    "cnn_hidden": "Hidden sigmoid units of the small CNN (thesis 500; 0 = linear CNN).",
    "cnn_lr": "Learning rate of the small CNN.",
}
C_EXPONENTS = list(range(-20, 7))


# -- settings <-> widgets -----------------------------------------------------------------
def _to_widgets(config: dict) -> None:
    """Put a configuration into the widgets' session state."""
    c = {**DEFAULT_CONFIG, **config}
    for key, value in c.items():
        if key in ("C", "n_train", "protocol"):
            continue
        st.session_state[f"cfg_{key}"] = value
    st.session_state["cfg_C_none"] = c["C"] is None
    if c["C"] is not None:
        st.session_state["cfg_C_exp"] = int(np.clip(round(np.log10(c["C"])), -20, 6))
    st.session_state["cfg_n_train"] = 0 if c["n_train"] is None else int(c["n_train"])
    st.session_state["cfg_protocol"] = c["protocol"] or "random split"


def _from_widgets() -> dict:
    s = st.session_state
    config = {key: s.get(f"cfg_{key}", default) for key, default in DEFAULT_CONFIG.items()}
    config["C"] = None if s.get("cfg_C_none", True) else 10.0 ** s.get("cfg_C_exp", 0)
    config["n_train"] = int(s.get("cfg_n_train", 600)) or None
    protocol = s.get("cfg_protocol", "random split")
    config["protocol"] = None if protocol == "random split" else protocol
    config["class_a"], config["class_b"] = str(config["class_a"]), str(config["class_b"])
    return config


def _apply_preset() -> None:
    preset = next(p for p in presets() if p["name"] == st.session_state["preset"])
    _to_widgets({**DEFAULT_CONFIG, **preset["config"]})


def sidebar(available: dict[str, dict]) -> dict:
    """Every control, with a one-line help; returns the configuration they describe."""
    sb = st.sidebar
    offered = [p for p in presets() if p.get("requires") in (None, *available)]
    sb.selectbox(
        "Preset",
        [p["name"] for p in offered],
        key="preset",
        on_change=_apply_preset,
        help="Ready-made settings: a fast classroom demo and the thesis's setups.",
    )
    chosen = next((p for p in offered if p["name"] == st.session_state.get("preset")), None)
    if chosen:
        sb.caption(chosen["description"])
    if st.session_state.get("cfg_dataset") not in available:
        missing = st.session_state.get("cfg_dataset")
        if missing:
            sb.warning(
                f"{missing} is not on this machine, so {DEFAULT_CONFIG['dataset']} is shown. "
                f"Fetch it with `python -m csvm data fetch {missing}`.",
                icon=":material/download:",
            )
        st.session_state["cfg_dataset"] = DEFAULT_CONFIG["dataset"]
    with sb.expander("Data", expanded=True):
        st.selectbox("Dataset", list(available), key="cfg_dataset", help=HELP["dataset"])
        info = available[st.session_state["cfg_dataset"]]
        classes = [str(c) for c in info["classes"]]
        for key, fallback in (("cfg_class_a", 0), ("cfg_class_b", 1)):
            if str(st.session_state.get(key)) not in classes:
                st.session_state[key] = classes[fallback]
        a, b = st.columns(2)
        a.selectbox("Class −1", classes, key="cfg_class_a", help=HELP["class_a"])
        b.selectbox("Class +1", classes, key="cfg_class_b", help=HELP["class_b"])
        st.number_input(
            "Training images (0 = all)", 0, step=100, key="cfg_n_train", help=HELP["n_train"]
        )
        protocols = ["random split"]
        if st.session_state["cfg_dataset"] in ("mnist", "fashion-mnist", "cifar10"):
            protocols.append("thesis")
        if st.session_state.get("cfg_protocol") not in protocols:
            st.session_state["cfg_protocol"] = "random split"
        st.selectbox("Split", protocols, key="cfg_protocol", help=HELP["protocol"])
    with sb.expander("Model", expanded=True):
        st.radio(
            "Model",
            ["kcsvm", "lcsvm"],
            key="cfg_model",
            horizontal=True,
            format_func=MODEL_LABELS.get,
            help=HELP["model"],
        )
        kernelised = st.session_state["cfg_model"] == "kcsvm"
        if kernelised:
            st.selectbox(
                "Kernel",
                [k for k in KERNELS if k != "linear"],
                key="cfg_kernel",
                help=HELP["kernel"],
            )
            if st.session_state["cfg_kernel"] == "poly":
                c1, c2 = st.columns(2)
                c1.number_input("Degree", step=1, key="cfg_degree", help=HELP["degree"])
                c2.number_input("coef0", format="%g", key="cfg_coef0", help=HELP["coef0"])
            st.number_input("γ", format="%g", key="cfg_gamma", help=HELP["gamma"])
            st.selectbox(
                "Regulariser",
                list(REGULARISERS),
                key="cfg_regulariser",
                format_func=lambda r: f"{r}: {REGULARISERS[r]}",
                help=HELP["regulariser"],
            )
            c1, c2 = st.columns(2)
            c1.number_input("λ", format="%g", key="cfg_lam", help=HELP["lam"])
            c2.number_input("η", format="%g", key="cfg_eta", help=HELP["eta"])
            st.radio(
                "Step rule",
                ["constant", "armijo"],
                key="cfg_step",
                horizontal=True,
                help=HELP["step"],
            )
            st.number_input("Momentum", step=0.1, key="cfg_momentum", help=HELP["momentum"])
            st.checkbox("No limit on C (hard margin)", key="cfg_C_none", help=HELP["C_none"])
            if not st.session_state["cfg_C_none"]:
                st.select_slider(
                    "C",
                    C_EXPONENTS,
                    key="cfg_C_exp",
                    format_func=lambda e: f"1e{e}",
                    help=HELP["C"],
                )
                st.checkbox(
                    "Apply C on the last iteration only",
                    key="cfg_C_last_only",
                    help=HELP["C_last_only"],
                )
        else:
            c1, c2 = st.columns(2)
            c1.number_input("λ_w", format="%g", key="cfg_lam_w", help=HELP["lam_w"])
            c2.number_input("λ_f", format="%g", key="cfg_lam_f", help=HELP["lam_f"])
        c1, c2 = st.columns(2)
        c1.number_input("Iterations", step=1, key="cfg_n_iter", help=HELP["n_iter"])
        c2.number_input("Filter size", step=1, key="cfg_filter_size", help=HELP["filter_size"])
        c1, c2 = st.columns(2)
        c1.number_input("Filters", step=1, key="cfg_n_filters", help=HELP["n_filters"])
        c2.number_input("Seed", 0, 10**6, key="cfg_seed", help=HELP["seed"])
    with sb.expander("Baselines"):
        st.multiselect(
            "Train alongside",
            ["svm", "cnn"],
            key="cfg_baselines",
            format_func=MODEL_LABELS.get,
            help=HELP["baselines"],
        )
        c1, c2 = st.columns(2)
        c1.number_input("CNN epochs", step=1, key="cfg_cnn_epochs", help=HELP["cnn_epochs"])
        c2.number_input("Hidden units", step=1, key="cfg_cnn_hidden", help=HELP["cnn_hidden"])
        st.number_input("CNN learning rate", format="%g", key="cfg_cnn_lr", help=HELP["cnn_lr"])
    return _from_widgets()


# -- live view ----------------------------------------------------------------------------
def _class_labels(data) -> list[str]:
    return [f"{data.class_names[0]} (−1)", f"{data.class_names[1]} (+1)"]


def _status_line(model: str, view) -> str:
    label = MODEL_LABELS.get(model, model) if model != "csvm" else "CSVM"
    if view is None:
        return f"**{label}**: lost (the server restarted)"
    if view.state == "queued":
        return f"**{label}**: waiting — place {view.place} in the queue"
    if view.state == "running" and not view.events:
        return f"**{label}**: starting (loading the images)"
    if view.state == "running":
        return f"**{label}**: training"
    return f"**{label}**: {view.state}"


def live_panel(run: dict, views: dict) -> None:
    """Progress, objective, filter and feature maps of a run, from its events so far."""
    config = run["config"]
    csvm_view = views.get("csvm")
    events = [e for e in (csvm_view.events if csvm_view else []) if "objective" in e]
    st.markdown(" · ".join(_status_line(m, v) for m, v in views.items()))
    if events:
        last = events[-1]
        total = last.get("n_iter", config["n_iter"]) * (2 if config["model"] == "lcsvm" else 1)
        done = len([e for e in events if e.get("classifier", 0) == 0])
        elapsed = last["seconds"]
        eta_left = elapsed / done * (total - done) if done else 0.0
        running = csvm_view.state == "running"
        text = f"CSVM step {done} of {total} · {elapsed:.1f} s"
        if running:
            text += f" · about {eta_left:.0f} s left"
        st.progress(min(done / max(total, 1), 1.0), text=text)
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("objective", f"{last['objective']:.4g}")
        c2.metric("train accuracy", f"{100 * last.get('train_accuracy', 0):.1f} %")
        c3.metric("support vectors", last.get("n_support", "–"))
        c4.metric("filter norm", f"{last.get('filter_norm', 0):.3g}")
    elif csvm_view is not None and csvm_view.state in ("queued", "running"):
        st.progress(0.0, text="Starting the worker…")
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(
            figures.objective_figure(events, "Objective per iteration"),
            key=f"objective_{run['id']}",
            width="stretch",
        )
        if events:
            st.plotly_chart(
                figures.progress_figure(events, "Train accuracy and filter norm"),
                key=f"progress_{run['id']}",
                width="stretch",
            )
    with right:
        if events and "filters" in events[-1]:
            # The change since the filter last moved (an L-CSVM SVM half-step keeps f).
            previous = next(
                (
                    e["filters"]
                    for e in reversed(events[:-1])
                    if "filters" in e and not np.array_equal(e["filters"], events[-1]["filters"])
                ),
                None,
            )
            st.plotly_chart(
                figures.filter_figure(
                    events[-1]["filters"], previous, "Learned filter (top) and last change"
                ),
                key=f"filter_{run['id']}",
                width="stretch",
            )
    if events and "pinned_maps" in events[-1]:
        data = data_for(config)
        pinned = pinned_indices(data.y_train)
        names = _class_labels(data)
        labels = [names[0 if data.y_train[i] < 0 else 1] for i in pinned]
        st.plotly_chart(
            figures.feature_maps_figure(data.X_train[pinned], events[-1]["pinned_maps"], labels),
            key=f"maps_{run['id']}",
            width="stretch",
        )
    cnn = views.get("cnn")
    svm = views.get("svm")
    if cnn is not None and any(e.get("step") == "epoch" for e in cnn.events):
        st.plotly_chart(
            figures.loss_figure(cnn.events, "Small CNN: loss per epoch"),
            key=f"cnn_{run['id']}",
            width="stretch",
        )
    svm_done = [e for e in svm.events if e.get("step") == "done"] if svm is not None else []
    if svm_done:
        e = svm_done[-1]
        st.info(
            f"Plain SVM finished in {e['seconds']:.2f} s: train accuracy "
            f"{100 * e['train_accuracy']:.1f} %, test accuracy "
            f"{100 * e['test_accuracy']:.1f} %."
        )


def results_panel(run: dict, views: dict) -> None:
    """What a finished run shows: comparison, confusion, mistakes, support vectors."""
    config = run["config"]
    data = data_for(config)
    names = _class_labels(data)
    rows = []
    for model, view in views.items():
        label = MODEL_LABELS[config["model"]] if model == "csvm" else MODEL_LABELS[model]
        result = view.result if view is not None else None
        if result is None:
            # Stopped or failed: the last recorded step still tells how far it got.
            state = view.state if view is not None else "lost"
            last = next(
                (e for e in reversed(view.events) if "train_accuracy" in e) if view else (), None
            )
            if last is not None:
                state += f" at step {last.get('iteration', 0) + 1}"
            rows.append(
                {
                    "model": label,
                    "train accuracy": None
                    if last is None
                    else round(100 * last["train_accuracy"], 2),
                    "test accuracy": None,
                    "seconds": None if last is None else round(last.get("seconds", 0.0), 2),
                    "status": state,
                }
            )
            continue
        rows.append(
            {
                "model": label,
                "train accuracy": round(100 * result["train_accuracy"], 2),
                "test accuracy": round(100 * result["test_accuracy"], 2),
                "seconds": round(result["seconds"], 2),
                "status": "diverged" if result.get("diverged") else "done",
            }
        )
    st.subheader("Comparison on the same split")
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        width="stretch",
        column_config=result_columns(),
    )
    finished = [(m, v) for m, v in views.items() if v is not None and v.result is not None]
    if not finished:
        return
    st.plotly_chart(figures.accuracy_vs_time(rows), key=f"acc_time_{run['id']}", width="stretch")
    cols = st.columns(len(finished))
    for col, (model, view) in zip(cols, finished, strict=True):
        label = MODEL_LABELS[config["model"]] if model == "csvm" else MODEL_LABELS[model]
        col.plotly_chart(
            figures.confusion_figure(
                np.array(view.result["confusion"]), names, f"{label}: test confusion"
            ),
            key=f"conf_{run['id']}_{model}",
            width="stretch",
        )
    csvm_result = views["csvm"].result if views.get("csvm") is not None else None
    if csvm_result is None:
        return
    wrong = csvm_result["misclassified"]
    with st.expander(
        f"Misclassified test images ({csvm_result['n_misclassified']} of {csvm_result['n_test']})",
        expanded=True,
    ):
        true_names = [names[0 if data.y_test[i] < 0 else 1] for i in wrong]
        st.plotly_chart(
            figures.image_grid(
                data.X_test[wrong],
                [f"true {t}" for t in true_names],
                "Misclassified by the CSVM (first 32)",
            ),
            key=f"wrong_{run['id']}",
            width="stretch",
        )
    support = csvm_result["support"]
    if support:
        with st.expander(f"Support vectors ({csvm_result['n_support']}; largest α first)"):
            st.plotly_chart(
                figures.image_grid(
                    data.X_train[support],
                    [f"α={a:.3g}" for a in csvm_result["support_alpha"]],
                    "Support vectors",
                ),
                key=f"sv_{run['id']}",
                width="stretch",
            )
    export_button(run, csvm_result)


def export_button(run: dict, result: dict) -> None:
    """A zip with the config, the history as CSV, the filters and a Python snippet."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("config.json", json.dumps(run["config"], indent=2))
        history = pd.DataFrame(
            [
                {k: v for k, v in e.items() if not isinstance(v, dict | list)}
                for e in result["history"]
            ]
        )
        zf.writestr("history.csv", history.to_csv(index=False))
        npy = io.BytesIO()
        np.save(npy, np.asarray(result["filters"]), allow_pickle=False)
        zf.writestr("filters.npy", npy.getvalue())
        zf.writestr("reproduce.py", python_snippet(run["config"]))
    st.download_button(
        "Download run (config, history CSV, filters .npy, Python snippet)",
        buffer.getvalue(),
        file_name=f"csvm-run-{run['id']}.zip",
        mime="application/zip",
        key=f"export_{run['id']}",
    )


# -- page ---------------------------------------------------------------------------------
def config_model(run: dict, model: str) -> str:
    """The label key of one of a run's models ("csvm" stands for the run's K- or L-CSVM)."""
    return run["config"]["model"] if model == "csvm" else model


def _rerun_with(config: dict, key: str, value: float) -> None:
    """Button callback (runs before the widgets exist): the same run with one setting changed."""
    changed = {**config, key: value}
    _to_widgets(changed)
    submit_run(changed)


def _first_visit() -> None:
    """Settings from the URL (a shared link) on the first run of a browser session."""
    if st.session_state.get("_initialised"):
        return
    st.session_state["_initialised"] = True
    query = st.query_params.to_dict()
    config = config_from_query(query)
    _to_widgets(config)
    if "run" in query and "jobs" in query:
        reattach(query["run"], query["jobs"], config)


def page() -> None:
    """The Train page: settings, Start/Stop, the live fragment, results."""
    _first_visit()
    table = dataset_table()
    available = {d["name"]: d for d in table if d["available"]}
    config = sidebar(available)
    current = runs().get(st.session_state.get("current_run", ""))
    query = config_to_query(config)
    if current is not None:
        query.update({"run": current["id"], "jobs": jobs_param(current)})
    if query != st.query_params.to_dict():
        st.query_params.from_dict(query)

    st.title("CSVM Explorer")
    st.caption(
        "A learned convolutional filter in front of a support vector machine. "
        "Pick a pair of classes and the hyperparameters on the left, press Start, and "
        "watch the filter learn."
    )
    missing = [d for d in table if not d["available"]]
    if missing:
        with st.expander("More datasets (not on this machine yet)"):
            for d in missing:
                st.markdown(f"- **{d['name']}** — {d['description']}: `{d['fetch_command']}`")

    info = available[config["dataset"]]
    errors = validate_config(config, tuple(info["image_shape"]))
    data = None
    if not errors:
        try:
            data = data_for(config)
        except Exception as exc:  # noqa: BLE001 - any loading problem is shown, not raised
            errors.append(str(exc))
    if data is not None:
        errors += validate_config(config, data.image_shape, n_available=len(data.y_train))

    c1, c2, c3 = st.columns([1, 1, 4])
    start = c1.button(
        "▶ Start", type="primary", disabled=bool(errors), key="start", width="stretch"
    )
    views = poll_run(current) if current is not None else {}
    running = is_running(views)
    stop = c2.button("■ Stop", disabled=not running, key="stop", width="stretch")
    for message in errors:
        st.error(message)
    if data is not None:
        c3.caption(f"{data.source} · train {len(data.y_train)} · test {len(data.y_test)}")
    if start and not errors:
        submit_run(config)
        st.rerun()
    if stop and current is not None:
        pool = get_pool()
        for job_id in current["jobs"].values():
            pool.cancel(job_id)
        st.toast("Stopped: the run keeps what it had learned.")
        st.rerun()

    if current is None:
        if data is not None:
            idx = pinned_indices(data.y_train)
            names = _class_labels(data)
            st.plotly_chart(
                figures.image_grid(
                    data.X_train[idx],
                    [names[0 if data.y_train[i] < 0 else 1] for i in idx],
                    "Example training images",
                    cols=6,
                ),
                key="examples",
                width="stretch",
            )
        st.info("Press **Start** to train. The classroom preset finishes in a few seconds.")
        get_pool()  # after drawing: the spare workers warm up while the user reads
        return

    @st.fragment(run_every=1.0 if running else None)
    def live() -> None:
        fresh = poll_run(current)
        live_panel(current, fresh)
        if running and not is_running(fresh):
            st.rerun()  # the run ended: redraw the page with results and buttons

    live()
    if running:
        return
    for model, view in views.items():
        d = view.result.get("diverged") if view is not None and view.result else None
        if not d:
            continue
        label = MODEL_LABELS[config_model(current, model)]
        st.warning(
            f"**{label} diverged** and stopped; the best state so far is kept and the "
            f"history that led there is shown below. {d['message']}",
            icon=":material/warning:",
        )
        if d.get("suggested_eta"):
            key = "cnn_lr" if model == "cnn" else "eta"
            name = "the CNN's learning rate" if model == "cnn" else "η"
            st.button(
                f"Rerun with {name} = {d['suggested_eta']:g}",
                key=f"rerun_{model}",
                type="primary",
                on_click=_rerun_with,
                args=(current["config"], key, float(d["suggested_eta"])),
            )
    for model, view in views.items():
        if view is not None and view.state == "error":
            message = view.error.strip().split("\n\n")[0] or view.error_type
            label = MODEL_LABELS[config_model(current, model)]
            st.error(f"**{label} failed** ({view.error_type or 'error'}): {message}")
    results_panel(current, views)


page()
