"""``csvm train``: one run of any RunConfig from the command line (every field a flag)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from csvm.exceptions import CSVMError
from csvm.runs.flags import add_cli_arguments, from_cli

__all__ = ["main_train"]


def _pair_label(event: dict[str, Any]) -> str:
    """``3 vs 5`` (or ``3 vs rest``) of a multi-class step event."""
    negative, positive = event.get("pair", ("?", "?"))
    return f"{negative} vs {positive}"


def _say_if_fewer(asked: int | None, got: int, dataset: str) -> None:
    """Name the change when the dataset has fewer training images than asked for."""
    if asked and got < asked:
        print(
            f"note: --n-train {asked} asked for more training images than {dataset} has for "
            f"these classes; training on all {got} of them.",
            file=sys.stderr,
        )


def main_train(argv: list[str]) -> int:
    """``python -m csvm train``: train one CSVM and print each step and the accuracies.

    Every setting of :class:`csvm.runs.config.RunConfig` is a flag (``--n-iter``, ``--C``, …),
    checked against the same table as the app's widgets and URLs.
    """
    parser = argparse.ArgumentParser(prog="python -m csvm train")
    parser.add_argument(
        "--pair", nargs=2, metavar=("CLASS_A", "CLASS_B"), help="shorthand for --class-a/-b"
    )
    parser.add_argument("--data-dir", default=None)
    add_cli_arguments(parser)
    args = parser.parse_args(argv)
    config = from_cli(args)
    if args.pair:
        config = config.replace(class_a=args.pair[0], class_b=args.pair[1])
    from csvm.runs.targets import load_data

    try:
        errors = config.problems()
        if errors:
            raise ValueError(" ".join(errors))
        data = load_data(config, args.data_dir)
        _say_if_fewer(config.n_train, len(data.y_train), config.dataset)
        clf = config.build_estimator(data.image_shape)
        clf.fit(
            data.X_train,
            data.y_train,
            callback=lambda e: (
                print(
                    # A multi-class run interleaves its sub-problems: name each step's.
                    (f"{_pair_label(e)} " if config.multiclass else "")
                    + f"{e['iteration']:4d} {e['step']:9s} objective {e['objective']:.6g}  "
                    f"train acc {100 * e['train_accuracy']:.1f} %  |f| {e['filter_norm']:.3g}"
                )
                if e["kind"] in ("iteration", "half_step")
                else None
            ),
        )
    except (CSVMError, ValueError) as exc:
        print(f"error: {exc}")
        return 1
    print(
        f"test accuracy {100 * clf.score(data.X_test, data.y_test):.2f} % "
        f"({len(data.y_test)} test images)"
    )
    return 0
