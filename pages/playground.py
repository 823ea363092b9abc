"""SVM playground: the SVM itself in two dimensions, and SMO solving it pair by pair.

A thin page: the settings, URL rules and playback live in :mod:`explorer.playground`,
the solver in :mod:`csvm.model.smo`, the figures in :mod:`csvm.figures.playground`.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np
import streamlit as st

from csvm.figures import playground as figs
from explorer import playground as pg
from explorer.app import ensure_app
from explorer.datasets import presets
from explorer.display import projector_mode
from explorer.playback import pace_seconds
from explorer.settings import md_escape, set_config
from explorer.widget_state import resend

STATE, POINTS, PROBLEMS, PLAYBACK = "pg_settings", "pg_points", "pg_problems", "pg_playback"
#: Settings _set gave the widgets, until a run has drawn the sidebar's boxes with them.
_PUSHED = "pg_pushed"
CLICKS = "pg_click_version"
CLASSROOM = "Shapes: filters find the bars"

ensure_app()  # a page's own URL on a fresh server: run it inside the app
_LABELS = {
    "blobs": "two blobs",
    "moons": "moons",
    "circles": "circles",
    "xor": "XOR",
    "spirals": "spirals",
    "placed": "points I place",
}
_VIEWS = {"solution": "Solution", "smo": "Watch SMO solve it", "lift": "Lift to features"}


# -- settings -----------------------------------------------------------------------------
def _restore() -> None:
    """Settings and points from the URL on the session's first visit."""
    if STATE in st.session_state:
        return
    settings, points, problems = pg.from_query(st.query_params.to_dict())
    st.session_state[STATE], st.session_state[POINTS] = settings, points
    st.session_state[PROBLEMS] = problems


def _set(settings: pg.Settings, points=None) -> None:
    """New canonical settings; the widgets are re-seeded from them (call in callbacks)."""
    st.session_state[STATE] = st.session_state[_PUSHED] = settings
    if points is not None:
        st.session_state[POINTS] = points
    for name in ("data", "hard", "view", "add"):
        st.session_state.pop(f"pg_w_{name}", None)


def _seed(name: str, value) -> str:
    key = f"pg_w_{name}"
    st.session_state.setdefault(key, value)
    resend([key])  # sent on every run: explorer/widget_state.py
    return key


def _data_controls(s: pg.Settings) -> dict:
    sb = st.sidebar
    out = {
        "data": sb.selectbox(
            "Data",
            pg.DATASETS,
            format_func=_LABELS.get,
            key=_seed("data", s.data),
            help="Generated 2-D problems, or your own points.",
        )
    }
    if out["data"] == "placed":
        sb.button(
            "Clear all points",
            on_click=_clear,
            icon=":material/delete:",
            help="Start from an empty plane and click to place points.",
        )
        return out
    out["n"] = sb.slider(
        "Points",
        pg.N_MIN,
        pg.N_MAX,
        key=_seed("n", s.n),
        step=10,
        help="How many points (20-400), half of each class.",
    )
    if out["data"] == "blobs":
        out["overlap"] = sb.slider(
            "Overlap",
            0.0,
            1.0,
            key=_seed("overlap", s.overlap),
            step=0.05,
            help="0: far apart; 1: on top of each other.",
        )
    out["noise"] = sb.slider(
        "Noise",
        *pg.NOISE_RANGE,
        key=_seed("noise", s.noise),
        step=0.05,
        help="Gaussian jitter on every point.",
    )
    out["seed"] = sb.number_input(
        "Seed",
        *pg.SEED_RANGE,
        key=_seed("seed", s.seed),
        help="The same seed draws the same points.",
    )
    return out


def _model_controls(s: pg.Settings) -> dict:
    sb = st.sidebar
    out = {
        "kernel": sb.radio(
            "Kernel",
            pg.KERNELS,
            key=_seed("kernel", s.kernel),
            horizontal=True,
            help="linear: x·z; poly: (γ x·z + c₀)^d; rbf: exp(−γ‖x−z‖²).",
        )
    }
    if out["kernel"] == "poly":
        out["degree"] = sb.slider("Degree d", *pg.DEGREE_RANGE, key=_seed("degree", s.degree))
        out["coef0"] = sb.slider(
            "c₀ (coef0)",
            *pg.COEF0_RANGE,
            key=_seed("coef0", s.coef0),
            step=0.5,
            help="The constant inside the polynomial.",
        )
    if out["kernel"] != "linear":
        out["gamma"] = sb.select_slider(
            "γ (gamma)",
            pg.GAMMA_OPTIONS,
            format_func="{:g}".format,
            key=_seed("gamma", s.gamma),
            help="Kernel scale; a large RBF γ gives wiggly boundaries.",
        )
    out["hard"] = sb.toggle(
        "Hard margin (no C)",
        key=_seed("hard", s.hard),
        help="No upper bound on α: every point must be outside the margin.",
    )
    out["C"] = sb.select_slider(
        "C",
        pg.C_OPTIONS,
        format_func="{:g}".format,
        key=_seed("C", s.C),
        disabled=out["hard"],
        help="Cost of a point inside the margin (log scale, 0.01-10⁴).",
    )
    return out


