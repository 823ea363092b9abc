"""Is a difference in test accuracy real?  Wilson intervals and the exact McNemar test.

Two models scored on the same test images are not independent samples, so comparing their
two accuracy intervals understates what the data can tell apart.  McNemar's test looks only
at the images the models disagree on: ``b`` images only model A gets right, ``c`` images
only model B gets right.  If the models were equally good, each disagreement would go
either way with probability 1/2, so under that hypothesis ``b ~ Binomial(b + c, 1/2)`` and
the exact two-sided p-value is ``min(1, 2 * P(X <= min(b, c)))``.

One model's accuracy alone gets a Wilson score interval, which (unlike the normal
approximation ``p +- z sqrt(p (1 - p) / n)``) stays inside [0, 1] and is not degenerate at
0 or n correct answers — the usual case for a good model on an easy pair.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, NamedTuple

import numpy as np
from scipy.special import gammaln
from scipy.stats import binom, norm

_LOG2 = float(np.log(2.0))

__all__ = [
    "mcnemar_by_image_p",
    "MINUS",
    "SIGNIFICANCE_LEVEL",
    "McNemarResult",
    "describe_difference",
    "format_accuracy",
    "format_images",
    "format_interval",
    "format_p",
    "format_signed",
    "mcnemar_correct",
    "mcnemar_exact",
    "mcnemar_p",
    "wilson_interval",
    "with_minus",
]

#: The level below which :func:`describe_difference` calls a difference significant.
SIGNIFICANCE_LEVEL = 0.05


@functools.lru_cache(maxsize=8)
def _z(confidence: float) -> float:
    """The normal quantile of a two-sided ``confidence`` (scipy's ppf cost 0.1 ms a call,
    and a learning-curve page asks it for every row)."""
    return float(norm.ppf(0.5 + confidence / 2))


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion of ``k`` successes out of ``n``.

    Parameters
    ----------
    k : int
        Successes (correctly classified test images), ``0 <= k <= n``.
    n : int
        Trials (test images), at least 1.
    confidence : float, default=0.95
        Two-sided coverage, strictly between 0 and 1.

    Returns
    -------
    (low, high) : tuple of float
        Bounds in [0, 1]; ``low`` is exactly 0 when ``k == 0`` and ``high`` exactly 1 when
        ``k == n``.

    Raises
    ------
    ValueError
        When ``n < 1``, ``k`` is outside ``[0, n]`` or ``confidence`` outside (0, 1).
    """
    k_int, n_int = _count("k", k), _count("n", n)
    if n_int < 1:
        raise ValueError(f"n must be at least 1 (the number of test images), got {n!r}.")
    if not 0 <= k_int <= n_int:
        raise ValueError(f"k must be between 0 and n={n_int}, got {k!r}.")
    if not (isinstance(confidence, float | int) and 0 < confidence < 1):
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}.")
    z = _z(float(confidence))
    p = k_int / n_int
    z2n = z * z / n_int
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / n_int + z2n / (4 * n_int))
    # At k = 0 (k = n) the lower (upper) bound is 0 (1) in exact arithmetic; round-off
    # would otherwise leave -1e-17 or 0.9999999999999999.
    low = 0.0 if k_int == 0 else max(0.0, centre - half)
    high = 1.0 if k_int == n_int else min(1.0, centre + half)
    return low, high


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be a whole number of images, got {value!r}.")
    return int(value)


class McNemarResult(NamedTuple):
    """The outcome of :func:`mcnemar_exact` for models A and B on one test set.

    Attributes
    ----------
    b : int
        Test images only model A classifies correctly.
    c : int
        Test images only model B classifies correctly.
    p_value : float
        Exact two-sided p-value of "A and B are equally accurate".
    diff_points : float
        Accuracy of A minus accuracy of B, in percentage points: ``100 (b - c) / n``.
    diff_images : int
        ``b - c``: how many more test images A gets right than B.
    """

    b: int
    c: int
    p_value: float
    diff_points: float
    diff_images: int

    @property
    def outcome(self) -> str:
        """For A: "win" or "loss" where the difference is significant (p < 0.05), else
        "tie" (the pair studies' per-pair verdict)."""
        if self.p_value >= 0.05:
            return "tie"
        return "win" if self.b > self.c else "loss"


