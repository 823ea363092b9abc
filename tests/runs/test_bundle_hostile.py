"""Run bundles that must neither slow nor fool the server (issue 37, rows 1, 5, 10, 11):
a bundle's shape bounded on read, crafted values refused by name, the app's own
multi-class exports reloaded, and scores recomputed from the stored predictions."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from csvm.runs.bundle import load_bundle, rescore
from csvm.runs.bundle_schema import HISTORY_COLUMNS
from csvm.runs.config import RunConfig
from csvm.runs.persistence import BundleError, export_run, history_csv
from csvm.runs.targets import load_data, run_model

PAIR = RunConfig(n_iter=2, n_train=40, baselines=("svm",))
OVO = RunConfig(classes="0,1,2", n_filters=1, n_iter=1, n_train=60, baselines=("svm",))
OVR = OVO.replace(multi_class="ovr")


def _trained(config: RunConfig, models=("csvm", "svm")) -> dict:
    return {m: run_model(lambda e: None, config, m) for m in models}


def _export(config: RunConfig, results: dict, digest: bool = True) -> bytes:
    data = load_data(config)
    return export_run(config, results, test_set=(data.X_test, data.y_test) if digest else None)


@pytest.fixture(scope="module")
def pair():
    return _trained(PAIR)


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _rezip(data: bytes, **members) -> bytes:
    """The export with some members replaced (bytes or JSON-able values) or removed (None)."""
    out = io.BytesIO()
    kept = {**_members(data), **members}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for name, value in kept.items():
            if value is not None:
                dst.writestr(name, value if isinstance(value, bytes) else json.dumps(value))
    return out.getvalue()


def _results(data: bytes) -> dict:
    return json.loads(_members(data)["results.json"])


# -- row 1: a bundle's shape is bounded on read --------------------------------------------
@pytest.mark.parametrize("columns", [30_000, 400_000])
def test_a_wide_history_is_refused_by_its_column_count(pair, columns):
    header = ",".join(f"c{i}" for i in range(columns))
    wide = f"{header}\n{','.join('1' * columns)}\n{','.join('2' * columns)}\n".encode()
    with pytest.raises(BundleError, match=f"history.csv has {columns:,} columns; a run export"):
        load_bundle(_rezip(_export(PAIR, pair), **{"history.csv": wide}))


def test_more_rows_than_the_settings_record_are_refused(pair):
    text = history_csv(pair["csvm"]["history"])
    head, *rows = text.splitlines()
    many = "\n".join([head] + rows * 10) + "\n"  # 2 iterations: 2 steps and a divergence
    with pytest.raises(BundleError, match="history.csv has more than 3 rows"):
        load_bundle(_rezip(_export(PAIR, pair), **{"history.csv": many.encode()}))


def test_an_unknown_column_is_left_out_and_named(pair):
    text = history_csv(pair["csvm"]["history"])
    head, *rows = text.splitlines()
    extra = "\n".join([head + ",shoe_size"] + [r + ",44" for r in rows]) + "\n"
    bundle = load_bundle(_rezip(_export(PAIR, pair), **{"history.csv": extra.encode()}))
    assert all("shoe_size" not in row for row in bundle.history)
    assert any("'shoe_size'" in p and "left out" in p for p in bundle.problems)


def test_every_column_a_run_records_is_known(pair):
    """The app's own exports lose nothing: K-CSVM, L-CSVM, multi-class and diverged runs."""
    lcsvm = run_model(lambda e: None, PAIR.replace(model="lcsvm"), "csvm")
    diverged = run_model(lambda e: None, PAIR.replace(step="constant", eta=1e4), "csvm")
    assert diverged["status"] == "diverged"
    multi = run_model(lambda e: None, OVR, "csvm")
    for result in (pair["csvm"], lcsvm, diverged, multi):
        header = history_csv(result["history"]).splitlines()[0].split(",")
        assert set(header) <= HISTORY_COLUMNS, set(header) - HISTORY_COLUMNS


def test_history_csv_keeps_the_first_seen_order_and_leaves_out_arrays():
    rows = [{"b": 1, "f": np.zeros(2), "t": {"x": 1.0}}, {"a": 2.5, "c": True, "p": [0, 1]}]
    assert history_csv(rows) == "b,a,c\n1,,\n,2.5,True\n"
    wide = [{f"c{i}": i for i in range(30_000)}] * 2  # linear: a dict of columns
    assert history_csv(wide).count("\n") == 3


