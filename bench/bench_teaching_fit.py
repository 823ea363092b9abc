"""The teaching preset's fit time: the Train page's K-CSVM on its own split (issue 33's
"≤ 5 s" for the teaching set at 100 training images).

    python bench/bench_teaching_fit.py [--repeats 5] [--pair cross,corner]

Fits the preset "Shapes: filters find the bars" (csvm/runs/presets.json) on the built-in
teaching set's split (or another pair of its shapes, ``--pair``), ``--repeats`` times,
and prints each fit's wall-clock seconds, the CPU seconds this process spent on it (all
its threads: on a loaded machine the nearer figure to a free core's), the test accuracy
and the load average before and after: the wall-clock figure depends on what else runs
on the machine, so read it beside the load.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from csvm.runs.config import parse  # noqa: E402
from csvm.runs.presets import load_presets  # noqa: E402
from csvm.runs.targets import load_data  # noqa: E402

PRESET = "Shapes: filters find the bars"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pair", default="", help="two shapes, e.g. cross,corner")
    args = parser.parse_args()
    preset = next(p for p in load_presets() if p["name"] == PRESET)
    config, problems = parse(preset["config"])
    assert not problems, problems
    if args.pair:
        a, b = args.pair.split(",")
        config = config.replace(class_a=a, class_b=b)
    data = load_data(config)
    pair = f" --pair {args.pair}" if args.pair else ""
    print(f"python bench/bench_teaching_fit.py --repeats {args.repeats}{pair}")
    print(
        f"{PRESET} on {config.class_a} v {config.class_b}: {len(data.y_train)} training "
        f"images, {len(data.y_test)} tested"
    )
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    seconds, cpu = [], []
    for _ in range(args.repeats):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            started, cpu_started = time.perf_counter(), time.process_time()
            clf = config.build_estimator(data.X_train.shape[1:]).fit(data.X_train, data.y_train)
            seconds.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu_started)
        accuracy = 100 * float(np.mean(clf.predict(data.X_test) == data.y_test))
        print(f"  fit {seconds[-1]:.2f} s ({cpu[-1]:.2f} CPU s), test {accuracy:.2f} %")
    print(
        f"median {np.median(seconds):.2f} s, worst {max(seconds):.2f} s; CPU median "
        f"{np.median(cpu):.2f} s, worst {max(cpu):.2f} s"
    )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
