"""What the commands share: argument types that refuse a bad value up front (argparse
prints the message and exits with status 2), the program's name as the user typed it,
and how an error is reported.

Exit status of every command: 0 done; 1 training diverged (the run itself failed);
2 bad arguments, settings, data or output path (what to change is on stderr).
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import uuid

from csvm.exceptions import DivergenceError

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_FAILED",
    "EXIT_STATUS",
    "PROG",
    "add_data_dir",
    "command_parser",
    "n_jobs",
    "output_file",
    "plot_dir",
    "positive_int",
    "report",
    "say_unused",
]

#: How the console script is named (pyproject.toml's ``[project.scripts]``);
#: ``python -m csvm`` passes its own.
PROG = "csvm"
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
#: The line every command's --help ends with.
EXIT_STATUS = (
    "exit status: 0 done, 1 training diverged, 2 bad arguments, settings, data or\n"
    "output path (the message on stderr says what to change)"
)


def command_parser(prog: str, doc: str | None) -> argparse.ArgumentParser:
    """A command's parser: its module docstring as the description (kept as written), the
    exit statuses as the epilog."""
    return argparse.ArgumentParser(
        prog=prog,
        description=doc,
        epilog=EXIT_STATUS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def positive_int(text: str) -> int:
    """A whole number of at least 1 (seeds, epochs)."""
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is below 1: give 1 or more")
    return value


def n_jobs(text: str) -> int:
    """How many jobs at once: a whole number of at least 1, or -1 for every core.

    joblib's own message for 0 ("n_jobs == 0 in Parallel has no meaning") came after the
    data were loaded and named neither the flag nor what to give.
    """
    value = _whole_number(text)
    if value < 1 and value != -1:
        raise argparse.ArgumentTypeError(
            f"{value} jobs: give a positive number of jobs at once, or -1 for every core"
        )
    return value


def add_data_dir(parser: argparse.ArgumentParser) -> None:
    """``--data-dir``, the same flag and help in every command that reads the datasets."""
    parser.add_argument(
        "--data-dir",
        default=None,
        metavar="DIR",
        help="folder of the downloaded datasets (default: $CSVM_DATA_DIR, else the user "
        "cache; 'csvm data list' shows it and what it holds)",
    )


def say_unused(args: argparse.Namespace, config) -> None:
    """A note on stderr for each flag the run does not read (``--kernel`` with ``--model
    lcsvm``, ``--gamma`` with a polynomial kernel): it was accepted and changed nothing,
    without a word."""
    from csvm.runs.config import MODEL_LABELS, SPECS
    from csvm.runs.flags import unused_flags

    for flag in unused_flags(args, config):
        name = flag[2:].replace("-", "_")
        if name == "cnn_epochs" and config.tune_baselines:
            why = "with --tune-baselines (the tuned CNN's epochs are chosen on validation)"
        elif config.model not in SPECS[name].models:
            why = f"by the {MODEL_LABELS[config.model]}"
        elif name in ("filter_size", "n_filters") and config.layers:
            why = "with --layers (the layers name their own filters)"
        else:
            why = f"with the {config.kernel} kernel"
        print(f"note: {flag} is not read {why}; it changes nothing.", file=sys.stderr)


def _probe_folder(folder: str, what: str) -> None:
    """Create and remove a file in ``folder``: the only sure test that files can be written
    there (permissions, read-only mounts, /proc and /sys say no only when tried).  The
    results are written beside their file and renamed over it, so the folder must allow
    new files even where the file itself exists."""
    probe = os.path.join(folder, f".csvm-probe-{uuid.uuid4().hex}")
    try:
        with open(probe, "x", encoding="utf-8"):
            pass
    except OSError as err:
        raise argparse.ArgumentTypeError(
            f"cannot write {what}: {err.strerror or err} in {folder}; give a path in a "
            "folder you can write to"
        ) from None
    os.remove(probe)


def output_file(text: str) -> str:
    """A file to write, checked before any work: a regular file or a new name, in a folder
    that exists, that this process can write.

    A run that only found out at the end (``/dev/full``, ``/proc/self/status``, a
    read-only folder) lost its hours of results to a traceback.
    """
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(
            f"{text} is a folder: give a file name inside it, e.g. {os.path.join(text, 'out')}"
        )
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"the folder {folder} does not exist")
    if os.path.lexists(text):
        mode = os.stat(text).st_mode if os.path.exists(text) else 0
        if not stat.S_ISREG(mode):
            raise argparse.ArgumentTypeError(
                f"{text} is not a regular file (a device, pipe or broken link): give a "
                "file name to write the results to"
            )
        try:  # opened to append and closed: the file's content is untouched
            with open(text, "a", encoding="utf-8"):
                pass
        except OSError as err:
            raise argparse.ArgumentTypeError(
                f"cannot write {text}: {err.strerror or err}; give another file"
            ) from None
    _probe_folder(folder, text)
    return text


def plot_dir(text: str) -> str:
    """A folder for the pictures: created when missing, checked writable up front."""
    if os.path.exists(text) and not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text} is a file: give a folder for the pictures")
    try:
        os.makedirs(text, exist_ok=True)
    except OSError as err:
        raise argparse.ArgumentTypeError(
            f"cannot create the folder {text}: {err.strerror or err}"
        ) from None
    _probe_folder(text, f"pictures in {text}")
    return text


def report(prog: str, exc: BaseException) -> int:
    """Print ``prog: error: message`` on stderr and return the exit status: 1 when
    training diverged, 2 for anything the user can change before running again."""
    print(f"{prog}: error: {exc}", file=sys.stderr)
    return EXIT_FAILED if isinstance(exc, DivergenceError) else EXIT_BAD_INPUT
