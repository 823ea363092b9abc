"""One model family against the validation-tuned plain SVM on many pairs (thesis protocol).

The study behind docs/fairness.md and docs/layers.md, as a library: per pair, the plain SVM
is the better on validation of an RBF SVM tuned over C and γ and a polynomial SVM tuned over
C and the degree (:func:`tuned_plain_svm`, 50 fits); the model is the better on validation of
a few configurations (:func:`choose_on_validation`); each is scored once on the pair's test
split, and the two are compared by an exact McNemar test on the same test images
(:func:`compare_units`).  Every unit keeps the test images it got right (packed bits), so
the tests can be recomputed from a saved file.

``python -m csvm reproduce mnist45-stack|cifar10-stack`` runs :func:`run_stack_study` with
the stack chosen in docs/protocol_issue19.md (:data:`STACK_CANDIDATES`).
"""

from __future__ import annotations

import itertools
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from csvm.analysis.reproduced import pack_correct, unpack_correct
from csvm.analysis.stats import format_p, mcnemar_correct, mcnemar_p
from csvm.exceptions import DivergenceError

__all__ = [
    "CIFAR_PAIRS",
    "MNIST_PAIRS",
    "MNIST_VIRTUAL_SHIFTS",
    "STACK_BASE",
    "STACK_CANDIDATES",
    "choose_on_validation",
    "compare_units",
    "fit_scored",
    "load_thesis_pair",
    "run_stack_study",
    "scored",
    "stack_configs",
    "study_record",
    "summarise",
    "tuned_plain_svm",
    "virtual_plain_svm",
    "virtual_rows",
]

MNIST_PAIRS = [f"{a}-{b}" for a, b in itertools.combinations(range(10), 2)]
CIFAR_PAIRS = ["airplane-automobile", "cat-dog"]

#: What every stack candidate shares (docs/protocol_issue19.md).
STACK_BASE: dict[str, Any] = {
    "kernel": "rbf",
    "regulariser": "dfo2",
    "lam": 0.1,
    "eta": 0.1,
    "step": "relative",
    "C": None,
    "filter_init": "zero-mean",
    "seed": 0,
    "n_iter": 15,
}
#: Per dataset, the candidates each pair chooses between on its own validation split.
#: MNIST's are the two best mean validation accuracies of five candidates on the selection
#: pairs 3-5, 4-9, 7-9, 2-7 and 3-8 (``bench/bench_layers_pairs.py --stage select``);
#: CIFAR-10's were declared before any CIFAR-10 stack was trained.
STACK_CANDIDATES: dict[str, dict[str, dict[str, Any]]] = {
    "mnist": {
        "16/g0.2/30it": {"layers": "5x5x16-abs-max2", "gamma": 0.2, "n_iter": 30},
        "32/g0.2": {"layers": "5x5x32-abs-max2", "gamma": 0.2},
    },
    "cifar10": {
        "16/g0.05": {"layers": "5x5x16-abs-max2", "gamma": 0.05},
        "16/g0.2": {"layers": "5x5x16-abs-max2", "gamma": 0.2},
    },
}

#: The shifts of the MNIST study's plain SVM + virtual support vectors (issue 35): 4 or 8
#: one-pixel shifts (``csvm.model.virtual.SHIFT_SETS``), chosen on the selection
#: pairs' validation splits (``bench/bench_layers_pairs.py --stage virtual``).
MNIST_VIRTUAL_SHIFTS = "8"

Log = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def load_thesis_pair(dataset: str, pair: str, data_dir=None):
    """The pair ``"a-b"`` of ``dataset`` with the thesis's train / validation / test splits."""
    from csvm.data import load_pair

    a, b = pair.split("-")
    return load_pair(dataset, a, b, protocol="thesis", data_dir=data_dir)


def scored(clf, data, seconds: float, **extra) -> dict[str, Any]:
    """A fitted model's unit: its test accuracy and the test images it got right (bits)."""
    correct = clf.predict(data.X_test) == data.y_test
    return {
        "test_accuracy": float(correct.mean()),
        "n_test": int(len(correct)),
        "correct": pack_correct(correct),
        "seconds": round(seconds, 2),
        **extra,
    }


