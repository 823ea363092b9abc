"""Sub-problems and sweep cells on a real Dask cluster give the local results."""

from functools import partial

import numpy as np
import pytest

from csvm import KernelCSVM
from csvm.exceptions import CSVMError
from csvm.parallel import SCHEDULER_ENV, backend, current_client, run_tasks, sweep_executor
from csvm.runs.config import RunConfig
from csvm.runs.sweeps import run_cell, run_sweep, sweep_configs
from tests._synthetic import square_blobs
from tests._synthetic import without_timings as _strip

distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes with one thread each, on the loopback interface only."""
    with distributed.LocalCluster(
        n_workers=2,
        processes=True,
        threads_per_worker=1,
        host="127.0.0.1",
        dashboard_address=None,
    ) as c:
        yield c


blobs = partial(square_blobs, n_per_class=15, classes=(0, 1, 2, 3), dtype=np.float32)


def _make(**kw):
    params = dict(image_shape=(10, 10), filter_shape=(3, 3), n_iter=4, random_state=3)
    return KernelCSVM(**{**params, **kw})


def test_ovo_filters_on_the_cluster_equal_the_local_ones(cluster):
    X, y = blobs()
    local = _make().fit(X, y)
    events = []
    with backend(cluster.scheduler_address) as client:
        assert current_client() is client
        with distributed.get_task_stream(client) as stream:
            remote = _make().fit(X, y, callback=events.append)
    assert current_client() is None
    # The six pairs ran as six tasks on the two workers.
    assert len(stream.data) == 6 and len({t["worker"] for t in stream.data}) >= 1
    assert remote.filters_.shape == (6, 1, 3, 3)
    np.testing.assert_array_equal(remote.filters_, local.filters_)
    assert _strip(remote.history_) == _strip(local.history_)
    np.testing.assert_array_equal(remote.predict(X), local.predict(X))
    # Callback events were replayed, each with its filters, one sub-problem at a time.
    assert len(events) == len(local.history_) and all("filters" in e for e in events)
    for k in range(6):
        its = [e["iteration"] for e in events if e["classifier"] == k]
        assert its == sorted(its) and len(its) == 4


def test_a_stack_of_layers_on_the_cluster_equals_the_local_one(cluster):
    X, y = blobs()
    local = _make(layers="3x3x2-abs-max2,2x2x2").fit(X, y)
    with backend(cluster.scheduler_address):
        remote = _make(layers="3x3x2-abs-max2,2x2x2").fit(X, y)
    for mine, theirs in zip(remote.layer_filters_, local.layer_filters_, strict=True):
        for a, b in zip(mine, theirs, strict=True):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(remote.predict(X), local.predict(X))


def test_virtual_support_vectors_on_the_cluster_equal_the_local_ones(cluster):
    from csvm.model.virtual import SHIFTS_4, refit_virtual

    X, y = blobs()
    local = refit_virtual(_make(n_iter=2).fit(X, y), X, SHIFTS_4)
    remote = _make(n_iter=2).fit(X, y)
    with backend(cluster.scheduler_address):
        refit_virtual(remote, X, SHIFTS_4)
    for name in ("support_", "support_shift_", "dual_coef_"):
        for a, b in zip(getattr(remote, name), getattr(local, name), strict=True):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(remote.decision_function(X), local.decision_function(X))


def test_lcsvm_half_steps_on_the_cluster_equal_the_local_ones(cluster):
    from csvm import LinearCSVM

    X, y = blobs(classes=(0, 1, 2))
    params = dict(image_shape=(10, 10), filter_shape=(3, 3), n_iter=2, random_state=1)
    local = LinearCSVM(**params).fit(X, y)
    with backend(cluster.scheduler_address):
        remote = LinearCSVM(**params).fit(X, y)
    np.testing.assert_array_equal(remote.filters_, local.filters_)
    assert {e["kind"] for e in remote.history_} == {"half_step"}
    assert _strip(remote.history_) == _strip(local.history_)


def test_a_stop_on_the_cluster_cancels_the_rest(cluster):
    X, y = blobs()
    seen = []

    def stop_at_once(event):
        seen.append(event["classifier"])
        return False

    with backend(cluster.scheduler_address):
        with pytest.raises(CSVMError, match="stopped by the callback"):
            _make(n_iter=2).fit(X, y, callback=stop_at_once)
    assert len(set(seen)) == 1  # only the first finished sub-problem was replayed


def test_2x2_sweep_on_the_cluster_equals_the_local_sweep(cluster):
    base = {**RunConfig().to_dict(), "n_train": 60, "n_iter": 2}
    cells = sweep_configs(base, "lam", [0.01, 0.1], "eta", [0.05, 0.1])
    local = run_sweep(cells, n_jobs=2)
    with backend(cluster.scheduler_address):
        remote = run_sweep(cells)
    keep = ("val_accuracy", "train_accuracy", "objective", "diverged")
    assert [{k: r[k] for k in keep} for r in remote] == [{k: r[k] for k in keep} for r in local]


def test_sweep_executor_reads_the_environment(cluster, monkeypatch):
    monkeypatch.delenv(SCHEDULER_ENV, raising=False)
    assert sweep_executor() is None
    monkeypatch.setenv(SCHEDULER_ENV, cluster.scheduler_address)
    executor = sweep_executor()
    assert executor is not None
    config = {**RunConfig().to_dict(), "n_train": 60, "n_iter": 2}
    try:
        remote = executor.submit(run_cell, config).result(timeout=120)
    finally:
        executor.shutdown(cancel_futures=True)
    assert remote["val_accuracy"] == run_cell(config)["val_accuracy"]


def test_a_stop_does_not_wait_for_running_tasks(cluster):
    import time

    start = time.perf_counter()
    with backend(cluster.scheduler_address) as client:
        with distributed.get_task_stream(client) as stream:
            run_tasks(time.sleep, [(0.0,)] + [(3.0,)] * 6, on_result=lambda i, r: False)
            returned = time.perf_counter() - start
            time.sleep(4.0)  # long enough for the two running sleeps to end
    # Awaiting all six 3 s tasks on two workers would take 9 s; a stop returns at once,
    # and of the cancelled tasks only those already running (two) ever execute.
    assert returned < 6.0
    assert len(stream.data) <= 3


def test_an_unreachable_scheduler_says_what_to_do():
    with pytest.raises(CSVMError, match="Cannot reach the Dask scheduler"):
        with backend("tcp://127.0.0.1:9", timeout=1):
            pass


def test_the_sweep_page_runs_its_cells_on_the_cluster(cluster, monkeypatch):
    """CSVM_DASK_SCHEDULER sends the Sweep page's cells to the cluster: the heatmap fills."""
    import json
    import time
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(SCHEDULER_ENV, cluster.scheduler_address)
    root = Path(__file__).resolve().parents[2]
    at = AppTest.from_file(str(root / "pages" / "sweep.py"), default_timeout=60).run()
    assert any("Dask cluster" in c.value for c in at.caption)
    at.number_input(key="sw_n_train").set_value(60)
    at.number_input(key="sw_n_iter").set_value(2)
    at.text_input(key="sw_x_values_gamma").set_value("0.01, 0.1")
    at.text_input(key="sw_y_values_C").set_value("0.05, 0.1").run()
    at.button(key="sw_start").click().run()
    assert "futures" in at.session_state["sweep"]
    deadline = time.time() + 120
    while time.time() < deadline:
        at.run()
        if at.success:
            break
        time.sleep(0.5)
    assert at.success and "Best" in at.success[0].value
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["data"][0]["z"]


