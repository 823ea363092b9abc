"""Job targets for tests/test_jobs.py (spawned workers import them by module name)."""

import os
import time

import numpy as np

# Lets a test watch a worker in its "importing" phase (set only around a spawn pool).
if os.environ.get("CSVM_TEST_IMPORT_DELAY"):
    time.sleep(float(os.environ["CSVM_TEST_IMPORT_DELAY"]))


def count(emit, n=5, pause=0.0):
    for i in range(n):
        emit({"i": i, "square": np.array([i * i])})
        time.sleep(pause)
    return {"total": n, "array": np.arange(n)}


def long_svm_solve(emit, n=6000, seed=0):
    """An SVM fit that takes far longer than the test waits: Stop must end it."""
    from sklearn.svm import SVC

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 50))
    y = rng.integers(0, 2, n)
    emit({"started": True})
    SVC(kernel="rbf", C=1e6, tol=1e-12, cache_size=1).fit(X, y)
    return "finished"


def sleeper(emit, seconds=30.0):
    emit({"started": True})
    time.sleep(seconds)
    return "woke"


def raises(emit):
    emit({"about": "to fail"})
    raise ValueError("bad setting: gamma must be positive")


def diverges(emit):
    from csvm.exceptions import DivergenceError

    raise DivergenceError("diverged with eta=10", cause="norm-explosion", suggested_eta=1.0)


def crashes(emit):
    emit({"about": "to crash"})
    os._exit(3)


def unpicklable_result(emit):
    emit({"ok": True})
    return lambda: None  # a lambda cannot be pickled back to the parent


def child_info(emit):
    """What the spawned child sees: its sys.path, BLAS variables and thread limits."""
    import sys

    from threadpoolctl import threadpool_info

    return {
        "sys_path": list(sys.path),
        "env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")},
        "threads": [info["num_threads"] for info in threadpool_info()],
    }


def torn_message(emit):
    """Start a message on the outbox pipe, then die before its end (as under the OOM killer)."""
    import gc
    import struct
    from multiprocessing.connection import Connection

    emit({"before": True})
    time.sleep(0.3)  # let the parent read the first event
    outbox = [
        c for c in gc.get_objects() if isinstance(c, Connection) and not c.closed and c.writable
    ]
    assert len(outbox) == 1, outbox
    # A header announcing 10 MB, then only 1 kB of it.
    os.write(outbox[0].fileno(), struct.pack("!i", 10_000_000) + b"x" * 1000)
    time.sleep(0.5)  # the parent is now inside the read of that message
    os._exit(9)


def chatty(emit, n_events=300, result_mb=16):
    """Many image-sized events at full speed, then a result of several MB."""
    t0 = time.perf_counter()
    for i in range(n_events):
        emit({"i": i, "image": np.full((28, 28), float(i))})
    seconds = time.perf_counter() - t0
    return {"emit_seconds": seconds, "big": np.ones(result_mb * 2**20 // 8)}


def echo_commands(emit, timeout=20.0):
    """Wait for commands sent with JobPool.send; emit each one; end on {"cmd": "stop"}."""
    emit({"ready": True, "pending": emit.pending()})
    received = []
    while True:
        command = emit.receive(timeout=timeout)
        if command is None:
            break
        received.append(command)
        emit({"got": command, "pending": emit.pending()})
        if command.get("cmd") == "stop":
            break
    return received


def wait_then_echo(emit, seconds=1.0):
    """Sleep first, so commands pile up; then report whether one is pending and drain them."""
    time.sleep(seconds)
    pending = emit.pending()
    received = []
    while (command := emit.receive(timeout=0.5)) is not None:
        received.append(command)
    return {"pending": pending, "received": received}


def blob(emit, kb=100):
    """A result of ``kb`` KiB, to fill the finished-job byte budget."""
    emit({"kb": kb})
    return b"x" * (kb * 1024)


def long_run(emit, n_events=20000, n_filters=8, maps_shape=(6, 24, 24)):
    """A long K-CSVM-like run: every event carries its filters and the pinned maps."""
    rng = np.random.default_rng(0)
    filters = rng.standard_normal((n_filters, 1, 5, 5))
    maps = rng.standard_normal(maps_shape).astype(np.float32)
    for i in range(n_events):
        emit(
            {
                "kind": "iteration",
                "model": "kcsvm",
                "classifier": 0,
                "iteration": i,
                "objective": 1.0 / (i + 1),
                "filter_norm": float(i),
                "filters": filters + i,
                "pinned_maps": maps,
            }
        )
    return {"iterations": n_events}


def spin(emit, seconds=60.0):
    """Busy Python code (a CPU limit must end it long before ``seconds`` of wall time)."""
    emit({"spinning": True})
    deadline = time.monotonic() + seconds
    total = 0
    while time.monotonic() < deadline:
        total += sum(range(1000))
    return total