def tuned_plain_svm(data) -> dict[str, Any]:
    """The better of a tuned RBF and a tuned polynomial SVM, by validation accuracy."""
    from csvm.analysis.tuning import tune_plain_svm

    start = time.perf_counter()
    tuned = {}
    for kernel in ("rbf", "poly"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unconverged fits are flagged in the grid
            tuned[kernel] = tune_plain_svm(
                data.X_train, data.y_train, data.X_val, data.y_val, kernel=kernel
            )
    best = max(tuned.values(), key=lambda r: r.val_accuracy)  # ties: RBF, listed first
    return scored(
        best.estimator,
        data,
        time.perf_counter() - start,
        params=best.params,
        val_accuracy=best.val_accuracy,
        n_fits=sum(r.n_fits for r in tuned.values()),
        unconverged=sum(not c["converged"] for r in tuned.values() for c in r.grid),
        family_val={k: r.val_accuracy for k, r in tuned.items()},
        family_params={k: r.params for k, r in tuned.items()},
    )


def virtual_plain_svm(
    data,
    params: dict[str, Any],
    shifts: Iterable[tuple[int, int]],
    check_first_on_test: bool = False,
) -> tuple[Any, dict[str, Any]]:
    """The tuned plain SVM (``params``' kernel, γ and C) on the training split, then its
    support vectors' shifted copies added and the SVM solved again (virtual support vectors).

    The plain SVM is :func:`csvm.analysis.mnist10.plain_svm` (a K-CSVM whose fixed 1x1
    filter of weight 1 leaves the images as they are) so that
    :func:`csvm.model.virtual.refit_virtual` applies unchanged; no deskewing.

    Parameters
    ----------
    data : PairData
        A pair's splits (:func:`load_thesis_pair`); the test split only for the check.
    params : dict
        ``kernel``, ``gamma`` and ``C`` of the tuned plain SVM (a fairness unit's params;
        a polynomial's ``degree`` and ``coef0`` too).
    shifts : iterable of (int, int)
        The one-pixel moves, e.g. :data:`csvm.model.virtual.SHIFTS_4`.
    check_first_on_test : bool
        Also keep the test images the first fit (before the virtual support vectors) got
        right, ``first_correct``: a check that it is the plain SVM it stands for.

    Returns
    -------
    estimator : KernelCSVM
        Solved again with the virtual support vectors; score it with :func:`scored`.
    info : dict
        Validation accuracy before and after the virtual support vectors, the support
        vector counts, the shifts and the seconds.
    """
    from csvm.analysis.mnist10 import plain_svm
    from csvm.model.virtual import refit_virtual

    shifts = [(int(dy), int(dx)) for dy, dx in shifts]
    keys = ("kernel", "gamma", "C") + (("degree", "coef0") if params["kernel"] == "poly" else ())
    config = {k: params[k] for k in keys}
    start = time.perf_counter()
    svm = plain_svm(config, 1, data.image_shape)
    svm.set_params(**{k: config[k] for k in keys[3:]})  # a polynomial's degree and coef0
    svm.fit(data.X_train, data.y_train)
    first_val = float(np.mean(svm.predict(data.X_val) == data.y_val))
    first_support = int(np.sum(svm.n_support_))
    check = {}
    if check_first_on_test:
        right = svm.predict(data.X_test) == data.y_test
        check = {"first_test_accuracy": float(right.mean()), "first_correct": pack_correct(right)}
    refit_virtual(svm, data.X_train, shifts)
    return svm, {
        **check,
        "seconds": round(time.perf_counter() - start, 2),
        "val_accuracy": float(np.mean(svm.predict(data.X_val) == data.y_val)),
        "first_val_accuracy": first_val,
        "n_support_first": first_support,
        "n_support": int(np.sum(svm.n_support_)),
        "shifts": [list(s) for s in shifts],
        "params": config,
    }


def fit_scored(data, config: dict[str, Any]):
    """A RunConfig's estimator fitted on the training split and scored on validation.

    Returns the estimator and its record (seconds, validation accuracy, iterations, the
    filter norm at the start and end, and the cause if the fit diverged: the best state is
    kept and still predicts).
    """
    from csvm.runs.config import RunConfig

    clf = RunConfig(**config).build_estimator(data.image_shape)
    start = time.perf_counter()
    diverged = None
    try:
        clf.fit(data.X_train, data.y_train)
    except DivergenceError as exc:
        diverged = exc.cause
    history = clf.history_
    info = {
        "seconds": round(time.perf_counter() - start, 2),
        "val_accuracy": float(np.mean(clf.predict(data.X_val) == data.y_val)),
        "diverged": diverged,
        "iterations": len(history),
        "norm_start": history[0]["filter_norm"] if history else None,
        "norm_end": history[-1]["filter_norm"] if history else None,
    }
    return clf, info


def choose_on_validation(
    data, configs: dict[str, dict[str, Any]], log: Log = _quiet, **extra
) -> dict[str, Any]:
    """Every configuration fitted and scored on the validation split; the best (ties: the
    first listed) scored once on the test split, as a unit with ``extra``."""
    tried, fitted = {}, {}
    for name, config in configs.items():
        fitted[name], tried[name] = fit_scored(data, config)
        tried[name]["config"] = config
        log(
            f"    {name:9s} val {100 * tried[name]['val_accuracy']:.2f} % "
            f"({tried[name]['seconds']:.0f} s)"
        )
    chosen = max(tried, key=lambda k: tried[k]["val_accuracy"])  # ties: the first listed
    return scored(
        fitted[chosen],
        data,
        sum(t["seconds"] for t in tried.values()),
        chosen=chosen,
        val_accuracy=tried[chosen]["val_accuracy"],
        candidates=tried,
        **extra,
    )


def compare_units(plain: dict[str, Any], model: dict[str, Any], pair: str) -> dict[str, Any]:
    """A model's unit against the plain SVM's on the same test images: the gain in points
    and images, McNemar's p and the outcome (win / tie / loss at p < 0.05)."""
    n = plain["n_test"]
    m = mcnemar_correct(unpack_correct(model["correct"], n), unpack_correct(plain["correct"], n))
    return {
        "pair": pair,
        "plain": plain,
        "kcsvm": model,
        "gain": m.diff_points,
        "images": m.diff_images,
        "p": m.p_value,
        "outcome": m.outcome,
        "n": n,
    }


def virtual_rows(units: dict[str, dict[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per pair, the stack against the plain SVM with virtual support vectors (issue 35).

    Parameters
    ----------
    units : dict
        Pair -> ``{"plain": …, "virtual": …, "stack": …}`` units (test accuracy and the
        packed test images each got right), optionally ``"ablation"``: the stack's
        ablation unit (``learned`` and ``fixed_start`` packed, ``n_test``).

    Returns
    -------
    list of dict
        :func:`compare_units` of the stack against plain + virtual SVs (``gain``,
        ``images``, ``p``, ``outcome``; :func:`summarise` reads them), with ``tuned``: the
        plain SVM's test accuracy, ``virtual_gain``: plain + virtual SVs − plain in points,
        and, with an ablation, ``fixed_start``: its accuracy and ``learning_gain``: learned
        − random start at the learned norms in points (``None`` without one).
    """
    rows = []
    for pair, unit in units.items():
        row = compare_units(unit["virtual"], unit["stack"], pair)
        n, plain = row["n"], unit["plain"]
        if plain["n_test"] != n or unit["stack"]["n_test"] != n:
            raise ValueError(f"{pair}: the units were scored on different test sets")
        virtual_vs_plain = mcnemar_correct(
            unpack_correct(unit["virtual"]["correct"], n), unpack_correct(plain["correct"], n)
        )
        row.update(tuned=plain["test_accuracy"], virtual_gain=virtual_vs_plain.diff_points)
        ablation = unit.get("ablation")
        row["fixed_start"] = row["learning_gain"] = None
        if ablation is not None:
            learned = unpack_correct(ablation["learned"], n)
            fixed = unpack_correct(ablation["fixed_start"], n)
            row["fixed_start"] = float(fixed.mean())
            row["learning_gain"] = mcnemar_correct(learned, fixed).diff_points
        rows.append(row)
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Over pairs (rows of :func:`compare_units`): mean and sd of the gain in points, the
    median, McNemar wins / ties / losses, raw ahead / level / behind, and the sign test's p
    over the pairs that are not level (the same binomial tail as McNemar's)."""
    gains = np.array([r["gain"] for r in rows])
    wins = sum(r["outcome"] == "win" for r in rows)
    losses = sum(r["outcome"] == "loss" for r in rows)
    ahead, behind = int(np.sum(gains > 0)), int(np.sum(gains < 0))
    return {
        "pairs": len(rows),
        "mean": float(gains.mean()),
        "sd": float(gains.std()),
        "median": float(np.median(gains)),
        "wins": wins,
        "ties": len(rows) - wins - losses,
        "losses": losses,
        "ahead": ahead,
        "level": len(rows) - ahead - behind,
        "behind": behind,
        "sign_p": mcnemar_p(ahead, behind),
    }


def stack_configs(dataset: str) -> dict[str, dict[str, Any]]:
    """The full RunConfig fields of each of ``dataset``'s stack candidates."""
    return {name: {**STACK_BASE, **c} for name, c in STACK_CANDIDATES[dataset].items()}


def run_stack_study(
    dataset: str, pairs: Iterable[str] | None = None, data_dir=None, log: Log = print
) -> list[dict[str, Any]]:
    """Per pair: the tuned plain SVM and the stack chosen on validation, each tested once
    and compared (rows of :func:`compare_units`, with the pair's split sizes)."""
    if pairs is None:
        pairs = MNIST_PAIRS if dataset == "mnist" else CIFAR_PAIRS
    rows = []
    for pair in pairs:
        data = load_thesis_pair(dataset, pair, data_dir)
        log(f"{dataset} {pair}: train {len(data.y_train)}, test {len(data.y_test)}")
        plain = tuned_plain_svm(data)
        log(f"    plain SVM val {100 * plain['val_accuracy']:.2f} % ({plain['seconds']:.0f} s)")
        stack = choose_on_validation(data, stack_configs(dataset), log=log)
        row = compare_units(plain, stack, pair)
        row["n_train"] = len(data.y_train)
        rows.append(row)
        log(
            f"  {pair}: plain {100 * plain['test_accuracy']:.2f} %, stack "
            f"{100 * stack['test_accuracy']:.2f} % ({stack['chosen']}), "
            f"{row['gain']:+.2f} points, p {format_p(row['p'])}"
        )
        if dataset == "mnist":  # CIFAR-10's stacked colour planes do not shift
            row["virtual"] = _virtual_unit(data, plain, stack, pair)
            log(f"  {pair}: plain + virtual SVs {100 * row['virtual']['test_accuracy']:.2f} %")
    return rows


def _virtual_unit(data, plain: dict[str, Any], stack: dict[str, Any], pair: str):
    """The tuned plain SVM with virtual support vectors, scored, and the stack against it."""
    from csvm.model.virtual import SHIFT_SETS

    shifts = SHIFT_SETS[MNIST_VIRTUAL_SHIFTS]
    svm, info = virtual_plain_svm(data, plain["params"], shifts)
    unit = scored(svm, data, info.pop("seconds"), **info)
    versus = compare_units(unit, stack, pair)
    return {**unit, **{f"stack_{k}": versus[k] for k in ("gain", "images", "p", "outcome")}}


#: The thesis's published figures for the pairs it reports (table 4.4; MNIST's pairs other
#: than 3 v 5 are not in the thesis).
_THESIS_PAIRS = {"airplane-automobile": {"plain": "85.05", "stack": "85.56 ± 0.02"}}
#: The pairs whose validation splits chose the MNIST candidates (docs/protocol_issue19.md):
#: figures "off the selection pairs" leave them out.
SELECTION_PAIRS = ["3-5", "4-9", "7-9", "2-7", "3-8"]


def _summary_line(label: str, rows: list[dict[str, Any]]) -> str:
    s = summarise(rows)
    return (
        f"- {label} ({s['pairs']} pairs): {s['mean']:+.2f} ± {s['sd']:.2f} points (median "
        f"{s['median']:+.2f}); McNemar p < 0.05 wins / ties / losses {s['wins']} / {s['ties']} "
        f"/ {s['losses']}; ahead / level / behind {s['ahead']} / {s['level']} / {s['behind']}, "
        f"sign test p {format_p(s['sign_p'])}"
    )


def _pair_detail(row: dict[str, Any]) -> dict[str, Any]:
    plain, stack = row["plain"], row["kcsvm"]
    keep = ("test_accuracy", "val_accuracy", "seconds", "correct")
    return {
        "pair": row["pair"],
        "n_train": row["n_train"],
        "n_test": row["n"],
        "plain": {**{k: plain[k] for k in keep}, "params": plain["params"]},
        "stack": {
            **{k: stack[k] for k in keep},
            "chosen": stack["chosen"],
            "candidates_val": {k: c["val_accuracy"] for k, c in stack["candidates"].items()},
        },
        "gain": row["gain"],
        "images": row["images"],
        "p": row["p"],
        "outcome": row["outcome"],
        **({"virtual": _virtual_detail(row["virtual"])} if "virtual" in row else {}),
    }


def _virtual_detail(unit: dict[str, Any]) -> dict[str, Any]:
    keep = ("test_accuracy", "val_accuracy", "seconds", "correct", "shifts", "params")
    stack = ("stack_gain", "stack_images", "stack_p", "stack_outcome")
    return {k: unit[k] for k in keep + stack}


def _plain_label(params: dict[str, Any]) -> str:
    C = "hard margin" if params["C"] is None else f"C {params['C']:.2g}"
    if params["kernel"] == "rbf":
        return f"RBF γ {params['gamma']:.3g}, {C}"
    return f"poly d {params['degree']}, {C}"


def _add_virtual(rows: list[dict[str, Any]], models: list, mcnemar: list[str]) -> None:
    """The MNIST study's plain SVM + virtual support vectors: its model row (the mean over
    the pairs) and the stack's McNemar lines against it."""
    from csvm.analysis.reproduced import model_entry

    units = [r["virtual"] for r in rows]
    name = f"plain SVM + virtual SVs ({MNIST_VIRTUAL_SHIFTS} one-pixel shifts, solved again)"
    models.append(
        model_entry(
            f"mean of {len(rows)} pairs: {name}",
            [float(np.mean([u["test_accuracy"] for u in units]))],
            float(np.mean([u["seconds"] for u in units])),
            None,
            settings="the tuned plain SVM's kernel and C per pair (details)",
            config={"estimator": "tuned plain SVM", "virtual_shifts": units[0]["shifts"]},
        )
    )
    versus = [
        {"pair": r["pair"], **{k: r["virtual"][f"stack_{k}"] for k in ("gain", "outcome")}}
        for r in rows
    ]
    mcnemar.append(_summary_line("stack vs plain SVM + virtual SVs", versus))
    off = [v for v in versus if v["pair"] not in SELECTION_PAIRS]
    if off and len(off) < len(versus):
        mcnemar.append(_summary_line("the same off the five selection pairs", off))


def study_record(dataset: str, rows: list[dict[str, Any]]) -> tuple[list[str], list, dict]:
    """A stack study as a saved run: the printed lines, the model rows (per CIFAR-10 pair;
    MNIST's: the mean over its pairs) and the extra fields (every pair with the test images
    each model got right, and the McNemar lines)."""
    from csvm.analysis.reproduced import model_entry

    plain_name = "plain SVM, RBF or poly tuned on the pair's validation split (50 fits)"
    stack_name = "learned stack, " + " or ".join(STACK_CANDIDATES[dataset]) + " on validation"
    configs = stack_configs(dataset)
    models, mcnemar = [], []
    groups = [(r["pair"].replace("-", " v "), [r]) for r in rows]
    if dataset == "mnist":
        groups = [(f"mean of {len(rows)} pairs", rows)]
    for label, group in groups:
        published = _THESIS_PAIRS.get(group[0]["pair"], {}) if len(group) == 1 else {}
        for key, name, settings in (
            ("plain", plain_name, ", ".join(_plain_label(r["plain"]["params"]) for r in group)),
            ("kcsvm", stack_name, ", ".join(r["kcsvm"]["chosen"] for r in group)),
        ):
            units = [r[key] for r in group]
            models.append(
                model_entry(
                    f"{label}: {name}",
                    [float(np.mean([u["test_accuracy"] for u in units]))],
                    float(np.mean([u["seconds"] for u in units])),
                    published.get("plain" if key == "plain" else "stack"),
                    source="Sugg 2018, table 4.4",
                    settings=settings if len(group) == 1 else "chosen per pair (details)",
                    config=configs if key == "kcsvm" else {"estimator": "tuned plain SVM"},
                )
            )
    if dataset == "mnist":
        mcnemar.append(_summary_line("stack vs tuned SVM", rows))
        off = [r for r in rows if r["pair"] not in SELECTION_PAIRS]
        if off and len(off) < len(rows):
            mcnemar.append(_summary_line("off the five selection pairs", off))
        if all("virtual" in r for r in rows):
            _add_virtual(rows, models, mcnemar)
    else:
        mcnemar += [
            f"- {r['pair']}: {r['gain']:+.2f} points ({r['images']:+d} images), "
            f"p {format_p(r['p'])}"
            f" ({r['outcome']})"
            for r in rows
        ]
    lines = [f"{len(rows)} {dataset} pairs, thesis protocol", *mcnemar]
    extra = {
        "data": {
            "source": f"{dataset}, thesis protocol per pair",
            "n_train": int(sum(r["n_train"] for r in rows)),
            "n_test": int(sum(r["n"] for r in rows)),
        },
        "details": {"mcnemar": mcnemar, "pairs": [_pair_detail(r) for r in rows]},
    }
    return lines, models, extra
