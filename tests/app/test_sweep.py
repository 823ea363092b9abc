"""Sweeps: axis parsing, grid validation, and a small grid through the Sweep page."""

import re
import time
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from csvm.runs.config import RunConfig
from csvm.runs.sweeps import parse_values, run_validation, stability, sweep_configs
from tests._apptest import open_app, plotly_array, specs

ROOT = Path(__file__).resolve().parents[2]


def test_parse_values_and_messages():
    assert parse_values("lam", "0.01, 0.1,1") == [0.01, 0.1, 1.0]
    assert parse_values("degree", "2,3") == [2, 3]
    assert parse_values("seed", "0, 1, 2") == [0, 1, 2]
    with pytest.raises(ValueError, match="not a number"):
        parse_values("eta", "0.1, fast")
    with pytest.raises(ValueError, match="between 1 and 8"):
        parse_values("eta", ",".join(["0.1"] * 9))
    with pytest.raises(ValueError, match="Cannot sweep"):
        parse_values("colour", "1")


def test_grid_is_row_major_and_invalid_cells_are_named():
    cells = sweep_configs(RunConfig(), "lam", [0.1, 1.0], "eta", [0.01, 0.1, 1.0])
    assert [(c["eta"], c["lam"]) for c in cells[:3]] == [(0.01, 0.1), (0.01, 1.0), (0.1, 0.1)]
    assert all(c["baselines"] == [] for c in cells)
    with pytest.raises(ValueError, match="filter_size=40"):
        sweep_configs(RunConfig(), "filter_size", [3, 40], "eta", [0.1], (1, 28, 28))
    with pytest.raises(ValueError, match="two different"):
        sweep_configs(RunConfig(), "eta", [0.1], "eta", [0.2])


def test_a_cell_is_scored_on_the_validation_images():
    events = []
    result = run_validation(events.append, RunConfig(n_train=100, n_iter=2).to_dict())
    assert 0.5 < result["val_accuracy"] <= 1.0
    assert events[-1]["val_accuracy"] == result["val_accuracy"]
    right = result["val_accuracy"] * result["n_val"]  # images right
    assert result["n_val"] > 0 and abs(right - round(right)) < 1e-9


def test_sweep_page_fills_the_heatmap():
    at = AppTest.from_file(str(ROOT / "pages" / "sweep.py"), default_timeout=60)
    at.session_state["owner"] = "sweep-test-browser"  # as the owner cookie gives
    at.run()
    assert not at.exception and not at.error
    at.number_input(key="sw_n_train").set_value(100)
    at.number_input(key="sw_n_iter").set_value(2)
    at.text_input(key="sw_x_values_gamma").set_value("0.01, 0.1")
    at.text_input(key="sw_y_values_C").set_value("0.05, 0.1").run()
    assert at.button(key="sw_stop").disabled  # nothing to stop yet
    at.button(key="sw_start").click().run()
    assert not at.button(key="sw_stop").disabled  # the run that starts it offers Stop
    deadline = time.time() + 120
    z = None
    while time.time() < deadline:
        at.run()
        charts = specs(at)
        if charts:
            z = plotly_array(charts[0]["data"][0]["z"]).astype(float)
            if not np.isnan(z).any():
                break
        time.sleep(0.5)
    assert z is not None and z.shape == (2, 2) and not np.isnan(z).any()
    assert at.success and "Best" in at.success[0].value
    assert re.search(r"\(\d+ of \d+ images[;,]", at.success[0].value)  # the gap in images
    # Every cell is scored: nothing runs, so Stop is off again.
    assert at.button(key="sw_stop").disabled
    # A reload (a new session of the same browser) finds the sweep in the pool.
    again = AppTest.from_file(str(ROOT / "pages" / "sweep.py"), default_timeout=60)
    again.session_state["owner"] = "sweep-test-browser"
    again.run()
    assert not again.exception
    np.testing.assert_array_equal(plotly_array(specs(again)[0]["data"][0]["z"]).astype(float), z)
    assert again.success and again.success[0].value == at.success[0].value
    # Its boxes describe it, not the page's defaults.
    assert again.number_input(key="sw_n_train").value == 100
    assert again.number_input(key="sw_n_iter").value == 2
    assert again.text_input(key="sw_x_values_gamma").value == "0.01, 0.1"
    assert again.text_input(key="sw_y_values_C").value == "0.05, 0.1"
    # Another browser sees no sweep.
    other = AppTest.from_file(str(ROOT / "pages" / "sweep.py"), default_timeout=60).run()
    assert not specs(other)


