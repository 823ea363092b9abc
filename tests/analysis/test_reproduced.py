"""A saved run keeps which test images each model got right as packed bits."""

import numpy as np
import pytest

from csvm.analysis.reproduced import pack_correct, unpack_correct


@pytest.mark.parametrize("n", [1, 7, 8, 9, 10_000])
def test_correct_bits_round_trip_at_every_length(n):
    correct = np.random.default_rng(n).random(n) < 0.7
    text = pack_correct(correct)
    assert isinstance(text, str) and len(text) <= 4 * (-(-n // 8) + 2) // 3 + 4
    back = unpack_correct(text, n)
    assert back.dtype == bool and np.array_equal(back, correct)


def test_a_learning_studys_rows_count_images_in_words():
    from csvm.analysis.reproduced import pair_rows

    right = np.ones(50, bool)
    one_wrong, three_wrong = right.copy(), right.copy()
    one_wrong[0] = False
    three_wrong[:3] = False
    units = [
        {"pair": pair, "n": 50, "learned": pack_correct(learned), "start": pack_correct(start)}
        for pair, learned, start in (("0-1", right, one_wrong), ("0-2", three_wrong, right))
    ]
    rows = pair_rows({"details": {"units": units}})
    assert [r["gain, points"] for r in rows] == ["+2.00 (+1 image)", "−6.00 (−3 images)"]