def mcnemar_exact(y_true: Any, pred_a: Any, pred_b: Any) -> McNemarResult:
    """Exact McNemar test of two classifiers' predictions on the same test images.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True labels.
    pred_a, pred_b : array-like of shape (n,)
        Predictions of models A and B for the same images, in the same order.

    Returns
    -------
    McNemarResult
        ``p_value = min(1, 2 * BinomCDF(min(b, c); b + c, 1/2))``, and 1 when the models
        never disagree in correctness (``b + c == 0``).

    Raises
    ------
    ValueError
        When the three arrays are not one-dimensional of the same non-zero length.
    """
    y_true, pred_a, pred_b = (np.asarray(v) for v in (y_true, pred_a, pred_b))
    shapes = {"y_true": y_true.shape, "pred_a": pred_a.shape, "pred_b": pred_b.shape}
    if any(len(s) != 1 for s in shapes.values()) or len(set(shapes.values())) != 1:
        raise ValueError(
            "y_true, pred_a and pred_b must be 1-D and of the same length (one entry per "
            f"test image, in the same order); got shapes {shapes}."
        )
    if len(y_true) == 0:
        raise ValueError("McNemar's test needs at least one test image; the arrays are empty.")
    return mcnemar_correct(pred_a == y_true, pred_b == y_true)


def mcnemar_correct(right_a: Any, right_b: Any) -> McNemarResult:
    """:func:`mcnemar_exact` from which test images each model got right (what a saved
    run keeps instead of its predictions).

    Parameters
    ----------
    right_a, right_b : array-like of bool, shape (n,)
        Whether models A and B got each test image right, in the same order; n >= 1.

    Returns
    -------
    McNemarResult
    """
    right_a, right_b = np.asarray(right_a, dtype=bool), np.asarray(right_b, dtype=bool)
    if right_a.ndim != 1 or right_a.shape != right_b.shape or len(right_a) == 0:
        raise ValueError(
            "right_a and right_b must be 1-D, non-empty and of the same length (one entry "
            f"per test image); got shapes {right_a.shape} and {right_b.shape}."
        )
    b = int(np.count_nonzero(right_a & ~right_b))
    c = int(np.count_nonzero(~right_a & right_b))
    return McNemarResult(
        b=b,
        c=c,
        p_value=mcnemar_p(b, c),
        diff_points=100.0 * (b - c) / len(right_a),
        diff_images=b - c,
    )