def test_joblibs_dask_backend_is_honoured(cluster):
    """scikit-learn's convention, ``joblib.parallel_config(backend="dask")``, sends the
    sub-problems to the cluster as csvm.parallel.backend does, with the same result."""
    import joblib

    X, y = blobs()
    local = _make().fit(X, y)
    with distributed.Client(cluster) as client:
        with joblib.parallel_config(backend="dask"):
            assert current_client() is client
            with distributed.get_task_stream(client) as stream:
                remote = _make().fit(X, y)
    assert current_client() is None
    assert len(stream.data) == 6  # the six one-vs-one pairs of four classes
    np.testing.assert_array_equal(remote.filters_, local.filters_)


def test_a_scheduler_without_csvm_is_named(tmp_path):
    """A real ``dask scheduler`` whose Python cannot import csvm (started outside the
    checkout, without PYTHONPATH, csvm hidden even where requirements.txt installed it):
    connecting says what to install, instead of every task failing later with a
    deserialization error."""
    import os
    import subprocess
    import sys
    import time

    from tests._browser import free_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            # None in sys.modules: `import csvm` and find_spec("csvm") fail in that process.
            "import sys; sys.modules['csvm'] = None; "
            "from distributed.cli.dask_scheduler import main; main()",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--dashboard-address",
            ":0",
            "--no-dashboard",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        address = f"tcp://127.0.0.1:{port}"
        deadline = time.time() + 30
        while not _listening(port):  # the scheduler is up once its port answers
            assert time.time() < deadline and proc.poll() is None, "no scheduler started"
            time.sleep(0.2)
        with pytest.raises(CSVMError, match="cannot import csvm"):
            with backend(address, timeout=10):
                pass
    finally:
        proc.terminate()
        proc.wait(10)


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_the_sweep_page_names_an_unreachable_cluster_and_uses_its_own_pool(monkeypatch):
    """CSVM_DASK_SCHEDULER pointing at nothing: the page says why and offers the local pool
    (no "This app has encountered an error")."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from tests._browser import free_port

    monkeypatch.setenv(SCHEDULER_ENV, f"tcp://127.0.0.1:{free_port()}")
    monkeypatch.setattr("csvm.parallel._CONNECT_TIMEOUT", 1)
    root = Path(__file__).resolve().parents[2]
    at = AppTest.from_file(str(root / "pages" / "sweep.py"), default_timeout=60).run()
    assert not at.exception
    assert any("Cannot reach the Dask scheduler" in w.value for w in at.warning)
    assert any("own workers" in w.value for w in at.warning)
    assert not at.button(key="sw_start").disabled


def test_curve_cells_on_the_cluster_equal_the_local_ones(cluster):
    from csvm.analysis.curves import run_curve

    args = ("mnist-5k", ("4", "9"), ["svm", "layers"], [20], [0, 1])
    local = run_curve(*args)
    with backend(cluster.scheduler_address):
        remote = run_curve(*args)
    keep = ("method", "n_train", "seed", "params", "test_accuracy", "correct")
    assert [{k: c[k] for k in keep} for c in remote] == [{k: c[k] for k in keep} for c in local]


def test_the_curve_page_runs_its_cells_on_the_cluster(cluster, monkeypatch):
    """CSVM_DASK_SCHEDULER sends the Learning-curves page's cells to the cluster."""
    import time
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(SCHEDULER_ENV, cluster.scheduler_address)
    root = Path(__file__).resolve().parents[2]
    at = AppTest.from_file(str(root / "pages" / "curve.py"), default_timeout=60).run()
    assert any("Dask cluster" in c.value for c in at.caption)
    at.multiselect(key="cv_methods").set_value(["svm"])
    at.text_input(key="cv_sizes").set_value("20,30")
    at.number_input(key="cv_seeds").set_value(1).run()
    at.button(key="cv_start").click().run()
    assert "futures" in at.session_state["curve"]
    deadline = time.time() + 120
    while time.time() < deadline:
        at.run()
        if at.dataframe and len(at.dataframe[-1].value) == 2:
            break
        time.sleep(0.5)
    assert list(at.dataframe[-1].value["training images"]) == [20, 30]
