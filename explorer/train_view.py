"""The Train page's drawing of a run: the live panel (headline, progress, the figures of
the steps shown so far), the results (comparison, confusion, mistakes, export, ablation)
and the welcome before any run.  Reads no settings widgets; :mod:`pages.train` calls it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from csvm import figures
from csvm.analysis.stats import format_interval
from csvm.data.teaching import chance_similarity
from csvm.figures.comparisons import hidden_outputs_figure, hog_figure, mkl_weights_figure
from csvm.figures.filter_svg import (
    change_scale,
    change_svg,
    filter_svg,
    gradient_svg,
    largest_change,
)
from csvm.figures.image_html import feature_maps_html
from csvm.figures.layers_svg import layer_filters_svg, layer_maps_html
from csvm.figures.shapes_svg import filter_shape_match, shape_match_svg, shapes_svg
from csvm.figures.training_svg import loss_svg, objective_svg, progress_svg
from csvm.runs.ablation import run_ablation
from csvm.runs.comparison_models import recommended_note
from csvm.runs.config import MODEL_LABELS, RunConfig
from csvm.runs.persistence import export_run
from csvm.runs.summary import ablation_verdict, comparisons, headline
from csvm.runs.targets import pinned_indices, progress, result_rows, step_events, steps_total
from explorer import train_multiclass
from explorer.datasets import data_for
from explorer.display import (
    chart,
    image_grid,
    keep_units,
    markup_figure,
    projector_mode,
    result_columns,
    svg_figure,
    table,
)
from explorer.glossary import GLOSSARY, explain
from explorer.live import live_jobs
from explorer.measured import source_words
from explorer.owner_cookie import owner
from explorer.playback import playback
from explorer.pool import FINAL_STATES, get_pool
from explorer.run_registry import ablation_job, publish_ablation
from explorer.run_zip import cached_zip
from explorer.runs import is_running, outcomes, owns
from explorer.settings import md_escape
from explorer.shared_work import split_share
from explorer.state import Run


def steps_of(views: dict, run: Run) -> list:
    """The CSVM's recorded steps: a multi-class run's of every sub-problem, in order."""
    view = views.get("csvm")
    if view is None:
        return []
    return step_events(view.events, every_sub_problem=run.config.multiclass)


def _ablation_headline(run: Run) -> None:
    """The headline's second line once the ablation is in: learned or fixed filter."""
    job = ablation_job(run)
    view = get_pool().get(job) if job else None
    waiting = view is not None and view.state in ("queued", "running")
    # For the ablation panel below: one that ends during this script run must rerun it.
    st.session_state[f"_verdict_waits_{run.id}"] = waiting
    if view is not None and view.state == "done" and view.result:
        st.markdown(f"**{md_escape(keep_units(ablation_verdict(view.result)))}**")
    elif waiting:
        st.caption("Comparing the learned filter with fixed filters at its norm…")


def _progress_line(run: Run, views: dict, shown: list, paused: bool) -> None:
    """The progress bar, its line holding the jobs' states too: every line above the
    filter pushes it towards the bottom of a 720 px projector screen."""
    # The CSVM's own state, not the run's: a crashed CSVM stops counting down at once,
    # whatever its baselines still do.
    csvm_view = views.get("csvm")
    csvm_running = csvm_view is not None and csvm_view.state not in FINAL_STATES
    fraction, text = progress(run.config, shown, running=csvm_running)
    if not is_running(views):  # paused, it plays nothing back ("Paused · … playing back")
        text += " · training done" + (
            "" if paused else f", playing back at {st.session_state.get('pace')}"
        )
    # Once trained, only jobs that did not end well ("— CSVM: done" read as Pause's doing).
    live = is_running(views)
    lines = [_status_line(m, v) for m, v in views.items() if live or v is None or v.state != "done"]
    status = f" — {' · '.join(lines)}" if lines else ""
    st.progress(fraction, text=("Paused · " if paused else "") + text + status)


