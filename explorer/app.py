"""The app itself: page config, the navigation over ``pages/``, the URL and the style.

``app.py`` (what ``streamlit run`` executes) only calls :func:`main`; the pages import
from this package and nothing imports ``app.py``.
"""

from __future__ import annotations

import streamlit as st

from explorer.lab_url import carry_lab, remember_link
from explorer.lesson import PARAM as LESSON_PARAM
from explorer.lesson import STEP_KEY as LESSON_STEP
from explorer.lesson import parse_step
from explorer.playback import DEFAULT_PACE, PACES
from explorer.playground import carry_params
from explorer.runs import runs
from explorer.settings import restore_from_url, sync_url
from explorer.touch_taps import TAP_SCRIPT
from explorer.widget_state import resend

#: Below this window width the sidebar starts collapsed (Streamlit's own threshold is its
#: 768 px "md" breakpoint: at 800-1000 px the 300 px sidebar left the figures too narrow,
#: and at a 1024 × 768 projector's width it left the Train page 560 px).
NARROW_PX = 1100
_MAIN = "[data-testid='stMain']"
# Streamlit's 6rem above the title pushed the headline of a finished run near the bottom
# of a 720 px projector screen; 3.5rem still clears the (transparent) toolbar.
_STYLE = (
    "<style>[data-testid='stMainBlockContainer']{padding-top:3.5rem}.st-key-csvm_style{display:none}"
    # Results of settings that have since changed: greyed, so nobody reads them as current.
    ".st-key-stale,.st-key-stale_results{opacity:.45;filter:grayscale(1)}"
    # A page's sections are h2 under its h1 (axe-core's heading-order: h1 then h3 skipped a
    # level for a screen reader's outline), drawn at the size the sections had as h3.
    f"{_MAIN} h2{{font-size:1.75rem}}"
    # The class board's four best, side by side: their names at the size they had as h4.
    f"{_MAIN} [class*='st-key-board_best_'] h2{{font-size:1.5rem!important}}"
    # WCAG 2.1 AA (tests/browser/test_browser_a11y.py): Streamlit draws captions at 60 %
    # opacity, 3.8:1 on white; at 75 % they read 6:1 (5.9:1 on the sidebar's grey).
    "[data-testid='stCaptionContainer']{opacity:.75}"
    # The chosen segment of a segmented control: the primary colour on its own pale tint
    # was 4.47:1; a darker red is 5.4:1.
    "button[data-variant='segmented_control'][aria-checked='true'] p{color:#b0323f}"
    # A code block wider than its column scrolled sideways, a region a keyboard cannot
    # reach; wrapped, nothing scrolls (Copy still copies the lines as written).
    "[data-testid='stCode'] :is(pre,pre code)"
    "{white-space:pre-wrap!important;overflow-wrap:anywhere}"
    # A multiselect chip wider than the sidebar's select ended in "…" ("recommende…"): its
    # label wraps onto a second line instead.
    "[data-tag]{height:auto!important}"
    "[data-tag]>span[title]{white-space:normal!important;text-overflow:clip!important;"
    "overflow-wrap:anywhere}"
    # A table cell's text stopped at 400 px (Streamlit's own limit) and left the rest of
    # a full-width table empty: the About page's glossary wrapped each entry in a third
    # of its width.
    "[data-testid='stTable'] td [data-testid='stMarkdownContainer']{max-width:none}"
    # A button's label wider than its column ended in "…" ("▶ St…", "Open SVM playground
    # with…" at a 1024 px projector's width with the sidebar open): it wraps instead.
    f"{_MAIN} button *{{white-space:normal!important;text-overflow:clip!important}}"
    # The Train page's Start, Stop, Pause and Step share their row with the training-time
    # estimate: in a row narrower than 760 px (a 1024 px projector with the sidebar open)
    # their labels ended in "St…"; there the estimate takes a line of its own below them.
    ".st-key-run_controls{container-type:inline-size}"
    "@container (max-width:760px){.st-key-run_controls [data-testid='stHorizontalBlock']"
    "{flex-wrap:wrap}.st-key-run_controls [data-testid='stColumn']:last-child"
    "{flex:1 1 100%!important;width:100%!important;min-width:100%}}"
    "</style>"
)
# Projector mode: every text of the page at 18 px or more (what a class reads from the back
# of a room, issue 33); figures take their sizes from csvm.figures (for_projector, large=).
_PROJECTOR_STYLE = (
    "<style>"
    # The title stays at its size (the app's name); the headline and text grow.
    f"{_MAIN} :is(h2,h3){{font-size:2.2rem!important}}"
    " [data-testid='stMarkdownContainer'] :is(p,li){font-size:1.25rem}"
    # The rule above also reached st.metric's value (a markdown paragraph), which then
    # shrank from 2.25rem to 1.25rem: metrics get their own, larger sizes.
    # At most a quarter of the metric's own width, so "100.00 %" (3.8 times its size
    # wide) fits its column: at 3rem a 1024 px screen with the sidebar open cut it to "8…".
    " [data-testid='stMetric']{container-type:inline-size}"
    " [data-testid='stMetricValue'] p{font-size:min(3rem,25cqi)!important;line-height:1.2}"
    " [data-testid='stMetricLabel'] p{font-size:1.4rem!important}"
    # A long label at that size wraps in a narrow column rather than ending in "…".
    " [data-testid='stMetricLabel'] :is(div,p){white-space:normal!important;"
    "text-overflow:clip!important}"
    # Streamlit's own sizes for these are 14-16 px, set on the elements themselves
    # (st.dataframe's canvas is out of reach: projector mode draws st.table instead,
    # explorer.display.table).
    " [data-testid='stCaptionContainer'],[data-testid='stCaptionContainer'] :is(p,li)"
    "{font-size:1.2rem!important}"
    # The sidebar's settings too: a class reads the values the teacher sets there.
    f" :is({_MAIN},[data-testid='stSidebar']) :is(input,textarea,"
    ":is([data-baseweb='select'],.react-aria-ComboBox) *,[data-testid='stTable'] *,"
    "[data-testid='stFileUploaderDropzoneInstructions'] *)"
    "{font-size:1.2rem!important}"
    f" {_MAIN} :is(code,pre,pre *){{font-size:1.15rem!important}}"
    # The Filter lab's editable weights stay a data grid, its canvas at 14 px: zoomed (a
    # grid as wide as its columns fits its column; a full-width one would overflow it).
    f" {_MAIN} [class*='st-key-lab_grid_'] [data-testid='stDataFrame']{{zoom:1.3}}"
    # Subscripts are 0.7 of a formula's size: 26 px keeps them above 18 px.
    f" {_MAIN} .katex{{font-size:1.65rem}}"
    "</style>"
)
# Our own constant script (no user input in it).  It collapses the sidebar once when the
# page opens narrower than NARROW_PX and again whenever the window shrinks below it; a
# sidebar the user opens again at a narrow width stays open.  Streamlit keeps no setting
# for the threshold and its page config knows nothing of the window's width.
_SIDEBAR_SCRIPT = f"""<script>
(() => {{
  const w = window.parent && window.parent.document ? window.parent : window;
  if (w.__csvmSidebar) return;
  w.__csvmSidebar = true;
  const narrow = () => w.innerWidth < {NARROW_PX};
  const collapse = (tries) => {{
    const bar = w.document.querySelector('[data-testid="stSidebar"]');
    const btn = w.document.querySelector('[data-testid="stSidebarCollapseButton"] button');
    if (bar && btn && bar.getAttribute('data-collapsed') === 'false') btn.click();
    else if (tries > 0 && !(bar && bar.getAttribute('data-collapsed') === 'true'))
      setTimeout(() => collapse(tries - 1), 100);
  }};
  if (narrow()) collapse(50);
  let was = narrow();
  w.addEventListener('resize', () => {{
    const now = narrow();
    if (now && !was) collapse(10);
    was = now;
  }});
}})();
</script>"""


