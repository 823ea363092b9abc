"""When does the filter pay?  Test accuracy of each method against the number of training
images, from curves saved in the repository (instant) or run here, one job per cell."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from csvm.analysis.curve_virtual import left_out_note, suited_methods
from csvm.analysis.curves import (
    LEARNED_METHODS,
    METHODS,
    CurveFileError,
    curve_cells,
    estimate_seconds,
    pairwise,
    saved_curves,
    summarise_curve,
    where_learning_pays,
)
from csvm.analysis.reproduced import describe_environment
from csvm.analysis.stats import format_interval, format_p, format_signed
from csvm.figures.curves import curve_figure, curve_subtitle, curve_title
from csvm.jobs import QuotaExceeded
from csvm.runs.curve_job import run_curve_cell
from csvm.runs.sweeps import ignore_event
from explorer.app import ensure_app
from explorer.cluster import cluster, executor_address, future_view
from explorer.display import projected, projector_mode, result_columns, table
from explorer.glossary import GLOSSARY
from explorer.live import group_busy, live_jobs, poll_views
from explorer.measured import how_measured, strip_paths
from explorer.owner_cookie import heartbeat, owner
from explorer.pool import get_pool
from explorer.settings import current_config, md_escape, show_problems

ensure_app()  # a page's own URL on a fresh server: run it inside the app

MAX_CELLS = 60
#: A saved curve's height in projector mode (px): title, caption and figure in 720 px.
_PROJECTOR_HEIGHT = 440
#: Past this many methods the legend's rows (one each at a projector's type size, about
#: _LEGEND_ROW px) ate the plot: its axis title ran into the figure's title (7 methods).
#: A subtitle (what the curve learns) takes one row more.
_LEGEND_ROWS_IN_HEIGHT, _LEGEND_ROW = 6, 30


def _table(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "training images": r["n_train"],
                "method": r["label"],
                "test accuracy": round(100 * r["accuracy"], 2),
                "95 % interval": format_interval(*r["interval"]),  # as the Train page's
                "gain (points)": (
                    format_signed(100 * r["gain_over_svm"]) if "gain_over_svm" in r else "—"
                ),
                "McNemar p": (
                    format_p(r["mcnemar_p"], cell=True) if "mcnemar_p" in r else "reference"
                ),
            }
            for r in rows
        ]
    )


def _columns() -> dict:
    """The table's formats, and short headers with their long form on hover (the long
    headers were cut at 1280 px)."""
    return {
        **result_columns(),
        "gain (points)": st.column_config.TextColumn(
            help="Test accuracy above the tuned plain SVM of the same draws, in points."
        ),
        "McNemar p": st.column_config.TextColumn(
            help="McNemar's exact test against the tuned plain SVM of the same draws, each "
            "test image counted once over the seeds. " + GLOSSARY["p"]
        ),
    }


def _against_each_other(record: dict) -> None:
    """Where the learned filters beat each other method: differences with McNemar's p."""
    methods = [m for m in METHODS if any(c["method"] == m for c in record["cells"])]
    learned = [m for m in LEARNED_METHODS if m in methods]
    if not learned:
        return
    rows = []
    for mine in learned:
        for other in (m for m in methods if m not in ("svm", mine)):
            for r in pairwise(record["cells"], mine, other):
                rows.append(
                    {
                        "training images": r["n_train"],
                        "learned": METHODS[mine][0],
                        "against": METHODS[other][0],
                        "difference (points)": format_signed(100 * r["difference"]),
                        "McNemar p": format_p(r["mcnemar_p"], cell=True),
                    }
                )
    with st.expander("The learned filters against each other method"):
        table(pd.DataFrame(rows), hide_index=True, width="stretch")


def _where_it_pays(record: dict) -> None:
    """Each learned method against the hand-made HOG + RBF SVM, as measured in this curve."""
    lines = [where_learning_pays(record["cells"], m) for m in LEARNED_METHODS]
    lines = [line for line in lines if line]
    if lines:
        st.markdown("**Where the learned filter pays against HOG:**\n" + "".join(
            f"\n- {md_escape(line)}" for line in lines
        ))  # fmt: skip


