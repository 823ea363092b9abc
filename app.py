"""CSVM Explorer: the entry point (`streamlit run app.py`).

Worker processes are spawned, and a spawned child re-imports this file as `__mp_main__`:
everything that draws stays inside `main()`.
"""

import streamlit as st

#: Below this window width the sidebar starts collapsed (Streamlit's own threshold is its
#: 768 px "md" breakpoint: at 800-1000 px the 300 px sidebar left the figures too narrow).
NARROW_PX = 1000
# Streamlit's 6rem above the title pushed the headline of a finished run near the bottom
# of a 720 px projector screen; 3.5rem still clears the (transparent) toolbar.
_STYLE = "<style>[data-testid='stMainBlockContainer']{padding-top:3.5rem}</style>"
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


def _run_sidebar_script() -> None:
    try:
        st.html(_SIDEBAR_SCRIPT, unsafe_allow_javascript=True)
    except TypeError:
        # Streamlit before unsafe_allow_javascript: a zero-height same-origin component
        # frame runs it (the script reaches the page through window.parent).
        from streamlit.components.v1 import html

        html(_SIDEBAR_SCRIPT, height=0)


def main() -> None:
    from pages.common import restore_view_from_url, url_extra
    from pages.settings import restore_from_url, sync_url

    st.set_page_config(
        page_title="CSVM Explorer",
        page_icon=":material/grid_on:",
        layout="wide",
        initial_sidebar_state="auto",
    )
    pages = [
        st.Page("pages/train.py", title="Train", icon=":material/model_training:", default=True),
        st.Page("pages/compare.py", title="Compare runs", icon=":material/compare:"),
        st.Page("pages/sweep.py", title="Sweep", icon=":material/grid_view:"),
        st.Page("pages/stability.py", title="Stability", icon=":material/stacked_line_chart:"),
        st.Page("pages/filter_lab.py", title="Filter lab", icon=":material/tune:"),
        st.Page("pages/reproduce.py", title="Reproduce", icon=":material/fact_check:"),
        st.Page("pages/about.py", title="About", icon=":material/menu_book:"),
    ]
    page = st.navigation(pages)
    # The settings live in the session and in the URL on every page, so leaving the Train
    # page, reloading, or sharing the link keeps them.
    restore_from_url()
    restore_view_from_url()
    sync_url(url_extra())
    _run_sidebar_script()
    st.html(_STYLE)
    if st.session_state.get("projector"):
        st.html(
            "<style>h1{font-size:3rem!important} h3{font-size:2.2rem!important}"
            " [data-testid='stMarkdownContainer'] p{font-size:1.25rem}</style>"
        )
    page.run()


if __name__ == "__main__":
    main()
