"""How this session plays runs back: the pace between shown steps, and each run's replay
state (:class:`explorer.state.Playback`, kept as ``play_<run id>``)."""

from __future__ import annotations

import streamlit as st

from explorer.state import Playback, Run

__all__ = [
    "DEFAULT_PACE",
    "PACES",
    "pace_seconds",
    "playback",
]

#: Seconds between shown steps; "live" shows each step as soon as it arrives.
PACES = {"live": 0.0, "½ s per step": 0.5, "1 s per step": 1.0, "2 s per step": 2.0}


DEFAULT_PACE = "1 s per step"


def pace_seconds() -> float:
    """The chosen pace: seconds between shown steps (0: live)."""
    return PACES[st.session_state.get("pace", DEFAULT_PACE)]


def playback(run: Run) -> Playback:
    """The replay state of a run in this session (kept as ``play_<run id>``)."""
    return st.session_state.setdefault(f"play_{run.id}", Playback())
