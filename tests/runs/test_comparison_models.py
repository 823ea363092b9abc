"""The comparison models trained beside a Train run (issue 21): each gets a baseline's
result (row, interval, McNemar test) and the data of its picture."""

import numpy as np
import pytest

from csvm.figures.comparisons import hidden_outputs_figure, hog_figure, mkl_weights_figure
from csvm.runs.comparison_models import recommended_note
from csvm.runs.config import RunConfig
from csvm.runs.summary import comparisons
from csvm.runs.targets import load_data, result_rows, run_model


@pytest.mark.parametrize("model", ["mkl", "hog", "mlsvm", "recommended"])
def test_a_comparison_model_gets_a_row_a_test_and_its_picture(model):
    config = RunConfig(n_train=80, baselines=("svm", model))
    events = []
    result = run_model(events.append, config.to_dict(), model)
    assert events[-1]["kind"] == "result" and events[-1]["model"] == model
    assert 0.5 < result["test_accuracy"] <= 1
    data = load_data(config)
    assert result["test_predictions"].shape == data.y_test.shape
    svm = run_model(events.append, config.to_dict(), "svm")
    outcomes = {
        "svm": {"state": "done", "result": svm, "events": []},
        model: {"state": "done", "result": result, "events": []},
    }
    rows = result_rows(config, outcomes)
    labels = {
        "mkl": "filter-bank MKL",
        "hog": "HOG + SVM",
        "mlsvm": "two-layer SVM",
        # csvm.recommended at 80 images: HOG + RBF SVM with C 10 (up to 200 images)
        "recommended": "recommended model: HOG + RBF SVM, C 10",
    }
    assert rows[1]["model"] == labels[model]
    assert rows[1]["95 % interval"] != "–"  # an interval, not the blank of no result
    assert any(
        "McNemar" in line or "p " in line for line in comparisons(config, outcomes, data.y_test)
    )
    picture = result["picture"]
    if model == "mkl":
        assert len(picture["weights"]) == len(picture["filter_names"]) == len(picture["bank"])
        assert np.all(np.asarray(picture["weights"]) >= 0)
        fig = mkl_weights_figure(picture["filter_names"], picture["bank"], picture["weights"])
        assert fig.layout.title.text.startswith("MKL over a filter bank")
    elif model == "hog":
        assert picture["hog_image"].shape == picture["image"].shape == (28, 28)
        assert hog_figure(picture["image"], picture["hog_image"]).data
    elif model == "recommended":
        assert picture["estimator"] == "HOG + RBF SVM, C 10" and picture["n_train"] == 80
        note = recommended_note(result)
        assert note.startswith(
            "Recommended model: csvm.recommended chose HOG + RBF SVM, C 10 for 80 training "
            "images — the most accurate method at every measured size of the learning curves"
        )
        assert "C 10 up to 200 images" in note
    else:
        assert picture["hidden"].shape[0] == len(picture["pinned"]) == 6
        fig = hidden_outputs_figure(picture["hidden"], [str(i) for i in picture["pinned"]])
        assert fig.data[0].z.shape == picture["hidden"].shape


def test_comparison_models_are_baselines_in_the_settings_and_links():
    from csvm.runs.query import from_query, to_query

    config, problems = from_query({"baselines": "svm,mkl,hog,mlsvm,recommended"})
    assert problems == [] and config.baselines == ("svm", "mkl", "hog", "mlsvm", "recommended")
    assert from_query(to_query(config))[0] == config
    with pytest.raises(ValueError, match="Unknown model"):
        run_model(lambda e: None, config.to_dict(), "forest")


def test_the_recommended_comparison_is_csvm_recommended_at_the_runs_size(monkeypatch):
    """Its estimator is whatever csvm.recommended gives for the split's training images:
    HOG + RBF SVM (C 1 above 200 images) here, the plain RBF SVM above 15,000 (the limit
    lowered so that a small run reaches it)."""
    from csvm.model import recommend

    config = RunConfig(n_train=300, baselines=("recommended",))
    events = []
    result = run_model(events.append, config.to_dict(), "recommended")
    assert result["picture"]["estimator"] == "HOG + RBF SVM, C 1"
    assert result["label"] == "recommended model: HOG + RBF SVM, C 1"
    assert recommended_note({"picture": {}}) is None and recommended_note(None) is None
    monkeypatch.setattr(recommend, "GRAM_LIMIT", 100)
    result = run_model(events.append, config.to_dict(), "recommended")
    assert result["picture"]["estimator"] == "plain RBF SVM, γ 0.03"
    assert "HOG's kernel (n² numbers) would not fit" in recommended_note(result)
    assert 0.5 < result["test_accuracy"] <= 1
