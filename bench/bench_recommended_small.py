"""``csvm.recommended`` on images smaller than HOG's blocks: the report of
docs/protocol_small_images.md, run once on the built-in 8 × 8 digits' test images.

    python bench/bench_recommended_small.py            # test images (the report)
    python bench/bench_recommended_small.py --val      # validation images (the selection)

Candidate (a), HOG + RBF SVM as recommended up to 15,000 images of 16 px or more, against
(b), the plain RBF SVM that ``csvm.recommended`` now returns for images under 16 px, at
50, 200 and all 1,257 training images; each with McNemar's exact test on the same images.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from csvm import HOGSVC, recommended  # noqa: E402
from csvm.analysis.stats import describe_difference, mcnemar_exact  # noqa: E402
from csvm.data import load_multiclass  # noqa: E402
from csvm.model.recommend import SMALL_N  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--val", action="store_true", help="score the validation images")
    args = parser.parse_args()
    d = load_multiclass("digits")
    X, y = (d.X_val, d.y_val) if args.val else (d.X_test, d.y_test)
    where = "validation" if args.val else "test"
    print(f"built-in digits, 8 x 8, seed 0: scored on {len(y)} {where} images")
    for n in (50, 200, len(d.y_train)):
        hog = HOGSVC(image_shape=(8, 8), hog_kernel="rbf", product=False)
        hog.set_params(C=10.0 if n <= SMALL_N else 1.0)
        plain = recommended(n, (8, 8))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pred_hog = hog.fit(d.X_train[:n], d.y_train[:n]).predict(X)
            pred_plain = plain.fit(d.X_train[:n], d.y_train[:n]).predict(X)
        acc_hog = 100 * (pred_hog == y).mean()
        acc_plain = 100 * (pred_plain == y).mean()
        test = mcnemar_exact(y, pred_plain, pred_hog)
        print(
            f"{n:5d} images: (a) HOG + RBF SVM {acc_hog:.2f} %, (b) plain RBF SVM "
            f"{acc_plain:.2f} %; {describe_difference('(b)', '(a)', test)}"
        )


if __name__ == "__main__":
    main()