def _status_line(model: str, view) -> str:
    label = "CSVM" if model == "csvm" else MODEL_LABELS[model]
    if view is None:
        return f"**{label}**: no longer on the server"
    phase = getattr(view, "phase", None) or view.state
    if view.state == "done" and view.result is not None:
        phase = view.result.get("status", "done")
    return f"**{label}**: {md_escape(phase)}"


def class_labels(data) -> list[str]:
    if len(data.class_names) > 2 or getattr(data, "classes", None) is None:
        return [str(c) for c in data.class_names]  # several classes: labels 0..k-1
    return [f"{data.class_names[0]} (−1)", f"{data.class_names[1]} (+1)"]


def live_panel(run: Run, views: dict, shown: list) -> None:
    """The headline, progress and the live figures of the steps shown so far."""
    config: RunConfig = run.config
    finished = not is_running(views) and len(shown) >= len(steps_of(views, run))
    data = data_for(config)
    play = playback(run)
    paused = play.paused
    line = headline(
        config,
        outcomes(views),
        shown,
        finished,
        data.y_test,
        paused=paused,
        total=steps_total(config),
        stopping=play.stopping,
    )
    st.markdown(keep_units(line))  # "97.00 %" stays whole on a projector's 1280 px
    _ablation_headline(run)
    if config.multiclass:
        st.caption(md_escape(train_multiclass.describe(config, data.class_names)))
    csvm_view = views.get("csvm")
    if not finished:  # once every job has ended and every step is shown, the bar goes
        _progress_line(run, views, shown, paused)
    if not shown:
        return
    if config.multiclass:
        train_multiclass.live_panel(run, shown, class_labels(data))
        _baselines_view(run, views)
        return
    _filters_view(run, shown, finished)  # first: what the lesson is about, above the fold
    last = shown[-1]
    c1, c2, c3, c4 = st.columns(4)
    linear = config.model == "lcsvm"
    c1.metric(
        "objective",
        f"{last['objective']:.4g}",
        help=explain("objective") if linear else explain("objective", "T(f)"),
    )
    c2.metric(
        "train accuracy",
        f"{100 * last.get('train_accuracy', 0):.2f} %",
        help="The share of the training images the current SVM gets right; the test "
        "images, never seen in training, come at the end.",
    )
    c3.metric("support vectors", last.get("n_support", "–"), help=explain("support vectors"))
    c4.metric("filter norm", f"{last.get('filter_norm', 0):.3g}", help=explain("filter norm ‖f‖"))
    # Side by side; one under the other on a projector, whose larger legends and tick
    # labels ran into each other in half the width.
    projector = projector_mode()
    left, right = (st.container(), st.container()) if projector else st.columns(2)
    # SVG, not Plotly (csvm.figures.chart_svg): a tick builds two strings, and a shared
    # link's new browser draws them with the headline.
    with left:
        markup_figure(objective_svg(shown, "Objective per step", projector), "objective")
        if not linear:
            st.caption(
                "T(f) = Σα − ½aᵀKa + r(f), lowered step by step. "
                + explain("Σα", "½aᵀKa", "r(f)", sep=" ")
            )
    with right:
        divergence = _divergence_event(csvm_view)
        if divergence is not None and finished:
            chart(figures.divergence_figure(shown, divergence), f"blowup_{run.id}")
        else:
            title = "Train accuracy and filter norm"
            markup_figure(progress_svg(shown, title, projector), "progress")
        pair = teaching_pair(config)
        if pair is not None:
            markup_figure(shape_match_svg(shown, pair, projector), "shape_match")
    lam_note = idle_regulariser_note(config, shown)
    if lam_note:
        st.info(lam_note, icon=":material/info:")
    _gradient_view(run, shown)
    _examples_view(run, shown)
    _baselines_view(run, views)


def idle_regulariser_note(config: RunConfig, shown: list) -> str | None:
    """Why λ changed nothing, when the regulariser was zero at every step shown.

    DFO₁ and DFO₂ only penalise a filter whose norm is above one; a run whose filters stay
    smaller gives the same curves for every λ, and a class trying λ should be told so.
    """
    if config.model != "kcsvm" or config.regulariser not in ("dfo1", "dfo2"):
        return None
    terms = [e.get("regulariser") for e in shown if "objective" in e]
    if len(terms) < 2 or any(t is None or t != 0 for t in terms):
        return None
    norm = "L1" if config.regulariser == "dfo1" else "L2"
    return (
        f"λ has had no effect on this run so far: this regulariser only pulls back a filter "
        f"whose {norm} norm is above 1, and these filters have stayed below it. Any λ gives "
        "the same run here."
    )


