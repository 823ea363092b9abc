"""CSVM Explorer: the entry point (`streamlit run app.py`).

Worker processes are spawned, and a spawned child re-imports this file as `__mp_main__`:
everything that draws stays inside `main()`.
"""

import streamlit as st


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
    if st.session_state.get("projector"):
        st.html(
            "<style>h1{font-size:3rem!important} h3{font-size:2.2rem!important}"
            " [data-testid='stMarkdownContainer'] p{font-size:1.25rem}</style>"
        )
    page.run()


if __name__ == "__main__":
    main()
