"""Issue 35's Classroom stack target: a HOG-like stack on 50 images against the best fixed
filter at its norms, a plain SVM with γ and C by repeated 5-fold CV, and the one-layer preset.

    export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
    nice -n 10 python -m bench.bench_classroom_stack --stage select
    nice -n 10 python -m bench.bench_classroom_stack --stage report --pick NAME

The protocol is declared in docs/protocol_classroom_stack.md (before any of these numbers
were seen): candidates (csvm.runs.classroom_stack_study.CANDIDATES, and round 2's below)
are compared on issue 19's selection pairs (3v5, 4v9, 7v9, 1v7, 2v3), seeds 0-9, 100
validation images each; the chosen one, the current stack preset and the one-layer preset
are scored once on the report pairs (0v6, 2v8, 5v6, 1v8, 3v9) with fresh seeds 300-309, on
the pairs' MNIST test images.  Every draw lands in bench/results/classroom_stack.json.

Needs the full MNIST files of ``../shared/data/mnist`` (see its README).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._data import SHARED  # noqa: E402
from csvm.analysis.mnist10 import load_mnist10  # noqa: E402
from csvm.runs.classroom_stack_study import (  # noqa: E402
    CANDIDATES,
    ONE_LAYER,
    REPORT_PAIRS,
    REPORT_SEEDS,
    STACK_PRESET,
    describe,
    score_draw,
    summarise,
)
from csvm.runs.classroom_study import SELECT_PAIRS, SELECT_SEEDS, draw_pair  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "classroom_stack.json"

#: Every model the bench can score: the candidates, and the two presets as references.
MODELS = {**CANDIDATES, "ref: current stack preset": STACK_PRESET}


def _references(cache, draw, stage, pair, seed) -> tuple[float | None, float]:
    """The one-layer preset's and the CV plain SVM's accuracies on a draw (once, cached)."""
    from csvm.runs.classroom_stack_study import _accuracy, _fit, plain_cv

    key = f"{stage}|ref: one-layer preset|{pair}|{seed}"
    if key not in cache:
        fitted = _fit(ONE_LAYER, draw[0], draw[1], seed)
        cache[key] = _accuracy(fitted[1].decision_function(draw[2]), draw[3]) if fitted else None
    plain_key = f"{stage}|ref: plain CV|{pair}|{seed}"
    if plain_key not in cache:
        cache[plain_key] = plain_cv(*draw, seed)
    return cache[key], cache[plain_key]


def run(names, stage: str, cache: dict, save) -> dict[str, dict]:
    """Score every named model on the stage's draws; their summaries by name."""
    data = load_mnist10(str(SHARED))
    report = stage == "report"
    pairs, seeds = (REPORT_PAIRS, REPORT_SEEDS) if report else (SELECT_PAIRS, SELECT_SEEDS)
    out = {}
    for name in names:
        rows = []
        for a, b in pairs:
            for seed in seeds:
                key = f"{stage}|{name}|{a}v{b}|{seed}"
                if key not in cache:
                    draw = draw_pair(data, a, b, seed, report)
                    one, plain = _references(cache, draw, stage, f"{a}v{b}", seed)
                    cache[key] = score_draw(MODELS[name], *draw, seed, one, plain)
                    save(cache)
                if cache[key] is not None:
                    rows.append({**cache[key], "pair": f"{a}v{b}"})
        out[name] = summarise(rows)
        print(describe(name, out[name]), flush=True)
        if report:
            for pair, p in out[name]["per_pair"].items():
                fw, fl, fp = p["sign_fixed"]
                print(
                    f"    {pair}: {p['learned']:.2f} %  -bestfixed {p['minus_best_fixed']:+.2f} "
                    f"({fw}+/{fl}- p {fp:.3g})  -plainCV {p['over_plain_cv']:+.2f}  "
                    f"-1layer {p['over_one_layer']:+.2f}",
                    flush=True,
                )
    return out


def choose(summaries: dict[str, dict]) -> str:
    """The protocol's rule: eligible (T1-T3 and fit <= 3 s) by validation accuracy, else
    the best by (targets met, pairs ahead of the best fixed filter, validation accuracy)."""
    cands = {n: s for n, s in summaries.items() if n in CANDIDATES}
    eligible = {n: s for n, s in cands.items() if s["met"] == 3 and s["seconds"] <= 3.0}
    if eligible:
        return max(eligible, key=lambda n: eligible[n]["learned"])
    return max(cands, key=lambda n: (cands[n]["met"], cands[n]["pairs_ahead"], cands[n]["learned"]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stage", choices=["select", "report"], default="select")
    parser.add_argument("--pick", action="append", default=None)
    args = parser.parse_args()
    cache = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}

    def save(c):
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(c))

    names = args.pick or list(MODELS)
    summaries = run(names, args.stage, cache, save)
    save(cache)
    if args.stage == "select" and args.pick is None:
        print(f"chosen by the rule: {choose(summaries)}")


if __name__ == "__main__":
    main()
