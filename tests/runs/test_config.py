"""RunConfig: one table drives validation, the URL, estimators, the CLI and the snippet."""

import argparse
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from csvm import KernelCSVM, LinearCSVM
from csvm.runs.config import SPECS, RunConfig, fit_to_datasets, parse
from csvm.runs.flags import add_cli_arguments, from_cli
from csvm.runs.presets import load_presets
from csvm.runs.query import from_query, to_query
from csvm.runs.snippet import python_snippet

ROOT = Path(__file__).resolve().parents[2]


def _value(name: str):
    """A strategy for any valid value of one setting."""
    spec = SPECS[name]
    if spec.kind == "bool":
        base = st.booleans()
    elif spec.kind == "set":
        base = st.lists(st.sampled_from(spec.choices), unique=True).map(
            lambda v: tuple(c for c in spec.choices if c in v)
        )
    elif spec.kind == "str":
        base = (
            st.sampled_from(spec.choices)
            if spec.choices
            else st.text("abcdefghij0123456789 -_", min_size=1, max_size=12)
            .map(str.strip)
            .filter(bool)
        )
    elif spec.kind == "classes":
        base = st.one_of(
            st.just("all"),
            st.lists(st.sampled_from("0123456789"), min_size=3, max_size=10, unique=True).map(
                ",".join
            ),
        )
    elif spec.kind == "layers":
        layer = st.builds(
            lambda p, n, act, pool: f"{p}x{p}x{n}{act}{pool}",
            st.integers(1, 5),
            st.integers(1, 4),
            st.sampled_from(["", "-abs", "-relu"]),
            st.sampled_from(["", "-avg2", "-max2", "-avg3s2"]),
        )
        base = st.lists(layer, min_size=1, max_size=2).map(",".join)
    elif spec.kind == "int":
        base = st.integers(int(spec.low), int(spec.high))
    elif spec.scale == "log" and spec.low > 0:
        base = st.floats(math.log10(spec.low), math.log10(spec.high)).map(lambda e: 10.0**e)
        base = base.filter(lambda v: spec.low <= v <= spec.high)
    else:
        base = st.floats(spec.low, spec.high, allow_nan=False)
    return st.one_of(st.none(), base) if spec.none_label else base


configs = st.fixed_dictionaries({name: _value(name) for name in SPECS}).map(
    lambda d: RunConfig(**d)
)


@settings(max_examples=150, deadline=None)
@given(configs)
def test_url_round_trip_is_identity(config):
    query = to_query(config)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in query.items())
    again, problems = from_query(query)
    assert problems == []
    assert again == config


@settings(max_examples=60, deadline=None)
@given(configs)
def test_estimator_params_agree_with_the_config(config):
    clf = config.build_estimator((1, 28, 28))
    assert isinstance(clf, LinearCSVM if config.model == "lcsvm" else KernelCSVM)
    params = clf.get_params()
    for name, spec in SPECS.items():
        if spec.param and config.model in spec.models:
            assert params.get(spec.param) == getattr(config, name), name
    assert params["filter_shape"] == (config.filter_size, config.filter_size)
    assert params["random_state"] == config.seed


def test_defaults_are_the_digits_preset_and_write_no_query():
    assert to_query(RunConfig()) == {}
    digits = next(p for p in load_presets() if p["name"] == "Digits: 3 vs 5, fast")
    config, problems = parse(digits["config"])
    assert problems == [] and config == RunConfig()


def test_every_preset_validates():
    for preset in load_presets():
        config, problems = parse(preset["config"], source=preset["name"])
        assert problems == [], (preset["name"], problems)
        assert config.problems() == [], preset["name"]


HOSTILE = {
    "n_iter": ["inf", "1e400", "-1", "0", "nan", "1.5", "x"],
    "seed": ["1e400", "-5", "2000000"],
    "C": ["0", "-1", "inf", "nan", "1e400", "1e30"],
    "eta": ["nan", "-0.1", "1e9"],
    "gamma": ["1e308", "0", "-inf"],
    "degree": ["1e20", "0", "2.5"],
    "regulariser": ["foo", "DFO1", ""],
    "model": ["svm", "<b>x</b>"],
    "dataset": ["[x](http://evil.example)", "![i](http://evil.example/a.png)", "a" * 10**6],
    "class_a": ["x" * 10**6, "\x00\x01"],
    "baselines": ["svm,rm -rf", "cnn,cnn,xyz"],
    "C_last_only": ["maybe"],
    "protocol": ["random"],
}


@pytest.mark.parametrize("name,raw", [(n, r) for n, values in HOSTILE.items() for r in values])
def test_a_hostile_value_is_named_and_replaced(name, raw):
    config, problems = from_query({name: raw})
    assert len(problems) == 1
    message = problems[0].message
    assert name in message and "instead" in message
    assert len(message) < 400  # a 1 MB value is never echoed whole
    assert getattr(config, name) == problems[0].used == getattr(RunConfig(), name)


def test_an_unknown_setting_is_reported_and_other_keys_of_the_url_are_not():
    config, problems = parse({"colour": "red"})
    assert config == RunConfig() and "unknown setting" in problems[0].message
    assert from_query({"run": "abc", "jobs": "csvm:1"}) == (RunConfig(), [])


def test_constructing_an_invalid_config_raises_with_the_name():
    with pytest.raises(ValueError, match="n_iter"):
        RunConfig(n_iter=0)
    with pytest.raises(ValueError, match="C"):
        RunConfig().replace(C=float("inf"))
    assert RunConfig(baselines=["cnn", "svm"]).baselines == ("svm", "cnn")


