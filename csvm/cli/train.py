"""``csvm train``: one run of any RunConfig from the command line (every field a flag).

    csvm train --dataset mnist-5k --pair 3 5 --n-iter 10
    csvm train --classes 0,1,2 --multi-class ovr --n-train 300 --plot pictures/
    csvm train --preset shapes --seed 3      (an app preset; each flag changes one setting)

Each recorded step is a line on stdout, with a bar and the time left on stderr; then the
test accuracy, and the models of --baselines (default: the plain SVM and the small CNN;
--baselines none for the CSVM alone) trained on the same split, each with its 95 %
interval, and a McNemar test of the CSVM against each.  ``--plot DIR`` also writes the learned
filters, the objective and train accuracy as pictures (csvm.cli.plots).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from csvm.cli.args import PROG, add_data_dir, command_parser, plot_dir, report, say_unused
from csvm.exceptions import CSVMError
from csvm.runs.flags import add_cli_arguments, add_preset_argument, from_cli
from csvm.runs.summary import named_pair

__all__ = ["main_train"]


def _pair_label(event: dict[str, Any]) -> str:
    """``3 vs 5`` (or ``3 vs rest``) of a multi-class step event (its pair named)."""
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


def _step_line(event: dict[str, Any], multiclass: bool) -> str:
    # A multi-class run interleaves its sub-problems: name each step's.
    return (
        (f"{_pair_label(event)} " if multiclass else "")
        + f"{event['iteration']:4d} {event['step']:9s} objective {event['objective']:.6g}  "
        f"train acc {100 * event['train_accuracy']:.1f} %  |f| {event['filter_norm']:.3g}"
    )


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = command_parser(prog, __doc__)
    parser.add_argument(
        "--pair", nargs=2, metavar=("CLASS_A", "CLASS_B"), help="shorthand for --class-a/-b"
    )
    add_data_dir(parser)
    add_preset_argument(parser)
    parser.add_argument(
        "--plot",
        type=plot_dir,
        default=None,
        metavar="DIR",
        help="write filters.svg, objective.svg and progress.svg (and objectives.html for "
        "several classes) into DIR, created if missing",
    )
    add_cli_arguments(parser)
    return parser


def main_train(argv: list[str], prog: str = f"{PROG} train") -> int:
    """``csvm train``: train one CSVM and print each step and the accuracies.

    Every setting of :class:`csvm.runs.config.RunConfig` is a flag (``--n-iter``, ``--C``, …),
    checked against the same table as the app's widgets and URLs.  Returns the exit status
    (:mod:`csvm.cli.args`).
    """
    args = _parser(prog).parse_args(argv)
    from csvm.cli.progress import LineProgress
    from csvm.runs.targets import load_data, steps_total

    events: list[dict[str, Any]] = []
    try:
        config = from_cli(args)
        if args.pair:
            config = config.replace(class_a=args.pair[0], class_b=args.pair[1])
        errors = config.problems()
        if errors:
            raise ValueError(" ".join(errors))
        say_unused(args, config)
        if args.plot:
            from csvm.cli.plots import require_figures

            require_figures()
        data = load_data(config, args.data_dir)
        _say_if_fewer(config.n_train, len(data.y_train), config.dataset)
        clf = config.build_estimator(data.image_shape)
        names = [str(n) for n in data.class_names]
        bar = LineProgress([1.0] * steps_total(config), unit="steps")

        def on_event(event: dict[str, Any]) -> None:
            if event["kind"] in ("iteration", "half_step"):
                step = {k: v for k, v in event.items() if k != "filters"}
                if "pair" in step:  # named for the lines and the pictures alike
                    step["pair"] = named_pair(step["pair"], names)
                events.append(step)
                bar.line(_step_line(step, config.multiclass))

        start = time.perf_counter()
        try:
            clf.fit(data.X_train, data.y_train, callback=on_event)
        finally:
            if bar.done:  # a run refused before its first step has no bar to close
                bar.close()
            if args.plot and hasattr(clf, "filters_"):
                _plot(args.plot, clf, events, config)
        seconds = time.perf_counter() - start
        print(
            f"test accuracy {100 * clf.score(data.X_test, data.y_test):.2f} % "
            f"({len(data.y_test)} test images)"
        )
        if config.baselines:
            _compare(config, args.data_dir, clf, data, seconds)
    except (CSVMError, ValueError, OSError) as exc:
        return report(prog, exc)
    return 0


def _compare(config, data_dir: str | None, clf, data, seconds: float) -> None:
    """Train the run's baselines; print every model's row and its test against the CSVM."""
    from csvm.cli.baselines import baseline_report, train_baselines
    from csvm.runs.model_result import model_summary

    outcomes = {
        "csvm": {"state": "done", "result": model_summary(config.model, clf, data, seconds)}
    }
    outcomes.update(train_baselines(config, data_dir))
    print("\n".join(baseline_report(config, outcomes, data.y_test)))


def _plot(folder: str, clf, events: list[dict[str, Any]], config) -> None:
    """Write the run's pictures (also after a divergence: the best state was kept)."""
    from csvm.cli.plots import write_training

    title = f"{config.dataset}: "
    for path in write_training(folder, clf.filters_, events, title=title):
        print(f"wrote {path}", file=sys.stderr)
