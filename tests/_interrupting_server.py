"""``python tests/_interrupting_server.py run app.py …``: ``streamlit run`` rigged so that
the first script run is interrupted at the worst instant for one widget.

The widget whose key is ``$CSVM_TEST_INTERRUPT_KEY`` (a radio or select box) registers its
value in the session, then waits until the browser has asked for a rerun (the test types
a name above it, or presses Start), so that the run stops before the widget's element and
those below it are sent: what a click landing at that instant does on a loaded server.
The trap fires once: in the session's first run, or, with ``$CSVM_TEST_INTERRUPT_PUSHED``
(a model's name), in the first run that draws settings of that model which the app set
itself (``explorer.settings.set_config``: the run after a preset is picked).
The log says ``rigged <key>`` when it fired.
"""

from __future__ import annotations

import os
import sys
import time

import streamlit as st
import streamlit.elements.widgets.radio as radio
import streamlit.elements.widgets.selectbox as selectbox
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType
from streamlit.web import cli

_KEY = os.environ["CSVM_TEST_INTERRUPT_KEY"]
_PUSHED = os.environ.get("CSVM_TEST_INTERRUPT_PUSHED")
_fired: list[str] = []


def _rig(module) -> None:
    register = module.register_widget

    def register_widget(element_id: str, *args, **kwargs):
        result = register(element_id, *args, **kwargs)
        from explorer.settings import _PUSHED_KEY  # loaded by the app's run by now

        pushed = st.session_state.get(_PUSHED_KEY)
        armed = _PUSHED is None or getattr(pushed, "model", None) == _PUSHED
        if element_id.endswith(f"-{_KEY}") and armed and not _fired:
            _fired.append(element_id)
            requests = get_script_run_ctx().script_requests
            deadline = time.time() + 60
            while requests._state != ScriptRequestType.RERUN and time.time() < deadline:
                time.sleep(0.05)
            print(f"rigged {_KEY}", flush=True)
        return result

    module.register_widget = register_widget


_rig(radio)
_rig(selectbox)
sys.argv = ["streamlit", *sys.argv[1:]]
sys.exit(cli.main())
