"""What does the learned filter buy?  K-CSVM against a validation-tuned plain SVM, every
MNIST digit pair (thesis protocol) and two CIFAR-10 pairs, with McNemar tests.

    nice -n 15 python bench/bench_fairness.py                      # run what is missing, print
    nice -n 15 python bench/bench_fairness.py --filters 1          # only one filter
    python bench/bench_fairness.py --report                        # print from the cache only

Both sides choose their settings on the validation split only:

* plain SVM: the better on validation of an RBF SVM tuned over C and γ and a polynomial SVM
  tuned over C and the degree (csvm.analysis.tuning, 25 fits each: 50 SVM fits);
* K-CSVM: the better on validation of a few configurations (``MNIST_CANDIDATES``,
  ``CIFAR_CANDIDATES``; 15–25 iterations each, Armijo steps).  With more than one filter the
  configuration chosen for one filter on that pair is reused.

The test split is scored once per chosen model.  Each unit of work (a pair's plain SVM, a
pair's K-CSVM at one filter count) is cached in ``bench/results/fairness.json`` as soon as
it finishes, with the test images each model got right (packed bits), so an interrupted run
resumes where it stopped and the tables (and McNemar tests) are computed from the cache.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._cache import load_cache, save_cache  # noqa: E402
from bench._data import SHARED  # noqa: E402
from csvm.analysis.stats import mcnemar_p, wilson_interval  # noqa: E402
from csvm.runs.pair_study import (  # noqa: E402
    CIFAR_PAIRS,
    MNIST_PAIRS,
    compare_units,
    fit_scored,
    load_thesis_pair,
    summarise,
    tuned_plain_svm,
)
from csvm.runs.pair_study import choose_on_validation as _choose  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "fairness.json"
#: A 9-pair subset for shorter runs (--multi-pairs / --ablation-pairs): the thesis's 3 v 5
#: and eight more, from the easiest to the hardest kinds of pair.
SUBSET_PAIRS = ["3-5", "4-9", "7-9", "2-7", "3-8", "5-8", "1-7", "0-6", "2-3"]

_COMMON = {"filter_size": 5, "seed": 0, "C": None, "C_last_only": False, "momentum": 0.0}
MNIST_CANDIDATES: dict[str, dict[str, Any]] = {
    # Thesis table 4.1's kernel and regulariser, with Armijo steps (the constant eta = 0.1
    # diverges with several filters).
    "poly2": {
        "kernel": "poly",
        "degree": 2,
        "gamma": 1.0,
        "coef0": 1.0,
        "regulariser": "dfo1",
        "lam": 0.01,
        "eta": 0.1,
        "step": "armijo",
    },
    "rbf0.01": {
        "kernel": "rbf",
        "gamma": 0.01,
        "regulariser": "dfo2",
        "lam": 0.1,
        "eta": 1.0,
        "step": "armijo",
    },
    "rbf0.03": {
        "kernel": "rbf",
        "gamma": 0.03,
        "regulariser": "dfo2",
        "lam": 0.1,
        "eta": 1.0,
        "step": "armijo",
    },
}
CIFAR_CANDIDATES: dict[str, dict[str, Any]] = {
    # Table 4.4's recipe as `python -m csvm reproduce table4.4` runs it.
    "table4.4": {
        "kernel": "poly",
        "degree": 3,
        "gamma": 1.0,
        "coef0": 1.0,
        "regulariser": "dfo2",
        "lam": 0.1,
        "eta": 1e4,
        "step": "armijo",
        "C": 1e-11,
        "C_last_only": True,
        "n_iter": 25,
    },
    # An RBF K-CSVM at the tuned plain RBF SVM's gamma and C (filled in per pair).
    "rbf@plain": {"kernel": "rbf", "regulariser": "dfo2", "lam": 0.1, "eta": 1.0, "step": "armijo"},
}


# -- the cache ----------------------------------------------------------------------------
def _code_version() -> str | None:
    """The commit the run used, recorded with every cached unit."""
    import subprocess

    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


CODE = _code_version()


# -- one pair (csvm.runs.pair_study: the same study as a library) -------------------------
def _load_pair(dataset: str, pair: str, data_dir: Path):
    return load_thesis_pair(dataset, pair, data_dir)


def plain_svm(data) -> dict[str, Any]:
    """The better of a tuned RBF and a tuned polynomial SVM, by validation accuracy."""
    return tuned_plain_svm(data)


def _fit_kcsvm(data, config: dict[str, Any]):
    return fit_scored(data, config)


def kcsvm(data, candidates: dict[str, dict[str, Any]], n_filters: int, n_iter: int):
    """Every candidate scored on validation; the best one scored on test."""
    configs = {
        name: {**_COMMON, "n_iter": n_iter, **overrides, "n_filters": n_filters}
        for name, overrides in candidates.items()
    }
    return choose_on_validation(data, configs)


def choose_on_validation(data, configs: dict[str, dict[str, Any]], **extra) -> dict[str, Any]:
    """csvm.runs.pair_study.choose_on_validation, printing each candidate's score."""
    return _choose(data, configs, log=lambda line: print(line, flush=True), **extra)


