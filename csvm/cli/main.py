"""The command line: ``csvm <command> ...`` (the console script) or ``python -m csvm``.

Each sub-command is a function ``handler(argv, prog) -> int`` registered in
:data:`COMMANDS` with a one-line description; it parses its own arguments, with ``prog``
("csvm train" or "python -m csvm train") in its usage lines.  Handlers import their module
lazily so that ``csvm data list`` does not pay for the estimators.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import NamedTuple

from csvm._version import version
from csvm.cli.args import EXIT_BAD_INPUT, EXIT_STATUS, PROG

__all__ = ["COMMANDS", "Command", "help_text", "main"]

#: The status of a program whose reader went away (128 + SIGPIPE), as a shell reports it.
EXIT_PIPE_CLOSED = 141


class Command(NamedTuple):
    """A sub-command: its handler and the line ``--help`` shows for it."""

    handler: Callable[[list[str], str], int]
    summary: str


def _data(argv: list[str], prog: str) -> int:
    from csvm.data import main_data

    return main_data(argv, prog=prog)


def _train(argv: list[str], prog: str) -> int:
    from csvm.cli.train import main_train

    return main_train(argv, prog=prog)


def _reproduce(argv: list[str], prog: str) -> int:
    from csvm.cli.reproduce import main_reproduce

    return main_reproduce(argv, prog=prog)


def _sweep(argv: list[str], prog: str) -> int:
    from csvm.cli.sweep import main_sweep

    return main_sweep(argv, prog=prog)


def _curve(argv: list[str], prog: str) -> int:
    from csvm.cli.curve import main_curve

    return main_curve(argv, prog=prog)


COMMANDS: dict[str, Command] = {
    "data": Command(_data, "list the datasets and where they are, or download one"),
    "train": Command(
        _train, "train one CSVM (any setting a flag), printing each step and the test accuracy"
    ),
    "reproduce": Command(
        _reproduce, "run a table of the thesis (or a study) and print it beside the published one"
    ),
    "sweep": Command(_sweep, "validation accuracy over a grid of two settings (CSV, heatmap)"),
    "curve": Command(
        _curve, "test accuracy of several methods against the number of training images"
    ),
}


def help_text(prog: str) -> str:
    """``--help``: the usage, each command with its description, and the exit statuses."""
    width = max(len(name) for name in COMMANDS)
    lines = [
        f"usage: {prog} <command> [options]",
        "",
        f"Convolutional SVMs (csvm {version()}) from the command line.",
        f"Run '{prog} <command> -h' for a command's options.",
        "",
        "commands:",
        *(f"  {name:<{width}}  {command.summary}" for name, command in COMMANDS.items()),
        "",
        "options:",
        "  -h, --help  show this help and exit",
        "  --version   show the version and exit",
        "",
        EXIT_STATUS,
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """Dispatch ``argv[0]`` to its sub-command; return the exit status.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program's name (default ``sys.argv[1:]``).
    prog : str, default="csvm"
        The program's name as the user typed it, for usage lines ("python -m csvm" when
        run as a module).

    Returns
    -------
    int
        The exit status (:mod:`csvm.cli.args`); 141 when stdout was closed early, as by
        ``csvm --help | head -3``.
    """
    try:
        try:
            return _dispatch(sys.argv[1:] if argv is None else list(argv), prog)
        finally:
            # Flushed here, not at exit: a reader gone (``| head``) is found while the
            # BrokenPipeError can still be caught, also after argparse's --help exit.
            sys.stdout.flush()
    except BrokenPipeError:
        _stdout_to_devnull()
        return EXIT_PIPE_CLOSED


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null: the interpreter flushes it again at exit, and what is
    still buffered would raise once more (Python's own recipe for SIGPIPE)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _dispatch(argv: list[str], prog: str) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(help_text(prog))
        return 0
    if argv and argv[0] == "--version":
        print(f"csvm {version()}")
        return 0
    usage = f"usage: {prog} {{{','.join(COMMANDS)}}} ... ({prog} --help describes them)"
    if not argv:
        print(f"{usage}\n{prog}: error: give a command", file=sys.stderr)
        return EXIT_BAD_INPUT
    if argv[0] not in COMMANDS:
        print(f"{usage}\n{prog}: error: unknown command {argv[0]!r}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return COMMANDS[argv[0]].handler(argv[1:], f"{prog} {argv[0]}")
