"""Wilson intervals and exact McNemar p-values against hand-computed and published values."""

import math

import numpy as np
import pytest

from csvm.analysis.stats import (
    McNemarResult,
    describe_difference,
    format_accuracy,
    format_p,
    mcnemar_correct,
    mcnemar_exact,
    mcnemar_p,
    wilson_interval,
)

Z95 = 1.959963984540054  # the 97.5 % point of the standard normal


# -- Wilson -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "k,n,low,high",
    [
        # Newcombe (1998), Stat. Med. 17:857, table I, method 3 (Wilson score, no correction)
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        # 5 of 10 by hand: centre 1/2, half-width z/(1+z²/10) sqrt(1/40 + z²/400) = 0.2634
        (5, 10, 0.2366, 0.7634),
    ],
)
def test_wilson_matches_published_values(k, n, low, high):
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(low, abs=5e-5)
    assert hi == pytest.approx(high, abs=5e-5)


@pytest.mark.parametrize("n", [1, 10, 1902])
def test_wilson_at_zero_and_all_correct_has_the_closed_form(n):
    # k = 0: the interval is [0, z²/(n + z²)]; k = n mirrors it.
    edge = Z95**2 / (n + Z95**2)
    lo, hi = wilson_interval(0, n)
    assert lo == 0.0
    assert np.isclose(hi, edge, rtol=1e-12)
    lo, hi = wilson_interval(n, n)
    assert hi == 1.0
    assert np.isclose(lo, 1 - edge, rtol=1e-12)


def test_wilson_is_symmetric_and_narrows_with_confidence():
    lo, hi = wilson_interval(3, 17)
    lo2, hi2 = wilson_interval(14, 17)
    assert np.isclose(lo, 1 - hi2, rtol=1e-12) and np.isclose(hi, 1 - lo2, rtol=1e-12)
    lo90, hi90 = wilson_interval(3, 17, confidence=0.9)
    assert lo < lo90 < 3 / 17 < hi90 < hi


@pytest.mark.parametrize(
    "args,match",
    [
        ((1, 0), "at least 1"),
        ((5, 4), "between 0 and n"),
        ((-1, 4), "between 0 and n"),
        ((1.5, 4), "whole number"),
        ((1, 4, 1.0), "strictly between"),
    ],
)
def test_wilson_rejects_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        wilson_interval(*args)


# -- McNemar ------------------------------------------------------------------------------
def _predictions(b, c, same_right, same_wrong):
    """Labels and two prediction vectors with the given discordant and concordant counts."""
    n = b + c + same_right + same_wrong
    y = np.ones(n, dtype=int)
    a = y.copy()
    bb = y.copy()
    a[b : b + c] = -1  # A wrong where only B is right
    bb[:b] = -1  # B wrong where only A is right
    a[b + c + same_right :] = -1  # both wrong
    bb[b + c + same_right :] = -1
    return y, a, bb


@pytest.mark.parametrize(
    "b,c,p",
    [
        (0, 0, 1.0),  # no discordant pairs
        (3, 3, 1.0),  # a tie: 2 * 42/64 > 1
        (1, 0, 1.0),  # 2 * 1/2
        (5, 0, 2 / 32),  # all one way
        (6, 0, 2 / 64),
        (0, 6, 2 / 64),
        (2, 8, 2 * (1 + 10 + 45) / 1024),  # 0.109375
        (8, 2, 2 * (1 + 10 + 45) / 1024),
        (4, 5, 1.0),  # 2 * 256/512 = 1 exactly
        (10, 20, 2 * sum(math.comb(30, i) for i in range(11)) / 2**30),
    ],
)
def test_mcnemar_matches_hand_computed_p(b, c, p):
    y, a, bb = _predictions(b, c, same_right=7, same_wrong=2)
    result = mcnemar_exact(y, a, bb)
    assert (result.b, result.c) == (b, c)
    assert np.isclose(result.p_value, p, rtol=1e-12)
    assert result.diff_images == b - c
    assert np.isclose(result.diff_points, 100 * (b - c) / len(y), rtol=1e-12)
    assert mcnemar_p(b, c) == result.p_value


def test_mcnemar_is_symmetric_in_the_two_models():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 500)
    a = np.where(rng.random(500) < 0.9, y, 1 - y)
    b = np.where(rng.random(500) < 0.85, y, 1 - y)
    ab, ba = mcnemar_exact(y, a, b), mcnemar_exact(y, b, a)
    assert (ab.b, ab.c) == (ba.c, ba.b)
    assert ab.p_value == ba.p_value
    assert ab.diff_points == -ba.diff_points


def test_mcnemar_outcome_is_a_win_or_loss_only_where_significant():
    for (b, c), outcome in {(6, 0): "win", (0, 6): "loss", (2, 8): "tie", (5, 0): "tie"}.items():
        y, a, bb = _predictions(b, c, same_right=7, same_wrong=2)
        assert mcnemar_exact(y, a, bb).outcome == outcome


