"""How the commands end when things outside them go wrong: a reader that goes away
(``| head``), a data folder that is not one, a source that lacks the files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("argv", [["--help"], ["data", "list"]])
def test_a_closed_stdout_ends_quietly(argv):
    """``csvm --help | head -3`` ended in a BrokenPipeError traceback.  The pipe's reading
    end is closed before the program starts, so every write to stdout fails."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "csvm", *argv],
            cwd=ROOT,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write)
    assert done.returncode == 141
    assert done.stderr == ""
