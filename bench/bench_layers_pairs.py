"""Issue 19 at the thesis's scale: a pooled, learned filter stack against the tuned plain SVM
on every MNIST digit pair and the two CIFAR-10 pairs (about 2,000 training images each).

    nice -n 10 python bench/bench_layers_pairs.py --stage select   # candidates, validation only
    nice -n 10 python bench/bench_layers_pairs.py --stage run      # chosen per pair, test once
    nice -n 10 python bench/bench_layers_pairs.py --stage ablation # learned vs fixed filters
    nice -n 10 python bench/bench_layers_pairs.py --stage virtual  # plain SVM + virtual SVs
    python bench/bench_layers_pairs.py --report                    # print from the caches

Protocol (declared in docs/protocol_issue19.md before the run stage): data as
docs/fairness.md (``load_pair(..., protocol="thesis")``: train, validation and test splits
of each pair).  The **select** stage scores every candidate of ``CANDIDATES`` on the
validation split of the selection pairs ``SELECT_PAIRS`` only; the two candidates with the
best mean validation accuracy become ``RUN_CANDIDATES``.  The **run** stage fits those on
every pair, keeps the better on that pair's validation split and scores it once on the
pair's test split; it is compared with the tuned plain SVM that bench/bench_fairness.py
cached (same splits, chosen on the same validation split) by an exact McNemar test.
The **ablation** stage (a report: nothing is chosen on it) trains each pair's chosen stack
again (seed 0, deterministic) and solves the same SVM on the same network with fixed
filters instead: its random zero-mean start with each layer rescaled to the learned norm
(the bandwidth the learning reached, without the shapes it learned).
The **virtual** stage (issue 35, declared in docs/protocol_issue19.md before it ran) gives
each MNIST pair's tuned plain SVM virtual support vectors (its support vectors' one-pixel
shifts, the SVM solved again; 4 or 8 shifts chosen on the selection pairs' validation
splits) and compares the stack with it.
Units are cached in ``bench/results/layers_pairs.json`` with the images each model got
right, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._cache import load_cache, pack_correct, save_cache, unpack_correct  # noqa: E402
from bench._data import SHARED  # noqa: E402
from bench.bench_fairness import (  # noqa: E402
    CIFAR_PAIRS,
    CODE,
    MNIST_PAIRS,
    _fit_kcsvm,
    _load_pair,
    _pct,
    _summary_line,
    choose_on_validation,
    compare_units,
)
from bench.bench_fairness import RESULTS as FAIRNESS  # noqa: E402
from csvm.analysis.stats import mcnemar_correct, mcnemar_p  # noqa: E402
from csvm.model.virtual import SHIFT_SETS  # noqa: E402
from csvm.runs.pair_study import (  # noqa: E402
    SELECTION_PAIRS,
    STACK_BASE,
    STACK_CANDIDATES,
    scored,
    summarise,
    virtual_plain_svm,
    virtual_rows,
)

RESULTS = Path(__file__).resolve().parent / "results" / "layers_pairs.json"
SELECT_PAIRS = SELECTION_PAIRS
_BASE = STACK_BASE
#: Screened on the validation split of SELECT_PAIRS (MNIST) by the select stage.
CANDIDATES: dict[str, dict[str, Any]] = {
    "16/g0.1": {"layers": "5x5x16-abs-max2", "gamma": 0.1},
    "16/g0.2": {"layers": "5x5x16-abs-max2", "gamma": 0.2},
    "16/g0.2/30it": {"layers": "5x5x16-abs-max2", "gamma": 0.2, "n_iter": 30},
    "32/g0.2": {"layers": "5x5x32-abs-max2", "gamma": 0.2},
    "8,8/g0.05": {"layers": "5x5x8-abs-max2,3x3x8-abs-max2", "gamma": 0.05},
}
#: CIFAR-10's candidates, chosen per pair on its validation split (data_batch_2) in the
#: run stage; its images are three stacked colour planes (96 x 32) as in the thesis.
CIFAR_CANDIDATES: dict[str, dict[str, Any]] = STACK_CANDIDATES["cifar10"]


#: The virtual stage's two shift sets, chosen between on the selection pairs' validation
#: splits (a tie: the first listed).
VIRTUAL_SHIFTS = {name: SHIFT_SETS[name] for name in ("4", "8")}

_SUMMARY_HEAD = (
    "| model | pairs | mean gain ± sd (points) | median | wins / ties / losses | "
    "ahead / level / behind | sign test p |"
)


def _config(name: str, table: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {**_BASE, **table[name]}


def select(cache: dict[str, Any], path: Path, data_dir: Path) -> None:
    """Every candidate on every selection pair's validation split (no test image read)."""
    for pair in SELECT_PAIRS:
        data = None
        for name in CANDIDATES:
            unit = f"select mnist {pair} {name}"
            if unit in cache:
                continue
            data = data or _load_pair("mnist", pair, data_dir)
            _, info = _fit_kcsvm(data, _config(name, CANDIDATES))
            cache[unit] = {**info, "code": CODE}
            save_cache(path, cache)
            print(f"{unit}: val {100 * info['val_accuracy']:.2f} % ({info['seconds']:.0f} s)")


