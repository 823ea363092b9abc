"""The command line: ``csvm <command> ...`` (the console script) or ``python -m csvm``.

Each sub-command is a function ``handler(argv: list[str]) -> int`` registered in
:data:`COMMANDS`; it parses its own arguments.  Handlers import their module lazily so
that ``csvm data list`` does not pay for the estimators.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

__all__ = ["COMMANDS", "main"]


def _data(argv: list[str]) -> int:
    from csvm.data import main_data

    return main_data(argv)


def _train(argv: list[str]) -> int:
    from csvm.cli.train import main_train

    return main_train(argv)


def _reproduce(argv: list[str]) -> int:
    from csvm.cli.reproduce import main_reproduce

    return main_reproduce(argv)


def _sweep(argv: list[str]) -> int:
    from csvm.cli.sweep import main_sweep

    return main_sweep(argv)


def _curve(argv: list[str]) -> int:
    from csvm.cli.curve import main_curve

    return main_curve(argv)


COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "data": _data,
    "train": _train,
    "reproduce": _reproduce,
    "sweep": _sweep,
    "curve": _curve,
}


def main(argv: list[str] | None = None) -> int:
    """Dispatch ``argv[0]`` to its sub-command; return the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    usage = f"usage: csvm {{{','.join(COMMANDS)}}} ... (add -h for help)"
    if not argv or argv[0] in ("-h", "--help"):
        print(usage, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] not in COMMANDS:
        print(f"{usage}\nerror: unknown command {argv[0]!r}", file=sys.stderr)
        return 2
    return COMMANDS[argv[0]](argv[1:])
