"""The saved learning curves' comparisons, each test image counted once.

    python bench/bench_curve_by_image.py                 # every pair of methods
    python bench/bench_curve_by_image.py --changed       # only verdicts that change

The seeds of a curve share its test images.  Until 2026-11-28 the curves' McNemar test
pooled the seeds' discordant counts as if they were independent trials, which makes p
too small; ``csvm.analysis.curves`` now uses ``mcnemar_by_image_p`` (each test image one
unit).  This prints both p-values for every pair of methods at every size of every saved
curve (``assets/runs/curve_*.json``), and the verdict at p < 0.05 by each: no model is
trained, nothing is selected.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from csvm.analysis.curves import METHODS, pairwise  # noqa: E402
from csvm.analysis.reproduced import unpack_hex_correct  # noqa: E402
from csvm.analysis.stats import format_p, mcnemar_p  # noqa: E402


def pooled_p(cells: list[dict], a: str, b: str, n: int) -> float:
    """The old test: the seeds' discordant counts added as independent trials."""
    index = {(c["method"], c["n_train"], c["seed"]): c for c in cells}
    won = lost = 0
    for m, k, s in index:
        if m == a and k == n and (b, n, s) in index:
            x = unpack_hex_correct(index[(a, n, s)]["correct"], index[(a, n, s)]["n_test"])
            y = unpack_hex_correct(index[(b, n, s)]["correct"], index[(b, n, s)]["n_test"])
            won, lost = won + int(np.sum(x & ~y)), lost + int(np.sum(~x & y))
    return mcnemar_p(won, lost)


def verdict(difference: float, p: float) -> str:
    return "level" if p >= 0.05 else "ahead" if difference > 0 else "behind"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changed", action="store_true", help="only changed verdicts")
    args = parser.parse_args()
    changed = total = 0
    for path in sorted((ROOT / "assets" / "runs").glob("curve_*.json")):
        cells = json.loads(path.read_text())["cells"]
        methods = [m for m in METHODS if any(c["method"] == m for c in cells)]
        print(f"\n{path.name}")
        print("| a | b | images | a − b (points) | pooled p | by image p | verdict |")
        print("|---|---|---|---|---|---|---|")
        for a in methods:
            for b in (m for m in methods if m != a):
                for r in pairwise(cells, a, b):
                    old = pooled_p(cells, a, b, r["n_train"])
                    before, after = (
                        verdict(r["difference"], old),
                        verdict(r["difference"], r["mcnemar_p"]),
                    )
                    total += 1
                    changed += before != after
                    if args.changed and before == after:
                        continue
                    move = after if before == after else f"**{before} → {after}**"
                    print(
                        f"| {a} | {b} | {r['n_train']:,} | {100 * r['difference']:+.2f} | "
                        f"{format_p(old, cell=True)} | "
                        f"{format_p(r['mcnemar_p'], cell=True)} | {move} |"
                    )
    print(f"\n{changed} of {total} verdicts change (each pair of methods counted both ways).")


if __name__ == "__main__":
    main()
