"""The Class board's drawing, and the display-name box of the Train page.

Every text a student or the database gave (display names, class names in a pair) goes
through :func:`explorer.settings.md_escape` before markdown sees it, so ``<a href=x>``,
``**bold**`` or a ``<span style=...>`` shows as the characters typed.  The filter
thumbnails are SVG drawn by :func:`csvm.figures.filter_svg.filter_svg` from numbers.
"""

from __future__ import annotations

import time

import streamlit as st

from csvm.analysis.stats import format_interval
from csvm.runs.config import MODEL_LABELS
from csvm.runs.summary import classes_words
from csvm.store import RunSummary, owner_hash
from explorer import class_board as board
from explorer.owner_cookie import owner
from explorer.run_store import get_store, recover_now, restore_runs, store_problem
from explorer.runs import owns, runs
from explorer.settings import md_escape, set_config
from explorer.widget_state import resend

__all__ = ["display_name_box", "draw_board"]

#: Rows drawn before "Show every run" is ticked.
SHOWN = 30
#: Runs opened together in Compare.
MAX_COMPARE = 4
_THUMB_ALT = "Learned filters of this run: red above zero, blue below"
#: Width of a projected run's filters, in pixels (a quarter of a 1280 px screen's page).
_LARGE_PX = 250


# -- the Train page's box -------------------------------------------------------------------
def _keep_name() -> None:
    st.session_state[board.NAME_KEY] = st.session_state.get("display_name_box", "")


def display_name_box() -> None:
    """The Train page's "Your name on the Class board" box (in the sidebar), and what is
    wrong with the name typed, if anything."""
    if "display_name_box" not in st.session_state:
        st.session_state["display_name_box"] = st.session_state.get(board.NAME_KEY, "")
    resend(["display_name_box"])  # sent on every run: explorer/widget_state.py
    st.sidebar.text_input(
        "Your name on the Class board",
        key="display_name_box",
        max_chars=board.MAX_NAME,
        on_change=_keep_name,
        placeholder="e.g. Ada",
        help="Shown with your runs on the Class board, as you type it (no formatting). "
        f"At most {board.MAX_NAME} characters; leave it empty to stay anonymous.",
    )
    note = st.sidebar.container()  # one slot, message or not: the boxes below keep their places
    problem = board.check_display_name(st.session_state.get(board.NAME_KEY, ""))[1]
    if problem:
        note.error(md_escape(problem) + " Until then your runs are stored without a name.")


# -- one run --------------------------------------------------------------------------------
def status_text(run: RunSummary) -> str:
    """How a run stands, in words ("done", "interrupted at step 12", …)."""
    return {
        "done": "done",
        "stopped": f"stopped at step {run.step}",
        "diverged": f"diverged at step {run.step}",
        "error": f"failed at step {run.step}",
        "interrupted": f"interrupted at step {run.step}",
        "running": f"training, step {run.step}",
    }.get(run.status, md_escape(run.status))


def accuracy_text(run: RunSummary) -> str:
    """ "97.5 % (95 % interval 95.1–98.8)", or "–" before a test accuracy exists."""
    if run.accuracy is None:
        return "–"
    text = f"{100 * run.accuracy:.2f} %"
    if run.interval is not None:
        low, high = run.interval
        text += f" (95 % interval {100 * low:.1f}–{100 * high:.1f})"
    return text


def model_text(run: RunSummary) -> str:
    """The model and pair, escaped ("K-CSVM · mnist-5k 3 vs 5", "… classes 3, 5, 0")."""
    model = MODEL_LABELS.get(run.model, run.model)
    return md_escape(f"{model} · {run.dataset} {_classes_text(run.pair)}")


def _classes_text(pair: str) -> str:
    """A stored pair ("3 vs 5") as it is, a run of several classes' ("3,5,0", "all") in
    words, as the other pages name it ("classes 3, 5, 0", "all classes")."""
    return pair if " vs " in pair else classes_words(pair)


def _name(run: RunSummary) -> str:
    return md_escape(run.name) if run.name else "*(no name)*"


