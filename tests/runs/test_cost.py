"""The run-time estimate: grows as it should, and agrees with a run measured here."""

import pytest

from csvm.runs.config import RunConfig
from csvm.runs.cost import estimate_breakdown, estimate_seconds, format_duration, load_model

MNIST = (1, 28, 28)
BASE = {
    "model": "kcsvm",
    "kernel": "poly",
    "degree": 2,
    "n_iter": 15,
    "n_filters": 1,
    "filter_size": 5,
    "step": "constant",
    "baselines": ["svm", "cnn"],
    "cnn_epochs": 5,
    "cnn_hidden": 100,
}


@pytest.mark.parametrize("model", ["kcsvm", "lcsvm"])
def test_estimate_grows_with_images_iterations_and_filters(model):
    base = {**BASE, "model": model}
    by_n = [estimate_seconds(base, n, MNIST) for n in (200, 600, 2000, 11552)]
    assert all(a < b for a, b in zip(by_n, by_n[1:], strict=False)), by_n
    by_iter = [estimate_seconds({**base, "n_iter": k}, 600, MNIST) for k in (1, 15, 100, 1000)]
    assert all(a < b for a, b in zip(by_iter, by_iter[1:], strict=False)), by_iter
    assert estimate_seconds({**base, "n_filters": 8}, 2000, MNIST) > by_n[2]
    # the example: all of MNIST 3 vs 5, 1000 iterations, 8 filters: not minutes
    assert estimate_seconds({**base, "n_iter": 1000, "n_filters": 8}, 11552, MNIST) > 3600


def test_breakdown_has_the_jobs_the_run_asks_for():
    both = estimate_breakdown(BASE, 600, MNIST)
    assert set(both) == {"csvm", "svm", "cnn"} and all(v > 0 for v in both.values())
    assert estimate_seconds(BASE, 600, MNIST) == max(both.values())
    assert set(estimate_breakdown({**BASE, "baselines": []}, 600, MNIST)) == {"csvm"}
    armijo = estimate_breakdown({**BASE, "step": "armijo"}, 600, MNIST)["csvm"]
    assert armijo >= both["csvm"] * 0.99
    with pytest.raises(ValueError, match="filter_size 30"):
        estimate_seconds({**BASE, "filter_size": 30}, 600, MNIST)
    with pytest.raises(ValueError, match="image_shape"):
        estimate_seconds(BASE, 600, (28,))


def test_the_model_file_says_how_it_was_measured():
    model = load_model()
    assert "bench.bench_cost" in model["command"] and model["runs"]
    assert all(v >= 0 for coefs in model["coefficients"].values() for v in coefs)


def test_durations_read_as_people_say_them():
    assert format_duration(0.4) == "under a second"
    assert format_duration(12.3) == "about 12 s"
    assert format_duration(40 * 60 + 10) == "about 40 min"
    assert format_duration(2 * 3600 + 600) == "about 2 h 10 min"


# How close an estimate comes to a measured run is a speed figure, not behaviour: it is
# measured by bench/bench_cost.py (every run's measured and fitted seconds, printed).


def test_a_stack_of_layers_is_costed_by_its_own_maps():
    base = RunConfig(n_train=500, n_iter=15).to_dict()
    small = estimate_breakdown({**base, "layers": "5x5x2-abs-max2"}, 500, (1, 28, 28))
    big = estimate_breakdown({**base, "layers": "5x5x8-abs-max2,3x3x8-abs-max2"}, 500, (1, 28, 28))
    assert 0 < small["csvm"] < big["csvm"]  # eight filters in two layers cost more