def run_pair(cache, path, dataset, pair, filters, data_dir, n_iter) -> None:
    data = None
    plain_key = f"{dataset} {pair} plain"
    # k > 1 reuses the configuration chosen with one filter, so that always comes first.
    for unit in [plain_key] + [f"{dataset} {pair} k={k}" for k in sorted({1, *filters})]:
        if unit in cache:
            continue
        if data is None:
            data = _load_pair(dataset, pair, data_dir)
        print(f"{unit} ...", flush=True)
        if unit == plain_key:
            cache[unit] = plain_svm(data)
        else:
            k = int(unit.rsplit("=", 1)[1])
            cache[unit] = kcsvm(data, _candidates(cache, dataset, pair, k), k, n_iter)
        cache[unit]["code"] = CODE
        save_cache(path, cache, indent=1)
        print(
            f"  test {100 * cache[unit]['test_accuracy']:.2f} % ({cache[unit]['seconds']:.0f} s)",
            flush=True,
        )


def run_ablation_unit(cache, path, pair: str, data_dir: Path) -> None:
    """The chosen one-filter K-CSVM again (seed 0, deterministic), then csvm.analysis.ablation."""
    from csvm.runs.ablation import run_ablation

    unit = f"mnist {pair} ablation"
    if unit in cache or f"mnist {pair} k=1" not in cache:
        return
    print(f"{unit} ...", flush=True)
    chosen = cache[f"mnist {pair} k=1"]
    config = chosen["candidates"][chosen["chosen"]]["config"]
    data = _load_pair("mnist", pair, data_dir)
    start = time.perf_counter()
    clf, _ = _fit_kcsvm(data, config)
    a, b = pair.split("-")
    full = {
        **config,
        "dataset": "mnist",
        "class_a": a,
        "class_b": b,
        "protocol": "thesis",
        "n_train": None,
    }
    out = run_ablation(lambda event: None, full, clf.filters_[0], None, data_dir=str(data_dir))
    cache[unit] = {
        "seconds": round(time.perf_counter() - start, 2),
        "chosen": chosen["chosen"],
        "learned_norm": out["learned_norm"],
        "start_norm": out["start_norm"],
        "rows": [{k: v for k, v in row.items() if k != "filters"} for row in out["rows"]],
        "code": CODE,
    }
    save_cache(path, cache, indent=1)


def _candidates(cache, dataset: str, pair: str, k: int) -> dict[str, dict[str, Any]]:
    if dataset == "cifar10":
        plain = cache[f"{dataset} {pair} plain"]["family_params"]["rbf"]
        out = {name: dict(c) for name, c in CIFAR_CANDIDATES.items()}
        out["rbf@plain"].update(gamma=plain["gamma"], C=plain["C"])
        return out
    if k == 1:
        return MNIST_CANDIDATES
    chosen = cache[f"{dataset} {pair} k=1"]["chosen"]
    return {chosen: MNIST_CANDIDATES[chosen]}


# -- the tables ---------------------------------------------------------------------------
def _compare(cache, dataset, pair, k) -> dict[str, Any] | None:
    plain, kc = cache.get(f"{dataset} {pair} plain"), cache.get(f"{dataset} {pair} k={k}")
    if plain is None or kc is None:
        return None
    return compare_units(plain, kc, pair)