def _saved(record: dict, key: str) -> None:
    if record.get("complete") is False:
        st.caption(
            f"Partial: {len(record['cells'])} cells measured so far (the measurement is "
            "still running, or was stopped before the end)."
        )
    # The pair and what it learns in the figure's own title, not a heading above it, and a
    # projector's figure no taller than what is left of a 720 px screen under the page's
    # title: the first curve is seen whole without scrolling.
    methods = list(dict.fromkeys(row["method"] for row in record["rows"]))
    title, subtitle = curve_title(record["dataset"], record["pair"]), curve_subtitle(methods)
    figure = projected(curve_figure(record["rows"], title, subtitle))
    if projector_mode():  # a subtitle takes a legend row's height, a long name two
        lines = sum(1 + (trace.name or "").count("<br>") for trace in figure.data)
        extra_rows = max(0, lines - _LEGEND_ROWS_IN_HEIGHT) + bool(subtitle)
        figure.update_layout(height=_PROJECTOR_HEIGHT + _LEGEND_ROW * extra_rows)
    st.plotly_chart(figure, key=f"curve_{key}", width="stretch")
    table(_table(record["rows"]), hide_index=True, width="stretch", column_config=_columns())
    _where_it_pays(record)
    _against_each_other(record)
    facts = []
    if "machine" in record and "versions" in record and "date" in record:
        facts.append(describe_environment(record) + f"; {record.get('seconds', 0):.0f} s in all.")
    how_measured(record["command"], facts)


st.title("When does the filter pay?")
show_problems()  # a link's settings that were replaced, as Train says them
st.caption(
    # One line with its help icon at 1280 px in projector mode: a second line would push
    # the first curve's legend under a 720 px screen's fold.
    "Test accuracy by training images, each method tuned on its own validation images.",
    help="Every method is tuned on a validation draw of its own (never on the test images) "
    "and scored on the same test set; the gain is over the tuned plain SVM of the same "
    "draws, with McNemar's exact test over the test images, each counted once over the "
    "seeds (they share the test images: their predictions are not independent trials).",
)
heartbeat()
records = []
# The digits first (the Lesson's step 5 opens this page after a class trained MNIST 3 v 5),
# then CIFAR-10's photos; by file name within each.
saved = sorted(
    saved_curves(), key=lambda pr: isinstance(pr[1], dict) and "mnist" not in pr[1]["dataset"]
)
for path, record in saved:
    if isinstance(record, CurveFileError):
        st.error(md_escape(strip_paths(record, keep_name=True)), icon=":material/error:")
        continue
    records.append(record)
    _saved(record, path.stem)
if not records:
    st.info("No saved curve yet: run one below.", icon=":material/hourglass_empty:")
    how_measured(
        "python -m csvm curve --dataset mnist --pair 3,5 --out assets/runs/curve_mnist_3v5.json"
    )

st.header("Run a curve here")
base = current_config()
st.caption(
    f"On {md_escape(base.dataset)} {md_escape(base.class_a)} v {md_escape(base.class_b)} "
    "(change the pair on the Train page). One job per cell on the server's workers."
)
c1, c2, c3 = st.columns([3, 2, 1])
offered = suited_methods(list(METHODS), base.dataset)
chosen = st.session_state.get("cv_methods")
if chosen is not None and any(m not in offered for m in chosen):  # chosen on other data
    st.session_state["cv_methods"] = [m for m in chosen if m in offered]
methods = c1.multiselect(
    "Methods",
    offered,
    default=None if chosen is not None else ["svm", "kcsvm", "layers"],
    format_func=lambda m: METHODS[m][0],
    key="cv_methods",
)
left_out = left_out_note(list(METHODS), base.dataset)
if left_out:
    c1.caption(left_out)
sizes_text = c2.text_input("Training images", "20,50,100", key="cv_sizes", help="Comma list.")
seeds = int(c3.number_input("Seeds", 1, 10, 2, key="cv_seeds"))


def _sizes(text: str) -> list[int]:
    """The sizes typed, or a ValueError that says what to type."""
    hint = "give a comma list of sizes from 10 to 5,000 images, e.g. 20,50,100"
    try:
        sizes = sorted({int(v) for v in text.split(",") if v.strip()})
    except ValueError:
        raise ValueError(f"Training images {text!r}: {hint}.") from None
    if not sizes or min(sizes) < 10 or max(sizes) > 5000:
        raise ValueError(f"Training images {text!r}: {hint}.")
    return sizes


