"""The flags of ``csvm reproduce``, apart from the runs they start (csvm.cli.reproduce)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from csvm.cli.args import add_data_dir, command_parser, n_jobs, output_file, positive_int

__all__ = ["reproduce_parser"]


def reproduce_parser(prog: str, doc: str | None, targets: Sequence[str]) -> argparse.ArgumentParser:
    """The parser of ``csvm reproduce``.

    Parameters
    ----------
    prog : str
        The command as the user typed it, for the usage lines.
    doc : str or None
        The description (the command module's docstring).
    targets : sequence of str
        The tables and studies it can run, the positional argument's choices.

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = command_parser(prog, doc)
    parser.add_argument("table", choices=list(targets))
    add_data_dir(parser)
    parser.add_argument(
        "--seeds",
        type=positive_int,
        default=3,
        help="table4.1 / table4.4 / table3.1: seeds per model (default 3)",
    )
    parser.add_argument("--epochs", type=positive_int, default=10, help="CNN epochs")
    parser.add_argument(
        "--n-train",
        type=int,
        default=None,
        help="table3.1 / mnist10: a stratified subsample of the 50,000 / 60,000 training images",
    )
    parser.add_argument(
        "--out",
        type=output_file,
        default=None,
        metavar="FILE.json",
        help="write the figures, command, date, machine and versions as JSON "
        "(the Reproduce page reads assets/runs/<table>.json)",
    )
    parser.add_argument(
        "--pairs",
        default=None,
        metavar="A-B,...",
        help="mnist45-stack / cifar10-stack: only these pairs (default: all)",
    )
    _add_scale_arguments(parser)
    return parser


def _add_scale_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of the ten-class runs (table3.1, mnist10)."""
    parser.add_argument(
        "--n-jobs", type=n_jobs, default=-1, help="table3.1 / mnist10: pairs at once (threads)"
    )
    parser.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:PORT",
        help="table3.1 / mnist10: train the pairs on this Dask cluster",
    )
    parser.add_argument(
        "--n-iter", type=int, default=None, help="mnist10: iterations (default: its config's)"
    )
    parser.add_argument(
        "--virtual",
        choices=["none", "4", "8", "8+2px", "16"],
        default=None,
        help="mnist10: shifts of the support vectors solved again after the first fit "
        "(default: its config's; 'none' reports the first fit only)",
    )
    parser.add_argument(
        "--no-deskew",
        action="store_true",
        help="mnist10: train and test on the images as they are (default: deskewed first)",
    )
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="mnist10: skip the plain RBF SVM per pair trained the same way (about 2 min)",
    )