def _clear() -> None:
    _set(replace(st.session_state[STATE], data="placed"), points=())


def read_settings() -> pg.Settings:
    pushed = st.session_state.get(_PUSHED)
    if pushed is not None:  # the run that was to draw them was cut short by a click
        _set(pushed)  # (the reason: explorer.settings.render_settings)
    s = st.session_state[STATE]
    st.sidebar.header("SVM playground")
    values = {**_data_controls(s), **_model_controls(s)}
    st.session_state.pop(_PUSHED, None)
    values["view"] = st.session_state.get(_seed("view", s.view), s.view)
    values["add"] = st.session_state.get(_seed("add", s.add), s.add)
    settings = replace(s, **values)
    st.session_state[STATE] = settings
    return settings


def write_url(settings: pg.Settings, points) -> None:
    """Only the ``pg_*`` keys; the app's own keys are left as they are."""
    wanted = pg.to_query(settings, points)
    current = {k: v for k, v in st.query_params.to_dict().items() if k.startswith(pg.PREFIX)}
    if wanted == current:
        return
    for key in set(current) - set(wanted):
        del st.query_params[key]
    st.query_params.update(wanted)


# -- computation (cached: a redraw only solves when the problem changed) --------------------
def _problem_key(settings: pg.Settings) -> pg.Settings:
    return replace(settings, view=pg.DEFAULT.view, add=pg.DEFAULT.add)


@st.cache_data(max_entries=16, show_spinner=False)
def solve(settings: pg.Settings, X: np.ndarray, y: np.ndarray) -> pg.Steps:
    return pg.record_steps(settings, X, y)


@st.cache_data(max_entries=16, show_spinner=False)
def lift(settings: pg.Settings, X: np.ndarray, y: np.ndarray):
    """The homogeneous degree-2 kernel's SVM: its plane in the 3-D feature space."""
    lifted = replace(settings, kernel="poly", degree=2, gamma=1.0, coef0=0.0)
    steps = pg.record_steps(lifted, X, y)
    alpha = steps.alpha_at(steps.total)
    w = (alpha * y) @ figs.quadratic_features(X)
    b = float(steps.b[-1])
    accuracy = float(np.mean(np.sign(figs.quadratic_features(X) @ w + b) == y))
    return w, b, accuracy, steps.converged


# -- the views ------------------------------------------------------------------------------
def _on_click(key: str, traces: dict, X: np.ndarray, y: np.ndarray) -> None:
    state = st.session_state.get(key)
    chosen = (state or {}).get("selection", {}).get("points", [])
    click = pg.resolve_click(traces, chosen[0]) if chosen else None
    if click is None:
        return
    s = st.session_state[STATE]
    points = st.session_state[POINTS] if s.data == "placed" else pg.as_points(X, y)
    if click.action == "add":
        points = pg.add_point(points, click.x, click.y, s.add)
    else:
        points = pg.remove_point(points, click.index)
    _set(replace(s, data="placed"), points)
    st.session_state[CLICKS] = st.session_state.get(CLICKS, 0) + 1


def _figure(s, X, y, steps: pg.Steps | None, position: int, clickable: bool, title: str):
    axis = pg.grid_axis()
    if steps is None:  # one class only: nothing to learn yet
        alpha, b, pair = np.zeros(len(y)), 0.0, None
        F = np.zeros((len(axis), len(axis)))
    else:
        alpha, b = steps.alpha_at(position), float(steps.b[position])
        F = pg.decision_grid(s, X, y, alpha, b, axis)
        pair = tuple(steps.pairs[position - 1]) if 0 < position and not clickable else None
    yf = y * pg.decision_values(s, X, y, alpha, b, X) if len(y) else np.zeros(0)
    projector = projector_mode()
    return (
        figs.decision_figure(
            X,
            y,
            axis,
            F,
            alpha,
            yf,
            s.c_value,
            pair=pair,
            title=title,
            projector=projector,
            click_axis=pg.click_axis() if clickable else None,
        ),
        alpha,
        b,
        yf,
    )