def test_cross_field_problems_say_what_to_change():
    assert "different classes" in RunConfig(class_a="3", class_b="3").problems()[0]
    assert "larger than the image" in RunConfig(filter_size=9).problems((1, 8, 8))[0]
    assert "Only 700" in RunConfig(n_train=5000).problems(n_available=700)[0]
    assert "Armijo" in RunConfig(eta=0.0, step="armijo").problems()[0]
    assert RunConfig(eta=0.0, step="relative").problems() == []


def test_fit_to_datasets_replaces_what_is_missing_here():
    here = {"mnist-5k": {"classes": [str(i) for i in range(10)]}}
    config, problems = fit_to_datasets(RunConfig(dataset="cifar10", class_a="cat"), here)
    assert config.dataset == "mnist-5k" and config.class_a == "3"
    assert [p.name for p in problems] == ["dataset", "class_a"]
    assert "python -m csvm data fetch cifar10" in problems[0].message


def test_cli_flags_come_from_the_table():
    parser = argparse.ArgumentParser()
    add_cli_arguments(parser)
    args = parser.parse_args(["--n-iter", "3", "--C", "1e-5", "--baselines", "svm"])
    assert from_cli(args) == RunConfig(n_iter=3, C=1e-5, baselines=("svm",))
    with pytest.raises(SystemExit):
        parser.parse_args(["--n-iter", "inf"])


def test_snippet_is_python_that_rebuilds_the_same_config():
    config = RunConfig(eta=0.25, C=None, C_last_only=True, baselines=())
    code = python_snippet(config)
    compile(code, "reproduce.py", "exec")
    assert "'eta': 0.25" in code and "'C': None" in code and "'C_last_only': True" in code
    values = code.split("parse(\n", 1)[1].split("\n)\n", 1)[0]
    rebuilt, problems = parse(eval(values))  # the literal the script hands to parse()
    assert problems == [] and rebuilt == config


def test_dataset_choices_match_the_registry():
    from csvm.data import DATASETS

    assert set(SPECS["dataset"].choices) == set(DATASETS)


# -- multi-class settings -----------------------------------------------------------------
DIGITS = [str(i) for i in range(10)]


@pytest.mark.parametrize(
    "raw,expected",
    [("0,1,2", "0,1,2"), (" 7 , 0,3 ", "7,0,3"), ("all", "all"), ("ALL", "all"), ("none", None)],
)
def test_classes_are_parsed_to_a_canonical_value(raw, expected):
    config, problems = from_query({"classes": raw})
    assert problems == [] and config.classes == expected
    assert from_query(to_query(config))[0] == config


@pytest.mark.parametrize(
    "raw,reason",
    [
        ("3,3,5", "names the class '3' twice"),
        ("1", "names 1 class;"),
        ("1,2", "names 2 classes"),
        (",".join(str(i) for i in range(11)), "names 11 classes"),
        ("a,,b", "empty or invalid class name"),
        ("x" * 1000, "too long"),
    ],
)
def test_hostile_classes_are_a_named_problem_not_an_exception(raw, reason):
    config, problems = from_query({"classes": raw, "multi_class": "ovr"})
    assert config.classes is None and config.multi_class == "ovr"
    assert len(problems) == 1 and problems[0].name == "classes"
    assert reason in problems[0].message and "Classes (classes)" in problems[0].message
    with pytest.raises(ValueError, match="Classes"):
        RunConfig(classes=raw)


def test_unknown_class_is_a_problem_against_the_dataset():
    config = RunConfig(classes="0,1,12")
    assert "'12' is not a class of mnist-5k" in config.problems(classes=DIGITS)[0]
    fitted, problems = fit_to_datasets(config, {"mnist-5k": {"classes": DIGITS}})
    assert fitted.classes is None
    assert [p.name for p in problems] == ["classes"]
    assert "Training the pair 3 / 5 instead" in problems[0].message
    assert from_query({"multi_class": "ovx"})[1][0].name == "multi_class"


def test_multiclass_ignores_the_pair_and_counts_its_sub_problems():
    config = RunConfig(classes="0,1,2", class_a="4", class_b="4")
    assert config.problems(classes=DIGITS) == []  # the pair is not used
    assert config.class_list(DIGITS) == ["0", "1", "2"]
    assert RunConfig(classes="all").class_list(DIGITS) == DIGITS
    assert [config.n_sub_problems(k) for k in (2, 3, 10)] == [1, 3, 45]
    ovr = config.replace(multi_class="ovr")
    assert [ovr.n_sub_problems(k) for k in (3, 10)] == [3, 10]
    assert config.build_estimator((1, 28, 28)).get_params()["multi_class"] == "ovo"
    assert ovr.build_estimator((1, 28, 28)).get_params()["multi_class"] == "ovr"
    with pytest.raises(ValueError, match="pair"):
        RunConfig().class_list(DIGITS)
    assert "load_data(config)" in python_snippet(config)


def test_presets_speak_plainly_first_and_name_no_file_or_command():
    """A preset's description is at most 40 words; the numbers behind it go in
    "measured" (the page's closed "How this was measured" part); neither names a file,
    a folder or a command of this repository."""
    import re

    from csvm.runs.presets import load_presets

    developer = re.compile(r"bench/|docs/|assets/|\.py\b|\.md\b|python -m|/work/|csvm\.\w")
    names = [p["name"] for p in load_presets()]
    assert len(set(names)) == len(names) and all(len(n) <= 30 for n in names)
    for preset in load_presets():
        assert len(preset["description"].split()) <= 40, preset["name"]
        for text in (preset["description"], preset.get("measured", "")):
            assert not developer.search(text), (preset["name"], developer.search(text))
    first = load_presets()[0]
    assert first["config"]["dataset"] == "shapes"  # the teaching set is trained first
