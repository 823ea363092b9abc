"""Disk and load time of an uploaded dataset (issue 37, row 4): ``np.savez`` (as it was)
against ``np.savez_compressed`` (:func:`csvm.data.own_images.save_own` now).

    python bench/bench_own_disk.py

Two datasets of 5,000 images, the most an upload may hold: MNIST-5k's grey digits (what
photos of handwriting or shapes look like at 28 × 28) and colour noise (nothing to
compress: the worst case a quota must allow for).  Each load is the mean of 5.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from csvm.data.own_images import OwnImages, load_own, save_own  # noqa: E402
from csvm.data.registry import offline_arrays  # noqa: E402

MB = 2**20


def _cases() -> dict[str, OwnImages]:
    X, y = offline_arrays("mnist-5k")
    X = np.asarray(X, dtype=float).reshape(-1, 1, 28, 28)
    digits = (X * (255 if X.max() <= 1 else 1)).astype(np.uint8)
    noise = np.random.default_rng(0).integers(0, 256, (5000, 3, 28, 28), dtype=np.uint8)
    names = [str(i) for i in range(10)]
    return {
        "MNIST-5k digits, grey, 5,000": OwnImages(digits, np.asarray(y) % 10, names),
        "noise, colour, 5,000 (worst case)": OwnImages(noise, np.arange(5000) % 10, names),
    }


def _mean_seconds(load, repeats: int = 5) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        load()
    return (time.perf_counter() - start) / repeats


def main() -> None:
    print("| dataset | np.savez | savez_compressed | load before | load now |")
    print("|---|---|---|---|---|")
    for label, images in _cases().items():
        with tempfile.TemporaryDirectory() as tmp:
            raw = Path(tmp) / "raw.npz"
            np.savez(raw, X=images.X, y=images.y)
            os.environ["CSVM_OWN_DIR"] = str(Path(tmp) / "own")
            name = save_own(images)
            folder = Path(tmp) / "own" / name
            now = sum(f.stat().st_size for f in folder.iterdir())

            def load_raw(path=raw):
                with np.load(path) as npz:
                    return npz["X"], npz["y"]

            before_s = _mean_seconds(load_raw)
            now_s = _mean_seconds(lambda n=name: load_own(n))
            print(
                f"| {label} | {raw.stat().st_size / MB:.2f} MB | {now / MB:.2f} MB | "
                f"{1000 * before_s:.0f} ms | {1000 * now_s:.0f} ms |"
            )


if __name__ == "__main__":
    main()
