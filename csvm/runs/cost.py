"""How long a run will take, from a cost model measured on the server by bench/bench_cost.py.

Each model's time is a sum of operation counts times measured seconds per operation:

K-CSVM and L-CSVM (``it`` = iterations, times the measured Armijo factor when
``step="armijo"``)::

    t = a1 it N^2 P F      kernel matrix and filter gradient (N^2 pairs of P*F features)
      + a2 it N P F s      correlating the N images with the F filters of s weights
      + a3 it N^2          LIBSVM's solve of the dual
      + a4 it              per-iteration overhead
      + a5 (N + n_test) N P F   the kernel between the training and test sets and the
                                support vectors, to predict them at the end
      + a6 (N + n_test) P F s   their feature maps for that prediction
      + a7                 fixed cost

plain SVM (D = pixels per image)::   t = b1 N^2 D + b2 N n_test D + b3 N^2 + b4

small CNN (E epochs, h hidden units)::  t = c1 E N P F s + c2 E N P F h + c3 E N + c4

where N is the training-set size, P the positions of a feature map ((H-p+1)(W-q+1)),
F the number of filters and s = C p q the weights of one filter.  The coefficients (CPU
seconds of one core per operation, measured with one BLAS thread as a worker runs, so the
box's load does not enter them) are fitted by non-negative least squares on relative
error to runs of 200-2000 images and stored in ``csvm/runs/cost_model.json``; re-measure on a
new server with ``python -m bench.bench_cost``.  The kernel type and the data do not enter the model
(their effect on time is within its error); loading the images is not included.  "Armijo"
is the measured ratio of an Armijo iteration's time to a constant-step one's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from csvm.runs.config import RunConfig

__all__ = [
    "MODEL_PATH",
    "estimate_breakdown",
    "estimate_multiclass_seconds",
    "estimate_seconds",
    "features",
    "format_duration",
    "format_elapsed",
    "load_model",
]

MODEL_PATH = Path(__file__).with_name("cost_model.json")


def _defaults() -> dict[str, Any]:
    """RunConfig's defaults, for the keys a partial configuration leaves out."""
    return RunConfig().to_dict()


#: Names of each model's feature columns, in the order of the stored coefficients.
COLUMNS: dict[str, tuple[str, ...]] = {
    "kcsvm": (
        "it*N^2*P*F",
        "it*N*P*F*s",
        "it*N^2",
        "it",
        "(N+n_test)*N*P*F",
        "(N+n_test)*P*F*s",
        "1",
    ),
    "lcsvm": (
        "it*N^2*P*F",
        "it*N*P*F*s",
        "it*N^2",
        "it",
        "(N+n_test)*N*P*F",
        "(N+n_test)*P*F*s",
        "1",
    ),
    "svm": ("N^2*D", "N*n_test*D", "N^2", "1"),
    "cnn": ("E*N*P*F*s", "E*N*P*F*h", "E*N", "1"),
}


def _shape_terms(config: dict[str, Any], image_shape: tuple[int, ...]) -> dict[str, float]:
    shape = tuple(int(v) for v in image_shape)
    if len(shape) == 2:
        shape = (1, *shape)
    if len(shape) != 3 or min(shape) < 1:
        raise ValueError(f"image_shape must be (H, W) or (C, H, W), got {image_shape!r}")
    c, h, w = shape
    p = int(config["filter_size"])
    if not 1 <= p <= min(h, w):
        raise ValueError(f"filter_size {p} does not fit images of {h}x{w}")
    return {
        "P": float((h - p + 1) * (w - p + 1)),
        "F": float(config["n_filters"]),
        "s": float(c * p * p),
        "D": float(c * h * w),
    }