def test_the_newest_sweep_is_recovered_and_a_forgotten_cell_keeps_its_place():
    from types import SimpleNamespace

    from explorer.sweep_jobs import recover_sweep

    def view(job_id, sweep, cell, x=("eta", [0.1, 1.0]), y=("C", [1.0])):
        meta = {"sweep": sweep, "cell": cell, "x": x, "y": y}
        return SimpleNamespace(id=job_id, meta=meta)

    assert recover_sweep([]) is None
    assert recover_sweep([SimpleNamespace(id="a", meta={})]) is None  # a job of no sweep
    old = [view("o0", "old", 0), view("o1", "old", 1)]
    state = recover_sweep([*old, view("n1", "new", 1)])  # the newest; its cell 0 forgotten
    assert state["id"] == "new" and state["x"] == ("eta", [0.1, 1.0])
    assert state["jobs"][1] == "n1" and state["jobs"][0] not in ("o0", "n1")


def test_sweep_page_names_the_base_model_in_words():
    at = AppTest.from_file(str(ROOT / "pages" / "sweep.py"), default_timeout=60).run()
    (base,) = [c.value for c in at.caption if c.value.startswith("Base settings")]
    assert "K-CSVM, RBF kernel" in base and "kcsvm" not in base


def test_sweep_page_names_the_classes_a_cell_trains():
    # With several classes every cell trains them all: the caption said "3 v 5".
    at = open_app({"classes": "3,5,0"})
    at.switch_page("pages/sweep.py").run()
    (base,) = [c.value for c in at.caption if c.value.startswith("Base settings")]
    assert "mnist\\-5k classes 3\\, 5\\, 0; K-CSVM" in base and " v " not in base


def test_sweep_page_refuses_bad_values():
    at = AppTest.from_file(str(ROOT / "pages" / "sweep.py"), default_timeout=60).run()
    at.text_input(key="sw_x_values_gamma").set_value("0.01, lots").run()
    assert any("not a number" in e.value for e in at.error)
    assert at.button(key="sw_start").disabled


def test_run_sweep_in_order_and_a_stop_leaves_the_rest_unrun():
    from csvm.runs.sweeps import run_sweep, sweep_rows

    base = {**RunConfig().to_dict(), "n_train": 60, "n_iter": 2}
    cells = sweep_configs(base, "lam", [0.01, 0.1], "eta", [0.05, 0.1])
    results = run_sweep(cells, n_jobs=2)
    assert all(r is not None for r in results)
    # Cells are seeded by their configuration: any order, any thread, the same result.
    assert results[3]["val_accuracy"] == run_validation(lambda e: None, cells[3])["val_accuracy"]
    rows = sweep_rows(cells, results, "lam", "eta")
    assert [(r["lam"], r["eta"]) for r in rows] == [
        (0.01, 0.05),
        (0.1, 0.05),
        (0.01, 0.1),
        (0.1, 0.1),
    ]
    assert rows[0]["val_accuracy"] == results[0]["val_accuracy"]
    seen = []
    stopped = run_sweep(cells, n_jobs=1, on_result=lambda i, r: seen.append(i) or False)
    assert seen == [0] and stopped[0] is not None and stopped[1:] == [None] * 3
    assert sweep_rows(cells, stopped, "lam", "eta")[1]["val_accuracy"] is None


def test_align_signs_and_cosines():
    from csvm.analysis.stability import _abs_cosines, align_signs

    rng = np.random.default_rng(0)
    f = rng.normal(size=(2, 1, 5, 5))  # two filters per run
    runs = np.stack([f, -f, f * [[[[2.0]]], [[[-3.0]]]]])
    aligned, signs = align_signs(runs)
    np.testing.assert_array_equal(signs, [[1, 1], [-1, -1], [1, -1]])
    np.testing.assert_allclose(aligned[1], f)
    np.testing.assert_allclose(_abs_cosines(aligned), np.ones((3, 3)))
    g = rng.normal(size=(2, 1, 5, 5))
    cos = _abs_cosines(np.stack([f, g]))
    expected = np.mean(
        [
            abs(np.dot(a.ravel(), b.ravel())) / np.linalg.norm(a) / np.linalg.norm(b)
            for a, b in zip(f, g)
        ]
    )
    assert cos[0, 1] == pytest.approx(expected)


