"""Saved thesis reproductions: the JSON that ``python -m csvm reproduce … --out FILE`` writes
and the Reproduce page reads.

One file per table.  Its ``models`` list holds, per model, the test accuracy of every seed
(fractions in [0, 1]), their mean and standard deviation and the seconds it took, beside the
published figure it is compared with (``reference``: percent, as the thesis prints them).
Around it: the command line, date, machine and package versions that produced it, so a
number on the page can always be traced to the run that measured it.

Nothing here imports streamlit; :func:`load_run` raises :class:`RunFileError` naming the file
and the field that is missing or wrong.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import os
import platform
import shlex
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from csvm.analysis.stats import format_images, format_p, format_signed, mcnemar_correct
from csvm.exceptions import CSVMError

__all__ = [
    "RUNS_DIR",
    "SCHEMA",
    "TABLES",
    "RunFileError",
    "environment",
    "load_run",
    "pack_correct",
    "comparison_rows",
    "counts_text",
    "describe_environment",
    "model_entry",
    "pair_rows",
    "parse_published",
    "seed_rows",
    "run_path",
    "save_run",
    "unpack_correct",
    "unpack_hex_correct",
]

#: Version of the file format; bumped when a field changes meaning.
SCHEMA = 1
#: Where the saved runs live in the repository (the app reads them from here).
RUNS_DIR = Path(__file__).resolve().parents[2] / "assets" / "runs"
#: The tables, in the page's order: title and the command that produces each file.
TABLES: dict[str, dict[str, str]] = {
    "table4.1": {
        "title": "Table 4.1: MNIST 3 v 5",
        "command": "python -m csvm reproduce table4.1 --data-dir DIR --seeds 3 "
        "--out assets/runs/table4.1.json",
    },
    "table4.4": {
        "title": "Table 4.4: CIFAR-10 airplane v automobile",
        "command": "python -m csvm reproduce table4.4 --data-dir DIR --seeds 3 --epochs 30 "
        "--out assets/runs/table4.4.json",
    },
    "table3.1": {
        "title": "Table 3.1: MNIST, 10 classes, L-CSVM one-vs-one",
        "command": "python -m csvm reproduce table3.1 --data-dir DIR --seeds 1 --n-jobs 1 "
        "--out assets/runs/table3.1.json",
    },
    "mnist10": {
        "title": "MNIST, 10 classes, K-CSVM one-vs-one on all 60,000 training images",
        "command": "python -m csvm reproduce mnist10 --data-dir DIR --n-jobs 2 "
        "--out assets/runs/mnist10.json",
    },
    "mnist10-stack": {
        "title": "MNIST, 10 classes, a pooled stack of 16 learned filters per one-vs-one pair",
        "command": "python -m csvm reproduce mnist10-stack --data-dir DIR --n-jobs 2 "
        "--out assets/runs/mnist10-stack.json",
    },
    "mnist10-996": {
        "title": "MNIST, 10 classes: issue 35's recipe toward 99.6 % (chosen on validation)",
        "command": "python -m csvm reproduce mnist10-996 --data-dir DIR --n-jobs 2 "
        "--out assets/runs/mnist10-996.json",
    },
    "mnist45-stack": {
        "title": "MNIST, all 45 digit pairs: the pooled stack against an SVM tuned per pair",
        "command": "python -m csvm reproduce mnist45-stack --data-dir DIR "
        "--out assets/runs/mnist45-stack.json",
    },
    "cifar10-stack": {
        "title": "CIFAR-10 pairs: the pooled stack against an SVM tuned per pair",
        "command": "python -m csvm reproduce cifar10-stack --data-dir DIR "
        "--out assets/runs/cifar10-stack.json",
    },
    "cifar10-hog-mirror": {
        "title": "CIFAR-10 pairs at data_batch_1's size: the stack beside HOG with mirrored "
        "support vectors, against HOG given the same (issue 35)",
        "command": "python -m csvm reproduce cifar10-hog-mirror --data-dir DIR "
        "--out assets/runs/cifar10-hog-mirror.json",
    },
    "mnist45-learning": {
        "title": "45 MNIST pairs: a 2-filter stack learned, against the same network on its "
        "random start at the learned norms (issue 35)",
        "command": "python -m csvm reproduce mnist45-learning --data-dir DIR "
        "--out assets/runs/mnist45-learning.json",
    },
    "mnist45-learning-few": {
        "title": "45 MNIST pairs, a second look: two 7 × 7 filters learned (chosen on "
        "validation, then gated), against the same network on its random start at the learned "
        "norms (issue 35)",
        "command": "python -m csvm reproduce mnist45-learning-few --data-dir DIR "
        "--out assets/runs/mnist45-learning-few.json",
    },
    "classroom-stack": {
        "title": "50 images: does the learned filters' shape matter? (issue 19's two-layer "
        "stack and the one-layer preset against fixed filters at the same norms)",
        "command": "python -m csvm reproduce classroom-stack --data-dir DIR "
        "--out assets/runs/classroom-stack.json",
    },
    "classroom-hog-stack": {
        "title": "50 images, fresh draws: the Classroom stack (a HOG-like second layer) against "
        "fixed filters at its norms, a plain SVM tuned by cross-validation and the one-layer "
        "preset",
        "command": "python -m csvm reproduce classroom-hog-stack --data-dir DIR "
        "--out assets/runs/classroom-hog-stack.json",
    },
    "teaching-shapes": {
        "title": "The teaching set: learned filters against fixed filters and a tuned "
        "pixel SVM, 100 images",
        "command": "python -m csvm reproduce teaching-shapes "
        "--out assets/runs/teaching-shapes.json",
    },
}
_PACKAGES = ("numpy", "scipy", "scikit-learn")
_TOP_FIELDS = {
    "schema": int,
    "table": str,
    "command": str,
    "date": str,
    "machine": dict,
    "versions": dict,
    "models": list,
}
_MODEL_FIELDS = {"name": str, "accuracies": list, "mean": float, "std": float, "seconds": float}


class RunFileError(CSVMError, ValueError):
    """A saved run is missing, is not JSON, or lacks a field the page needs."""


def run_path(table: str, runs_dir: str | os.PathLike | None = None) -> Path:
    """The file a table's saved run is read from (``assets/runs/<table>.json``)."""
    return Path(RUNS_DIR if runs_dir is None else runs_dir) / f"{table}.json"


