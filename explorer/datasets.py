"""The data the pages offer, cached: the datasets on this machine (and this session's own
images), the presets, and the image pair a run trains on."""

from __future__ import annotations

from typing import Any

import streamlit as st

from csvm.runs.config import RunConfig, parse
from csvm.runs.presets import load_presets
from csvm.runs.targets import load_data
from explorer.runs import runs
from explorer.shared_work import data_key

__all__ = [
    "available_datasets",
    "cached_data",
    "data_for",
    "dataset_table",
    "presets",
]


@st.cache_data(ttl=60)
def dataset_table() -> list[dict[str, Any]]:
    """Every dataset with its availability (re-checked each minute: a fetch may land)."""
    from csvm.data import list_datasets

    return list_datasets()


def available_datasets() -> dict[str, dict[str, Any]]:
    """The datasets on this machine, by name, and this session's own images if any.

    Also tells :mod:`explorer.own_data` which uploads this session uses (its own images,
    found again after a reload, and its runs' datasets), so they are kept while it lives.
    """
    from explorer.own_data import adopt, hold, start_sweeper

    found = {d["name"]: d for d in dataset_table() if d["available"]}
    start_sweeper()
    own = adopt()
    hold([own, *(run.config.dataset for run in runs().values())])
    if own:
        from csvm.data.own_images import touch_own
        from csvm.data.registry import spec
        from csvm.exceptions import DatasetError

        try:
            entry = spec(own)
        except DatasetError:  # removed (an idle sweep, a server restart): forget it
            st.session_state.pop("own_dataset", None)
            return found
        touch_own(own)
        found[own] = {
            "name": own,
            "description": entry.description,
            "image_shape": entry.image_shape,
            "classes": list(entry.classes),
            "available": True,
            "location": "uploaded",
            "fetch_command": "",
        }
    return found


@st.cache_data
def presets() -> list[dict[str, Any]]:
    """The presets of ``csvm/runs/presets.json``, each with its parsed ``run_config``.

    A preset whose settings do not parse is a bug of the repository (a test checks them
    all); it is left out rather than shown broken.
    """
    out = []
    for preset in load_presets():
        config, problems = parse(preset["config"], source=f"the preset {preset['name']!r}")
        if not problems:
            out.append({**preset, "run_config": config})
    return out


@st.cache_data(max_entries=8, show_spinner="Loading images…")
def cached_data(config: RunConfig):
    """The pair a run uses (the same call its worker makes, so indices agree)."""
    return load_data(config)


def data_for(config: RunConfig):
    """The cached pair a run configuration uses; only the data settings key the cache."""
    return cached_data(data_key(config))