def _thumbnail(run: RunSummary, large: bool = False) -> None:
    """A few of the run's filters as a small picture; ``large``: the width of its column
    (the projector's best four; no text in it, so nothing to read at a small size)."""
    thumb = run.thumbnail
    cell = 6
    if large and thumb is not None and thumb.ndim == 3:  # about a projector column's width
        cell = max(6, _LARGE_PX // max(1, thumb.shape[0] * (thumb.shape[2] + 1) - 1))
    picture = board.thumbnail_rgb(thumb, cell=cell) if thumb is not None else None
    if picture is None:
        st.caption("no filter yet")
        return
    width = picture.shape[1] if large else min(picture.shape[1], 160)
    # Our own PNG in an <img> with a fixed alt text (no user text in it): st.image draws
    # an image without alternative text, which WCAG's image-alt rule refuses.
    with st.container(key=f"board_best_thumb_{run.id}" if large else None):
        st.markdown(
            f'<img src="{board.png_data_uri(picture)}" alt="{_THUMB_ALT}" '
            f'width="{width}" style="image-rendering:pixelated">',
            unsafe_allow_html=True,
        )


# -- actions --------------------------------------------------------------------------------
def _open(run_ids: list[str], page: str) -> None:
    """Show the stored runs in this session (read-only unless they are this browser's)
    and go to ``page``; the last one is the Train page's current run.  A run this session
    already has (one it trains now, say) is kept as it is."""
    said = restore_runs(run_ids)
    if said:
        st.session_state["_reattach_problem"] = said
    last = run_ids[-1]
    run = runs().get(last)
    if run is not None:
        st.session_state["current_run"] = last
        if owns(run):  # your own run: the sidebar takes its settings, as a reload does
            set_config(run.config)
    st.session_state["_reattached"] = True  # the Train page: this run, not the old link's
    st.switch_page(page, query_params={"run": last, "jobs": run.jobs_param() if run else ""})


def _teacher_panel() -> bool:
    """The teacher's box; returns whether the teacher key was given."""
    with st.expander("Teacher", icon=":material/lock:"):
        problem = board.teacher_problem()
        if problem:
            st.info(problem, icon=":material/lock:")
            return False
        entered = st.text_input("Teacher key", type="password", key="teacher_key")
        ok, said = board.teacher_ok(entered)
        if said:
            st.error(md_escape(said))
        if not ok:
            st.caption("Hiding runs, clearing the board and setting a class code need the key.")
            return False
        code = board.class_code()
        new = st.text_input(
            "Class code",
            value=code or "",
            key="teacher_code",
            help="Runs started from now on carry it, and the board lists only that "
            "class's runs. Empty: every run of the store.",
        )
        if st.button("Set the class code", key="teacher_set_code"):
            problem = board.set_class_code(new)
            if problem:
                st.error(md_escape(problem))
            else:
                st.rerun()
        sure = st.checkbox("Yes, take every run off this board", key="teacher_sure")
        if st.button("Clear the board", key="teacher_clear", disabled=not sure):
            board.clear_board()
            st.rerun()
        return True


def _row(run: RunSummary, mine: str | None, teacher: bool) -> None:
    with st.container(key=f"board_run_{run.id}", border=True):
        # The buttons sit under the status: a column of their own was too narrow for
        # "Open" in projector mode at 1280 px (cut off).
        c = st.columns([1.3, 2, 2.4, 2.4, 2.6])
        with c[0]:
            _thumbnail(run)
        with c[1], st.container(key=f"board_name_{run.id}"):
            st.markdown(_name(run) + (" · *yours*" if run.owner == mine else ""))
        c[2].markdown(model_text(run))
        c[3].markdown(accuracy_text(run))
        c[4].markdown(status_text(run))
        if c[4].button("Open", key=f"board_open_{run.id}", help="Show it on the Train page."):
            _open([run.id], "pages/train.py")
        if teacher and c[4].button("Hide", key=f"board_hide_{run.id}", help="Off the board."):
            board.hide_run(run.id)
            st.rerun()


def _best_order(chosen: list[RunSummary]) -> str:
    """What the projected four (:func:`explorer.class_board.best`) are: the most accurate
    on the newest run's task, which they share."""
    if not chosen:
        return "the four with the highest test accuracy"
    task = md_escape(f"{chosen[0].dataset} {_classes_text(chosen[0].pair)}")
    return f"the four with the highest test accuracy on {task}, the newest run's task"


def _best_four(chosen: list[RunSummary]) -> None:
    if not chosen:
        st.info("No run has a test accuracy yet.")
        return
    for col, run in zip(st.columns(len(chosen)), chosen, strict=True):
        with col, st.container(key=f"board_best_{run.id}"):
            st.markdown("## " + _name(run))  # h2 under the page's h1
            st.metric(model_text(run), f"{100 * run.accuracy:.2f} %")
            _thumbnail(run, large=True)
            if run.interval is not None:  # the accuracy is the metric's, above
                st.caption(f"95 % interval {format_interval(*run.interval)}")


def _project(on: bool) -> None:
    st.session_state["_board_project"] = on
    if on:
        st.session_state["projector"] = True  # a callback: before the toggle is drawn


def _sort(where, projecting: bool) -> str:
    """The sort radio in ``where``; its choice.

    Projected, the radio is not drawn (the four shown are the most accurate whatever it
    says), so the choice is kept under its own key for the way back: Streamlit forgets a
    widget's value on a rerun that does not draw it."""
    kept = st.session_state.get("_board_sort_kept", board.SORTS[0])
    if projecting:
        return kept
    sort = where.radio(
        "Sort", board.SORTS, index=board.SORTS.index(kept), horizontal=True, key="board_sort"
    )
    st.session_state["_board_sort_kept"] = sort
    return sort


def _project_button(where, projecting: bool, any_best: bool) -> None:
    """The button that projects the best four, or projected, the way back."""
    label, key, icon = (
        ("Back to the whole board", "board_unproject", "arrow_back")
        if projecting
        else ("Project the best four", "board_project", "present_to_all")
    )
    where.button(
        label,
        key=key,
        icon=f":material/{icon}:",
        on_click=_project,
        args=(not projecting,),
        disabled=not projecting and not any_best,
    )


# -- the page -------------------------------------------------------------------------------
def draw_board() -> None:
    """The Class board page."""
    st.title("Class board")
    store = get_store()
    if store is None:
        st.warning(
            "The run store could not be opened, so there is no board: "
            f"{md_escape(store_problem() or 'unknown reason')}. Set CSVM_RUN_STORE to a "
            "reachable store (see the README's 'A school's server') and restart the server.",
            icon=":material/database:",
        )
        return
    recover_now()  # a peer server that died: its running runs become interrupted
    code = board.class_code()
    projecting = bool(st.session_state.get("_board_project"))
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    sort = _sort(left, projecting)
    rows, problem = board.board_runs(sort)
    best = board.best(rows)  # the four a projection shows
    _project_button(right, projecting, bool(best))
    # Projected, the four shown are the most accurate of one task whatever the sort.
    order = _best_order(best) if projecting else sort
    st.caption(
        (f"Runs of class {md_escape(code)}" if code else "Every run in the run store")
        + f", {order}. Updated {time.strftime('%H:%M:%S')}; press R to refresh."
    )
    if problem:
        st.error(md_escape(problem))
    if projecting:
        _best_four(best)
        return
    teacher = _teacher_panel()
    if not rows:
        st.info("No runs yet: runs appear here as they finish on the Train page.")
        return
    _compare_box(rows)
    me = owner_hash(owner())
    every = st.checkbox(f"Show every run ({len(rows)})", key="board_all") or len(rows) <= SHOWN
    for run in rows if every else rows[:SHOWN]:
        _row(run, me, teacher)


def _compare_box(rows: list[RunSummary]) -> None:
    names = {r.id: f"{r.name or '(no name)'} · {r.model} · {accuracy_text(r)}" for r in rows}
    chosen = st.multiselect(
        "Open in Compare",
        list(names),
        format_func=names.get,
        max_selections=MAX_COMPARE,
        key="board_compare",
        help=f"Up to {MAX_COMPARE} runs side by side on the Compare page (read only, "
        "unless they are yours).",
    )
    if st.button("Compare them", key="board_compare_go", disabled=not chosen):
        _open(chosen, "pages/compare.py")
