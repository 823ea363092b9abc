"""Argument types shared by the commands: each refuses a bad value up front, with a
message that says what to give instead (argparse prints it and exits with status 2)."""

from __future__ import annotations

import argparse
import os

__all__ = ["output_file", "positive_int"]


def positive_int(text: str) -> int:
    """A whole number of at least 1 (seeds, epochs)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is below 1: give 1 or more")
    return value


def output_file(text: str) -> str:
    """A file to write: not a folder, in a folder that exists."""
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(
            f"{text} is a folder: give a file name inside it, e.g. {os.path.join(text, 'out')}"
        )
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"the folder {folder} does not exist")
    return text
