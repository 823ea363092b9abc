"""Runs named by what sets them apart: the Compare page's table, pins and legend.

Two runs that differ only in η are "η 0.5" and "η 0.1", not two copies of the same long
summary with "#2" after one of them (issue 33).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from csvm.runs.config import SPECS, RunConfig
from csvm.runs.summary import run_name, task_words
from csvm.runs.values import show
from explorer.glossary import value_words

#: Past this many settings that differ, runs are numbered and summed up instead: nine runs
#: of three presets were each named by their whole settings, 6-8 lines a row on a projector.
MAX_NAMED_SETTINGS = 3


def value_text(name: str, value: Any) -> str:
    """A setting's value as a reader names it ("K-CSVM", "DFO₂", "0.5", "no limit", "on")."""
    if isinstance(value, bool):  # not Python's "True"
        return "on" if value else "off"
    if isinstance(value, tuple):
        return ", ".join(value_words(v) for v in value) or "none"
    return value_words(value) if isinstance(value, str) else show(name, value)


def varying(configs: list[RunConfig]) -> list[str]:
    """The settings whose values differ between ``configs``, in table order."""
    return [n for n in SPECS if len({getattr(c, n) for c in configs}) > 1]


def settings_text(config: RunConfig, names: list[str]) -> str:
    """The settings ``names`` of ``config`` in words ("η 0.5 · C 0.001"), or the dataset
    and pair when there are none."""
    shown = [
        # The classes in words ("3 v 5", "classes 3, 5, 0"), not "Classes two classes (…)".
        task_words(config)
        if n == "classes"
        else f"{SPECS[n].label} {value_text(n, getattr(config, n))}"
        for n in names
    ]
    return " · ".join(shown) or f"{config.dataset} {task_words(config)}"


def run_names(configs: Mapping[str, RunConfig]) -> dict[str, str]:
    """Each run (id -> its settings) named by what sets it apart from the others.

    A run alone, or runs whose settings all agree, are named by their own summary
    (:func:`csvm.runs.summary.run_name`); runs with the very same settings as another
    say so, and which they are ("η 0.1 (same settings: run 2 of 2)").  Runs that differ
    in more than :data:`MAX_NAMED_SETTINGS` settings are numbered, each with its summary
    ("run 2: K-CSVM RBF γ 1, 4 filters, 100 images, horizontal v vertical").
    """
    differ = varying(list(configs.values()))
    if len(differ) > MAX_NAMED_SETTINGS:
        return {
            run_id: f"run {i}: {run_name(c)}" for i, (run_id, c) in enumerate(configs.items(), 1)
        }
    base = {
        run_id: settings_text(c, differ) if differ else run_name(c) for run_id, c in configs.items()
    }
    total = Counter(base.values())
    seen: Counter[str] = Counter()
    names: dict[str, str] = {}
    for run_id, name in base.items():
        seen[name] += 1
        same = f" (same settings: run {seen[name]} of {total[name]})"
        names[run_id] = name + same if total[name] > 1 else name
    return names
