"""The command line: train prints every step, reproduce names missing data clearly."""

from csvm.__main__ import main


def test_train_prints_each_iteration_and_the_accuracy(capsys):
    assert main(["train", "--n-iter", "2", "--n-train", "100", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("objective") == 2
    assert "test accuracy" in out


def test_train_refuses_bad_settings(capsys):
    assert main(["train", "--dataset", "digits", "--filter-size", "9"]) == 1
    assert "larger than the image" in capsys.readouterr().out


def test_reproduce_without_files_says_how_to_get_them(tmp_path, capsys):
    assert main(["reproduce", "table4.1", "--data-dir", str(tmp_path)]) == 1
    assert "python -m csvm data fetch mnist" in capsys.readouterr().out


def test_unknown_command_shows_usage(capsys):
    assert main(["bake"]) == 2
    assert "usage" in capsys.readouterr().err