def run_candidates(cache: dict[str, Any]) -> list[str]:
    """The two candidates with the best mean validation accuracy over SELECT_PAIRS."""
    means = {}
    for name in CANDIDATES:
        vals = [cache.get(f"select mnist {p} {name}") for p in SELECT_PAIRS]
        if all(vals):
            means[name] = float(np.mean([v["val_accuracy"] for v in vals]))
    if len(means) < len(CANDIDATES):
        raise SystemExit("run the select stage first (some candidates have no score)")
    best = sorted(means, key=lambda k: (-means[k], list(CANDIDATES).index(k)))[:2]
    if best != list(STACK_CANDIDATES["mnist"]):  # the library's copy of this choice
        raise SystemExit(f"selection chose {best}; csvm.runs.pair_study has another")
    return best


def run_pair(cache, path, dataset: str, pair: str, data_dir: Path, names, table) -> None:
    """The better candidate on the pair's validation split, scored once on its test split."""
    unit = f"{dataset} {pair} layers"
    if unit in cache:
        return
    data = _load_pair(dataset, pair, data_dir)
    configs = {name: _config(name, table) for name in names}
    cache[unit] = choose_on_validation(data, configs, code=CODE)
    save_cache(path, cache)
    chosen = cache[unit]["chosen"]
    print(f"{unit}: {chosen}, test {100 * cache[unit]['test_accuracy']:.2f} %", flush=True)


def ablation_pair(cache, path, dataset: str, pair: str, data_dir: Path) -> None:
    """The chosen stack against its own random start at the learned norms, on test."""
    from csvm.analysis.ablation import rescale_to_norm
    from csvm.model.kernel_state import HARD_MARGIN_C, solve_state

    unit, chosen = f"{dataset} {pair} layers-ablation", cache.get(f"{dataset} {pair} layers")
    if unit in cache or chosen is None:
        return
    data = _load_pair(dataset, pair, data_dir)
    config = chosen["candidates"][chosen["chosen"]]["config"]
    clf, info = _fit_kcsvm(data, config)
    start, _ = _fit_kcsvm(data, {**config, "n_iter": 1})  # the same draw, one solve
    state = clf.estimators_[0]
    learned_layers, net = state.layer_filters, state.network
    start_layers = net.unpack(start.estimators_[0].theta)
    pairs_of_layers = zip(start_layers, learned_layers, strict=True)
    scaled = [rescale_to_norm(f0, float(np.linalg.norm(f))) for f0, f in pairs_of_layers]
    sign = np.where(data.y_train == clf.classes_[1], 1, -1)
    fixed, _ = solve_state(
        clf._images(data.X_train, reset=False), sign, net.pack(scaled), dict(state.kernel_params),
        HARD_MARGIN_C if config["C"] is None else config["C"], config["regulariser"],
        config["lam"], 1e-3, network=net,
    )  # fmt: skip
    X_test = clf._images(data.X_test, reset=False)
    right_fixed = (fixed.decision_function(X_test) > 0) == (data.y_test == clf.classes_[1])
    right_learned = clf.predict(data.X_test) == data.y_test
    f0, f1 = start_layers[0].ravel(), learned_layers[0].ravel()
    cache[unit] = {
        "learned": pack_correct(right_learned),
        "learned_accuracy": float(right_learned.mean()),
        "fixed_start": pack_correct(right_fixed),
        "fixed_start_accuracy": float(right_fixed.mean()),
        "cosine": float(f0 @ f1 / (np.linalg.norm(f0) * np.linalg.norm(f1))),
        "norms": [float(np.linalg.norm(f)) for f in learned_layers],
        "start_norms": [float(np.linalg.norm(f)) for f in start_layers],
        "n_test": int(len(right_learned)),
        "code": CODE,
    }
    save_cache(path, cache)
    print(
        f"{unit}: learned {100 * right_learned.mean():.2f} %, random start at the learned "
        f"norm {100 * right_fixed.mean():.2f} %, cosine {cache[unit]['cosine']:.3f}",
        flush=True,
    )


