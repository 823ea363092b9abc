"""Run configurations: validation messages, URL round trips, the reproduce snippet."""

import numpy as np
import pytest

from csvm.experiments import (
    DEFAULT_CONFIG,
    build_csvm,
    config_from_query,
    config_to_query,
    pinned_indices,
    python_snippet,
    validate_config,
)
from csvm.kernelised import KernelCSVM
from csvm.linear import LinearCSVM


def test_default_config_is_valid():
    assert validate_config(DEFAULT_CONFIG, (1, 28, 28)) == []


@pytest.mark.parametrize(
    "change,fragment",
    [
        ({"class_b": "3"}, "two different classes"),
        ({"eta": -1.0}, "η must be"),
        ({"lam": -0.5}, "λ must be"),
        ({"degree": 0}, "Degree"),
        ({"filter_size": 30}, "larger than the image"),
        ({"C": -1.0}, "C must be"),
        ({"n_train": 5}, "at least 10"),
        ({"kernel": "sigmoid"}, "Unknown kernel"),
    ],
)
def test_invalid_settings_say_what_to_change(change, fragment):
    errors = validate_config({**DEFAULT_CONFIG, **change}, (1, 28, 28))
    assert any(fragment in e for e in errors), errors


def test_training_size_above_available_is_refused():
    errors = validate_config({**DEFAULT_CONFIG, "n_train": 5000}, (1, 28, 28), n_available=800)
    assert any("Only 800" in e for e in errors)


def test_query_round_trip_keeps_every_setting():
    config = {
        **DEFAULT_CONFIG,
        "eta": 0.05,
        "C": 1e-11,
        "model": "lcsvm",
        "baselines": [],
        "n_train": None,
        "C_last_only": True,
        "seed": 3,
        "class_a": "airplane",
    }
    query = config_to_query(config)
    assert all(isinstance(v, str) for v in query.values())
    assert config_from_query(query) == config
    assert config_to_query(DEFAULT_CONFIG) == {}


def test_bad_query_values_fall_back_to_defaults():
    config = config_from_query({"eta": "fast", "n_iter": "x", "seed": "4"})
    assert config["eta"] == DEFAULT_CONFIG["eta"]
    assert config["n_iter"] == DEFAULT_CONFIG["n_iter"]
    assert config["seed"] == 4


def test_build_csvm_maps_the_settings():
    k = build_csvm({**DEFAULT_CONFIG, "C": 0.5, "filter_size": 3}, (1, 28, 28))
    assert isinstance(k, KernelCSVM) and k.C == 0.5 and k.filter_shape == (3, 3)
    l_ = build_csvm({**DEFAULT_CONFIG, "model": "lcsvm", "lam_w": 0.2}, (1, 28, 28))
    assert isinstance(l_, LinearCSVM) and l_.lam_w == 0.2


def test_pinned_indices_three_per_class():
    y = np.array([1, -1, -1, 1, 1, -1, -1, 1, 1])
    idx = pinned_indices(y)
    assert list(y[idx]) == [-1, -1, -1, 1, 1, 1]


def test_snippet_is_valid_python_with_the_config():
    code = python_snippet({**DEFAULT_CONFIG, "eta": 0.25})
    compile(code, "reproduce.py", "exec")
    assert '"eta": 0.25' in code and "None" in code