def _divergence_event(view):
    if view is None:
        return None
    return next((e for e in reversed(view.events) if e.get("kind") == "divergence"), None)


def _filters_view(run: Run, shown: list, finished: bool) -> None:
    """The filter, large, and beside it its last change (the Train page's first figure)."""
    # Long runs keep arrays on a thinned subset of steps (the pool's compaction).
    with_filters = [e for e in shown if e.get("filters") is not None]
    if not with_filters:
        return
    last = with_filters[-1]
    previous = next(
        (
            e["filters"]
            for e in reversed(with_filters[:-1])
            if not np.array_equal(e["filters"], last["filters"])
        ),
        None,
    )
    # 7:3: two 5×5 filters' cells of 210 px or more at 1280 px with the sidebar open.
    with st.container(key="filter_view"):
        big, small = st.columns([7, 3])
    # SVG, not Plotly: drawn with the page's first elements (csvm.figures.filter_svg).
    large = projector_mode()
    with big:
        svg_figure(filter_svg(last["filters"], large=large))
    with small:
        _shapes_view(run, shown, large)
        # A reloaded or stored run keeps its last filter only: no grid of zeros for it.
        lost = previous is None and len(shown) > 1 and len(with_filters) == 1
        if lost:
            st.markdown("**Last change**: not kept; this run's record holds its last filter")
        elif previous is None and finished:  # not "yet": a divergence at the first step
            st.markdown("**Last change**: none, the run ended before its filter changed")
        elif previous is None:
            st.markdown("**Last change**: none recorded yet")
        else:
            full = change_scale(largest_change(last["filters"], previous))
            st.markdown(f"**Last change**: purple up, orange down; full colour ±{full}")
        if not lost:
            svg_figure(change_svg(last["filters"], previous, large=large))
    # A stack of layers: layer 1 is the figure above; every later layer below it.
    for number, filters in enumerate((last.get("layer_filters") or [])[1:], start=2):
        markup_figure(layer_filters_svg(filters, number, large), f"layer{number}")


def teaching_pair(config: RunConfig) -> tuple[str, str] | None:
    """The pair's shape names when the run is on the teaching set (two classes), else None."""
    if config.dataset != "shapes" or config.multiclass:
        return None
    return (config.class_a, config.class_b)


def _shapes_view(run: Run, shown: list, large: bool) -> None:
    """The teaching set's two shapes, and how close the filter is to one of them now."""
    pair = teaching_pair(run.config)
    if pair is None:
        return
    st.markdown("**What the filter should find**: the shapes the images were drawn from")
    st.markdown(shapes_svg(pair, large=large), unsafe_allow_html=True)
    with_filters = [e for e in shown if e.get("filters") is not None]
    if with_filters:
        now = filter_shape_match(with_filters[-1]["filters"], pair)
        start = filter_shape_match(with_filters[0]["filters"], pair)
        st.markdown(
            f"**Similarity to the nearest shape now: {now:.2f}**, at the start {start:.2f} "
            f"(1 is the shape itself; a random filter scores {chance_similarity(pair):.2f} "
            "on average)"
        )


def _gradient_view(run: Run, shown: list) -> None:
    last = next((e for e in reversed(shown) if e.get("filters") is not None), {})
    if last.get("gradient") is not None:
        st.markdown("**Gradient dT/df** (the filter moves against it)")
        st.caption(explain("dT/df"))
        markup_figure(gradient_svg(last["gradient"], large=projector_mode()), "gradient")


