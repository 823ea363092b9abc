"""Issue 35's ten-class MNIST: a small look at moment normalisation, validation only.

    python bench/bench_mnist10_moment_look.py deskew mn20 mn22 mn24 mn20sq mn22sq
    python bench/bench_mnist10_moment_look.py --dictionary deskew mn22
    python bench/bench_mnist10_moment_look.py --ensemble deskew mn22 mn20sq

Liu, Nakashima, Sako and Fujisawa (2003) deskew each digit and rescale it so the box of
four standard deviations of its ink fills a fixed size (the longer side; the shorter one
scaled by sqrt(sin(pi/2 * aspect))).  This look fits candidate E of
docs/protocol_mnist10_996.md on the screen split's first 1,000 training images, prepared
each way, and scores the first 2,000 validation images (first fit, γ × 1, no virtual
support vectors); ``--dictionary`` then appends a 400-atom patch dictionary (weight 0.5);
``--ensemble`` then sums the fits' one-vs-one decisions (votes plus confidence) for every
combination of two or more preparations.
The test set is never read.  Results: docs/protocol_mnist10_996.md ("A look at moment
normalisation, not pursued") and docs/benchmarks.md.
"""

from __future__ import annotations

import copy
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._data import SHARED  # noqa: E402
from csvm.data.moment import moment_normalise  # noqa: E402

PREPARATIONS = {
    "deskew": None,
    "mn20": (20.0, True),
    "mn22": (22.0, True),
    "mn24": (24.0, True),
    "mn20sq": (20.0, False),
    "mn22sq": (22.0, False),
}


def main(argv: list[str]) -> int:
    from csvm.analysis.mnist10_996 import candidate_estimator
    from csvm.data import load_multiclass
    from csvm.data.deskew import deskew
    from csvm.model.dictionary_appended import add_dictionary
    from csvm.model.patch_dictionary import PatchDictionary
    from csvm.model.virtual import SHIFT_SETS, refit_virtual, shift_images

    dictionary, ensemble = "--dictionary" in argv, "--ensemble" in argv
    tta, virtual = "--tta" in argv, "--virtual" in argv
    names = [a for a in argv if not a.startswith("--")] or list(PREPARATIONS)
    decisions = {}
    d = load_multiclass("mnist", protocol=None, data_dir=SHARED, n_train=10000)
    X, y, Xv, yv = d.X_train[:1000], d.y_train[:1000], d.X_val[:2000], d.y_val[:2000]
    for name in names:
        how = PREPARATIONS[name]

        def prepare(Z, how=how):
            return deskew(Z) if how is None else moment_normalise(Z, *how)

        A, B = prepare(X), prepare(Xv)
        t = time.perf_counter()
        clf = candidate_estimator("E", A.shape[1:], multi_class="ovo", n_jobs=2, random_state=0)
        clf.fit(A, y)
        decisions[name] = clf.decision_function(B)
        right = int((clf.classes_[decisions[name].argmax(1)] == yv).sum())
        print(f"{name}: {right} of {len(yv)} ({time.perf_counter() - t:.0f} s)", flush=True)
        if virtual:
            t = time.perf_counter()
            clf = refit_virtual(clf, A, SHIFT_SETS["16"], n_jobs=2)
            decisions[name] = clf.decision_function(B)
            right = int((clf.classes_[decisions[name].argmax(1)] == yv).sum())
            print(f"  virtual 16: {right} ({time.perf_counter() - t:.0f} s)", flush=True)
        for shifts_name in ("4", "8") if tta else ():
            summed = decisions[name] + sum(
                clf.decision_function(shift_images(B, dy, dx)) for dy, dx in SHIFT_SETS[shifts_name]
            )
            right = int((clf.classes_[summed.argmax(1)] == yv).sum())
            print(f"  test-time shifts {shifts_name}: {right} of {len(yv)}", flush=True)
        if dictionary:
            t = time.perf_counter()
            atoms = PatchDictionary(n_atoms=400)
            both = add_dictionary(copy.deepcopy(clf), A, y, atoms, weight=0.5, n_jobs=2)
            right = int((both.predict(B) == yv).sum())
            print(f"  + 400 atoms: {right} ({time.perf_counter() - t:.0f} s)", flush=True)
    for k in range(2, len(names) + 1) if ensemble else ():
        for group in itertools.combinations(names, k):
            summed = sum(decisions[g] for g in group)
            right = int((np.unique(y)[summed.argmax(1)] == yv).sum())
            print(f"{' + '.join(group)}: {right} of {len(yv)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