error, cells = "", []
try:
    cells = curve_cells(methods or ["svm"], _sizes(sizes_text), range(seeds), base.dataset)
except ValueError as exc:
    error = str(exc)
if cells and len(cells) > MAX_CELLS:
    error = f"{len(cells)} cells: at most {MAX_CELLS} here (fewer sizes, seeds or methods)."
pool = get_pool()
executor, cluster_problem = cluster(executor_address())
if cluster_problem:
    st.warning(
        md_escape(cluster_problem) + " The curve runs on this server's own workers instead.",
        icon=":material/cloud_off:",
    )
elif executor is not None:
    st.caption("Cells run on the Dask cluster named by CSVM_DASK_SCHEDULER.")
if error:
    st.error(md_escape(error))
else:
    seconds = estimate_seconds(cells, records)
    cost = (
        "unknown (no saved curve measured these methods)"
        if seconds is None
        else (f"about {seconds:.0f} s of one core")
    )
    st.caption(f"{len(cells)} cells; estimated cost {cost}.")


def _stop_curve() -> None:
    state = st.session_state.get("curve")
    if state:
        state["pending"] = []
        for future in state.get("futures", ()):
            future.cancel()  # pending cells never start; running ones are ignored
    pool.cancel_owner(owner(), group="curve")


def _curve_jobs() -> list[str]:
    """The curve's jobs, topped up from its pending cells: a browser may have only
    ``max_active_per_owner`` jobs queued or running, so cells go in as others finish."""
    state = st.session_state["curve"]
    active = sum(1 for v in pool.jobs(owner=owner()) if v.state in ("queued", "running"))
    while state["pending"] and active < pool.settings.max_active_per_owner:
        m, n, s = state["pending"].pop(0)
        kwargs = {"dataset": state["dataset"], "a": state["a"], "b": state["b"]}
        kwargs.update(method=m, n_train=n, seed=s)
        try:
            job = pool.submit(
                run_curve_cell, kwargs, name=f"curve {m} {n} {s}", group="curve", owner=owner()
            )
        except QuotaExceeded:
            state["pending"].insert(0, (m, n, s))
            break
        state["jobs"].append(job)
        active += 1
    return state["jobs"]


b1, b2 = st.columns([1, 4])
if b1.button("▶ Start curve", type="primary", disabled=bool(error), key="cv_start"):
    _stop_curve()  # one curve per session: the new one replaces it
    state = {
        "dataset": base.dataset,
        "a": base.class_a,
        "b": base.class_b,
        "pending": list(cells),
        "jobs": [],
        "total": len(cells),
    }
    if executor is not None:  # the cluster has no per-browser cap: every cell at once
        args = (ignore_event, base.dataset, base.class_a, base.class_b)
        state["futures"] = [executor.submit(run_curve_cell, *args, m, n, s) for m, n, s in cells]
        state["pending"] = []
    st.session_state["curve"] = state


def _curve_busy() -> bool:
    """Cells still to submit, or the curve's jobs (or cluster futures) not yet done."""
    state = st.session_state.get("curve") or {}
    return bool(state.get("pending")) or group_busy("curve", state.get("futures", ()))


# Drawn after Start is handled, so the run that starts a curve already offers its Stop.
b2.button("■ Stop", key="cv_stop", on_click=_stop_curve, disabled=not _curve_busy())


def _curve_views(jobs):
    """Pool jobs, or the cluster's futures, as views."""
    state = st.session_state["curve"]
    if "futures" in state:
        return [future_view(f"curve {i}", f) for i, f in enumerate(state["futures"])]
    return poll_views(jobs)


def _live(views: list) -> None:
    done = [v.result for v in views if v is not None and v.result is not None]
    total = st.session_state["curve"]["total"]
    st.progress(len(done) / max(1, total), text=f"{len(done)} of {total} cells done")
    for v in views:
        if v is not None and v.state == "error":
            st.warning(f"{md_escape(v.name)}: {md_escape(v.error.strip().splitlines()[0])}")
    if done:
        rows = summarise_curve(done)
        st.plotly_chart(projected(curve_figure(rows)), key="curve_live", width="stretch")
        table(_table(rows), hide_index=True, width="stretch", column_config=_columns())


if st.session_state.get("curve"):
    live_jobs(_curve_jobs, _live, views=_curve_views)
