"""The Lesson page drawn: one step at a time, its step in the URL, and a button that opens
the step's page with the step's settings (:mod:`explorer.lesson` holds the content)."""

from __future__ import annotations

import streamlit as st

from explorer.app import url_extra
from explorer.datasets import presets
from explorer.display import projector_mode
from explorer.lesson import PARAM, STEP_KEY, STEPS, Step, find_preset, parse_step
from explorer.settings import md_escape, set_config

#: The session's step (a link without ``?lesson=`` reopens it), and the jump control's key.
JUMP_KEY = "lesson_jump"
#: The SVM playground page's own session keys (pages/playground.py): its settings, its
#: placed points and the problems of its link; its widgets are ``pg_w_<setting>``.
PG_STATE, PG_POINTS, PG_PROBLEMS, PG_WIDGET = "pg_settings", "pg_points", "pg_problems", "pg_w_"

# The step's text a little larger than body text; on a projector larger still, growing
# with the window (a 1920 px projector gets bigger type, not longer lines).
# The step's heading is the page's h1, drawn at a section heading's size.
_STYLE = (
    "<style>.st-key-lesson_text p{font-size:1.15rem;line-height:1.5}"
    ".st-key-lesson h1{font-size:1.75rem}</style>"
)
_PROJECTOR_STYLE = (
    "<style>.st-key-lesson p{font-size:clamp(1.45rem,1.5vw,2rem)!important}"
    ".st-key-lesson h1{font-size:clamp(2.2rem,2.2vw,2.9rem)!important}</style>"
)


def current_step() -> int:
    """The step the URL asks for (the session's last step when it asks for none), written
    back to the URL; a value that is not a step gives a gentle message and step 1."""
    raw = st.query_params.get(PARAM)
    if raw is None:
        step, message = st.session_state.get(STEP_KEY, 1), None
    else:
        step, message = parse_step(raw)
    st.session_state[STEP_KEY] = step
    if raw != str(step):
        st.query_params[PARAM] = str(step)
    if message:
        st.info(md_escape(message), icon=":material/info:")
    return step


def go(step: int) -> None:
    """Show ``step`` (a callback: the URL holds the new step before the app rewrites it)."""
    step = min(max(1, int(step)), len(STEPS))
    st.session_state[STEP_KEY] = step
    st.query_params[PARAM] = str(step)


def _jumped() -> None:
    chosen = st.session_state.get(JUMP_KEY)
    if chosen is not None:  # a click on the chosen step deselects it: stay
        go(chosen)


def open_settings(step: Step) -> None:
    """Give the step's page the step's settings (a callback, before the page is opened).

    The playground's settings replace its session's (its widgets are re-seeded from them);
    a Train preset becomes the session's settings, so the page's preset box names it.
    """
    if step.playground is not None:
        st.session_state[PG_STATE] = step.playground
        st.session_state[PG_POINTS] = ()
        st.session_state[PG_PROBLEMS] = []
        for key in [k for k in st.session_state if str(k).startswith(PG_WIDGET)]:
            del st.session_state[key]
    if step.preset is not None:
        chosen = find_preset(presets(), step.preset)
        if chosen is not None:
            set_config(chosen["run_config"])  # the Train page's preset box then names it


def _view_params() -> dict[str, str]:
    """Projector mode and pace for the page a step opens (Streamlit's page switch clears
    the address, and the opened page would start without them)."""
    return {k: v for k, v in url_extra().items() if k in ("projector", "pace")}


def _open_label(step: Step, missing: bool) -> str:
    if (step.playground is None and step.preset is None) or missing:
        return f"Open {step.link.title}"
    return f"Open {step.link.title} with these settings"


def _buttons(number: int, step: Step) -> None:
    """Back, open the step's page, Next: one row."""
    missing = step.preset is not None and find_preset(presets(), step.preset) is None
    back, middle, ahead = st.columns([1, 3, 1], vertical_alignment="center")
    back.button(
        "Back",
        icon=":material/arrow_back:",
        on_click=go,
        args=(number - 1,),
        disabled=number == 1,
        key="lesson_back",
        width="stretch",
    )
    if middle.button(
        _open_label(step, missing),
        icon=":material/open_in_new:",
        type="primary",
        on_click=open_settings,
        args=(step,),
        key="lesson_open",
        width="stretch",
    ):
        st.switch_page(step.link.page, query_params=_view_params())
    ahead.button(
        "Next",
        icon=":material/arrow_forward:",
        on_click=go,
        args=(number + 1,),
        disabled=number == len(STEPS),
        key="lesson_next",
        width="stretch",
    )
    if missing:
        st.caption(
            "The settings for this step are not on this server yet: the page opens with "
            "the settings it has now."
        )


def _jump(number: int) -> None:
    """Every step by name; the teacher may jump to any of them."""
    st.session_state[JUMP_KEY] = number
    st.segmented_control(
        "Steps of the lesson",
        [k + 1 for k in range(len(STEPS))],
        format_func=lambda k: f"{k} · {STEPS[k - 1].short}",
        key=JUMP_KEY,
        on_change=_jumped,
        label_visibility="collapsed",
    )


def _more(step: Step) -> None:
    if not step.more:
        return
    cols = st.columns(len(step.more))
    for k, (col, link) in enumerate(zip(cols, step.more, strict=True)):
        if col.button(
            f"Open {link.title}",
            icon=":material/east:",
            key=f"lesson_more_{k}",
            help=f"{link.title}: {link.why}.",
            width="stretch",
        ):
            st.switch_page(link.page, query_params=_view_params())


def main() -> None:
    st.set_page_config(layout="wide")  # as the app does (for the page run on its own)
    st.html(_PROJECTOR_STYLE if projector_mode() else _STYLE)
    number = current_step()
    step = STEPS[number - 1]
    with st.container(key="lesson"):
        _jump(number)
        st.title(f"Step {number} of {len(STEPS)}: {step.title}", anchor=False)
        with st.container(key="lesson_text"):
            st.markdown(" ".join(step.notice))
            st.markdown(f"**Question for the class:** {step.question}")
        _buttons(number, step)
        _more(step)
        # Below the buttons: opened, it never moves them (nor pushes them off a 720 px screen).
        with st.expander("Answer"):
            st.markdown(step.answer)