# -- row 5: crafted values get named refusals ----------------------------------------------
def _with_cell(data: bytes, column: str, value: str, row: int = 1) -> bytes:
    lines = _members(data)["history.csv"].decode().splitlines()
    head = lines[0].split(",")
    cells = lines[row].split(",")
    cells[head.index(column)] = value
    lines[row] = ",".join(cells)
    return _rezip(data, **{"history.csv": ("\n".join(lines) + "\n").encode()})


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("objective", "abc", "row 1: objective is 'abc', not a finite number"),
        ("objective", "1e400", "not a finite number"),
        ("train_accuracy", "7", r"train_accuracy is 7, outside \[0, 1\]"),
        ("iteration", "5", "iteration 5, but the run's settings train 2"),
        ("classifier", "3", "sub-problem 3, but the run's settings have 1"),
        ("kind", "half_step", "records 'iteration' steps"),
        ("svm_hit_max_iter", "yes", "not True or False"),
        ("n_support", "1.5", "not a whole number"),
        ("model", "<script>", "is not one we know"),
    ],
)
def test_a_crafted_history_value_is_refused_by_name(pair, column, value, message):
    with pytest.raises(BundleError, match=message):
        load_bundle(_with_cell(_export(PAIR, pair), column, value))


def _with_result(data: bytes, model: str = "csvm", **fields) -> bytes:
    results = _results(data)
    for key, value in fields.items():
        if value is None:
            results[model].pop(key)
        else:
            results[model][key] = value
    return _rezip(data, **{"results.json": results})


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"misclassified": [99_999]}, "misclassified holds image 99,999, but the run has 200"),
        ({"confusion": None}, "the csvm result has no confusion"),
        ({"confusion": [[1, 2], [3]]}, r"not a 2×2 matrix of counts \(row 2 has 1 values\)"),
        ({"confusion": [[1, -2], [3, 4]]}, "outside"),
        ({"test_predictions": [7] * 200}, "hold labels other than -1, 1"),
        ({"n_test": 150}, "200 test predictions for n_test = 150"),
        ({"n_misclassified": 1e6}, "outside"),
        ({"per_class_accuracy": [0.5]}, "per_class_accuracy is not 2 numbers"),
        ({"confusion": [[1, 0], [0, 1]]}, "confusion counts 2 test images, but n_test is 200"),
    ],
)
def test_a_crafted_result_is_refused_by_name(pair, fields, message):
    with pytest.raises(BundleError, match=message):
        load_bundle(_with_result(_export(PAIR, pair), **fields))


def test_filters_of_another_shape_or_missing_are_refused(pair):
    data = _export(PAIR, pair)
    npy = io.BytesIO()
    np.save(npy, np.zeros((4, 7, 7)))
    bundle = load_bundle(_rezip(data, **{"filters.npy": npy.getvalue()}))
    with pytest.raises(BundleError, match=r"shape \(4, 7, 7\), but the run's settings give"):
        rescore(bundle, load_data(PAIR))
    with pytest.raises(BundleError, match="no filters.npy"):
        load_bundle(_rezip(data, **{"filters.npy": None}))
    np.save(npy := io.BytesIO(), np.zeros((2, 5)))
    with pytest.raises(BundleError, match=r"shape \(2, 5\), not filters"):
        load_bundle(_rezip(data, **{"filters.npy": npy.getvalue()}))


# -- row 10: the app's own multi-class exports reload ---------------------------------------
@pytest.mark.parametrize("config", [OVO, OVR], ids=["ovo", "ovr"])
def test_a_multi_class_export_reloads(config):
    results = _trained(config)
    bundle = rescore(load_bundle(_export(config, results)), load_data(config))
    assert bundle.verified and bundle.problems == []
    csvm = bundle.results["csvm"]
    assert csvm["n_support"] == results["csvm"]["n_support"]  # one per sub-problem
    assert csvm["pairs"] == results["csvm"]["pairs"]
    assert csvm["confused"] == results["csvm"]["confused"]
    assert csvm["per_class_accuracy"] == pytest.approx(results["csvm"]["per_class_accuracy"])
    assert csvm["label"] == "K-CSVM" and csvm["test_accuracy"] == results["csvm"]["test_accuracy"]
    np.testing.assert_array_equal(bundle.filters, results["csvm"]["filters"])
    assert bundle.filters.shape == (3, 1, 5, 5)
    assert {row["classifier"] for row in bundle.history} == {0, 1, 2}


