"""An output path is checked before the work (issue 37 row 12): a path that cannot be
written (/proc/self/status, /dev/full, a folder where writing is refused) is named on
stderr with exit status 2 before any cell runs, never a traceback after it; and a write
that fails late leaves the earlier file whole."""

from __future__ import annotations

import argparse
import csv
import os
from pathlib import Path

import pytest

from csvm.cli import sweep as sweep_cli
from csvm.cli.args import output_file
from csvm.cli.main import main

SWEEP = ["sweep", "--x", "lam=0.1", "--y", "eta=0.1", "--n-train", "100", "--n-iter", "1"]
CURVE = ["curve", "--sizes", "20", "--seeds", "1", "--methods", "svm"]
#: sysfs refuses new files even to root (a chmod'ed folder would not stop root).
UNWRITABLE = "/sys/kernel/csvm-test.csv"


def _bad_paths() -> list[str]:
    paths = [p for p in ("/proc/self/status", "/dev/full") if os.path.exists(p)]
    if os.path.isdir("/sys/kernel"):
        paths.append(UNWRITABLE)
    if not paths:
        pytest.skip("no /proc, /dev/full or /sys here")
    return paths


@pytest.mark.parametrize("argv", [SWEEP, CURVE], ids=["sweep", "curve"])
def test_an_unwritable_out_is_refused_before_the_work(argv, capsys):
    for path in _bad_paths():
        with pytest.raises(SystemExit) as info:
            main([*argv, "--out", path])
        assert info.value.code == 2, path
        printed = capsys.readouterr()
        assert "argument --out: " in printed.err and path in printed.err
        assert "Traceback" not in printed.err
        assert "cell" not in printed.err + printed.out  # nothing ran


def test_the_messages_say_what_is_wrong():
    cases = {
        "/dev/full": "is not a regular file",
        "/proc/self/status": "cannot write /proc/self/status",
        UNWRITABLE: f"cannot write {UNWRITABLE}: Permission denied in /sys/kernel",
    }
    for path, says in cases.items():
        if not os.path.exists(os.path.dirname(path)):
            continue
        with pytest.raises(argparse.ArgumentTypeError, match=says):
            output_file(path)


def test_the_check_changes_nothing(tmp_path):
    existing = tmp_path / "old.csv"
    existing.write_text("kept\n")
    assert output_file(str(existing)) == str(existing)
    assert existing.read_text() == "kept\n"  # opened to append, not truncated
    new = tmp_path / "new.csv"
    assert output_file(str(new)) == str(new)
    assert sorted(os.listdir(tmp_path)) == ["old.csv"]  # neither the file nor a probe left


def test_a_failed_csv_write_keeps_the_earlier_file(tmp_path, monkeypatch):
    out = tmp_path / "grid.csv"
    out.write_text("earlier results\n")

    class Full(csv.DictWriter):
        def writerows(self, rows):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(sweep_cli.csv, "DictWriter", Full)
    with pytest.raises(OSError, match="No space left"):
        sweep_cli.write_csv(str(out), [{"lam": 0.1, "val_accuracy": 0.9}])
    assert out.read_text() == "earlier results\n"
    assert os.listdir(tmp_path) == ["grid.csv"]  # the temporary file is gone


def test_a_failed_write_after_the_sweep_keeps_the_table(tmp_path, monkeypatch, capsys):
    def full(path, rows):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sweep_cli, "write_csv", full)
    assert main([*SWEEP, "--out", str(tmp_path / "grid.csv")]) == 2
    printed = capsys.readouterr()
    assert "| eta \\ lam |" in printed.out  # the results were printed first
    assert "csvm sweep: error: [Errno 28] No space left on device" in printed.err


def test_curve_keeps_running_when_a_cell_cannot_be_saved(tmp_path, monkeypatch, capsys):
    from csvm.cli import curve as curve_cli

    calls = []

    def full(path, record):
        calls.append(record["complete"])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(curve_cli, "_write", full)
    argv = ["curve", "--sizes", "20,30", "--seeds", "1", "--methods", "svm"]
    assert main([*argv, "--out", str(tmp_path / "c.json")]) == 2
    printed = capsys.readouterr()
    assert printed.err.count("warning: cannot write") == 1  # said once, not per cell
    assert "n=30" in printed.out and "accuracy" in printed.out  # every cell, then the rows
    assert calls == [False, True]
    assert not Path(tmp_path / "c.json").exists()
