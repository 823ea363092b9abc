"""The Streamlit app's shared code: session state, the settings widgets derived from
:class:`csvm.runs.config.RunConfig`, the live-jobs fragment and the worker preload.

``pages/`` holds only the page scripts that ``st.navigation`` lists; they import from
here, and nothing imports ``app.py``.

- ``app``: page config, navigation, URL; ``common``: pool, runs, owner, chart, data.
- ``state``: the typed :class:`~explorer.state.Run` and :class:`~explorer.state.Playback`.
- ``live``: :func:`~explorer.live.live_jobs`, the one fragment that watches jobs.
- ``settings``: the RunConfig widgets; ``lab_settings``: the Filter lab's SVM settings.
- ``train_view``, ``train_multiclass``: drawing a Train run; ``lab``, ``lab_view``: the
  Filter lab's state and actions, and its drawing.
- ``worker_preload``: imported by idle workers.
"""