def _run_page_scripts() -> None:
    """The sidebar's script and the touch screens' taps (explorer/touch_taps.py), in one
    element."""
    scripts = _SIDEBAR_SCRIPT + TAP_SCRIPT
    try:
        st.html(scripts, unsafe_allow_javascript=True)
    except TypeError:
        # Streamlit before unsafe_allow_javascript: a zero-height same-origin component
        # frame runs it (the script reaches the page through window.parent).
        from streamlit.components.v1 import html

        html(scripts, height=0)


#: The pages, in the sidebar's order: script, title, icon.  The Lesson leads a class through
#: the others, from the SVM playground on; Train is the default page (a shared run link
#: opens there).
PAGES: tuple[tuple[str, str, str], ...] = (
    ("pages/lesson.py", "Lesson", ":material/school:"),
    ("pages/playground.py", "SVM playground", ":material/scatter_plot:"),
    ("pages/train.py", "Train", ":material/model_training:"),
    ("pages/compare.py", "Compare runs", ":material/compare:"),
    ("pages/class_board.py", "Class board", ":material/leaderboard:"),
    ("pages/sweep.py", "Sweep", ":material/grid_view:"),
    ("pages/stability.py", "Stability", ":material/stacked_line_chart:"),
    ("pages/filter_lab.py", "Filter lab", ":material/tune:"),
    ("pages/curve.py", "Learning curves", ":material/show_chart:"),
    ("pages/reproduce.py", "Reproduce", ":material/fact_check:"),
    ("pages/about.py", "About", ":material/menu_book:"),
)
DEFAULT_PAGE = "pages/train.py"