def virtual_shifts(cache, path, data_dir: Path, fairness: dict[str, Any]) -> str:
    """4 or 8 shifts, by mean validation accuracy over SELECT_PAIRS (no test image read)."""
    for pair in SELECT_PAIRS:
        data = None
        for name, shifts in VIRTUAL_SHIFTS.items():
            unit = f"select-virtual mnist {pair} {name}"
            if unit in cache:
                continue
            data = data or _load_pair("mnist", pair, data_dir)
            _, info = virtual_plain_svm(data, fairness[f"mnist {pair} plain"]["params"], shifts)
            cache[unit] = {**info, "code": CODE}
            save_cache(path, cache)
            print(f"{unit}: val {100 * info['val_accuracy']:.2f} % ({info['seconds']:.0f} s)")
    means = {
        name: np.mean([cache[f"select-virtual mnist {p} {name}"]["val_accuracy"]
                       for p in SELECT_PAIRS])
        for name in VIRTUAL_SHIFTS
    }  # fmt: skip
    return max(means, key=lambda k: (means[k], -list(VIRTUAL_SHIFTS).index(k)))


def virtual_pair(cache, path, pair: str, data_dir: Path, fairness, name: str) -> None:
    """The pair's tuned plain SVM with virtual support vectors, scored once on test."""
    unit = f"mnist {pair} virtual"
    if unit in cache:
        return
    data = _load_pair("mnist", pair, data_dir)
    params = fairness[f"mnist {pair} plain"]["params"]
    svm, info = virtual_plain_svm(data, params, VIRTUAL_SHIFTS[name], check_first_on_test=True)
    cache[unit] = scored(svm, data, info.pop("seconds"), **info, shift_set=name, code=CODE)
    save_cache(path, cache)
    plain = fairness[f"mnist {pair} plain"]["correct"]
    same = "same" if plain == info["first_correct"] else "NOT the same"
    print(
        f"{unit}: {name} shifts, test {100 * cache[unit]['test_accuracy']:.2f} % (first fit "
        f"{100 * info['first_test_accuracy']:.2f} %, {same} images as fairness.json's)",
        flush=True,
    )


def report(cache: dict[str, Any], fairness: dict[str, Any]) -> str:
    lines = ["## Selection (validation accuracy %, selection pairs)", ""]
    lines += ["| candidate | " + " | ".join(SELECT_PAIRS) + " | mean | fit s (mean) |"]
    lines += ["|---" * (len(SELECT_PAIRS) + 3) + "|"]
    for name in CANDIDATES:
        units = [cache.get(f"select mnist {p} {name}") for p in SELECT_PAIRS]
        if not all(units):
            continue
        vals = [100 * u["val_accuracy"] for u in units]
        secs = np.mean([u["seconds"] for u in units])
        lines.append(
            f"| {name} | " + " | ".join(f"{v:.2f}" for v in vals) + f" | {np.mean(vals):.2f} "
            f"| {secs:.0f} |"
        )
    for dataset, pairs in (("mnist", MNIST_PAIRS), ("cifar10", CIFAR_PAIRS)):
        rows = []
        for pair in pairs:
            plain = fairness.get(f"{dataset} {pair} plain")
            layered = cache.get(f"{dataset} {pair} layers")
            if plain and layered:
                rows.append(compare_units(plain, layered, pair))
        if not rows:
            continue
        lines += ["", f"## {dataset}: chosen stack against the tuned plain SVM (test %)", ""]
        lines += ["| pair | plain SVM (tuned) | stack | chosen | gain | images | p | McNemar |"]
        lines += ["|---|---|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(
                f"| {r['pair']} | {_pct(r['plain']['test_accuracy'], r['n'])} | "
                f"{_pct(r['kcsvm']['test_accuracy'], r['n'])} | {r['kcsvm']['chosen']} | "
                f"{r['gain']:+.2f} | {r['images']:+d} | {r['p']:.3g} | {r['outcome']} |"
            )
        lines += ["", _SUMMARY_HEAD, "|---|---|---|---|---|---|---|"]
        lines.append(_summary_line(rows, "stack"))
        fit = [r["kcsvm"]["seconds"] for r in rows]
        lines.append(f"\nTraining (all candidates of a pair): median {np.median(fit):.0f} s.")
        lines += _ablation_lines(cache, dataset, pairs)
    lines += _virtual_lines(cache, fairness)
    return "\n".join(lines)


