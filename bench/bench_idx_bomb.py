"""Benchmark the IDX reader against a gzip bomb: seconds and peak memory to refuse it.

    python bench/bench_idx_bomb.py [--gib 1] [--naive]

Builds, in a temporary folder, ``train-images-idx3-ubyte.gz``: a valid IDX header for
60000×28×28 (47,040,000 bytes promised) followed by ``--gib`` GiB of zeros, as repeated
gzip members (about 1 MB of file per GiB).  Then, in a fresh interpreter, reads it with
``csvm.data.idx.read_idx`` and prints the wall time, the peak RSS and the RSS before
the read (the interpreter with csvm imported).

``--naive`` reads it instead the way the loader did before the header bounded the read
(``gzip.open(...).read()`` of the whole stream, then the size check), to show what the
bound saves.  It needs about 2.2 GB per GiB of bomb: mind the machine.
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import gzip, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from csvm.data.idx import read_idx
from csvm.exceptions import DatasetError

def naive(path):
    with gzip.open(path, "rb") as fh:
        data = fh.read()
    if len(data) - 16 != 60000 * 28 * 28:
        raise DatasetError(f"{path} is too long: {len(data) - 16} bytes of data")

path = Path(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
start = time.perf_counter()
try:
    naive(path) if sys.argv[2] == "naive" else read_idx(path, 3, item_shape=(28, 28))
    outcome = "accepted (!)"
except DatasetError as exc:
    outcome = "refused: " + str(exc).split(": ", 1)[-1][:90]
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{seconds:.2f}\t{peak:.0f}\t{before:.0f}\t{outcome}")
"""


def build_bomb(path: Path, gib: int) -> None:
    """A 60000×28×28 IDX header, then ``gib`` GiB of zeros, as concatenated gzip members."""
    header = bytes([0, 0, 8, 3]) + b"".join(s.to_bytes(4, "big") for s in (60000, 28, 28))
    zeros = gzip.compress(bytes(64 << 20), compresslevel=9, mtime=0)
    with open(path, "wb") as fh:
        fh.write(gzip.compress(header, mtime=0))
        for _ in range(16 * gib):
            fh.write(zeros)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=int, default=1, help="GiB of zeros after the header")
    parser.add_argument("--naive", action="store_true", help="read the whole stream first")
    args = parser.parse_args()
    mode = "naive" if args.naive else "bounded"
    with tempfile.TemporaryDirectory() as tmp:
        bomb = Path(tmp) / "train-images-idx3-ubyte.gz"
        build_bomb(bomb, args.gib)
        run = subprocess.run(
            [sys.executable, "-c", CHILD, str(bomb), mode, str(ROOT)],
            capture_output=True,
            text=True,
            check=True,
        )
        size_mb = bomb.stat().st_size / 1e6
    seconds, peak, before, outcome = run.stdout.strip().split("\t")
    print(f"bomb: {size_mb:.2f} MB file, {args.gib} GiB of zeros after a 60000x28x28 header")
    print(f"reader: {mode}")
    print(f"time to error: {seconds} s")
    print(
        f"peak RSS: {peak} MB (before the read: {before} MB, so the read added "
        f"{int(peak) - int(before)} MB)"
    )
    print(f"outcome: {outcome}")


if __name__ == "__main__":
    main()