def _pct(acc: float, n: int) -> str:
    lo, hi = wilson_interval(int(round(acc * n)), n)
    return f"{100 * acc:.2f} ({100 * lo:.1f}–{100 * hi:.1f})"


def _plain_label(params: dict[str, Any]) -> str:
    C = "hard" if params["C"] is None else f"{params['C']:.2g}"
    if params["kernel"] == "rbf":
        return f"RBF γ {params['gamma']:.3g}, C {C}"
    return f"poly d {params['degree']}, C {C}"


def _summary_line(rows: list[dict[str, Any]], label: str) -> str:
    m = summarise(rows)
    return (
        f"| {label} | {m['pairs']} | {m['mean']:+.2f} ± {m['sd']:.2f} | {m['median']:+.2f} | "
        f"{m['wins']} / {m['ties']} / {m['losses']} | {m['ahead']} / {m['level']} / "
        f"{m['behind']} | {m['sign_p']:.2g} |"
    )


def report(cache: dict[str, Any], filters: list[int], multi_pairs: list[str]) -> str:
    lines = ["## Every MNIST pair, one filter", ""]
    lines += [
        "| pair | plain SVM (tuned) | its settings | K-CSVM | chosen | gain (points) | "
        "images | p | McNemar |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    rows1 = [r for p in MNIST_PAIRS if (r := _compare(cache, "mnist", p, 1))]
    for r in rows1:
        lines.append(
            f"| {r['pair']} | {_pct(r['plain']['test_accuracy'], r['n'])} | "
            f"{_plain_label(r['plain']['params'])} | {_pct(r['kcsvm']['test_accuracy'], r['n'])} "
            f"| {r['kcsvm']['chosen']} | {r['gain']:+.2f} | {r['images']:+d} | {r['p']:.3g} | "
            f"{r['outcome']} |"
        )
    head = [
        "| filters | pairs | mean gain ± sd (points) | median | wins / ties / losses "
        "(McNemar p < 0.05) | ahead / level / behind (raw) | sign test p |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += ["", "## Summary", ""] + head
    if rows1:
        lines.append(_summary_line(rows1, "1"))
    for k in filters:
        rows = [r for p in multi_pairs if (r := _compare(cache, "mnist", p, k))]
        if rows:
            lines.append(_summary_line(rows, str(k)))
    chosen = [cache[f"mnist {p} k=1"]["chosen"] for p in MNIST_PAIRS if f"mnist {p} k=1" in cache]
    if chosen:
        counts = {name: chosen.count(name) for name in MNIST_CANDIDATES}
        lines += [
            "",
            "K-CSVM configuration chosen on validation (one filter): "
            + ", ".join(f"{k} {v}" for k, v in counts.items()),
        ]
    cifar = [r for p in CIFAR_PAIRS if (r := _compare(cache, "cifar10", p, 1))]
    if cifar:
        lines += ["", "## CIFAR-10, one filter", ""]
        lines += [
            "| pair | plain SVM (tuned) | its settings | K-CSVM | chosen | gain | images | p |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in cifar:
            lines.append(
                f"| {r['pair']} | {_pct(r['plain']['test_accuracy'], r['n'])} | "
                f"{_plain_label(r['plain']['params'])} | "
                f"{_pct(r['kcsvm']['test_accuracy'], r['n'])} | {r['kcsvm']['chosen']} | "
                f"{r['gain']:+.2f} | {r['images']:+d} | {r['p']:.3g} |"
            )
    seconds = [v["seconds"] for v in cache.values()]
    lines += ["", f"Cached units: {len(cache)}, {sum(seconds) / 60:.0f} min of training in all."]
    return "\n".join(lines)


def ablation_report(cache: dict[str, Any]) -> str:
    units = [
        (p, cache[f"mnist {p} ablation"]) for p in MNIST_PAIRS if f"mnist {p} ablation" in cache
    ]
    if not units:
        return ""
    names = ["start", "delta", "gaussian", "learned_at_start_norm"]
    lines = [
        "",
        "## Ablation: the same kernel and SVM on fixed filters (one filter, test %, "
        "difference to the learned filter in points, McNemar p)",
        "",
        "| pair | K-CSVM | norm start → learned | learned | random start @ learned norm | "
        "delta @ learned norm | Gaussian @ learned norm | learned shape @ start norm |",
        "|---|---|---|---|---|---|---|---|",
    ]
    labels = {
        "start": "random start @ learned norm",
        "delta": "delta @ learned norm",
        "gaussian": "Gaussian @ learned norm",
        "learned_at_start_norm": "learned shape @ start norm",
    }
    for pair, unit in units:
        rows = {r["name"]: r for r in unit["rows"]}
        cells = []
        for name in names:
            r, m = rows[name], rows[name]["mcnemar"]
            cells.append(
                f"{100 * r['test_accuracy']:.2f} ({m['diff_points']:+.2f}, p {m['p_value']:.2g})"
            )
        lines.append(
            f"| {pair} | {unit['chosen']} | {unit['start_norm']:.3g} → {unit['learned_norm']:.3g} "
            f"| {100 * rows['learned']['test_accuracy']:.2f} | " + " | ".join(cells) + " |"
        )
    lines += [
        "",
        "Each fixed filter against the learned one over the pairs: mean difference in points, "
        "pairs where it is significantly worse / better (McNemar p < 0.05), raw behind / "
        "level / ahead, and the sign test over pairs.",
        "",
        "| fixed filter | pairs | mean difference | worse / better (p < 0.05) | "
        "behind / level / ahead | sign test p |",
        "|---|---|---|---|---|---|",
    ]
    for name in names:
        ms = [{r["name"]: r for r in u["rows"]}[name]["mcnemar"] for _, u in units]
        diffs = np.array([m["diff_points"] for m in ms])
        worse_n = sum(m["p_value"] < 0.05 and m["diff_images"] < 0 for m in ms)
        better_n = sum(m["p_value"] < 0.05 and m["diff_images"] > 0 for m in ms)
        behind, ahead = int(np.sum(diffs < 0)), int(np.sum(diffs > 0))
        lines.append(
            f"| {labels[name]} | {len(ms)} | {diffs.mean():+.3f} | {worse_n} / {better_n} | "
            f"{behind} / {len(ms) - behind - ahead} / {ahead} | {mcnemar_p(behind, ahead):.2g} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=SHARED)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--filters", default="1,2,4,8")
    parser.add_argument("--pairs", default="all", help="MNIST pairs for one filter, e.g. 3-5,4-9")
    parser.add_argument(
        "--multi-pairs",
        default="all",
        help="MNIST pairs that also run with more than one filter (all, or e.g. 3-5,4-9)",
    )
    parser.add_argument(
        "--ablation-pairs",
        default="all",
        help="MNIST pairs whose one-filter K-CSVM gets the fixed-filter ablation",
    )
    parser.add_argument("--n-iter", type=int, default=15)
    parser.add_argument("--no-cifar", action="store_true")
    parser.add_argument("--report", action="store_true", help="print the cached tables only")
    args = parser.parse_args(argv)
    filters = [int(k) for k in args.filters.split(",")]
    pairs = MNIST_PAIRS if args.pairs == "all" else args.pairs.split(",")
    multi, ablation = (
        MNIST_PAIRS if text == "all" else [p for p in text.split(",") if p]
        for text in (args.multi_pairs, args.ablation_pairs)
    )
    cache = load_cache(args.results)
    if not args.report:
        for pair in pairs:
            run_pair(cache, args.results, "mnist", pair, [1], args.data_dir, args.n_iter)
        if not args.no_cifar:
            for pair in CIFAR_PAIRS:
                run_pair(cache, args.results, "cifar10", pair, [1], args.data_dir, args.n_iter)
        for pair in multi:
            run_pair(cache, args.results, "mnist", pair, filters, args.data_dir, args.n_iter)
        for pair in ablation:
            run_pair(cache, args.results, "mnist", pair, [1], args.data_dir, args.n_iter)
            run_ablation_unit(cache, args.results, pair, args.data_dir)
    print(report(cache, [k for k in filters if k > 1], multi))
    print(ablation_report(cache))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
