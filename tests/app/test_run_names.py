"""Runs named by what sets them apart (explorer.run_names): the Compare page's names."""

from csvm.runs.config import RunConfig
from explorer.run_names import run_names, settings_text


def test_runs_that_differ_in_one_setting_are_named_by_it():
    names = run_names({"a": RunConfig(eta=0.5), "b": RunConfig(eta=0.1)})
    assert names == {"a": "η 0.5", "b": "η 0.1"}


def test_a_run_alone_is_named_by_its_summary():
    assert run_names({"a": RunConfig()}) == {"a": "K-CSVM RBF γ 0.02, 2 filters, 50 images, 3 v 5"}


def test_runs_with_the_same_settings_say_so_and_which_they_are():
    names = run_names({"a": RunConfig(eta=0.1), "b": RunConfig(eta=0.5), "c": RunConfig(eta=0.1)})
    assert names == {
        "a": "η 0.1 (same settings: run 1 of 2)",
        "b": "η 0.5",
        "c": "η 0.1 (same settings: run 2 of 2)",
    }
    assert len(set(names.values())) == 3
    twice = run_names({"a": RunConfig(), "b": RunConfig()})
    assert twice["b"].endswith("(same settings: run 2 of 2)")
    assert "#" not in "".join(twice.values())


def test_coded_values_are_shown_in_words():
    configs = {
        "a": RunConfig(regulariser="dfo2", C=None),
        "b": RunConfig(regulariser="dfo1", C=1e-3),
    }
    names = run_names(configs)
    assert names == {"a": "Regulariser DFO₂ · C no limit", "b": "Regulariser DFO₁ · C 0.001"}
    text = settings_text(RunConfig(model="lcsvm"), ["model"])
    assert text == "Model L-CSVM" and "lcsvm" not in text


def test_runs_that_differ_in_their_classes_are_named_by_them():
    # "Classes two classes (the pair)" beside "Classes 3,5,0" read like a form's fields.
    names = run_names(
        {"a": RunConfig(), "b": RunConfig(classes="3,5,0"), "c": RunConfig(classes="all")}
    )
    assert names == {"a": "3 v 5", "b": "classes 3, 5, 0", "c": "all classes"}
    assert run_names({"a": RunConfig(classes="3,5,0")})["a"].endswith(", classes 3, 5, 0")


def test_runs_that_differ_in_many_settings_are_numbered_and_summed_up():
    """Nine runs of three presets were each named by every setting (6-8 lines a row)."""
    configs = {
        "a": RunConfig(),
        "b": RunConfig(dataset="shapes", class_a="horizontal", class_b="vertical", n_train=100,
                       gamma=1.0, n_filters=4, tune_baselines=True),
    }  # fmt: skip
    names = run_names(configs)
    assert names == {
        "a": "run 1: K-CSVM RBF γ 0.02, 2 filters, 50 images, 3 v 5",
        "b": "run 2: K-CSVM RBF γ 1, 4 filters, 100 images, horizontal v vertical",
    }
    # A switch in words, not Python's True.
    assert settings_text(RunConfig(tune_baselines=True), ["tune_baselines"]).endswith(" on")