def _ablation_lines(cache: dict[str, Any], dataset: str, pairs: list[str]) -> list[str]:
    """Learned filters against the random start at the learned norms, over the pairs."""
    units = [(p, cache[f"{dataset} {p} layers-ablation"]) for p in pairs
             if f"{dataset} {p} layers-ablation" in cache]  # fmt: skip
    if not units:
        return []
    gains, outcomes = [], []
    for _, u in units:
        m = mcnemar_correct(
            unpack_correct(u["learned"], u["n_test"]), unpack_correct(u["fixed_start"], u["n_test"])
        )
        gains.append(m.diff_points)
        outcomes.append(m.outcome)
    gains_a = np.array(gains)
    ahead, behind = int(np.sum(gains_a > 0)), int(np.sum(gains_a < 0))
    return [
        "",
        f"Learned filters against the same network on its random start rescaled to the "
        f"learned norms ({len(units)} pairs): {gains_a.mean():+.2f} ± {gains_a.std():.2f} "
        f"points; McNemar wins / ties / losses {outcomes.count('win')} / "
        f"{outcomes.count('tie')} / {outcomes.count('loss')}; ahead / level / behind "
        f"{ahead} / {len(units) - ahead - behind} / {behind}, sign test p = "
        f"{mcnemar_p(ahead, behind):.2g}; cosine of layer 1 to its start "
        f"{np.mean([u['cosine'] for _, u in units]):.3f}.",
    ]


def _virtual_selection(cache: dict[str, Any]) -> list[str]:
    """The virtual stage's selection table (validation %, selection pairs)."""
    units = {(p, n): cache.get(f"select-virtual mnist {p} {n}")
             for p in SELECT_PAIRS for n in VIRTUAL_SHIFTS}  # fmt: skip
    if not all(units.values()):
        return []
    lines = ["| shifts | " + " | ".join(SELECT_PAIRS) + " | mean |", "|---" * 7 + "|"]
    first = [100 * units[p, "4"]["first_val_accuracy"] for p in SELECT_PAIRS]
    lines.append("| none (first fit) | " + " | ".join(f"{v:.2f}" for v in first) +
                 f" | {np.mean(first):.2f} |")  # fmt: skip
    for name in VIRTUAL_SHIFTS:
        vals = [100 * units[p, name]["val_accuracy"] for p in SELECT_PAIRS]
        lines.append(
            f"| {name} | " + " | ".join(f"{v:.2f}" for v in vals) + f" | {np.mean(vals):.2f} |"
        )
    return lines


