"""Stability page: the same settings over several random first filters, their spread, and
the thesis's claim that DFO₂ filters are stable across seeds while DFO₁ filters are not."""

from __future__ import annotations

import streamlit as st

from csvm import figures
from csvm.analysis.stability import stability_verdict, summarise_stability
from csvm.analysis.stats import format_signed
from csvm.cli.reproduce import THESIS, thesis_settings
from csvm.jobs import QuotaExceeded
from csvm.runs.config import RunConfig
from csvm.runs.sweeps import MAX_SEEDS, run_seed_job
from explorer.app import ensure_app
from explorer.display import projected
from explorer.live import group_busy, live_jobs
from explorer.owner_cookie import heartbeat, owner
from explorer.pool import get_pool
from explorer.settings import current_config, md_escape, show_problems

ensure_app()  # a page's own URL on a fresh server: run it inside the app

#: The thesis's claim, on its table 4.1 recipe (poly d=2, γ 1, constant η 0.1, no C, one
#: 5×5 filter): only the regulariser differs between the two configurations (the number
#: of images and iterations are the page's).
_RECIPE = {k: v for k, v in thesis_settings("table4.1").items() if k != "baselines"}
CLAIM = {
    "DFO₂ (λ 0.1)": {**_RECIPE, "regulariser": "dfo2", "lam": 0.1},
    "DFO₁ (λ 0.01)": {**_RECIPE, "regulariser": "dfo1", "lam": 0.01},
}
#: The claim is about the thesis's MNIST 3 v 5, and it is tested there (the bundled 5,000
#: MNIST images), whatever the Train page's data: its raw step of 0.1 is MNIST's, and on
#: the Shapes preset's images every seed diverged at the first step.
_PAIR = THESIS["table4.1"]["pair"]
CLAIM_DATA = {
    "dataset": "mnist-5k",
    "protocol": None,
    "classes": None,
    "class_a": _PAIR[0],
    "class_b": _PAIR[1],
}