def parse_published(text: str | None) -> dict[str, float] | None:
    """``"98.59 ± 0.02"`` -> ``{"mean": 98.59, "std": 0.02}``; ``"98.32"`` -> std None.

    The thesis's figures are kept as printed (percent) and as numbers, so the page can
    compute the difference without re-reading prose.
    """
    if text is None or text in ("", "—"):
        return None
    mean, _, std = str(text).partition("±")
    return {"mean": float(mean), "std": float(std) if std.strip() else None}


def model_entry(
    name: str,
    accuracies: Sequence[float],
    seconds: float,
    published: str | None = None,
    *,
    source: str = "Sugg 2018",
    settings: str = "",
    config: Mapping[str, Any] | None = None,
    seconds_each: Sequence[float] | None = None,
) -> dict[str, Any]:
    """One model's row: per-seed accuracies, their mean ± std (population, as printed by
    ``reproduce``), mean seconds per seed, the published figure and the settings.

    Parameters
    ----------
    name : str
    accuracies : sequence of float
        Test accuracy of each seed, as fractions in [0, 1].
    seconds : float
        Mean wall-clock seconds per seed (for a tuned baseline, seed 0's includes its
        search on the validation split).
    published : str, optional
        The figure it is compared with, as printed (percent): ``"98.59 ± 0.02"``.
    source : str
        Who published it (the thesis, or a field anchor).
    settings : str
        The settings in words.
    config : mapping, optional
        :meth:`csvm.runs.config.RunConfig.to_dict` of the model, where one applies.
    seconds_each : sequence of float, optional
        Each seed's seconds.
    """
    a = np.asarray(accuracies, dtype=float)
    ref = parse_published(published)
    return {
        "name": name,
        "settings": settings,
        "accuracies": [float(v) for v in a],
        "mean": float(a.mean()),
        "std": float(a.std()),
        "n_seeds": int(a.size),
        "seconds": float(seconds),
        "seconds_each": None if seconds_each is None else [float(t) for t in seconds_each],
        "reference": None if ref is None else {**ref, "text": published, "source": source},
        "config": None if config is None else dict(config),
    }


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_commit() -> str | None:
    """The checkout's commit (with "+changes" when the tree differs), or None outside git."""
    import subprocess

    root = Path(__file__).resolve().parents[2]

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=True
        )
        return done.stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}+changes" if dirty else head


