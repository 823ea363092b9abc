"""The teaching study: its draws, and one report draw's learned filter against its start."""

from __future__ import annotations

import numpy as np

from csvm.runs.teaching_study import (
    CANDIDATES,
    PRESET_PAIR,
    draw_pair,
    score_draw,
    summarise,
)


def test_selection_and_report_draws_are_different_images():
    X, y, Xv, yv = draw_pair(PRESET_PAIR, 0, report=False)
    R, yr, Rt, yt = draw_pair(PRESET_PAIR, 0, report=True)
    assert X.shape == (100, 1, 28, 28) and Xv.shape == (400, 1, 28, 28)
    assert R.shape == (100, 1, 28, 28) and Rt.shape == (1100, 1, 28, 28)
    assert set(np.unique(y)) == {-1, 1} and abs(int(y.sum())) < 30
    assert not np.allclose(X, R)


def test_a_report_draw_learns_what_its_start_and_the_pixels_miss():
    name = "1 filter, η 0.5, C 1"
    assert name in CANDIDATES
    X, y, Xe, ye = draw_pair(PRESET_PAIR, 100, report=True)
    # 300 test images keep the test short; the saved run scores all 1,100.
    row = score_draw(name, PRESET_PAIR, X, y, Xe[:300], ye[:300], 100)
    assert row is not None
    assert row["learned"] >= 0.85
    assert row["learned"] - row["fixed"]["start"] >= 0.1
    assert row["plain"] <= 0.75
    assert row["cosine"] < 0.9 and row["shape"] > row["shape_start"]
    s = summarise([row])
    assert s["n"] == 1 and s["wins"] == 1 and s["worst"] == s["learned"]
