"""Keyed widgets whose value the browser is told on every script run.

Streamlit sends a keyed widget's value to the browser only on a run that wrote it into
``st.session_state``; on other runs the browser is trusted to hold it.  A run stopped by a
click after a widget registered its value but before the widget's element reached the
browser breaks that trust: the browser first meets the widget on the next run, without
its value, shows the widget's default (a box's first option: kernel "poly", dataset
"Shapes"; an empty number box) and sends that back on the next click as if the user had
chosen it (tests/browser/test_browser_interrupted_run.py).  Writing the value back before
the widget is drawn makes every run send it.  A box the user is typing in keeps what was
typed: the browser does not overwrite a box being edited.
"""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

__all__ = ["resend"]


def resend(keys: Iterable[str]) -> None:
    """Write each key's value back into ``st.session_state`` so that this run sends it to
    the browser with its widget.

    Call it before the widgets are drawn (Streamlit refuses a write to a widget's key after
    the widget is drawn in the same run); keys not in the session are skipped.

    Parameters
    ----------
    keys : iterable of str
        Session-state keys of value widgets (not buttons or file uploaders, whose state
        cannot be written).
    """
    for key in keys:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]