def test_stability_over_three_seeds():
    from csvm.parallel import one_blas_thread
    from csvm.runs.sweeps import run_seed, stability

    config = {**RunConfig().to_dict(), "n_train": 100, "n_iter": 3, "seed": 4, "n_filters": 1}
    out = stability(config, seeds=[0, 1, 2], n_jobs=2)
    assert out["seeds"] == [0, 1, 2] and out["filters"].shape == (3, 1, 1, 5, 5)
    assert 0.0 < out["mean_abs_cosine"] <= 1.0 and 0.0 < out["start_mean_abs_cosine"] <= 1.0
    np.testing.assert_allclose(np.diag(out["cosine"]), 1.0)
    # Run 0 is the reference: never flipped, and equal to a direct run with that seed
    # (same data: the configuration's own seed 4 picks the subsample; one BLAS thread, as
    # every parallel task runs, since OpenBLAS's sums depend on its thread count).
    with one_blas_thread():
        direct = run_seed(config, 0)
    np.testing.assert_array_equal(out["filters"][0], direct["filters"])
    vals = [r["val_accuracy"] for r in out["runs"]]
    assert out["val_accuracy"] == pytest.approx((np.mean(vals), np.std(vals)))
    # Different seeds really start from different filters.
    assert not np.allclose(out["filters"][0], out["filters"][1])
    with pytest.raises(ValueError, match="between 2 and 10"):
        stability(config, seeds=[3])
    with pytest.raises(ValueError, match="between 2 and 10"):
        stability(config, seeds=11)


def test_a_grid_larger_than_the_session_cap_is_refused_before_start():
    at = AppTest.from_file(str(ROOT / "pages" / "sweep.py"), default_timeout=60).run()
    assert not at.error, "the default grid fits the default cap"
    at.text_input(key="sw_x_values_gamma").set_value("0.001, 0.01, 0.1")
    at.text_input(key="sw_y_values_C").set_value("0.1, 10, 1000").run()
    assert any("9 cells" in e.value and "CSVM\\_MAX\\_ACTIVE" in e.value for e in at.error)
    assert at.button(key="sw_start").disabled


def _summary(cos, start):
    return {"mean_abs_cosine": cos, "start_mean_abs_cosine": start}


def test_stability_verdict_says_whichever_way_the_numbers_come_out():
    from csvm.analysis.stability import stability_verdict

    def verdict(a, b):
        return stability_verdict(_summary(*a), _summary(*b), "DFO2", "DFO1")

    assert verdict((0.92, 0.78), (0.78, 0.78)).endswith("the claim holds here.")
    assert "both are stable" in verdict((0.92, 0.78), (0.90, 0.78))
    assert "neither is stable" in verdict((0.80, 0.78), (0.79, 0.78))
    assert "opposite" in verdict((0.78, 0.78), (0.95, 0.78))
    assert verdict((0.92, None), (0.50, None)).startswith("DFO2: mean |cos| 0.920;")


def test_summarise_stability_matches_stability():
    from csvm.analysis.stability import summarise_stability
    from csvm.runs.sweeps import run_seed

    config = RunConfig(n_train=60, n_iter=2, n_filters=1, baselines=()).to_dict()
    whole = stability(config, seeds=[0, 1, 2], n_jobs=1)
    parts = summarise_stability([0, 1, 2], [run_seed(config, s) for s in (0, 1, 2)])
    assert np.allclose(whole["filters"], parts["filters"])
    assert whole["mean_abs_cosine"] == parts["mean_abs_cosine"]


def test_an_l_csvm_sweep_offers_only_the_settings_it_uses():
    """The L-CSVM ignores γ, C and η: a grid over them showed one number in every cell."""
    at = AppTest.from_file(str(ROOT / "pages" / "sweep.py"), default_timeout=60)
    at.query_params["model"] = "lcsvm"
    at.run()
    assert not at.exception
    offered = set(at.selectbox(key="sw_x").options)
    assert {"γ", "C", "η"}.isdisjoint(offered) and {"λ_w", "λ_f", "filter size"} <= offered
    assert at.selectbox(key="sw_x").value != at.selectbox(key="sw_y").value
    assert not at.error, "the default grid of the L-CSVM's axes is valid"


def test_stability_verdict_says_how_many_seeds_and_when_the_filters_are_the_same():
    from csvm.analysis.stability import stability_verdict

    same = np.ones((4, 1, 5, 5))
    a = {**_summary(0.92, 0.78), "seeds": [0, 1, 2, 3], "filters": same}
    b = {**_summary(0.92, 0.78), "seeds": [0, 1, 2, 3], "filters": same.copy()}
    line = stability_verdict(a, b, "DFO2", "DFO1")
    assert "4 seeds each" in line and "not a significance test" in line
    assert "trained the same filters" in line
    b["filters"] = same * 2
    assert "trained the same filters" not in stability_verdict(a, b, "DFO2", "DFO1")


@pytest.mark.parametrize("page", ["sweep", "stability", "curve", "filter_lab"])
def test_a_links_bad_settings_are_named_on_the_pages_that_use_them(page):
    """/stability?seed=-1&n_train=abc dropped the values without a word; Train named them."""
    at = open_app({"seed": "-1", "n_train": "abc"})
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception
    said = " ".join(w.value for w in at.warning)
    assert "seed" in said.lower() and "abc" in said