def solution_view(s: pg.Settings, X, y, steps: pg.Steps | None) -> None:
    left, right = st.columns([3, 1])
    end = steps.total if steps else 0
    fig, alpha, b, yf = _figure(s, X, y, steps, end, True, "Decision function f(x)")
    traces = {
        k: ("grid", None) if t.name == figs.GRID_TRACE else ("point", list(t.customdata))
        for k, t in enumerate(fig.data)
        if t.name in (figs.GRID_TRACE, *figs.POINT_TRACES)
    }
    key = f"pg_plane_{st.session_state.get(CLICKS, 0)}"
    with left:
        st.plotly_chart(
            fig,
            key=key,
            width="stretch",
            on_select=partial(_on_click, key, traces, X, y),
            selection_mode="points",
            config={"displayModeBar": False},
        )
    with right:
        st.radio(
            "A click adds a point of class",
            (1, -1),
            horizontal=True,
            format_func={1: "+1 (red circle)", -1: "−1 (blue square)"}.get,
            key=_seed("add", s.add),
            help="Click an existing point to remove it.",
        )
        _metrics(s, X, y, steps, alpha, yf)
    st.caption(
        "What to notice: only the ringed points (the support vectors) hold up the boundary; "
        "drag C down and the margin widens and more points become support vectors, push it "
        "up (or choose the hard margin) and the margin narrows around the closest points. "
        "Points marked × sit inside their margin (ξ > 0) and pay C each."
    )


def _metrics(s, X, y, steps, alpha, yf) -> None:
    if steps is None:
        st.info(
            "Place at least one point of each class (or choose a data set).",
            icon=":material/touch_app:",
        )
        return
    if s.hard and not steps.converged:
        # No hard margin exists: the metrics of where SMO gave up read like a solution
        # (a "margin" wider than C = 10's, points "inside" a margin there is none of).
        st.error(
            f"No hard-margin solution: these points cannot be separated by this kernel, "
            f"and SMO stopped after {steps.total} steps. Turn the hard margin off and "
            "choose a C, or remove the points that sit among the other class.",
            icon=":material/block:",
        )
        return
    st.metric("Train accuracy", f"{100 * np.mean(yf > 0):.1f} %")
    st.metric("Support vectors", f"{int(np.sum(alpha > 0))} of {len(y)}")
    st.metric("Inside the margin (ξ > 0)", int(np.sum((alpha > 0) & (yf < 1 - figs.XI_SHOWN))))
    if s.kernel == "linear":
        w = (alpha * y) @ X
        norm = float(np.linalg.norm(w))
        st.metric("Margin width 2/‖w‖", f"{2 / norm:.3g}" if norm else "∞")
    st.metric("SMO steps", steps.total, help="Pairs of alphas SMO updated to reach tol 1e-3.")
    if not steps.converged:
        st.warning(
            f"SMO stopped after {steps.total} steps without meeting its tolerance.",
            icon=":material/warning:",
        )


def _playback(steps: pg.Steps, signature: str) -> pg.Playback:
    pb = st.session_state.setdefault(PLAYBACK, pg.Playback())
    pb.follow(signature, steps.total)
    return pb


def smo_view(s: pg.Settings, X, y, steps: pg.Steps | None, signature: str) -> None:
    if steps is None:
        st.info("Place at least one point of each class first.", icon=":material/touch_app:")
        return
    pb = _playback(steps, signature)
    cols = st.columns(4)
    cols[0].button(
        "Step",
        on_click=pb.step,
        icon=":material/skip_next:",
        disabled=pb.at_end,
        help="Exactly one more pair of alphas.",
    )
    if pb.playing:
        cols[1].button("Pause", on_click=pb.pause, icon=":material/pause:")
    else:
        cols[1].button("Play", on_click=pb.play, icon=":material/play_arrow:", disabled=pb.at_end)
    cols[2].button("Start over", on_click=pb.reset, icon=":material/replay:")
    interval, per_tick = pg.tick(pace_seconds(), steps.total)

    @st.fragment(run_every=interval if pb.playing else None)
    def show() -> None:
        if pb.playing:
            pb.advance(per_tick)
            if not pb.playing:
                st.rerun()  # the end: redraw the buttons, stop the timer
        _smo_step(s, X, y, steps, pb.position)

    show()
    st.caption(
        "What to notice: each step changes just two alphas (ringed orange) and keeps "
        "Σ αᵢyᵢ = 0; W(α) never falls, and the KKT gap (how badly the worst pair breaks the "
        "optimality conditions) falls until it is below tol. Early steps move the boundary a "
        "lot, the last ones only polish it."
    )


