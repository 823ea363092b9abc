"""The command line as a user meets it (issue 36): --help describes every command, usage
lines name the program as typed, errors go to stderr with exit status 2, long work shows
a bar with the time left, and --plot writes pictures."""

from __future__ import annotations

import io
import runpy
import sys
import time

import pytest

import csvm
from csvm.cli.main import COMMANDS, main
from csvm.cli.progress import LineProgress

TINY = ["--n-train", "100", "--n-iter", "2", "--seed", "1"]


def test_help_describes_every_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: csvm <command>")
    for name, command in COMMANDS.items():
        assert f"  {name}" in out and command.summary in out
    assert "exit status: 0 done, 1 training diverged, 2 bad arguments" in out


def test_a_settings_none_is_typed_none_and_its_help_says_so(capsys):
    """``--protocol none`` was refused ("allowed is one of thesis") while the thesis
    protocol's error told the user to use protocol=None; --C did not say how to give none."""
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--protocol {thesis,none}" in out and "Default none (random split)." in out
    assert "Default none (no limit)." in out  # --C
    assert "--regulariser {none,l1," in out  # a choice called none stays a choice
    assert main(["train", *TINY, "--protocol", "none", "--C", "none", "--baselines", "none"]) == 0
    assert "test accuracy" in capsys.readouterr().out


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"csvm {csvm.__version__}"


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("prog", ["csvm", "python -m csvm"])
def test_usage_names_the_program_as_typed(command, prog, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"], prog=prog)
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: {prog} {command} ")


def test_python_dash_m_says_python_dash_m(monkeypatch, capsys):
    """``python -m csvm`` runs csvm/__main__.py as __main__ (in-process here: a fresh
    interpreter would spend seconds importing scikit-learn)."""
    monkeypatch.setattr(sys, "argv", ["csvm/__main__.py", "train", "--n-iter", "0"])
    monkeypatch.delitem(sys.modules, "csvm.__main__", raising=False)  # run afresh, as -m does
    with pytest.raises(SystemExit) as info:
        runpy.run_module("csvm", run_name="__main__", alter_sys=False)
    assert info.value.code == 2
    printed = capsys.readouterr()
    assert printed.out == "" and printed.err.startswith("usage: python -m csvm train")


def test_no_command_is_an_error_on_stderr(capsys):
    assert main([]) == 2
    printed = capsys.readouterr()
    assert printed.out == "" and "csvm: error: give a command" in printed.err


# -- progress ------------------------------------------------------------------------------
def test_train_shows_a_bar_with_the_time_left(capsys):
    assert main(["train", *TINY]) == 0
    printed = capsys.readouterr()
    assert printed.out.count("objective") == 2  # the steps stay on stdout
    assert "2/2 steps 100 %" in printed.err and "ETA" in printed.err
    assert "done: 2 steps" in printed.err


def test_the_time_left_follows_the_weights():
    """Cells of unequal cost: after the cheap one (1 of 4 units) in 10 s, 30 s are left."""
    out, err = io.StringIO(), io.StringIO()
    bar = LineProgress([1.0, 3.0], unit="cells", out=out, stream=err, interval=0)
    bar.start = time.perf_counter() - 10.0
    bar.line("cell 1 done", index=0)
    assert 29.0 <= bar.eta() <= 32.0
    assert out.getvalue() == "cell 1 done\n"
    assert "1/2 cells" in err.getvalue() and "ETA 0:3" in err.getvalue()


def test_on_a_terminal_the_bar_is_cleared_before_a_line():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out, err = io.StringIO(), Terminal()
    bar = LineProgress([1.0, 1.0], unit="steps", out=out, stream=err)
    bar.line("first")
    bar.line("second")
    assert out.getvalue() == "first\nsecond\n"
    drawn = err.getvalue()
    assert drawn.count("\r\x1b[K") == 2  # cleared before each line
    assert "2/2 steps 100 %" in drawn.rsplit("\r", 1)[-1]  # then redrawn in place


# -- pictures --------------------------------------------------------------------------------
def test_train_plot_writes_the_filters_and_the_objective(tmp_path, capsys):
    folder = tmp_path / "pictures"  # created when missing
    assert main(["train", *TINY, "--classes", "0,1,2", "--plot", str(folder)]) == 0
    err = capsys.readouterr().err
    for name in ("filters.svg", "objective.svg", "progress.svg", "objectives.html"):
        assert (folder / name).is_file() and f"wrote {folder / name}" in err
    filters = (folder / "filters.svg").read_text()
    assert filters.startswith("<svg") and filters.count('class="plane"') == 3 * 2  # 3 pairs
    objective = (folder / "objective.svg").read_text()
    assert 'data-points="2"' in objective and "(0 vs 1)" in objective
    assert "plotly.min.js" in (folder / "objectives.html").read_text()
    assert (folder / "plotly.min.js").is_file()  # the HTML works offline


def test_sweep_plot_writes_the_heatmap(tmp_path, capsys):
    argv = ["sweep", "--x", "lam=0.01,1", "--y", "eta=0.1", "--n-train", "100", "--n-iter", "1"]
    assert main([*argv, "--plot", str(tmp_path)]) == 0
    page = (tmp_path / "sweep.html").read_text()
    assert "Validation accuracy over the grid" in page and '"type":"heatmap"' in page
    assert f"wrote {tmp_path / 'sweep.html'}" in capsys.readouterr().out


def test_curve_plot_writes_the_curves(tmp_path, capsys):
    argv = ["curve", "--sizes", "20", "--seeds", "1", "--methods", "svm,kcsvm"]
    assert main([*argv, "--plot", str(tmp_path)]) == 0
    page = (tmp_path / "curve.html").read_text()
    assert '"type":"scatter"' in page
    # Titled as the Learning curves page titles it: the pair, then what it learns.
    assert "mnist-5k: 3 v 5\\u003cbr\\u003e\\u003csup\\u003elearned: one layer" in page
    printed = capsys.readouterr()
    assert "2/2 cells" in printed.err and "ETA" in printed.err


def test_plot_refuses_a_file(tmp_path, capsys):
    afile = tmp_path / "x.svg"
    afile.write_text("")
    with pytest.raises(SystemExit) as info:
        main(["train", "--plot", str(afile)])
    assert info.value.code == 2
    assert "is a file: give a folder" in capsys.readouterr().err
