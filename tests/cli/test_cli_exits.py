"""How the commands end when things outside them go wrong: a reader that goes away
(``| head``), a data folder that is not one, a source that lacks the files."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from csvm.cli.main import main
from csvm.data import downloads as dl
from tests._dataset_files import isolate

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


# -- csvm data -------------------------------------------------------------------------------
@pytest.fixture
def served(tmp_path, monkeypatch):
    """A mirror folder holding one 1 MB "mnist" file (the registry patched to it)."""
    isolate(monkeypatch, tmp_path)
    monkeypatch.setattr(time, "sleep", lambda s: None)  # pooch's waits between retries
    folder = tmp_path / "mirror"
    folder.mkdir()
    data = np.random.default_rng(0).bytes(1 << 20)
    (folder / "t10k-labels-idx1-ubyte.gz").write_bytes(data)
    md5 = hashlib.md5(data).hexdigest()
    monkeypatch.setitem(dl.REGISTRY, "mnist", {"t10k-labels-idx1-ubyte.gz": f"md5:{md5}"})
    return folder


def test_a_data_dir_that_is_a_file_is_bad_input(served, tmp_path, capsys):
    """The help says 2 for a bad data path; a fetch into a file exited 1."""
    afile = tmp_path / "afile"
    afile.write_text("")
    argv = ["data", "fetch", "mnist", "--data-dir", str(afile), "--mirror", str(served)]
    assert main(argv) == 2
    assert "csvm data: error: Cannot create the data folder" in capsys.readouterr().err
    assert main(["data", "list", "--data-dir", str(afile)]) == 2
    assert f"the data folder {afile} is a file" in capsys.readouterr().err


def test_a_source_without_the_files_is_bad_input(served, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    argv = ["data", "fetch", "mnist", "--data-dir", str(tmp_path / "d"), "--mirror", str(empty)]
    assert main(argv) == 2
    assert "Could not download t10k-labels-idx1-ubyte.gz" in capsys.readouterr().err


def test_data_list_says_when_the_folder_does_not_exist(tmp_path, capsys):
    missing = tmp_path / "no-such-folder"
    assert main(["data", "list", "--data-dir", str(missing)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"data folder: {missing} (does not exist yet: 'fetch' creates it)"
    assert main(["data", "list", "--data-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"data folder: {tmp_path}"


def test_fetch_progress_into_a_log_is_whole_lines(served, tmp_path, capsys):
    """Into a file or pipe (stderr here is not a terminal) the progress was one line of
    ``\\r`` updates, a percent each: a CI log got one enormous line."""
    argv = ["data", "fetch", "mnist", "--data-dir", str(tmp_path / "d"), "--mirror", str(served)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = [line for line in err.splitlines() if "t10k-labels-idx1-ubyte.gz" in line]
    assert [line.rsplit(": ", 1)[1] for line in lines] == [" 25 %", " 50 %", " 75 %", "100 %"]


def test_fetch_progress_on_a_terminal_is_redrawn_in_place():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    progress = dl._Progress("file:///x", out)
    progress.total = 4
    for _ in range(4):
        progress.update(1)
    progress.close()
    assert out.getvalue() == "".join(f"\r  file:///x: {p:3d} %" for p in (25, 50, 75, 100)) + "\n"
