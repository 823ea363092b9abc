"""The command line: train prints every step, reproduce names missing data clearly."""

import pytest

from csvm.__main__ import main
from csvm.runs.config import RunConfig, parse
from csvm.runs.presets import find_preset


def test_train_prints_each_iteration_and_the_accuracy(capsys):
    assert main(["train", "--n-iter", "2", "--n-train", "100", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("objective") == 2
    assert "test accuracy" in out


def test_train_runs_several_classes_and_names_each_sub_problem(capsys):
    argv = ["train", "--classes", "0,1,2", "--multi-class", "ovr", "--n-train", "60"]
    assert main([*argv, "--n-iter", "2"]) == 0
    out = capsys.readouterr().out
    # One-vs-rest on three classes: three sub-problems, two iterations each.
    steps = [line for line in out.splitlines() if "objective" in line]
    assert len(steps) == 6
    assert {line.split("    ")[0] for line in steps} == {"0 vs rest", "1 vs rest", "2 vs rest"}
    assert "test accuracy" in out and "(300 test images)" in out


def test_train_refuses_bad_settings(capsys):
    assert main(["train", "--dataset", "digits", "--filter-size", "9"]) == 2
    printed = capsys.readouterr()
    assert "csvm train: error:" in printed.err and "larger than the image" in printed.err
    assert printed.out == "" and "Traceback" not in printed.err


def test_train_starts_from_an_app_preset_and_its_flags_change_it(capsys, monkeypatch):
    # What the app's preset box trains, from the command line: the shapes preset learns
    # its bars (the Train page's figure for it is 98.75 %; here, two iterations only).
    built = []
    monkeypatch.setattr(RunConfig, "build_estimator", _recording(built))
    assert main(["train", "--preset", "shapes", "--n-iter", "2"]) == 0
    preset, _ = parse(find_preset("shapes")["config"])
    assert built == [preset.replace(n_iter=2)]
    out = capsys.readouterr().out
    assert out.count("objective") == 2 and "test accuracy" in out


def _recording(built: list):
    """RunConfig.build_estimator that also records the settings it was asked to build."""
    build = RunConfig.build_estimator

    def record(self, image_shape):
        built.append(self)
        return build(self, image_shape)

    return record


@pytest.mark.parametrize(
    "wanted, message",
    [
        ("digits", "names several presets (digits-3-vs-5-fast, digits-two-layers)"),
        ("bars", "No preset is called 'bars'; the presets are: shapes-filters-find-the-bars"),
    ],
)
def test_an_unknown_or_unclear_preset_is_named(wanted, message, capsys):
    assert main(["train", "--preset", wanted]) == 2
    printed = capsys.readouterr()
    assert message in printed.err and "Traceback" not in printed.err and printed.out == ""


def test_reproduce_without_files_says_how_to_get_them(tmp_path, capsys):
    assert main(["reproduce", "table4.1", "--data-dir", str(tmp_path)]) == 2
    assert "python -m csvm data fetch mnist" in capsys.readouterr().err


def test_unknown_command_shows_usage(capsys):
    assert main(["bake"]) == 2
    assert "usage" in capsys.readouterr().err


def _fake_mnist(folder, n_test: int = 60) -> None:
    """MNIST-layout files small enough for a test: the thesis's pair split reads the 3s and
    5s among images 0-9,999 (train) and 10,000-19,999 (validation), so only a few images
    there carry labels 0..9 and the rest are 0s, which no table here trains on."""
    import numpy as np

    from tests._dataset_files import idx_bytes, write_idx

    rng = np.random.default_rng(0)
    labels = np.zeros(10_060, dtype=np.uint8)
    labels[:100] = np.arange(100) % 10
    labels[10_000:] = np.arange(60) % 10
    write_idx(
        folder,
        gz=False,
        **{
            "train-images-idx3-ubyte": idx_bytes(rng.integers(0, 256, (10_060, 28, 28))),
            "train-labels-idx1-ubyte": idx_bytes(labels),
            "t10k-images-idx3-ubyte": idx_bytes(rng.integers(0, 256, (n_test, 28, 28))),
            "t10k-labels-idx1-ubyte": idx_bytes(np.arange(n_test) % 10),
        },
    )


def test_reproduce_table41_out_writes_what_the_page_reads(tmp_path, monkeypatch, capsys):
    import copy

    from csvm.analysis.reproduced import load_run
    from csvm.cli import reproduce as cli

    _fake_mnist(tmp_path / "mnist")
    spec = copy.deepcopy(cli.THESIS)
    spec["table4.1"]["csvm"]["n_iter"] = 2  # the plumbing, not the thesis's 25 iterations
    monkeypatch.setattr(cli, "THESIS", spec)
    out = tmp_path / "t41.json"
    argv = ["reproduce", "table4.1", "--data-dir", str(tmp_path), "--seeds", "2"]
    assert main([*argv, "--epochs", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    run = load_run(out)
    assert run["table"] == "table4.1"
    assert run["command"].startswith("python -m csvm reproduce table4.1 --data-dir")
    assert run["machine"]["cores"] >= 1 and run["versions"]["numpy"]
    names = [m["name"] for m in run["models"]]
    assert names[:3] == ["plain SVM", "small CNN", "K-CSVM"]
    assert any("tuned on validation" in n for n in names)
    kcsvm = run["models"][2]
    assert kcsvm["n_seeds"] == 2 and len(kcsvm["accuracies"]) == 2
    assert kcsvm["reference"] == {
        "mean": 98.59,
        "std": 0.02,
        "text": "98.59 ± 0.02",
        "source": "Sugg 2018, table 4.1",
    }
    assert kcsvm["config"]["n_iter"] == 2 and kcsvm["config"]["dataset"] == "mnist"
    assert kcsvm["mean"] == sum(kcsvm["accuracies"]) / 2
    # The printed table and the file agree.
    for model in run["models"]:
        assert f"| {model['name']} |" in printed
        if model["n_seeds"] > 1:
            a = [100 * v for v in model["accuracies"]]
            mean = sum(a) / len(a)
            assert f"{mean:.2f} ± " in printed
    assert run["data"]["n_train"] == 20 and run["data"]["n_test"] == 12


def test_reproduce_table31_out_writes_what_the_page_reads(tmp_path, capsys):
    from csvm.analysis.reproduced import load_run
    from tests._dataset_files import write_idx

    write_idx(tmp_path / "mnist", gz=False)  # 30 training images, labels 0..9 in turn
    out = tmp_path / "t31.json"
    argv = ["reproduce", "table3.1", "--data-dir", str(tmp_path), "--seeds", "2"]
    assert main([*argv, "--n-jobs", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    run = load_run(out)
    (model,) = run["models"]
    assert model["n_seeds"] == 2 and model["reference"]["mean"] == 94.09
    assert f"{100 * model['accuracies'][0]:.2f} %" in printed  # the seed-0 line
    assert run["data"]["n_train"] == 30 and len(run["details"]["seed 0"]["pairs"]) == 45


# -- bad arguments are named, never a traceback or a silent change (issue 22) ------------------
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["reproduce", "table4.1", "--seeds", "-1"], "--seeds: -1 is below 1"),
        (["reproduce", "table4.4", "--epochs", "0"], "--epochs: 0 is below 1"),
        (["sweep", "--out", "/tmp", "--x", "lam=0.1", "--y", "eta=0.1"], "/tmp is a folder"),
        (["reproduce", "table4.1", "--scheduler", "tcp://127.0.0.1:1"], "leave --scheduler out"),
        (["reproduce", "table4.1", "--out", "/no/such/folder/x.json"], "does not exist"),
    ],
)
def test_bad_arguments_are_named(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_more_training_images_than_the_dataset_has_is_said(capsys):
    assert main(["train", "--n-train", "60000", "--n-iter", "1"]) == 0
    err = capsys.readouterr().err
    assert "--n-train 60000" in err and "training on all" in err


def test_thesis_settings_state_one_filter_from_a_random_start():
    """The recipe replaces a preset's stack and filter start (the Stability page applied
    it over the Shapes preset and kept its four-filter stack)."""
    from csvm.cli.reproduce import thesis_settings
    from csvm.runs.config import RunConfig

    shapes = RunConfig(layers="5x5x4-abs-max24", filter_init="zero-mean", n_filters=4)
    for table in ("table4.1", "table4.4"):
        config = shapes.replace(**thesis_settings(table))
        assert config.layers is None and config.filter_init == "uniform"
        assert config.n_filters == 1 and config.filter_size == 5
