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
