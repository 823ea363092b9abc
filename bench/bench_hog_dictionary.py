"""A patch dictionary beside CIFAR-10's stack (issue 35, addendum 11 of
docs/protocol_learned_hog.md).

    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_hog_dictionary --stage select
    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_hog_dictionary --stage gate

``select`` fits addendum 8's model (the curves' ``hogprod3`` at C 10) on all of each
selection pair's ``data_batch_1`` images (deer v horse, ship v truck); each candidate
appends a :class:`csvm.model.patch_dictionary.PatchDictionary` of K atoms at a weight
(:func:`csvm.model.dictionary_appended.add_dictionary`, or none for "mirror+4"), then adds
addendum 10's virtual support vectors (the mirror and the four axis shifts, plane by
plane), and is scored on addendum 4's 500 validation images.  The most validation images
right over both pairs wins; ties to the earlier candidate.  No test image is read
(``bench/results/hog_dictionary_select.json``).

``gate`` fits "mirror+4" and the chosen candidate on each report pair and scores them on
all of the pair's ``data_batch_2`` images.  Only if the chosen candidate gets at least
72 % of cat v dog's right, and more than "mirror+4", are the test images scored, in the
same run (``bench/results/hog_dictionary_gate.json``).
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
from csvm.analysis.reproduced import pack_correct, unpack_hex_correct  # noqa: E402
from csvm.analysis.stats import mcnemar_correct  # noqa: E402
from csvm.model.dictionary_appended import add_dictionary  # noqa: E402
from csvm.model.patch_dictionary import PatchDictionary  # noqa: E402
from csvm.model.virtual import SHIFTS_4, add_virtual  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
SELECT = [("deer", "horse"), ("ship", "truck")]
#: name -> (atoms, weight), None for no dictionary; in tie-break order.
CANDIDATES: dict[str, tuple[int, float] | None] = {
    "mirror+4": None,
    **{f"d{k}/{w:g}": (k, w) for k in (400, 1600) for w in (0.25, 0.5, 1.0)},
}
GATE_PAIR, GATE_ACCURACY, BASELINE = "cat v dog", 0.72, "mirror+4"
PLANES = 3  # R, G, B stacked into one 96 x 32 image
#: Addendum 8's saved test images, to compare with past the gate.
SAVED = ROOT / "assets" / "runs" / "cifar10-hog-mirror.json"


def _candidate(base, d, name: str):
    """``name`` built on the fitted ``base`` (a deep copy): the dictionary, if any, then
    the mirror and the four axis shifts; and its seconds."""
    start = time.perf_counter()
    clf = copy.deepcopy(base)
    if CANDIDATES[name] is not None:
        atoms, weight = CANDIDATES[name]
        clf = add_dictionary(clf, d.X_train, d.y_train, PatchDictionary(n_atoms=atoms),
                             weight=weight, planes=PLANES)  # fmt: skip
    clf = add_virtual(clf, d.X_train, d.y_train, SHIFTS_4, mirror=True, planes=PLANES)
    return clf, time.perf_counter() - start


def select() -> dict:
    return _gated.select(_candidate, SELECT, CANDIDATES, RESULTS / "hog_dictionary_select.json")


def _test_line(pair: str, models: dict, chosen: str) -> dict:
    """Past the gate only: the test images each model gets right, and the chosen model
    against "mirror+4" and addendum 8's saved models."""
    d = colour.data(*pair.split(" v "), "stacked")
    test = {k: m.predict(d.X_test) == d.y_test for k, m in models.items()}
    saved = next(r for r in json.loads(SAVED.read_text())["details"]["test_images"]
                 if r["pair"] == pair)  # fmt: skip
    others = {k: unpack_hex_correct(v, len(d.y_test)) for k, v in saved["correct"].items()}
    others[BASELINE] = test[BASELINE]
    against = {}
    for key in (BASELINE, "mirror", "hog_mirror", "hog"):
        m = mcnemar_correct(test[chosen], others[key])
        against[key] = {"points": m.diff_points, "only_chosen": m.b, "only_other": m.c,
                        "p": m.p_value}  # fmt: skip
    return {"test": {k: {"accuracy": float(v.mean()), "correct": pack_correct(v)}
                     for k, v in test.items()}, "chosen_against": against}  # fmt: skip


def gate() -> dict:
    chosen = json.loads((RESULTS / "hog_dictionary_select.json").read_text())["chosen"]
    if chosen == BASELINE:
        raise SystemExit("Addendum 11: 'mirror+4' won the selection; nothing more is run.")
    return _gated.gate(_candidate, colour.REPORT, chosen, BASELINE, (GATE_PAIR, GATE_ACCURACY),
                       _test_line, RESULTS / "hog_dictionary_gate.json")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    _gated.main(__doc__.splitlines()[0], select, gate, argv)


if __name__ == "__main__":
    main()
