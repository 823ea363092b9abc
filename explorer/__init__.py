"""The Streamlit app's shared code: session state, the settings widgets derived from
:class:`csvm.runs.config.RunConfig`, the live-jobs fragment and the worker preload.

``pages/`` holds only the page scripts that ``st.navigation`` lists; they import from
here, and nothing imports ``app.py``.
"""
