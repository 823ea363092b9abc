"""One-pixel shifts within each colour plane for CIFAR-10's stack beside HOG (issue 35,
addendum 10 of docs/protocol_learned_hog.md).

    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_hog_planes --stage select
    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_hog_planes --stage gate

``select`` fits addendum 8's model (the curves' ``hogprod3`` at C 10) on all of each
selection pair's ``data_batch_1`` images (deer v horse, ship v truck) and scores three
sets of virtual support vectors on addendum 4's 500 validation images: the mirror only,
the mirror and the two horizontal one-pixel shifts, the mirror and the four axis shifts
moved plane by plane (:func:`csvm.model.virtual.shift_images` with ``planes=3``).  The
most validation images right over both pairs wins; ties to the earlier candidate.  No
test image is read (``bench/results/hog_planes_select.json``).

``gate`` fits "mirror" and the chosen candidate on each report pair and scores them on all
of the pair's ``data_batch_2`` images.  Only if the chosen candidate gets at least 72 % of
cat v dog's right, and more than "mirror", are the test images scored, in the same run
(``bench/results/hog_planes_gate.json``).
"""

from __future__ import annotations

import copy
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench import _gated  # noqa: E402
from bench import bench_colour_hog as colour  # noqa: E402
from csvm.analysis.reproduced import pack_correct  # noqa: E402
from csvm.analysis.stats import mcnemar_correct  # noqa: E402
from csvm.model.virtual import SHIFTS_4, add_virtual  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
SELECT = [("deer", "horse"), ("ship", "truck")]
#: name -> the one-pixel shifts beside the mirror, in tie-break order.
CANDIDATES = {"mirror": (), "mirror+2": ((0, -1), (0, 1)), "mirror+4": SHIFTS_4}
GATE_PAIR, GATE_ACCURACY = "cat v dog", 0.72
PLANES = 3  # R, G, B stacked into one 96 x 32 image


def _virtual(base, d, name: str):
    start = time.perf_counter()
    clf = add_virtual(copy.deepcopy(base), d.X_train, d.y_train, CANDIDATES[name],
                      mirror=True, planes=PLANES)  # fmt: skip
    return clf, time.perf_counter() - start


def select() -> dict:
    return _gated.select(_virtual, SELECT, CANDIDATES, RESULTS / "hog_planes_select.json")


def _test_line(pair: str, models: dict, chosen: str) -> dict:
    """Past the gate only: the test images each model gets right, chosen against mirror."""
    d = colour.data(*pair.split(" v "), "stacked")
    test = {k: m.predict(d.X_test) == d.y_test for k, m in models.items()}
    m = mcnemar_correct(test[chosen], test["mirror"])
    return {"test": {k: {"accuracy": float(v.mean()), "correct": pack_correct(v)}
                     for k, v in test.items()},
            "chosen_minus_mirror": {"points": m.diff_points, "only_chosen": m.b,
                                    "only_mirror": m.c, "p": m.p_value}}  # fmt: skip


def gate() -> dict:
    chosen = json.loads((RESULTS / "hog_planes_select.json").read_text())["chosen"]
    if chosen == "mirror":
        raise SystemExit("Addendum 10: 'mirror' won the selection; addendum 8 stands.")
    return _gated.gate(_virtual, colour.REPORT, chosen, "mirror", (GATE_PAIR, GATE_ACCURACY),
                       _test_line, RESULTS / "hog_planes_gate.json")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    _gated.main(__doc__.splitlines()[0], select, gate, argv)


if __name__ == "__main__":
    main()