def _examples_view(run: Run, shown: list) -> None:
    last = next((e for e in reversed(shown) if e.get("pinned_maps") is not None), {})
    data = data_for(run.config)
    names = class_labels(data)
    pinned = pinned_indices(data.y_train)
    large = projector_mode()
    if last.get("pinned_maps") is not None:
        labels = [_class_name(names, data.y_train[i]) for i in pinned]
        maps = feature_maps_html(data.X_train[pinned], last["pinned_maps"], labels, large)
        markup_figure(maps, "maps")
    layered = next((e for e in reversed(shown) if e.get("layer_maps") is not None), None)
    if layered is not None:
        columns = st.columns(2)
        for j, index in enumerate((pinned[0], pinned[len(pinned) // 2])):
            label = _class_name(names, data.y_train[index])
            maps = [m[j] for m in layered["layer_maps"]]
            with columns[j]:
                markup = layer_maps_html(data.X_train[index], maps, label, large)
                markup_figure(markup, f"lmaps{j}")
    support = last.get("support")
    if support is not None and len(support):
        st.caption(f"**α**: {GLOSSARY['α (alpha)']}")
        alpha = np.asarray(last.get("alpha", np.ones(len(support))))
        order = np.argsort(-alpha)[:16]
        idx = np.asarray(support)[order]
        image_grid(
            data.X_train[idx],
            [f"α={a:.3g}" for a in alpha[order]],
            f"Support vectors of this SVM solve ({len(support)}; largest α first)",
            cols=8,  # 16 columns ran the α captions into each other at 1280 px
        )


def _baselines_view(run: Run, views: dict) -> None:
    cnn = views.get("cnn")
    if cnn is not None and any(e.get("kind") == "epoch" for e in cnn.events):
        projector = projector_mode()
        # Half the width, as the objective beside it is drawn (whole-width, its lettering
        # came out half again as large as every other chart's); whole on a projector.
        with st.container() if projector else st.columns(2)[0]:
            markup_figure(loss_svg(cnn.events, "Small CNN: loss per epoch", projector), "cnn")
    _comparison_pictures(run, views)


def _comparison_pictures(run: Run, views: dict) -> None:
    """Each comparison model's own picture, once its result is in."""
    pictures = {
        m: v.result["picture"]
        for m, v in views.items()
        if v is not None and v.result is not None and "picture" in v.result
    }
    if "mkl" in pictures:
        p = pictures["mkl"]
        figure = mkl_weights_figure(p["filter_names"], p["bank"], p["weights"])
        chart(figure, f"mkl_{run.id}")
    if "hog" in pictures:
        chart(hog_figure(pictures["hog"]["image"], pictures["hog"]["hog_image"]), f"hog_{run.id}")
    if "mlsvm" in pictures:
        data = data_for(run.config)
        names = class_labels(data)
        p = pictures["mlsvm"]
        labels = [_class_name(names, data.y_train[i]) for i in p["pinned"]]
        chart(hidden_outputs_figure(p["hidden"], labels), f"mlsvm_{run.id}")


def _class_name(names, label) -> str:
    """A training label's class name (±1 in a pair, 0..k-1 with several classes)."""
    label = int(label)
    if label in (-1, 1) and len(names) == 2:
        return str(names[0 if label < 0 else 1])
    return str(names[label]) if 0 <= label < len(names) else str(label)


# -- results --------------------------------------------------------------------------------
def _csvm_behind(outs: dict) -> bool:
    """Whether some other model of the run scored above its CSVM on the test images."""
    scores = {
        model: o["result"]["test_accuracy"]
        for model, o in outs.items()
        if o and o.get("result") and o["result"].get("test_accuracy") is not None
    }
    mine = scores.pop("csvm", None)
    return mine is not None and any(score > mine for score in scores.values())


def results_panel(run: Run, views: dict) -> None:
    """Comparison with intervals and significance, confusion, mistakes, export."""
    config: RunConfig = run.config
    data = data_for(config)
    outs = outcomes(views)
    st.header("Comparison on the same split")
    table(
        pd.DataFrame(result_rows(config, outs)),
        hide_index=True,
        width="stretch",
        column_config=result_columns(),
    )
    note = recommended_note((outs.get("recommended") or {}).get("result"))
    if note:
        st.caption(md_escape(note))
    lines = comparisons(config, outs, data.y_test)
    for line in lines:
        st.markdown(md_escape(line))
    if lines:  # only where there is a comparison to read
        st.caption(explain("p", "95 % interval", sep=" "))
    if lines and _csvm_behind(outs):  # not under a run it won by 50 points
        st.caption(
            "Why a CSVM can lose: with few training images and a hard margin the SVM "
            "separates the training set whatever the filter, so the filter has little to "
            f"learn from, and on {len(data.y_test)} test images a few images either way is "
            "noise (see About)."
        )
    finished = {m: o["result"] for m, o in outs.items() if o and o.get("result")}
    if not finished:
        return
    if config.multiclass:
        train_multiclass.results_panel(run, finished, data)
        _export_button(run, config, finished, outs, data)
        return
    names = class_labels(data)
    # At most three to a row (five side by side cut their titles at 1280 px), two on a
    # projector: at three, the teaching set's "horizontal" ran into "vertical".
    items = list(finished.items())
    per_row = 2 if projector_mode() else 3
    for start in range(0, len(items), per_row):
        cols = st.columns(per_row if len(items) > per_row else len(items))
        for col, (model, result) in zip(cols, items[start : start + per_row], strict=False):
            label = MODEL_LABELS[config.model if model == "csvm" else model]
            fig = figures.confusion_figure(
                np.array(result["confusion"]), names, f"{label}: test confusion"
            )
            with col:
                # No Plotly toolbar: nothing here to zoom, and on a touch screen it is always
                # shown, over the titles of three matrices side by side on a phone.
                chart(fig, f"conf_{run.id}_{model}", config={"displayModeBar": False})
    csvm_result = finished.get("csvm")
    if csvm_result is None:
        return
    if config.model == "kcsvm":
        ablation_panel(run, csvm_result)
    wrong = csvm_result["misclassified"]
    with st.expander(
        f"Misclassified test images ({csvm_result['n_misclassified']} of {csvm_result['n_test']})"
    ):
        true = [names[0 if data.y_test[i] < 0 else 1] for i in wrong]
        image_grid(
            data.X_test[wrong],
            [f"true {t}" for t in true],
            "Misclassified by the CSVM (first 32)",
        )
    _export_button(run, config, finished, outs, data)


def _export_button(run: Run, config: RunConfig, finished: dict, outs: dict, data) -> None:
    lines = comparisons(config, outs, data.y_test)
    zipped = cached_zip(  # built once per run and comparison, not on every page run
        (run.id, tuple((m, id(r)) for m, r in finished.items()), tuple(map(str, lines))),
        # its digest of the test images: a reload checks them
        lambda: export_run(config, finished, {"comparisons": lines}, (data.X_test, data.y_test)),
    )
    st.download_button(
        "Download run (config, results, history CSV, filters .npy, Python snippet)",
        zipped,
        file_name=f"csvm-run-{run.id}.zip",
        mime="application/zip",
        key=f"export_{run.id}",
    )


#: Up to this many training images a finished K-CSVM's ablation starts without a click.
AUTO_ABLATION_MAX = 1000


def ablation_panel(run: Run, result: dict) -> None:
    """Fixed filters against the learned one: one click, trained in the worker pool."""
    st.header("What did learning the filter buy?")
    if len(result.get("layer_filters") or []) > 1:  # one pooled layer reads as one
        st.caption(
            "A stack of layers: each fixed set replaces every layer — the random start, or a "
            "delta or Gaussian in layer 1 with the later layers at their start — each layer "
            "rescaled to the learned layer's norm."
        )
    st.caption(
        "The same kernel and SVM on fixed filters — the random start, a delta and a Gaussian, "
        "each rescaled to the learned filter's norm — and the learned filter shrunk to the "
        "start's norm. If a fixed filter at the same norm does as well, the gain came from "
        "the filter's scale (a change of kernel bandwidth), not from its shape."
    )
    job = ablation_job(run)
    if job is None:
        # On few images it runs by itself (one SVM solve per filter): what a class watched
        # learn is set against fixed filters at once, and the headline says which won.
        auto = run.config.n_train is not None and run.config.n_train <= AUTO_ABLATION_MAX
        auto = auto and result.get("status", "done") == "done"
        if owns(run) and (auto or st.button("Run the ablation", key=f"ablate_{run.id}")):
            job = get_pool().submit(
                run_ablation,
                {
                    "config": run.config.to_dict(),
                    "learned_filters": np.asarray(result["filters"]).tolist(),
                    "start_filters": None
                    if result.get("start_filters") is None
                    else np.asarray(result["start_filters"]).tolist(),
                    **_layer_arguments(result),
                },
                name=f"{run.id}:ablation",
                group="ablation",
                owner=owner(),
                share=split_share(run.config),  # a class's identical ablations run once
            )
            publish_ablation(run, job)
            st.rerun()
        return

    def draw(view) -> bool:
        _ablation_view(view)
        # Ended after the headline was drawn (as part of this page run): draw it again.
        ended = view is not None and view.state not in ("queued", "running")
        return ended and st.session_state.pop(f"_verdict_waits_{run.id}", False)

    live_jobs(job, draw)


def _layer_arguments(result: dict) -> dict:
    """A stack's every layer, learned and first, for the ablation job (nothing for one layer)."""
    if result.get("layer_filters") is None or result.get("start_layer_filters") is None:
        return {}
    return {
        "learned_layers": [np.asarray(f).tolist() for f in result["layer_filters"]],
        "start_layers": [np.asarray(f).tolist() for f in result["start_layer_filters"]],
    }


def _ablation_view(view) -> None:
    if view is None:
        st.warning("The ablation is no longer on the server: run it again.")
    elif view.state in ("queued", "running"):
        st.progress(0.0, text="Training the SVMs on fixed filters…")
    elif view.state == "error":
        st.error(md_escape(view.error.strip().split("\n\n")[0]))
    else:
        _ablation_table(view.result)


def _ablation_table(result: dict) -> None:
    from csvm.analysis.stats import format_p, format_signed

    def lead(r: dict) -> str:
        # Counted from the learned filter, as the headline's verdict is (the row's own
        # test has the fixed filter first); short, so the column fits at 1280 px.
        m = r.get("mcnemar")
        if not m:
            return "–"
        return f"{format_signed(-m['diff_points'])} points, p {format_p(m['p_value'])}"

    rows = [
        {
            "filter": r["label"],
            "norm": round(r["norm"], 3),
            "test accuracy": round(100 * r["test_accuracy"], 2),
            "95 % interval": format_interval(*r["interval"]),
            "learned filter's lead": lead(r),
        }
        for r in result["rows"]
    ]
    lead_help = (
        "How many points of test accuracy the learned filter scored above this fixed "
        "filter on the same test images (negative: below it), and McNemar's exact p: "
        "below 0.05 the difference is significant. " + GLOSSARY["p"]
    )
    # The results table's formats: "91.00 %", not "91" beside "92.50–95.00 %".
    table(
        pd.DataFrame(rows),
        hide_index=True,
        width="stretch",
        column_config={
            **result_columns(),
            # Three decimals in every row ("%.3g" wrote 0.22 beside 0.162).
            "norm": st.column_config.NumberColumn(format="%.3f"),
            "learned filter's lead": st.column_config.TextColumn(help=lead_help),
        },
    )
    st.caption(md_escape(result["explanation"]))


def welcome(data) -> None:
    if data is not None:
        names = class_labels(data)
        if len(names) > 2 or getattr(data, "classes", None) is None:
            # Several classes (labels 0..k-1): the first two images of each.
            idx = np.concatenate([np.flatnonzero(data.y_train == k)[:2] for k in range(len(names))])
        else:
            idx = pinned_indices(data.y_train)
        image_grid(
            data.X_train[idx],
            [names[max(int(data.y_train[i]), 0)] for i in idx],
            "Example training images",
            cols=6 if len(idx) <= 6 else 10,
        )
        st.caption(
            f"{md_escape(source_words(data.source))} · train {len(data.y_train)} · "
            f"test {len(data.y_test)}"
        )
    st.info(
        "Press **Start** to train. The page plays the steps at the pace set in the "
        "sidebar, so the class can watch the filter learn."
    )
    get_pool()  # after drawing: the spare workers warm up while the user reads
