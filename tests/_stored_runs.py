"""Runs for the run store's app tests: real results of a small Train run (trained here, in
a second), saved under chosen names, owners and statuses."""

from __future__ import annotations

import uuid
from functools import cache
from typing import Any

from csvm.runs.config import RunConfig
from csvm.runs.persistence import digest_test_set
from csvm.runs.targets import load_data, run_model, step_events
from csvm.store import RunStore

#: A Train run small enough to train in about a second.
SMALL = RunConfig(n_train=200, n_iter=2, baselines=("svm",))


class _Emit(list):
    """A job's emitter for a run trained in this process: keeps the events."""

    def __call__(self, event: dict[str, Any]) -> None:
        self.append(event)

    def receive(self, timeout: float | None = None) -> None:
        return None

    def pending(self) -> bool:
        return False


@cache
def trained(config: RunConfig = SMALL) -> tuple[dict[str, Any], list[dict[str, Any]], dict]:
    """The results of ``config``'s CSVM and baselines, the CSVM's steps, and the digest
    of its test images (as the app stores them)."""
    results, steps = {}, []
    for model in ("csvm", *config.baselines):
        emit = _Emit()
        results[model] = run_model(emit, config=config.to_dict(), model=model)
        if model == "csvm":
            steps = step_events(list(emit))
    data = load_data(config)
    test_set = {"sha256": digest_test_set(data.X_test, data.y_test), "n": len(data.y_test)}
    return results, steps, test_set


def save_run(
    store: RunStore,
    name: str,
    *,
    owner: str | None = None,
    status: str = "done",
    class_code: str | None = None,
    accuracy: float | None = None,
    config: RunConfig = SMALL,
) -> str:
    """Store a real run under ``name``; returns its id.  ``status="interrupted"`` keeps
    only its first step (no result); ``accuracy`` overrides the CSVM's test accuracy (a
    board's order, never a drawn result)."""
    results, steps, test_set = trained(config)
    run_id = uuid.uuid4().hex[:8]
    if status == "interrupted":
        store.checkpoint(
            run_id, config, step=1, history=[_scalars(steps[0])],
            filters=results["csvm"]["filters"], owner=owner, name=name, class_code=class_code,
        )  # fmt: skip
        store.save(run_id, config, None, status="interrupted", step=1,
                   history=[_scalars(steps[0])], filters=results["csvm"]["filters"],
                   owner=owner, name=name, class_code=class_code)  # fmt: skip
        return run_id
    kept = {m: dict(r) for m, r in results.items()}
    if accuracy is not None:
        kept["csvm"]["test_accuracy"] = accuracy
    store.save(
        run_id, config, {**kept, "test_set": test_set}, status=status, owner=owner,
        name=name, class_code=class_code,
    )  # fmt: skip
    return run_id


def _scalars(step: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in step.items() if isinstance(v, bool | int | float | str)}
