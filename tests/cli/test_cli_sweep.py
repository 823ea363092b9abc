"""``python -m csvm sweep``: the command line gives the library's sweep."""

import csv

import pytest

from csvm.__main__ import main
from csvm.runs.config import RunConfig
from csvm.runs.sweeps import run_sweep, sweep_configs

TINY = ["--n-train", "100", "--n-iter", "2", "--pair", "4", "9"]


def test_a_2x2_grid_equals_the_library_sweep(tmp_path, capsys):
    out = tmp_path / "grid.csv"
    argv = ["sweep", "--x", "lam=0.01,1", "--y", "eta=0.01,0.1", *TINY, "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr()
    base = RunConfig(n_train=100, n_iter=2, class_a="4", class_b="9").to_dict()
    cells = sweep_configs(base, "lam", [0.01, 1.0], "eta", [0.01, 0.1])
    expected = run_sweep(cells)
    with open(out, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [(float(r["lam"]), float(r["eta"])) for r in rows] == [
        (c["lam"], c["eta"]) for c in cells
    ]
    assert [float(r["val_accuracy"]) for r in rows] == [e["val_accuracy"] for e in expected]
    assert [float(r["objective"]) for r in rows] == [e["objective"] for e in expected]
    # The table: one row per eta, one column per lam, accuracies in per cent.
    table = [line for line in printed.out.splitlines() if line.startswith("| 0.")]
    assert len(table) == 2 and f"{100 * expected[0]['val_accuracy']:.2f}" in table[0]
    cell_lines = [line for line in printed.err.splitlines() if line.startswith("cell ")]
    assert len(cell_lines) == 4  # progress on stderr, one line per cell, and the bar's ETA
    assert "4/4 cells" in printed.err and "ETA" in printed.err


def test_a_sweep_starts_from_a_preset(tmp_path, capsys):
    from csvm.runs.presets import preset_config

    out = tmp_path / "grid.csv"
    argv = ["sweep", "--preset", "shapes", "--x", "eta=0.1,0.3", "--y", "lam=0.1,1"]
    assert main([*argv, "--n-train", "60", "--n-iter", "2", "--out", str(out)]) == 0
    base = preset_config("shapes").replace(n_train=60, n_iter=2).to_dict()
    expected = run_sweep(sweep_configs(base, "eta", [0.1, 0.3], "lam", [0.1, 1.0]))
    with open(out, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [float(r["val_accuracy"]) for r in rows] == [e["val_accuracy"] for e in expected]
    assert "| 0.1 |" in capsys.readouterr().out


def test_a_seed_axis_adds_mean_and_spread(capsys):
    assert main(["sweep", "--x", "degree=1,2", "--y", "seed=0,1", *TINY]) == 0
    out = capsys.readouterr().out
    assert "degree = 1:" in out and "over 2 seeds" in out


@pytest.mark.parametrize(
    "axis,message",
    [("lam:0.1", "NAME=V1,V2"), ("colour=1,2", "Cannot sweep"), ("eta=0.1,fast", "not a number")],
)
def test_bad_axes_are_named(axis, message, capsys):
    assert main(["sweep", "--x", axis, "--y", "lam=0.1"]) == 2
    assert message in capsys.readouterr().err


def test_bad_base_setting_is_refused_by_the_config_table(capsys):
    with pytest.raises(SystemExit):
        main(["sweep", "--x", "lam=0.1", "--y", "eta=0.1", "--n-iter", "0"])
    assert "n-iter" in capsys.readouterr().err