def _smo_step(s, X, y, steps: pg.Steps, position: int) -> None:
    fig, *_ = _figure(s, X, y, steps, position, False, "SMO, step by step")
    projector = projector_mode()
    if position:
        i, j = steps.pairs[position - 1]
        what = (
            f"Step {position} of {steps.total}: updated α{i} and α{j}; "
            f"W(α) = {steps.objective[position]:.5g}, KKT gap {steps.gap[position]:.3g}"
        )
    else:
        what = f"Step 0 of {steps.total}: every α is 0, so f(x) = b everywhere."
    st.markdown(f"**{what}**")
    left, right = st.columns([3, 2])
    left.plotly_chart(fig, key="pg_smo_plane", width="stretch", config={"displayModeBar": False})
    progress = figs.smo_progress_figure(steps.objective, steps.gap, position, pg.TOL, projector)
    right.plotly_chart(progress, key="pg_smo_progress", width="stretch")


def _open_train() -> None:
    chosen = next((p for p in presets() if p["name"] == CLASSROOM), None)
    if chosen is not None:
        set_config(chosen["run_config"])  # the Train page's preset box then names it


def lift_view(s: pg.Settings, X, y) -> None:
    if not pg.solvable(y):
        st.info("Place at least one point of each class first.", icon=":material/touch_app:")
        return
    w, b, accuracy, converged = lift(_problem_key(s), X, y)
    projector = projector_mode()
    title = f"φ(x) = (x₁², √2·x₁x₂, x₂²): a plane separates {100 * accuracy:.0f} % of the points"
    st.plotly_chart(
        figs.lift_figure(X, y, w, b, title=title, projector=projector),
        key="pg_lift",
        width="stretch",
    )
    st.caption(
        "What to notice: the degree-2 polynomial kernel (x·z)² is an ordinary dot product "
        "of these three features, so its curved 2-D boundary is this flat plane seen from "
        "below. Circles and XOR become separable by a plane; two blobs fold onto each other "
        "(x and −x land on the same point), so here a lift can also hurt. "
        "Drag to turn the cube." + ("" if converged else " (SMO stopped before its tolerance.)")
    )
    if st.button(
        "Now learn the features: the filter",
        icon=":material/arrow_forward:",
        on_click=_open_train,
        type="primary",
        help="Opens the Train page with the teaching-set preset: a CSVM learns the "
        "feature map (a convolution filter that finds a bar) instead of fixing it.",
    ):
        st.switch_page("pages/train.py")


# -- the page -------------------------------------------------------------------------------
def main() -> None:
    st.set_page_config(layout="wide")  # as the app does (for the page run on its own)
    _restore()
    settings = read_settings()
    points = st.session_state[POINTS]
    head, views = st.columns([2, 3], vertical_alignment="bottom")
    head.title("SVM playground")
    view = views.segmented_control(
        "View",
        list(_VIEWS),
        format_func=_VIEWS.get,
        key=_seed("view", settings.view),
        label_visibility="collapsed",
    )
    intro = (
        "A support vector machine in two dimensions: choose data and a kernel, click to "
        "place points, and watch SMO solve it."
    )
    # On a projector the figure comes first: with the line above it, it ran off the screen.
    if not projector_mode():
        st.caption(intro)
    for problem in st.session_state.get(PROBLEMS, []):
        st.warning(md_escape(problem.message), icon=":material/link_off:")
    view = view or "solution"
    settings = replace(settings, view=view)
    st.session_state[STATE] = settings
    X, y = pg.make_data(settings, points)
    key = _problem_key(settings)
    steps = solve(key, X, y) if pg.solvable(y) else None
    signature = f"{key}|{hash(X.tobytes())}|{hash(y.tobytes())}"
    if view == "smo":
        smo_view(settings, X, y, steps, signature)
    elif view == "lift":
        lift_view(settings, X, y)
    else:
        solution_view(settings, X, y, steps)
    if projector_mode():
        st.caption(intro)
    write_url(settings, points)


main()