def test_mcnemar_from_which_images_were_right_is_the_same_test():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 400)
    a = np.where(rng.random(400) < 0.9, y, (y + 1) % 3)
    b = np.where(rng.random(400) < 0.8, y, (y + 2) % 3)
    assert mcnemar_correct(a == y, b == y) == mcnemar_exact(y, a, b)
    with pytest.raises(ValueError, match="same length"):
        mcnemar_correct(a == y, (b == y)[:-1])
    with pytest.raises(ValueError, match="non-empty"):
        mcnemar_correct([], [])


def test_mcnemar_ignores_images_both_get_wrong_in_different_ways():
    # Three classes: A and B both wrong (with different wrong labels) is concordant.
    y = np.array([0, 0, 1, 2])
    a = np.array([1, 0, 1, 2])
    b = np.array([2, 0, 1, 0])
    r = mcnemar_exact(y, a, b)
    assert (r.b, r.c) == (1, 0)


def test_mcnemar_rejects_mismatched_or_empty_input():
    with pytest.raises(ValueError, match="same length"):
        mcnemar_exact([1, 1], [1, 1, 1], [1, 1])
    with pytest.raises(ValueError, match="at least one"):
        mcnemar_exact([], [], [])
    with pytest.raises(ValueError, match="1-D"):
        mcnemar_exact(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)))


# -- sentences ----------------------------------------------------------------------------
def test_describe_difference_not_significant():
    result = McNemarResult(b=9, c=4, p_value=mcnemar_p(9, 4), diff_points=0.24, diff_images=5)
    text = describe_difference("K-CSVM", "plain SVM", result)
    assert text == (
        "K-CSVM vs plain SVM: +0.24 points (5 images), p = 0.27 — not a significant difference"
    )


def test_describe_difference_names_the_better_model_when_significant():
    y, a, b = _predictions(2, 14, same_right=100, same_wrong=0)
    text = describe_difference("K-CSVM", "plain SVM", mcnemar_exact(y, a, b))
    assert text.startswith("K-CSVM vs plain SVM: −10.34 points (−12 images), p = 0.004")
    assert "significant difference (plain SVM better" in text
    y, a, b = _predictions(40, 0, same_right=100, same_wrong=0)
    assert "p < 0.001" in describe_difference("A", "B", mcnemar_exact(y, a, b))
    y, a, b = _predictions(1, 0, same_right=3, same_wrong=0)
    assert "(1 image)" in describe_difference("A", "B", mcnemar_exact(y, a, b))


def test_format_accuracy():
    assert format_accuracy(5, 10) == "50.00 % (23.66–76.34)"


@pytest.mark.parametrize(
    ("p", "cell", "sentence"),
    [
        (2.78e-13, "< 0.001", "< 0.001"),  # never a mantissa and an exponent
        (0.0, "< 0.001", "< 0.001"),
        (0.000999, "< 0.001", "< 0.001"),
        (0.001, "0.001", "= 0.001"),
        (0.0043, "0.004", "= 0.004"),
        (0.0412, "0.041", "= 0.041"),
        (0.0996, "0.10", "= 0.10"),  # rounds up into the two-decimal range
        (0.41, "0.41", "= 0.41"),
        (1.0, "1.00", "= 1.00"),
        (float("nan"), "–", "–"),
    ],
)
def test_format_p_writes_every_p_value_one_way(p, cell, sentence):
    assert format_p(p, cell=True) == cell
    assert format_p(p) == sentence


def test_a_signed_difference_has_a_true_minus_and_no_negative_zero():
    from csvm.analysis.stats import MINUS, format_signed

    assert format_signed(-3.456) == f"{MINUS}3.46"
    assert format_signed(2.5, 1) == "+2.5"
    assert format_signed(-1e-14) == "+0.00"  # 98.32 - 98.32 as floats
    assert "-" not in format_signed(-7, 0)


def test_mcnemar_by_image_is_mcnemar_for_one_seed_and_counts_each_image_once():
    import itertools

    from csvm.analysis.stats import mcnemar_by_image_p

    rng = np.random.default_rng(3)
    for _ in range(20):  # one seed: every difference is -1, 0 or +1
        d = rng.integers(-1, 2, size=int(rng.integers(1, 60)))
        assert mcnemar_by_image_p(d) == pytest.approx(
            mcnemar_p(int((d > 0).sum()), int((d < 0).sum()))
        )
    for _ in range(20):  # three seeds: against every sign flip, enumerated
        d = rng.integers(-3, 4, size=int(rng.integers(1, 11)))
        nonzero = np.abs(d[d != 0])
        sums = [
            abs(int(np.dot(signs, nonzero)))
            for signs in itertools.product((-1, 1), repeat=nonzero.size)
        ]
        expected = np.mean(np.array(sums) >= abs(int(d.sum()))) if nonzero.size else 1.0
        assert mcnemar_by_image_p(d) == pytest.approx(expected)
    # Three seeds that agree on 6 images are 6 units, not 18 independent trials.
    assert mcnemar_by_image_p([3] * 6) == pytest.approx(2 / 64)
    assert mcnemar_p(18, 0) < 1e-4
    assert mcnemar_by_image_p([0, 0]) == 1.0
    with pytest.raises(ValueError, match="whole number"):
        mcnemar_by_image_p([0.5, 1.0])
