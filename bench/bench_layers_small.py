"""Does pooling or a second layer make the learned filter matter at classroom scale?

    nice -n 10 python bench/bench_layers_small.py --stage select     # validation only
    nice -n 10 python bench/bench_layers_small.py --stage report --pick NAME

The protocol is declared in docs/protocol_issue19.md (before any of these numbers were
seen): candidates are compared on the **selection** pairs (3v5, 4v9, 7v9, 1v7, 2v3), seeds
0-9, 50 training and 100 validation images drawn from the pair's 60,000 MNIST training
images; the chosen one is scored once on the **report** pairs (0v6, 2v8, 5v6, 1v8, 3v9),
seeds 100-109, on the pair's images of the MNIST test set.

The draws, the scores and their summary are csvm.runs.classroom_study's (which
``python -m csvm reproduce classroom-stack`` runs for the two report models).  For every
draw and candidate we train the K-CSVM and score, on the same images:

* ``learned``: the trained model;
* ``fixed``: the same network and SVM on its random start, each layer's filters rescaled
  to the learned layer's norm (scaling acts like a change of γ, not a learned shape);
  for one plain layer also a Gaussian blur and a delta at the learned norm, and the best of
  the fixed filters is taken (the comparison most favourable to fixed filters);
* ``plain``: the plain SVM with the same kernel, γ and C on raw pixels;
* ``cosine``: the cosine of the learned layer-1 filters to their start.

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
from csvm.runs.classroom_study import (  # noqa: E402
    REPORT_MODELS,
    REPORT_PAIRS,
    REPORT_SEEDS,
    SELECT_PAIRS,
    SELECT_SEEDS,
    draw_pair,
    score_draw,
    summarise_draws,
)

RESULTS = Path(__file__).resolve().parent / "results" / "layers_small.json"

#: name -> (layers, gamma, eta, n_iter, zero-mean layer-1 start)
CANDIDATES = {
    "classroom (1 layer 5x5x2)": REPORT_MODELS["classroom (1 layer 5x5x2)"],
    "5x5x2-abs-avg2": ("5x5x2-abs-avg2", 0.05, 0.1, 10, False),
    "5x5x2-abs-avg2 zero-mean": ("5x5x2-abs-avg2", 0.05, 0.1, 10, True),
    "5x5x4-abs-avg2 zero-mean": ("5x5x4-abs-avg2", 0.05, 0.1, 10, True),
    "5x5x4-abs-avg2 zero-mean g0.2": ("5x5x4-abs-avg2", 0.2, 0.1, 10, True),
    "5x5x4-abs-avg2 zero-mean eta0.3": ("5x5x4-abs-avg2", 0.05, 0.3, 10, True),
    "5x5x4-relu-max2 zero-mean": ("5x5x4-relu-max2", 0.05, 0.1, 10, True),
    "5x5x4-abs-avg2,3x3x4-abs-avg2 zero-mean": (
        "5x5x4-abs-avg2,3x3x4-abs-avg2",
        0.1,
        0.1,
        10,
        True,
    ),
    "5x5x4-abs-avg2,3x3x4-abs-avg2 zero-mean g0.5": (
        "5x5x4-abs-avg2,3x3x4-abs-avg2",
        0.5,
        0.1,
        10,
        True,
    ),
}

# The second round (after the first showed the two-layer stack ahead of its fixed filters):
# stacks x gamma x iterations, every one zero-mean at layer 1, all on the selection draws.
for _stack in (
    "5x5x4-abs-avg2,3x3x4-abs-avg2",
    "5x5x4-abs-avg2,3x3x8-abs-avg2",
    "5x5x8-abs-avg2,3x3x8-abs-avg2",
    "3x3x4-abs-avg2,3x3x4-abs-avg2",
    "5x5x4-abs-max2,3x3x4-abs-avg2",
):
    for _gamma in (0.05, 0.1, 0.2):
        CANDIDATES[f"{_stack} zm g{_gamma}"] = (_stack, _gamma, 0.1, 10, True)

# The third round, around the best of the second (layer 1 max-pooled), still on validation:
# more steps or larger steps (a shape that moves further), more filters, the rectifier.
_BEST = "5x5x4-abs-max2,3x3x4-abs-avg2"
CANDIDATES.update(
    {
        f"{_BEST} zm g0.05 it15": (_BEST, 0.05, 0.1, 15, True),
        f"{_BEST} zm g0.05 eta0.15": (_BEST, 0.05, 0.15, 10, True),
        f"{_BEST} zm g0.05 eta0.2": (_BEST, 0.05, 0.2, 10, True),
        f"{_BEST} zm g0.02": (_BEST, 0.02, 0.1, 10, True),
        "5x5x8-abs-max2,3x3x8-abs-avg2 zm g0.05": (
            "5x5x8-abs-max2,3x3x8-abs-avg2",
            0.05,
            0.1,
            10,
            True,
        ),
        "5x5x4-relu-max2,3x3x4-abs-avg2 zm g0.05": (
            "5x5x4-relu-max2,3x3x4-abs-avg2",
            0.05,
            0.1,
            10,
            True,
        ),
        "5x5x4-abs-max2,3x3x4-abs-max2 zm g0.05": (
            "5x5x4-abs-max2,3x3x4-abs-max2",
            0.05,
            0.1,
            10,
            True,
        ),
        "5x5x4-abs-max2,3x3x8-abs-avg2 zm g0.05": (
            "5x5x4-abs-max2,3x3x8-abs-avg2",
            0.05,
            0.1,
            10,
            True,
        ),
        "5x5x4-abs-max2 zm g0.05": ("5x5x4-abs-max2", 0.05, 0.1, 10, True),
    }
)

# The fourth round: max pooling in both layers won the third; steps that move the shape
# further (more iterations, a larger eta), and the one-layer max-pooled model likewise.
_MAX2 = "5x5x4-abs-max2,3x3x4-abs-max2"
CANDIDATES.update(
    {
        f"{_MAX2} zm g0.05 it15": (_MAX2, 0.05, 0.1, 15, True),
        f"{_MAX2} zm g0.05 it20": (_MAX2, 0.05, 0.1, 20, True),
        f"{_MAX2} zm g0.05 eta0.15": (_MAX2, 0.05, 0.15, 10, True),
        f"{_MAX2} zm g0.1": (_MAX2, 0.1, 0.1, 10, True),
        f"{_MAX2} zm g0.1 it15": (_MAX2, 0.1, 0.1, 15, True),
        "5x5x4-abs-max2 zm g0.05 it15": ("5x5x4-abs-max2", 0.05, 0.1, 15, True),
        # chosen by this round; the report's model (csvm.runs.classroom_study)
        "5x5x8-abs-max2,3x3x8-abs-max2 zm g0.05 it15": REPORT_MODELS[
            "5x5x8-abs-max2,3x3x8-abs-max2 zm g0.05 it15"
        ],
    }
)

# The fifth round (issue 19 items 3 and 5, after the report of the chosen stack): its first
# filters and its regulariser, every other setting as chosen; validation draws only.
_CHOSEN = "5x5x8-abs-max2,3x3x8-abs-max2"
CANDIDATES.update(
    {
        f"{_CHOSEN} {init} g0.05 it15": (_CHOSEN, 0.05, 0.1, 15, init)
        for init in ("uniform", "gabor", "gaussian")
    }
)
CANDIDATES.update(
    {
        f"{_CHOSEN} zm g0.05 it15 {reg} lam{lam}": (
            _CHOSEN,
            0.05,
            0.1,
            15,
            True,
            {"regulariser": reg, "lam": lam},
        )
        for reg, lam in (("none", 0.0), ("l2sq", 0.1), ("dfo1", 0.1), ("dfo2", 1.0))
    }
)


def _load():
    return load_mnist10(str(SHARED))


def run_one(data, cand, a, b, seed, report):
    return score_draw(CANDIDATES[cand], *draw_pair(data, a, b, seed, report), seed)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stage", choices=["select", "report"], default="select")
    parser.add_argument("--pick", action="append", default=None)
    args = parser.parse_args()
    data = _load()
    report = args.stage == "report"
    pairs, seeds = (REPORT_PAIRS, REPORT_SEEDS) if report else (SELECT_PAIRS, SELECT_SEEDS)
    names = args.pick or list(CANDIDATES)
    cache = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    for name in names:
        rows = []
        for a, b in pairs:
            for seed in seeds:
                key = f"{args.stage}|{name}|{a}v{b}|{seed}"
                if key not in cache:
                    cache[key] = run_one(data, name, a, b, seed, report)
                    RESULTS.parent.mkdir(exist_ok=True)
                    RESULTS.write_text(json.dumps(cache))
                if cache[key] is not None:
                    rows.append(cache[key])
        s = summarise_draws(rows)
        print(
            f"{args.stage:6} {name:45} n={s['n']:3} acc {s['learned']:.2f}  "
            f"learned-bestfixed {s['minus_best_fixed']:+.2f} ({s['sign_test']})  "
            f"over plain {s['over_plain']:+.2f} (γ 0.02: {s['over_plain_g002']:+.2f})  "
            f"cos {s['cosine']:.3f}  {s['seconds']:.2f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