def _layer_terms(layers: str, image_shape: tuple[int, ...]) -> tuple[float, float, float]:
    """P, F and s of a stack of layers, in the one-layer model's terms: P·F is the size of
    the maps the kernel sees, P·F·s the multiply-adds of every layer's correlations."""
    from csvm.model.layers import Network, parse_layers

    shape = tuple(int(v) for v in image_shape)
    network = Network(parse_layers(layers), shape if len(shape) == 3 else (1, *shape))
    size = float(np.prod(network.output_shape))
    return size, 1.0, _STACK_OP_COST * network.work_per_image() / size


#: A stack's multiply-add against the one-layer model's.  Measured by
#: ``python -m bench.bench_cost --stack`` (CPU seconds, one BLAS thread, the two-layer
#: classroom stack on 50-1,000 MNIST images): 0.55 since the correlation became one BLAS
#: product from four filters on (stop 30; it was 3.0 before, which then overestimated
#: these runs 5-6 times).  The one-layer model's own estimate of the same sizes is within
#: 0.68-0.92 of its measured time.
_STACK_OP_COST = 0.55


def features(
    model: str,
    config: dict[str, Any],
    n_train: int,
    image_shape: tuple[int, ...],
    n_test: int | None = None,
    armijo_solves: float = 1.0,
) -> np.ndarray:
    """Operation counts of one model of a run (the columns of :data:`COLUMNS`).

    Parameters
    ----------
    model : {"kcsvm", "lcsvm", "svm", "cnn"}
    config : dict
        Run configuration (missing keys: RunConfig's defaults).
    n_train : int
        Training images.
    image_shape : tuple
        ``(C, H, W)`` or ``(H, W)``.
    n_test : int, optional
        Test images predicted at the end (default: ``n_train``).
    armijo_solves : float
        Mean SVM solves per iteration under ``step="armijo"`` (from the cost model).
    """
    c = {**_defaults(), **config}
    n = float(n_train)
    if n < 1:
        raise ValueError(f"n_train must be at least 1, got {n_train!r}")
    t = float(n if n_test is None else n_test)
    g = _shape_terms(c, image_shape)
    P, F, s, D = g["P"], g["F"], g["s"], g["D"]
    if model == "kcsvm" and c.get("layers"):
        P, F, s = _layer_terms(str(c["layers"]), image_shape)
    if model in ("kcsvm", "lcsvm"):
        it = float(c["n_iter"]) * (armijo_solves if c["step"] == "armijo" else 1.0)
        return np.array(
            [
                it * n * n * P * F,
                it * n * P * F * s,
                it * n * n,
                it,
                (n + t) * n * P * F,
                (n + t) * P * F * s,
                1.0,
            ]
        )
    if model == "svm":
        return np.array([n * n * D, n * t * D, n * n, 1.0])
    if model == "cnn":
        e, h = float(c["cnn_epochs"]), float(max(int(c["cnn_hidden"]), 1))
        return np.array([e * n * P * F * s, e * n * P * F * h, e * n, 1.0])
    raise ValueError(f"unknown model {model!r}: expected 'kcsvm', 'lcsvm', 'svm' or 'cnn'")