st.title("Stability across seeds")
show_problems()  # a link's settings that were replaced, as Train says them
st.caption(
    "The same settings trained from several random first filters. Filters are flipped to "
    "agree in sign with the first seed's (a filter and its negative give the same SVM); "
    "their spread is the mean |cosine| between seeds, next to the same measure for the "
    "random first filters (what 'no more alike than where they started' looks like)."
)
heartbeat()
pool = get_pool()
base = current_config()
mode = st.radio(
    "What to run",
    ["claim", "settings"],
    format_func=lambda m: {
        "claim": "The thesis's claim: DFO₂ filters are stable across seeds, DFO₁ filters are not",
        "settings": "The Train page's settings",
    }[m],
    key="st_mode",
)
configs = (
    {name: RunConfig().replace(**CLAIM_DATA, **overrides) for name, overrides in CLAIM.items()}
    if mode == "claim"
    else {"Train page settings": base}
)
busy = sum(
    1
    for v in pool.jobs(owner=owner())
    if v.group != "stability" and v.state in ("queued", "running")
)
most = min(MAX_SEEDS, (pool.settings.max_active_per_owner - busy) // len(configs))
c1, c2, c3 = st.columns(3)
n_train = c1.number_input(
    "Training images", 20, 2000, 300, step=50, key="st_n_train", help="Per run."
)
n_iter = c2.number_input("Iterations", 1, 100, 15, key="st_n_iter", help="Per run.")
seeds = c3.number_input(
    "Seeds",
    2,
    max(2, most),
    min(4, max(2, most)),
    key="st_seeds",
    help=f"Random first filters, one job each (at most {MAX_SEEDS}, and this server lets a "
    f"browser run {pool.settings.max_active_per_owner} jobs at once: "
    "CSVM_MAX_ACTIVE_PER_SESSION).",
)
st.caption(
    "Data: MNIST 3 v 5, the thesis's pair (from the 5,000 MNIST images that come with the "
    "app), whatever the Train page's data."
    if mode == "claim"
    else f"Data: {md_escape(base.dataset)} {md_escape(base.class_a)} v "
    f"{md_escape(base.class_b)} (change it on the Train page)."
)
error = None
if most < 2:
    error = (
        f"This browser already has {busy} jobs queued or running and may have "
        f"{pool.settings.max_active_per_owner}: wait for them or stop them first."
    )
    st.error(error)


def _stop() -> None:
    pool.cancel_owner(owner(), group="stability")


c1, c2 = st.columns([1, 4])
if c1.button("▶ Start", type="primary", key="st_start", disabled=error is not None):
    _stop()  # one stability study per browser: the new one replaces it
    chosen = list(range(int(seeds)))
    try:
        jobs = {
            name: [
                pool.submit(
                    run_seed_job,
                    {
                        "config": c.replace(
                            n_train=int(n_train), n_iter=int(n_iter), baselines=()
                        ).to_dict(),
                        "seed": s,
                    },
                    name=f"stability {name} seed {s}",
                    group="stability",
                    owner=owner(),
                )
                for s in chosen
            ]
            for name, c in configs.items()
        }
        st.session_state["stability"] = {"mode": mode, "seeds": chosen, "jobs": jobs}
    except QuotaExceeded as exc:
        _stop()
        st.error(str(exc))
# Drawn after Start is handled, so the run that starts the study already offers its Stop.
c2.button("■ Stop", key="st_stop", on_click=_stop, disabled=not group_busy("stability"))


def _show(name: str, summary: dict) -> None:
    st.header(md_escape(name))
    runs = summary["runs"]
    c1, c2, c3 = st.columns(3)
    start = summary["start_mean_abs_cosine"]
    c1.metric(
        "mean |cos| between seeds",
        f"{summary['mean_abs_cosine']:.3f}",
        None
        if start is None
        else f"{format_signed(summary['mean_abs_cosine'] - start, 3)} vs the starts",
    )
    test = summary["test_accuracy"]
    c2.metric(
        "test accuracy",
        f"{100 * test[0]:.2f} ± {100 * test[1]:.2f} %",
        help=f"Mean ± standard deviation over the {len(runs)} seeds' runs.",
    )
    c3.metric("random first filters, mean |cos|", "–" if start is None else f"{start:.3f}")
    titles = [f"seed {r['seed']} · {100 * r['test_accuracy']:.2f} %" for r in runs]
    st.plotly_chart(
        projected(
            figures.filter_grid_figure(
                list(summary["filters"]), titles, "Learned filters, aligned in sign (own scale)"
            )
        ),
        key=f"st_grid_{name}",
        width="stretch",
    )
    diverged = [r["seed"] for r in runs if r.get("diverged")]
    if diverged:
        st.caption(f"Seeds {diverged} diverged; their best filter is shown.")


def _results(study: dict, fresh: dict) -> None:
    """Progress, problems, the verdict on the claim and each configuration's spread."""
    flat = [v for vs in fresh.values() for v in vs]
    done = sum(v is not None and v.state == "done" for v in flat)
    st.progress(done / len(flat), text=f"{done} of {len(flat)} runs done")
    summaries = {}
    for name, vs in fresh.items():
        if all(v is not None and v.state == "done" for v in vs):
            summaries[name] = summarise_stability(study["seeds"], [v.result for v in vs])
        for v in vs:
            if v is None:
                st.warning("A run is no longer on the server.")
            elif v.state in ("error", "stopped"):
                st.warning(f"{md_escape(v.name)}: {v.state}")
    if study["mode"] == "claim" and len(summaries) == len(CLAIM):
        (stable, s), (unstable, u) = summaries.items()
        st.info(stability_verdict(s, u, stable, unstable), icon=":material/balance:")
    for name, summary in summaries.items():
        _show(name, summary)


study = st.session_state.get("stability")
if study is not None:
    live_jobs(study["jobs"], lambda fresh: _results(study, fresh))
