"""Reproduce page: the thesis's tables beside this machine's measured numbers.

Thin: every figure comes from a saved run in ``assets/runs/`` (written by
``python -m csvm reproduce … --out``, read and checked by :mod:`csvm.analysis.reproduced`).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from csvm.analysis import reproduced
from csvm.analysis.stats import with_minus
from explorer.app import ensure_app
from explorer.datasets import available_datasets, presets
from explorer.display import table as data_table
from explorer.measured import how_measured, jargon_note, strip_paths
from explorer.settings import md_escape, set_config

ensure_app()  # a page's own URL on a fresh server: run it inside the app


def _matching_preset(record: dict[str, Any]) -> dict[str, Any] | None:
    """The preset that trains the same pair with the same split as the run's K-CSVM."""
    config = next((m["config"] for m in record["models"] if m["name"] == "K-CSVM"), None)
    if not config or "dataset" not in config:
        return None
    keys = ("dataset", "class_a", "class_b", "protocol")
    for preset in presets():
        if preset.get("requires") not in (None, *available_datasets()):
            continue
        chosen = preset["run_config"]
        if all(getattr(chosen, k) == config.get(k) for k in keys):
            return preset
    return None


def _open_in_train(preset: dict[str, Any]) -> None:
    set_config(preset["run_config"])  # the Train page's preset box then names it


#: The statistical tests a saved run may hold (``details``), and how the page heads them.
_TESTS = {
    "mcnemar": "**Exact McNemar tests on the same test images** (seed 0):",
    "sign_tests": "**Sign tests over the draws** (each draw: learned filters against the best "
    "fixed filters at the same norms, on the same test images):",
}


def _anchor(table: str) -> str:
    """A table's heading's anchor: the run's name, in letters, digits and hyphens."""
    return "run-" + "".join(c if c.isalnum() else "-" for c in table)


def _show(table: str, meta: dict[str, str]) -> None:
    st.header(meta["title"], anchor=_anchor(table))
    path = reproduced.run_path(table)
    try:
        record = reproduced.load_run(path)
    except reproduced.RunFileError as exc:
        if path.exists():
            st.error(strip_paths(exc, keep_name=True), icon=":material/error:")
        else:
            st.info("No saved run for this table yet.", icon=":material/hourglass_empty:")
            how_measured(meta["command"])
        return
    rows = reproduced.comparison_rows(record)
    st.table(rows)
    refs = {m["reference"]["source"] for m in record["models"] if m.get("reference")}
    published = "; ".join(sorted(refs)) or "none"
    st.caption(
        f"{reproduced.counts_text(record)}Published figures: {published}. Difference: this "
        "machine's mean minus the published mean, in percentage points. Mean ± population "
        "std over seeds; seconds are wall-clock on a shared machine."
    )
    details = record.get("details") or {}
    tests = [str(line) for key in _TESTS for line in details.get(key) or ()]
    for key, heading in _TESTS.items():
        if details.get(key):
            # Runs saved before the pages wrote "−" hold hyphens: "-0.26 points".
            lines = "\n".join(with_minus(str(line)) for line in details[key])
            st.markdown(f"{heading}\n\n{lines}")
    note = jargon_note([*(str(r) for r in rows), *tests])
    if note:
        st.caption(note)
    pairs = reproduced.pair_rows(record)
    if pairs:
        with st.expander(f"Every pair ({len(pairs)})"):
            data_table(pairs, hide_index=True)
    with st.expander("Settings and each seed's accuracy"):
        st.table(reproduced.seed_rows(record))
    how_measured(
        record["command"],
        [reproduced.describe_environment(record), record.get("provenance") or ""],
    )
    preset = _matching_preset(record)
    if preset is not None and st.button(
        f"Open the preset “{preset['name']}” in Train",
        key=f"open_{table}",
        on_click=_open_in_train,
        args=(preset,),
        icon=":material/model_training:",
    ):
        st.switch_page("pages/train.py")


st.title("Reproduce the thesis")
st.markdown(
    "Sugg's (2018) tables beside this machine's numbers. Each table is read from a run "
    "saved when it was measured, nothing here is typed in; how each was measured (the "
    "command, the machine and the code's version) is folded under its table."
)
# Fourteen tables make a long page: a researcher looking for one jumps to it.
with st.expander(f"The {len(reproduced.TABLES)} tables on this page"):
    tables = reproduced.TABLES.items()
    st.markdown("\n".join(f"- [{md_escape(m['title'])}](#{_anchor(t)})" for t, m in tables))
for name, table_meta in reproduced.TABLES.items():
    _show(name, table_meta)