def mcnemar_p(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value from the two discordant counts.

    Parameters
    ----------
    b, c : int
        Images only model A (``b``) or only model B (``c``) gets right; both >= 0.

    Returns
    -------
    float
        ``min(1, 2 * BinomCDF(min(b, c); b + c, 1/2))``; 1 when ``b + c == 0``.
    """
    b, c = _count("b", b), _count("c", c)
    if b < 0 or c < 0:
        raise ValueError(f"b and c count images and must be >= 0, got b={b}, c={c}.")
    if b + c == 0:
        return 1.0
    return float(min(1.0, 2.0 * binom.cdf(min(b, c), b + c, 0.5)))


def mcnemar_by_image_p(differences: Any) -> float:
    """McNemar's exact test over several seeds, with each test image counted once.

    Several training draws scored on the same test images are not independent trials: an
    image one method finds hard under one draw it finds hard under the next, so pooling
    the draws' discordant counts as if they were (:func:`mcnemar_p` of the sums) gives a
    p too small.  Here the test image is the unit: ``differences[i]`` is the number of
    draws in which method A got image ``i`` right minus the number in which B did.  Under
    the null hypothesis the two methods are exchangeable on every image, so each
    difference is as likely to be positive as negative; the p-value is the exact share of
    the sign flips of the non-zero differences whose sum is at least as far from zero as
    the observed sum (a paired permutation test).  With one draw it is :func:`mcnemar_p`.

    Parameters
    ----------
    differences : array-like of int
        One whole number per test image (zeros allowed).

    Returns
    -------
    float
        The two-sided p-value, in (0, 1]; 1 when every difference is zero.

    Examples
    --------
    >>> round(mcnemar_by_image_p([1] * 7 + [-1] * 1 + [0] * 50), 12) == round(mcnemar_p(7, 1), 12)
    True
    >>> round(mcnemar_by_image_p([3, 3, 3, -3] + [0] * 40), 3)  # 4 images, not 12 trials
    0.625
    """
    d = np.asarray(differences)
    if d.ndim != 1 or (d.size and not np.issubdtype(d.dtype, np.integer)):
        raise ValueError("differences must be one whole number per test image.")
    sizes, counts = np.unique(np.abs(d[d != 0]), return_counts=True)
    if sizes.size == 0:
        return 1.0
    # The null distribution, through the sum S of the sizes whose sign is +: each size a
    # with c images adds a * Binomial(c, 1/2), and the sum of the differences is 2S - total.
    # On S's lattice (0..total, step 1) the convolutions are half as long, and the binomial
    # weights come from log-gamma directly (scipy's binom.pmf cost 0.1 ms a call in checks).
    total = int(np.dot(sizes, counts))
    pmf = np.ones(1)
    for a, c in zip(sizes.tolist(), counts.tolist(), strict=True):
        k = np.arange(c + 1)
        spread = np.zeros(a * c + 1)
        spread[::a] = np.exp(gammaln(c + 1) - gammaln(k + 1) - gammaln(c - k + 1) - c * _LOG2)
        pmf = np.convolve(pmf, spread)
    observed = abs(int(d.sum()))
    return float(min(1.0, pmf[np.abs(2 * np.arange(total + 1) - total) >= observed].sum()))


def format_p(p: float, cell: bool = False) -> str:
    """A p-value as the app and the reports write it, everywhere.

    Below 0.001 only "< 0.001" (a test on a few hundred images tells nothing finer, and
    "2.78e-13" reads as a typo); below 0.1 three decimals ("0.041", "0.004"); else two
    ("0.41").  For a sentence, ``f"p {format_p(p)}"``: "p = 0.41", "p < 0.001"; with
    ``cell=True`` the bare value for a table column named p ("0.41", "< 0.001").  A
    missing p (None, NaN) is "–".

    >>> [format_p(p, cell=True) for p in (2.78e-13, 0.0043, 0.0412, 0.41, 1.0)]
    ['< 0.001', '0.004', '0.041', '0.41', '1.00']
    >>> format_p(0.27), format_p(2.78e-13)
    ('= 0.27', '< 0.001')
    """
    if p is None or not math.isfinite(p):
        return "–"
    if p < 0.001:
        return "< 0.001"
    # Rounded first, so 0.0996 is written "0.10" as 0.1 is, not "0.100".
    value = f"{p:.3f}" if round(p, 3) < 0.1 else f"{p:.2f}"
    return value if cell else f"= {value}"


def describe_difference(name_a: str, name_b: str, result: McNemarResult) -> str:
    """One sentence on whether A and B differ on this test set.

    Parameters
    ----------
    name_a, name_b : str
        Labels of the two models, e.g. "K-CSVM" and "plain SVM".
    result : McNemarResult
        From :func:`mcnemar_exact` with A's predictions first.

    Returns
    -------
    str
        E.g. "K-CSVM vs plain SVM: +0.24 points (5 images), p = 0.41 — not a significant
        difference"; a significant one names the better model.
    """
    images = result.diff_images
    head = (
        f"{name_a} vs {name_b}: {format_signed(result.diff_points)} points "
        f"({format_images(images)}), "
        f"p {format_p(result.p_value)}"
    )
    if result.p_value < SIGNIFICANCE_LEVEL:
        better = name_a if images > 0 else name_b
        return f"{head} — a significant difference ({better} better, p < {SIGNIFICANCE_LEVEL})"
    return f"{head} — not a significant difference"


#: The minus sign the pages and reports print ("−0.24", not the hyphen of "-0.24"), as
#: Plotly's axes and the docs' tables write it.
MINUS = "\u2212"


def with_minus(text: str) -> str:
    """``text`` with a true minus before each negative number, where a saved report wrote
    a hyphen ("-0.26 points (-5 images)"); hyphens inside words ("K-CSVM") stay.

    Examples
    --------
    >>> with_minus("- K-CSVM vs SVM: -0.26 points (-5 images)") == (
    ...     "- K-CSVM vs SVM: \u22120.26 points (\u22125 images)")
    True
    """
    return re.sub(r"(?<![\w.])-(?=\.?\d)", MINUS, text)


def format_signed(value: float, digits: int = 2) -> str:
    """A difference with its sign always written, and a true minus sign.

    A value that rounds to zero is written "+0.00" (no "−0.00").

    Examples
    --------
    >>> format_signed(0.2412), format_signed(-3.5), format_signed(-0.001), format_signed(5, 0)
    ('+0.24', '−3.50', '+0.00', '+5')
    """
    if round(value, digits) == 0:
        value = 0.0
    return f"{value:+.{digits}f}".replace("-", MINUS)


def format_images(count: int, signed: bool = False) -> str:
    """A count of test images in words, "1 image" or "−3 images" ("+5 images" when
    ``signed``, for a difference in a table's column).

    Examples
    --------
    >>> format_images(1), format_images(-3), format_images(5, signed=True)
    ('1 image', '−3 images', '+5 images')
    """
    number = format_signed(count, 0) if signed else f"{count}".replace("-", MINUS)
    return f"{number} image{'' if abs(count) == 1 else 's'}"


def format_interval(low: float, high: float) -> str:
    """An accuracy interval (fractions) as a table cell writes it, "97.46–99.61 %": the
    "%" after a no-break space, as a projected table's narrow column wrapped it alone.

    Examples
    --------
    >>> format_interval(0.9746, 0.9961) == "97.46–99.61\u00a0%"
    True
    """
    return f"{100 * low:.2f}–{100 * high:.2f}\u00a0%"


def format_accuracy(k: int, n: int, confidence: float = 0.95) -> str:
    """Accuracy with its Wilson interval, e.g. "98.32 % (97.63–98.82)".

    Parameters
    ----------
    k, n : int
        Correctly classified and total test images.
    confidence : float, default=0.95
    """
    low, high = wilson_interval(k, n, confidence)
    return f"{100 * k / n:.2f} % ({100 * low:.2f}–{100 * high:.2f})"