def restore_view_from_url() -> None:
    """Pace, projector mode, the Lesson's step and the Filter lab's filter from the URL,
    on a session's first run (before the URL is rewritten)."""
    if "pace" not in st.session_state:
        pace = st.query_params.get("pace", DEFAULT_PACE)
        st.session_state["pace"] = pace if pace in PACES else DEFAULT_PACE
    if "projector" not in st.session_state:
        st.session_state["projector"] = st.query_params.get("projector") in ("1", "true")
    if LESSON_STEP not in st.session_state and LESSON_PARAM in st.query_params:
        # A reload on a page a step opened: the Lesson, reached by its link (which clears
        # the address), finds the step in the session.
        step, problem = parse_step(st.query_params[LESSON_PARAM])
        if problem is None:
            st.session_state[LESSON_STEP] = step
    remember_link(st.session_state, st.query_params.to_dict())  # the Filter lab's filter


def url_extra() -> dict[str, str]:
    """What the URL holds besides the settings: the current run and the view options."""
    extra = {}
    run = runs().get(st.session_state.get("current_run", ""))
    if run is not None:
        extra.update(run=run.id, jobs=run.jobs_param())
    else:
        for key in ("run", "jobs"):  # a link not yet reattached keeps its run
            if key in st.query_params:
                extra[key] = st.query_params[key][:200]
    pace = st.session_state.get("pace")
    if pace and pace != DEFAULT_PACE:
        extra["pace"] = pace
    if st.session_state.get("projector"):
        extra["projector"] = "1"
    # The SVM playground's own settings and points (pg_*, bounded by the playground).
    extra.update(carry_params(st.query_params.to_dict()))
    # The Filter lab's filter, so a reload keeps what was edited by hand (bounded).
    extra.update(carry_lab(st.session_state))
    # The Lesson page's step (that page checks the value; a few characters are kept), or
    # the session's: a step's button opens its page without it, and a reload there sent
    # the Lesson back to step 1.
    if LESSON_PARAM in st.query_params:
        extra[LESSON_PARAM] = st.query_params[LESSON_PARAM][:24]
    elif LESSON_STEP in st.session_state:
        extra[LESSON_PARAM] = str(st.session_state[LESSON_STEP])
    return extra


def _view_controls() -> None:
    """Projector mode and pace, at the top of the sidebar on every page.

    Drawn here, in the shell, on every script run: Streamlit forgets a widget's state on
    the first run that does not draw it, so when only the Train page drew them, leaving
    it turned projector mode off and the pace back to its default (issue 33).  The values
    from a link are read first, so a shared or reloaded URL opens with them.
    """
    restore_view_from_url()
    resend(["projector", "pace"])  # sent on every run: explorer/widget_state.py
    st.toggle("Projector mode", key="projector", help="Larger type and figures for a class.")
    st.select_slider(
        "Pace",
        list(PACES),
        key="pace",
        help="How fast runs are played back. Train shows the recorded steps one by one "
        "(the worker trains at full speed), the SVM playground's Play SMO's steps; live "
        "shows a run's newest step, and the whole SMO solve in about 10 s.",
    )


def _navigation():
    """``st.navigation`` over :data:`PAGES`, drawn as our own sidebar links.

    Streamlit's own sidebar menu is off (``client.showSidebarNavigation = false`` in
    ``.streamlit/config.toml``): on a fresh server the first script run goes through
    Streamlit's old ``pages/`` discovery, whose menu (every file of the folder) would
    flash before ours.  With the built-in menu hidden, the first paint already shows
    these links and nothing else.
    """
    pages = [
        st.Page(path, title=title, icon=icon, default=path == DEFAULT_PAGE)
        for path, title, icon in PAGES
    ]
    page = st.navigation(pages, position="hidden")
    with st.sidebar:
        _view_controls()
        for p in pages:
            st.page_link(p)
    return page


def main() -> None:
    st.set_page_config(
        page_title="CSVM Explorer",
        page_icon=":material/grid_on:",
        layout="wide",
        initial_sidebar_state="auto",
    )
    page = _navigation()
    # The settings live in the session and in the URL on every page, so leaving the Train
    # page, reloading, or sharing the link keeps them.
    restore_from_url()
    sync_url(url_extra())
    _run_page_scripts()
    # Markdown, not st.html: a browser renders markdown that holds HTML (the Train page's
    # filter is SVG) only once it has loaded a script for it, and asked for first, here,
    # it no longer waits behind the page's other 60 scripts (a shared link's filter came
    # 1-2.5 s after its headline).  The container hides itself, so it takes no room.
    with st.container(key="csvm_style"):
        st.markdown(_STYLE, unsafe_allow_html=True)
    if st.session_state.get("projector"):
        st.html(_PROJECTOR_STYLE)
    page.run()


def ensure_app() -> None:
    """Make a page run inside the app, never alone.

    A fresh server starts in Streamlit's old multipage mode because this folder is called
    ``pages/``, and switches to ``st.navigation`` only once ``app.py`` has run: until then a
    page's own URL (``/sweep``) runs that file alone, with every module of the folder listed
    as a page.  Such a page hands over to the entry point, which switches the mode and
    runs the same page inside the app.
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager

        old_mode = bool(PagesManager.uses_pages_directory)
    except (ImportError, AttributeError):  # a Streamlit without the old mode
        old_mode = False
    if not old_mode:  # inside the app (or a test running this page on its own)
        return
    main()
    st.stop()