def _virtual_lines(cache: dict[str, Any], fairness: dict[str, Any]) -> list[str]:
    """Issue 35's table: tuned plain SVM, plain + virtual SVs, the stack and its random
    start at the learned norms on every MNIST pair, and the stack against plain + VSV."""
    units = {
        p: {"plain": fairness[f"mnist {p} plain"], "virtual": cache[f"mnist {p} virtual"],
            "stack": cache[f"mnist {p} layers"],
            "ablation": cache.get(f"mnist {p} layers-ablation")}
        for p in MNIST_PAIRS
        if f"mnist {p} virtual" in cache and f"mnist {p} layers" in cache
    }  # fmt: skip
    if not units:
        return []
    rows = virtual_rows(units)
    lines = ["", "## mnist: the stack against the plain SVM with virtual support vectors", ""]
    lines += ["Shifts chosen on validation (%):", "", *_virtual_selection(cache), ""]
    lines += [
        "| pair | tuned plain SVM | plain + virtual SVs | stack, learned | stack, random start "
        "at the learned norms | stack − virtual SVs | images | p | McNemar |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        n, start = r["n"], r["fixed_start"]
        lines.append(
            f"| {r['pair']} | {_pct(r['tuned'], n)} | {_pct(r['plain']['test_accuracy'], n)} | "
            f"{_pct(r['kcsvm']['test_accuracy'], n)} | "
            f"{'—' if start is None else f'{100 * start:.2f}'} | {r['gain']:+.2f} | "
            f"{r['images']:+d} | {r['p']:.3g} | {r['outcome']} |"
        )
    off = [r for r in rows if r["pair"] not in SELECT_PAIRS]
    lines += ["", _SUMMARY_HEAD, "|---|---|---|---|---|---|---|"]
    lines.append(_summary_line(rows, "stack vs plain + virtual SVs"))
    if off and len(off) < len(rows):
        lines.append(_summary_line(off, "the same off the selection pairs"))
    lifts = np.array([r["virtual_gain"] for r in rows])
    lines.append(
        f"\nPlain + virtual SVs − tuned plain SVM: {lifts.mean():+.2f} ± {lifts.std():.2f} "
        f"points over {len(rows)} pairs (ahead / level / behind {np.sum(lifts > 0)} / "
        f"{np.sum(lifts == 0)} / {np.sum(lifts < 0)})."
    )
    learning = np.array([r["learning_gain"] for r in rows if r["learning_gain"] is not None])
    if len(learning):
        ahead = int(np.sum(learning > 0))
        lines.append(
            f"Learned − random start at the learned norms: {learning.mean():+.2f} points over "
            f"{len(learning)} pairs, ahead / level / behind {ahead} / "
            f"{int(np.sum(learning == 0))} / {int(np.sum(learning < 0))} (issue 35's target: "
            f"≥ +0.50 on average, ahead on ≥ 30)."
        )
    s = summarise(rows)
    met = s["ahead"] > s["behind"] and s["sign_p"] < 0.05 and s["losses"] == 0
    lines.append(
        f"Verdict (docs/protocol_issue19.md): {'met' if met else 'missed'}: ahead on "
        f"{s['ahead']}, behind on {s['behind']} (McNemar losses {s['losses']}), sign test "
        f"p = {s['sign_p']:.2g}."
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stage", choices=["select", "run", "ablation", "virtual"])
    parser.add_argument("--data-dir", type=Path, default=SHARED)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--pairs", default="all", help="MNIST pairs for the run stage")
    parser.add_argument("--no-cifar", action="store_true")
    parser.add_argument("--report", action="store_true", help="print the cached tables only")
    args = parser.parse_args(argv)
    cache = load_cache(args.results)
    if args.stage == "select":
        select(cache, args.results, args.data_dir)
    elif args.stage == "run":
        names = run_candidates(cache)
        print(f"run candidates (best mean validation on {SELECT_PAIRS}): {names}", flush=True)
        if not args.no_cifar:
            cifar = list(CIFAR_CANDIDATES)
            for pair in CIFAR_PAIRS:
                run_pair(
                    cache, args.results, "cifar10", pair, args.data_dir, cifar, CIFAR_CANDIDATES
                )
        pairs = MNIST_PAIRS if args.pairs == "all" else args.pairs.split(",")
        for pair in pairs:
            run_pair(cache, args.results, "mnist", pair, args.data_dir, names, CANDIDATES)
    elif args.stage == "ablation":
        pairs = MNIST_PAIRS if args.pairs == "all" else args.pairs.split(",")
        for pair in pairs:
            ablation_pair(cache, args.results, "mnist", pair, args.data_dir)
        if not args.no_cifar:
            for pair in CIFAR_PAIRS:
                ablation_pair(cache, args.results, "cifar10", pair, args.data_dir)
    elif args.stage == "virtual":
        fairness = load_cache(FAIRNESS)
        name = virtual_shifts(cache, args.results, args.data_dir, fairness)
        print(f"virtual SVs: {name} shifts (best mean validation on {SELECT_PAIRS})", flush=True)
        pairs = MNIST_PAIRS if args.pairs == "all" else args.pairs.split(",")
        for pair in pairs:
            virtual_pair(cache, args.results, pair, args.data_dir, fairness, name)
    print(report(cache, load_cache(FAIRNESS)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
