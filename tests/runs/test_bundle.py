"""A run's export read back (csvm.runs.bundle): the round trip, and hostile files refused
by name."""

import io
import json
import zipfile

import numpy as np
import pytest

from csvm.runs.bundle import load_bundle
from csvm.runs.config import RunConfig
from csvm.runs.persistence import MAX_IMPORT_BYTES, BundleError, export_run
from csvm.runs.replay import replay_model
from csvm.runs.targets import run_model

CONFIG = RunConfig(n_iter=2, n_train=50, baselines=("svm",))


@pytest.fixture(scope="module")
def exported():
    events = []
    results = {m: run_model(events.append, CONFIG, m) for m in ("csvm", "svm")}
    return results, export_run(CONFIG, results)


def _rezip(data: bytes, **members) -> bytes:
    """The export with some members replaced (bytes or JSON-able values)."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for name in src.namelist():
            if name not in members:
                dst.writestr(name, src.read(name))
        for name, value in members.items():
            dst.writestr(name, value if isinstance(value, bytes) else json.dumps(value))
    return out.getvalue()


def test_an_export_loads_back_with_its_settings_results_history_and_filters(exported):
    results, data = exported
    bundle = load_bundle(data)
    assert bundle.config == CONFIG and bundle.problems == []
    for model in ("csvm", "svm"):
        mine, theirs = bundle.results[model], results[model]
        assert mine["test_accuracy"] == theirs["test_accuracy"]
        assert mine["test_predictions"] == list(theirs["test_predictions"])
        assert mine["confusion"] == np.asarray(theirs["confusion"]).tolist()
    assert len(bundle.history) == len(results["csvm"]["history"]) == CONFIG.n_iter
    first, recorded = bundle.history[0], results["csvm"]["history"][0]
    assert first["kind"] == "iteration" and first["objective"] == pytest.approx(
        recorded["objective"]
    )
    assert isinstance(first["svm_hit_max_iter"], bool)
    np.testing.assert_array_equal(bundle.filters, results["csvm"]["filters"])


def test_the_replay_job_emits_the_steps_and_returns_the_result(exported):
    _, data = exported
    bundle = load_bundle(data)
    seen = []
    out = replay_model(seen.append, bundle.history, bundle.results["csvm"])
    assert out is bundle.results["csvm"] and seen == bundle.history


@pytest.mark.parametrize(
    ("member", "value", "message"),
    [
        ("results.json", {"csvm": {"test_accuracy": 7}}, "outside"),
        ("results.json", {"csvm": {"test_accuracy": "0.9"}}, "where a number belongs"),
        ("results.json", {"csvm": {"status": "<script>"}}, "status"),
        ("results.json", {"svm": None}, "no CSVM result"),
        ("results.json", {"csvm": {"test_predictions": list(range(200_000))}}, "at most"),
        ("results.json", [1, 2], "does not hold a mapping"),
        ("results.json", b"[" * 100_000, "not what a run export holds"),
        ("history.csv", b"kind,objective\niteration,nan\n", "finite"),
        ("config.json", b"\xff\xfe", "not what a run export holds"),
    ],
)
def test_a_hostile_bundle_is_refused_by_name(exported, member, value, message):
    _, data = exported
    with pytest.raises(BundleError, match=message):
        load_bundle(_rezip(data, **{member: value}))


def test_a_zip_bomb_and_other_files_are_refused_before_inflating(exported):
    _, data = exported
    bomb = _rezip(data, **{"results.json": b" " * (MAX_IMPORT_BYTES + 10)})
    assert len(bomb) < MAX_IMPORT_BYTES  # small on disk, large inflated
    with pytest.raises(BundleError, match="unpacks to more than"):
        load_bundle(bomb)
    with pytest.raises(BundleError, match="Not a zip"):
        load_bundle(b"hello")
    with pytest.raises(BundleError, match="bytes; a run export takes at most"):
        load_bundle(b"PK\x03\x04" + b"0" * (MAX_IMPORT_BYTES + 1))