# -- row 11: scores recomputed from the stored predictions ---------------------------------
def test_a_claimed_accuracy_is_replaced_by_what_the_predictions_give(pair):
    data = _with_result(_export(PAIR, pair), test_accuracy=1.0)
    bundle = rescore(load_bundle(data), load_data(PAIR))
    truth = pair["csvm"]["test_accuracy"]
    assert truth < 1.0 and bundle.results["csvm"]["test_accuracy"] == truth
    assert bundle.verified  # the images are the run's own; only the claim was false
    (note,) = bundle.problems
    assert "claims 100.0 % test accuracy for the K-CSVM" in note
    assert f"give {100 * truth:.1f} %" in note


def test_forged_scores_with_their_confusion_are_recomputed_too(pair):
    y = load_data(PAIR).y_test
    data = _with_result(
        _export(PAIR, pair),
        confusion=[[int(np.sum(y < 0)), 0], [0, int(np.sum(y > 0))]],
        misclassified=[],
        n_misclassified=0,
    )
    bundle = rescore(load_bundle(data), load_data(PAIR))
    assert bundle.results["csvm"]["confusion"] == pair["csvm"]["confusion"]
    assert bundle.results["csvm"]["n_misclassified"] == pair["csvm"]["n_misclassified"]
    assert any("confusion matrix or count of mistakes" in p for p in bundle.problems)


def test_an_export_without_a_digest_is_marked_unverified(pair):
    bundle = rescore(load_bundle(_export(PAIR, pair, digest=False)), load_data(PAIR))
    assert bundle.verified is False
    assert bundle.results["csvm"]["label"] == "K-CSVM (unverified)"
    assert bundle.results["svm"]["label"] == "plain SVM (unverified)"
    assert any("marked unverified" in p for p in bundle.problems)


def test_other_test_images_are_refused(pair):
    data = load_data(PAIR)
    other = export_run(PAIR, pair, test_set=(data.X_test + 1.0, data.y_test))
    with pytest.raises(BundleError, match="other test images than this server gives"):
        rescore(load_bundle(other), data)
    forged = _rezip(other, **{"results.json": {**_results(other), "test_set": {"sha256": "x"}}})
    with pytest.raises(BundleError, match="test_set is not the digest"):
        load_bundle(forged)


def test_a_label_claimed_by_the_file_is_not_kept(pair):
    data = _with_result(_export(PAIR, pair), label="K-CSVM: 100 % test")
    assert load_bundle(data).results["csvm"]["label"] == "K-CSVM"


def test_a_multi_class_result_without_predictions_is_refused():
    results = _trained(OVR, ("csvm",))
    with pytest.raises(BundleError, match="the csvm result has no test_predictions"):
        load_bundle(_with_result(_export(OVR, results), test_predictions=None))


def test_an_export_from_before_predictions_reloads_on_its_confusion_unverified():
    """v0.1 exports kept no test predictions: read on their confusion, marked unverified."""
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "export_v0.1.zip"
    bundle = load_bundle(fixture.read_bytes())
    bundle = rescore(bundle, load_data(bundle.config))
    assert not bundle.verified
    assert bundle.results["csvm"]["label"] == "K-CSVM (unverified)"
    assert bundle.results["csvm"]["test_accuracy"] == 0.875  # 175 of 200 on its diagonal
    assert any("holds no test predictions" in p for p in bundle.problems)


def test_predictions_of_only_some_models_are_dropped_from_all(pair):
    """McNemar's test pairs every model's predictions: one model without them leaves
    the others' out too (the headline and comparisons then skip the test)."""
    bundle = load_bundle(_with_result(_export(PAIR, pair), "svm", test_predictions=None))
    bundle = rescore(bundle, load_data(PAIR))
    assert not bundle.verified
    assert all("test_predictions" not in r for r in bundle.results.values())


def test_a_model_without_a_result_leaves_the_others_verified(pair):
    data = _rezip(
        _export(PAIR, pair), **{"results.json": {**_results(_export(PAIR, pair)), "svm": None}}
    )
    bundle = rescore(load_bundle(data), load_data(PAIR))
    assert bundle.verified and bundle.results["svm"] is None
    assert bundle.results["csvm"]["test_predictions"] == pair["csvm"]["test_predictions"].tolist()