@lru_cache(maxsize=4)
def load_model(path: str | None = None) -> dict[str, Any]:
    """The measured coefficients (``csvm/runs/cost_model.json`` unless ``path`` is given)."""
    where = Path(path) if path else MODEL_PATH
    try:
        model = json.loads(where.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(
            f"no cost model at {where}: measure one with `python -m bench.bench_cost`"
        ) from None
    for name, columns in COLUMNS.items():
        if len(model["coefficients"].get(name, ())) != len(columns):
            raise ValueError(f"{where}: the {name!r} coefficients do not match {columns}")
    return model


def estimate_breakdown(
    config: dict[str, Any],
    n_train: int,
    image_shape: tuple[int, ...],
    n_test: int | None = None,
    model: dict[str, Any] | None = None,
) -> dict[str, float]:
    """Estimated seconds of each job of a run: ``{"csvm": ..., "svm": ..., "cnn": ...}``.

    Only the baselines the configuration asks for are included.
    """
    m = model or load_model()
    c = {**_defaults(), **config}
    csvm_model = c["model"] if c["model"] in ("kcsvm", "lcsvm") else "kcsvm"
    out = {}
    for job, name in [("csvm", csvm_model)] + [
        (b, b) for b in ("svm", "cnn") if b in c["baselines"]
    ]:
        x = features(name, c, n_train, image_shape, n_test, m.get("armijo_solves", 1.0))
        out[job] = float(np.dot(m["coefficients"][name], x))
    return out


def estimate_seconds(
    config: dict[str, Any],
    n_train: int,
    image_shape: tuple[int, ...],
    n_test: int | None = None,
) -> float:
    """Estimated seconds of a run on a server with free workers.

    The CSVM and its baselines run as separate jobs side by side, each on a core of its
    own, so this is the longest of them (see :func:`estimate_breakdown`); the model counts
    CPU seconds, so on a busy server add the queue's wait.

    Parameters
    ----------
    config : dict
        Run configuration: model ("kcsvm" or "lcsvm"), kernel, degree, n_iter, n_filters,
        filter_size, step, baselines (list of "svm", "cnn"), cnn_epochs, cnn_hidden.
    n_train : int
        Training images.
    image_shape : tuple
        ``(C, H, W)`` or ``(H, W)`` of the images.
    n_test : int, optional
        Test images evaluated at the end (default ``n_train``).

    Returns
    -------
    float
        Seconds, from the measured cost model (:data:`MODEL_PATH`).
    """
    return max(estimate_breakdown(config, n_train, image_shape, n_test).values())


def estimate_multiclass_seconds(
    config: dict[str, Any],
    class_counts: Sequence[int],
    image_shape: tuple[int, ...],
    n_test: int | None = None,
    multi_class: str = "ovo",
) -> float:
    """Estimated seconds of a multi-class run: its sub-problems train one after another.

    The CSVM job costs the sum of its binary sub-problems (one-vs-one: each pair's
    images; one-vs-rest: every image, k times), each scoring all ``n_test`` test images;
    the baselines are costed on all training images at once (the plain SVM's own
    one-vs-one pairs sum to at most twice the cost of one solve on every image, which
    the measured model does not separate: it is a rough figure).

    Parameters
    ----------
    config : dict
        As :func:`estimate_seconds`.
    class_counts : sequence of int
        Training images of each class.
    image_shape : tuple
    n_test : int, optional
        Test images (default: all training images).
    multi_class : {"ovo", "ovr"}

    Returns
    -------
    float
        The longest job's seconds.
    """
    counts = np.asarray(class_counts, dtype=float)
    n = float(counts.sum())
    t = int(n if n_test is None else n_test)
    if multi_class == "ovo":
        i, j = np.triu_indices(len(counts), 1)
        sizes = counts[i] + counts[j]
    else:
        sizes = np.full(len(counts), n)
    jobs = estimate_breakdown(config, int(n), image_shape, t)
    csvm = {k: v for k, v in config.items() if k != "baselines"} | {"baselines": []}
    jobs["csvm"] = sum(
        estimate_breakdown(csvm, int(m), image_shape, t)["csvm"] for m in sizes if m >= 1
    )
    return max(jobs.values())


def format_elapsed(seconds: float) -> str:
    """A measured duration to a tenth of a second, "1.5 s"; "under 0.1 s" where "0.0 s"
    would say it took no time at all.  (:func:`format_duration` is for estimates.)

    Examples
    --------
    >>> format_elapsed(1.46), format_elapsed(0.02)
    ('1.5 s', 'under 0.1 s')
    """
    return "under 0.1 s" if seconds < 0.05 else f"{seconds:.1f} s"


def format_duration(seconds: float) -> str:
    """A rough duration for people: "about 5 s", "about 3 min", "about 2 h 10 min"."""
    if seconds < 1:
        return "under a second"
    if seconds < 60:
        return f"about {max(1, round(seconds)):d} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"about {hours} h" + (f" {minutes} min" if minutes else "")
