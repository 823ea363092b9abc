"""A Dask worker started with ``--preload csvm.jobs.dask_preload`` is warm before its first
Train job: the library imported, the presets' bundled data loaded, malloc's thresholds its
own again."""

from __future__ import annotations

import sys

import pytest

from csvm.jobs import dask_preload
from csvm.runs.presets import load_presets

distributed = pytest.importorskip("distributed")


def test_only_presets_whose_data_ship_with_the_library_are_loaded():
    datasets = {config.dataset for config in dask_preload._offline_presets()}
    assert datasets == {"shapes", "mnist-5k"}
    assert {p["config"].get("dataset") for p in load_presets()} >= {"mnist", "cifar10"}


def test_warm_loads_the_data_and_fits_each_model_once(monkeypatch):
    loaded, fitted = [], []
    monkeypatch.setattr("csvm.runs.targets.load_data", lambda config: loaded.append(config))
    monkeypatch.setattr(
        "csvm.runs.targets.run_model",
        lambda emit, config, model: fitted.append((config["n_train"], config["n_iter"], model)),
    )
    assert dask_preload.warm() >= 0
    assert [c.dataset for c in loaded][:1] == ["shapes"] and len(loaded) >= 2
    assert fitted == [(40, 1, "csvm"), (40, 1, "svm"), (40, 1, "cnn")]


def test_a_failed_warm_up_is_logged_and_the_worker_starts(monkeypatch, caplog):
    def broken():
        raise RuntimeError("no data here")

    monkeypatch.setattr(dask_preload, "warm", broken)
    dask_preload.dask_setup(None)
    assert "warm-up failed" in caplog.text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt is glibc's")
def test_the_nannys_trim_threshold_is_undone(monkeypatch):
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    monkeypatch.setattr(dask_preload, "warm", lambda: 0.0)
    assert dask_preload._undo_malloc_trim()


def _state() -> dict:
    """What a task on the preloaded worker finds (run there)."""
    import sys

    from csvm.data.registry import offline_split

    return {
        "targets": "csvm.runs.targets" in sys.modules and "csvm.runs.tuned" in sys.modules,
        "splits cached": offline_split.cache_info().currsize,
    }


@pytest.mark.slow  # a worker process of its own, warmed by the preload: about 10 s
def test_a_worker_started_with_the_preload_has_the_targets_imported():
    with (
        distributed.LocalCluster(
            n_workers=1,
            processes=True,
            threads_per_worker=1,
            host="127.0.0.1",
            scheduler_port=0,
            dashboard_address=None,
            preload=["csvm.jobs.dask_preload"],
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        state = client.submit(_state, pure=False).result(timeout=120)
    assert state == {"targets": True, "splits cached": 2}  # the shapes and the digits