def _load_average() -> list[float] | None:
    """1-, 5- and 15-minute load averages (None where the OS has none)."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def environment(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Command line, date, machine (cores, CPU model, OS) and package versions of this run."""
    argv = sys.argv[1:] if argv is None else list(argv)
    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "command": "python -m csvm " + shlex.join(argv),
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": {
            "cores": os.cpu_count(),
            "cpu": _cpu_model(),
            "platform": platform.platform(),
            # The machine may be shared: the seconds mean little without its load.
            "load_average_at_start": _load_average(),
        },
        "versions": versions,
        "commit": _git_commit(),
    }


def save_run(
    path: str | os.PathLike,
    table: str,
    models: Sequence[Mapping[str, Any]],
    env: Mapping[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Write one reproduction as JSON (see the module docstring) and return the record.

    ``env`` is :func:`environment` taken when the run started (its date and commit are
    the start's; the default, taken now); ``extra`` is stored beside the required fields
    (``data``, ``details``, …).
    """
    env = environment() if env is None else env
    record = {"schema": SCHEMA, "table": table, **env, "models": list(models)}
    record["machine"] = {**record["machine"], "load_average_at_end": _load_average()}
    record.update(extra)
    _check(record, str(path))
    Path(path).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return record


def load_run(path: str | os.PathLike) -> dict[str, Any]:
    """Read and check a saved run.

    Raises
    ------
    RunFileError
        The file is missing or not JSON, or a field is missing or of the wrong type; the
        message names the file and the field, and for a missing file the command to run.
    """
    path = Path(path)
    if not path.is_file():
        command = TABLES.get(path.stem, {}).get("command", "python -m csvm reproduce … --out")
        raise RunFileError(f"{path}: no saved run; produce it with `{command}`.")
    try:
        record = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunFileError(f"{path}: not a readable JSON file ({exc}); run it again.") from exc
    _check(record, str(path))
    return record


def _type_error(where: str, field: str, want: type, got: Any) -> RunFileError:
    return RunFileError(
        f"{where}: field {field!r} should be {want.__name__}, got {type(got).__name__} "
        f"({got!r:.40}); write the file again with `python -m csvm reproduce … --out`."
    )


def _check_fields(obj: Any, fields: Mapping[str, type], where: str, prefix: str) -> None:
    if not isinstance(obj, dict):
        raise RunFileError(f"{where}: {prefix or 'the file'} should be a JSON object.")
    for field, want in fields.items():
        label = f"{prefix}{field}"
        if field not in obj:
            raise RunFileError(
                f"{where}: field {label!r} is missing; write the file again with "
                "`python -m csvm reproduce … --out`."
            )
        value = obj[field]
        # JSON has one number type: an int where a float is wanted is fine.
        ok = isinstance(value, (int, float)) if want is float else isinstance(value, want)
        if not ok or (want is not bool and isinstance(value, bool)):
            raise _type_error(where, label, want, value)


def _check(record: Any, where: str) -> None:
    """Raise RunFileError at the first missing or mistyped field."""
    _check_fields(record, _TOP_FIELDS, where, "")
    if record["schema"] != SCHEMA:
        raise RunFileError(
            f"{where}: file format {record['schema']}, this version reads {SCHEMA}; "
            "run the reproduction again."
        )
    if not record["models"]:
        raise RunFileError(f"{where}: field 'models' is empty.")
    for i, model in enumerate(record["models"]):
        _check_fields(model, _MODEL_FIELDS, where, f"models[{i}].")
        accs = model["accuracies"]
        if not accs or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1 for v in accs
        ):
            raise RunFileError(
                f"{where}: field 'models[{i}].accuracies' should be a non-empty list of "
                "accuracies between 0 and 1."
            )
        ref = model.get("reference")
        if ref is not None:
            _check_fields(ref, {"mean": float}, where, f"models[{i}].reference.")


def _seconds(seconds: float) -> str:
    from csvm.analysis.progress import format_seconds

    return f"{seconds:,.1f}" if seconds < 60 else f"{seconds:,.0f} ({format_seconds(seconds)})"


def _points(difference: float) -> str:
    # 98.32 - 98.32 (a float's -1e-14) reads +0.00, not -0.00: format_signed rounds first.
    return format_signed(difference)


def seed_rows(record: Mapping[str, Any]) -> list[dict[str, str]]:
    """Per model: its settings and each seed's test accuracy (percent)."""
    return [
        {
            "model": m["name"],
            "settings": m.get("settings") or "",
            "per seed, %": ", ".join(f"{100 * a:.2f}" for a in m["accuracies"]),
        }
        for m in record["models"]
    ]


def counts_text(record: Mapping[str, Any]) -> str:
    """How many training and test images the run used, for the page's caption ("" if the
    record does not say); a pair study's or a learning study's counts are sums over its
    pairs."""
    data = record.get("data") or {}
    if "n_train" not in data or "n_test" not in data:
        return ""
    details = record.get("details") or {}
    pairs = details.get("pairs") or details.get("units") or []
    summed = (
        f", summed over the {len(pairs)} pairs (each pair's own split)" if len(pairs) > 1 else ""
    )
    return f"{data['n_train']:,} training and {data['n_test']:,} test images{summed}. "


def pair_rows(record: Mapping[str, Any]) -> list[dict[str, str]]:
    """A pair study's every pair (``details.pairs``): both models' test accuracy, what the
    stack chose on validation, the gain and McNemar's p on the same test images; where the
    run has it (issue 35), the tuned SVM with virtual support vectors and the stack's gain
    and McNemar's p against it.  A learning study's (``details.units``): the learned stack
    against its random start."""
    details = record.get("details") or {}
    if details.get("units"):
        return _learning_rows(details["units"])
    rows = []
    for p in details.get("pairs") or []:
        row = {
            "pair": str(p["pair"]).replace("-", " v "),
            "test images": str(p["n_test"]),
            "tuned SVM, %": f"{100 * p['plain']['test_accuracy']:.2f}",
            "stack, %": f"{100 * p['stack']['test_accuracy']:.2f}",
            "stack chose": str(p["stack"]["chosen"]),
            "gain, points": _gain(p["gain"], p["images"]),
            "McNemar p": f"{format_p(p['p'], cell=True)} ({p['outcome']})",
        }
        virtual = p.get("virtual")
        if virtual:
            row["tuned SVM + virtual SVs, %"] = f"{100 * virtual['test_accuracy']:.2f}"
            row["stack − virtual SVs, points"] = _gain(
                virtual["stack_gain"], virtual["stack_images"]
            )
            row["vs virtual SVs, McNemar p"] = (
                f"{format_p(virtual['stack_p'], cell=True)} ({virtual['stack_outcome']})"
            )
        rows.append(row)
    return rows


def _gain(points: float, images: int) -> str:
    """A table's gain cell: "+0.25 (+5 images)"."""
    return f"{format_signed(points)} ({format_images(images, signed=True)})"


def _learning_rows(units: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """A learning study's every pair (:mod:`csvm.runs.learning_study`): the stack learned
    against its random start at the learned norms on the same test images."""
    rows = []
    for u in units:
        learned, start = (unpack_correct(u[key], int(u["n"])) for key in ("learned", "start"))
        m = mcnemar_correct(learned, start)
        rows.append({
            "pair": str(u["pair"]).replace("-", " v "),
            "test images": str(u["n"]),
            "learned, %": f"{100 * learned.mean():.2f}",
            "random start, %": f"{100 * start.mean():.2f}",  # at the learned norms (title)
            "gain, points": _gain(m.diff_points, m.diff_images),
            "McNemar p": f"{format_p(m.p_value, cell=True)} ({m.outcome})",
        })  # fmt: skip
    return rows


def comparison_rows(record: Mapping[str, Any]) -> list[dict[str, str]]:
    """The page's table of a saved run: per model, the published figure, this machine's
    mean ± std over seeds (percent), seconds per seed and the difference in points.

    The published column is called "thesis" when every figure is the thesis's and
    "published" otherwise (mnist10 is compared with a field anchor).
    """
    refs = [m.get("reference") for m in record["models"]]
    column = (
        "thesis"
        if all(r is None or str(r.get("source", "")).startswith("Sugg") for r in refs)
        else "published"
    )
    rows = []
    for model, ref in zip(record["models"], refs, strict=True):
        mean, std, n = 100 * model["mean"], 100 * model["std"], len(model["accuracies"])
        measured = f"{mean:.2f} ± {std:.2f}" if n > 1 else f"{mean:.2f}"
        seeds = f"{n} seed{'s' if n != 1 else ''}"
        rows.append(
            {
                "model": model["name"],
                column: "—" if ref is None else ref.get("text") or f"{ref['mean']:.2f}",
                "this machine, %": f"{measured} ({seeds})",
                "seconds per seed": _seconds(float(model["seconds"])),
                "difference, points": "—" if ref is None else _points(mean - ref["mean"]),
            }
        )
    return rows


def describe_environment(record: Mapping[str, Any]) -> str:
    """One line on when, where and with what a saved run was made."""
    machine = record["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in record["versions"].items() if v)
    where = f"{machine.get('cores', '?')} cores, {machine.get('cpu', 'unknown CPU')}"
    loads = [machine.get(f"load_average_at_{t}") for t in ("start", "end")]
    if all(loads):
        where += f" (load average {loads[0][0]:g} at the start, {loads[1][0]:g} at the end)"
    commit = record.get("commit")
    return f"{record['date']} on {where}; {versions}" + (
        f"; code at commit {commit}" if commit else ""
    )


def pack_correct(correct: Any) -> str:
    """Which test images a model got right, as base64 bits: how a saved run keeps its
    predictions for McNemar's test (10,000 images in 1.7 kB)."""
    return base64.b64encode(np.packbits(np.asarray(correct, dtype=bool)).tobytes()).decode()


def unpack_correct(text: str, n: int) -> np.ndarray:
    """:func:`pack_correct`'s ``n`` booleans back."""
    bits = np.unpackbits(np.frombuffer(base64.b64decode(text), dtype=np.uint8))
    return bits[:n].astype(bool)


def unpack_hex_correct(text: str, n: int) -> np.ndarray:
    """``n`` booleans from the hex form of the same packed bits, which the learning
    curves' cells and the CIFAR-10 study's saved run keep (``np.packbits(...).hex()``).

    Examples
    --------
    >>> unpack_hex_correct(np.packbits([True, False, True]).tobytes().hex(), 3).tolist()
    [True, False, True]
    """
    return np.unpackbits(np.frombuffer(bytes.fromhex(text), dtype=np.uint8))[:n].astype(bool)
