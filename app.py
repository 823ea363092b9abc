"""CSVM Explorer: the entry point (`streamlit run app.py`).

Worker processes are spawned, and a spawned child re-imports this file as `__mp_main__`:
everything that draws stays inside `main()`.
"""

import streamlit as st


def main() -> None:
    st.set_page_config(page_title="CSVM Explorer", page_icon=":material/grid_on:", layout="wide")
    pages = [
        st.Page("pages/train.py", title="Train", icon=":material/model_training:", default=True),
        st.Page("pages/compare.py", title="Compare runs", icon=":material/compare:"),
        st.Page("pages/sweep.py", title="Sweep", icon=":material/grid_view:"),
        st.Page("pages/filter_lab.py", title="Filter lab", icon=":material/tune:"),
        st.Page("pages/about.py", title="About", icon=":material/menu_book:"),
    ]
    st.navigation(pages).run()


if __name__ == "__main__":
    main()
