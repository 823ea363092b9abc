"""The splits: the thesis's exact subsets, the built-in datasets' fixed split, and the
loaders :func:`load_pair`, :func:`load_multiclass`, :func:`load_classes` and
:func:`load_images`.

Every loader returns images as float32 ``(n, C, H, W)`` scaled to [0, 1].  Binary
problems (:func:`load_pair`) use the label -1 for the first class ``a`` and +1 for the
second class ``b``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from csvm.data import cifar, idx
from csvm.data.cifar import cifar_batch, cifar_classes, cifar_float
from csvm.data.offline import stratified_split
from csvm.data.registry import (
    CIFAR_EXTRA,
    COLORS,
    PROTOCOLS,
    locate,
    offline_arrays,
    offline_split,
    spec,
)
from csvm.exceptions import DatasetError

__all__ = [
    "MulticlassData",
    "PairData",
    "clear_cache",
    "load_classes",
    "load_images",
    "load_multiclass",
    "load_pair",
    "stratified_subsample",
]


@dataclass(frozen=True)
class PairData:
    """A two-class problem from :func:`load_pair`.

    Images are float32 ``(n, C, H, W)`` in [0, 1]; labels are int64, -1 for
    ``class_names[0]`` (the ``a`` argument) and +1 for ``class_names[1]`` (``b``).
    ``classes`` holds the two original integer labels, ``counts`` maps each split
    ("train", "validation", "test") to ``(n_a, n_b)``.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    image_shape: tuple[int, int, int]
    class_names: tuple[str, str]
    classes: tuple[int, int]
    counts: dict[str, tuple[int, int]]
    source: str
    dataset: str


@dataclass(frozen=True)
class MulticlassData:
    """Every class of a dataset from :func:`load_multiclass`: integer labels 0..9.

    ``counts`` maps each split to a tuple of per-class image counts.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    image_shape: tuple[int, int, int]
    class_names: tuple[str, ...]
    counts: dict[str, tuple[int, ...]]
    source: str
    dataset: str


@dataclass(frozen=True)
class _Raw:
    """Un-scaled images per split (uint8 for files) and how to turn them into floats."""

    train: tuple[np.ndarray, np.ndarray]
    val: tuple[np.ndarray, np.ndarray]
    test: tuple[np.ndarray, np.ndarray]
    to_float: Callable[[np.ndarray], np.ndarray]
    class_names: tuple[str, ...]
    source: str


#: How a CIFAR-10 source line names its colour layout (the stacked images, shown as they
#: are, read as three pictures above each other: say why).
_COLOR_WORDS = {
    "stacked": "each image's red, green and blue planes stacked, 96 × 32, as the thesis "
    "feeds one filter all three colours",
    "rgb": "three colour channels",
    "gray": "gray levels",
}


def _check_protocol(protocol: str | None) -> None:
    if protocol not in PROTOCOLS:
        raise DatasetError(f"Unknown protocol {protocol!r}: use None or 'thesis'.")


def _own_raw(name: str, protocol: str | None) -> _Raw:
    """A person's uploaded images: the built-in sets' stratified 70/10/20 % split."""
    from csvm.data.own_images import load_own

    if protocol == "thesis":
        raise DatasetError("The thesis protocol is for MNIST and CIFAR-10: use protocol=None.")
    X, y, names = load_own(name)
    tr, va, te = stratified_split(y)
    return _Raw(
        (X[tr], y[tr]),
        (X[va], y[va]),
        (X[te], y[te]),
        lambda a: a.astype(np.float32) * np.float32(1 / 255),
        names,
        "your own images, uploaded to this server; stratified 70/10/20 % split (seed 0)",
    )


def _raw(name: str, protocol: str | None, data_dir, color: str, multiclass: bool) -> _Raw:
    from csvm.data.own_images import is_own

    if is_own(name):
        return _own_raw(name, protocol)
    entry = spec(name)
    _check_protocol(protocol)
    if color not in COLORS:
        raise DatasetError(f"Unknown color {color!r}: choose one of {', '.join(COLORS)}.")
    if color != "stacked" and name != "cifar10":  # was ignored without a word
        raise DatasetError(
            f"color={color!r} is for CIFAR-10's colour images; {name} is grey: leave color "
            "at its default."
        )
    if entry.offline:
        if protocol == "thesis":
            raise DatasetError(
                f"The thesis protocol needs the full datasets; {name} is a small built-in "
                "set. Use dataset 'mnist' (python -m csvm data fetch mnist) or protocol=None."
            )
        X, y = offline_arrays(name)
        tr, va, te = offline_split(name)
        return _Raw(
            (X[tr], y[tr]),
            (X[va], y[va]),
            (X[te], y[te]),
            lambda a: a,
            entry.classes,
            f"{entry.description}; stratified 70/10/20 % split (seed 0)",
        )
    files = locate(name, data_dir)
    folder = next(iter(files.values())).parent
    if name == "cifar10":
        names = cifar_classes(files)
        val = cifar_batch(files["data_batch_2"])
        test = cifar_batch(files["test_batch"])
        train_files = ["data_batch_1"]
        if protocol is None:
            # Without the thesis's restriction use every training batch that is here.
            train_files += [f for f in CIFAR_EXTRA if f in files]
        parts = [cifar_batch(files[f]) for f in train_files]
        train = (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
        source = (
            f"CIFAR-10 from {folder}: train {' + '.join(train_files)}, validation "
            f"data_batch_2, test test_batch ({_COLOR_WORDS.get(color, color)})"
        )
        return _Raw(train, val, test, functools.partial(cifar_float, color=color), names, source)
    Xtr, ytr, Xte, yte = idx.idx_arrays(files, len(entry.classes))
    if protocol == "thesis" and not multiclass:
        # Tables 4.1-4.3: a pair among the first 10,000 training images, validated on
        # images 10,000-19,999.
        train, val = slice(0, 10_000), slice(10_000, 20_000)
    else:
        # Table 3.1: the first 50,000 training images, the last 10,000 for validation.
        train, val = slice(0, 50_000), slice(50_000, 60_000)

    def to_float(a: np.ndarray) -> np.ndarray:
        out = a.astype(np.float32)[:, None]
        out *= np.float32(1 / 255)
        return out

    source = (
        f"{name} from {folder}: train images {train.start:,}–{train.stop - 1:,}, "
        f"validation {val.start:,}–{val.stop - 1:,}, test the t10k set"
    )
    return _Raw(
        (Xtr[train], ytr[train]),
        (Xtr[val], ytr[val]),
        (Xte, yte),
        to_float,
        entry.classes,
        source,
    )


def _class_index(dataset: str, names: tuple[str, ...], value: Any) -> int:
    if isinstance(value, float | np.floating) and float(value).is_integer():
        value = int(value)  # 3.0, as a label read from a float array
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        if 0 <= int(value) < len(names):
            return int(value)
    else:
        text = str(value).strip().lower()
        for i, name in enumerate(names):
            if text == name.lower():
                return i
        if text.isdigit() and int(text) < len(names):
            return int(text)  # "7" for a CIFAR label read from a URL or a form
    raise DatasetError(
        f"Unknown class {value!r} for {dataset}: choose one of {', '.join(names)} "
        f"(or a label 0..{len(names) - 1})."
    )


def stratified_subsample(y: np.ndarray, n: int | None, random_state: int) -> np.ndarray | None:
    """Sorted indices of a stratified, seeded subsample of size ``n`` (None: keep all)."""
    if n is None or n >= len(y):
        return None
    n_classes = len(np.unique(y))
    if int(n) < n_classes:
        raise DatasetError(
            f"n_train={n} is too small: it must be at least {n_classes}, one per class."
        )
    from sklearn.model_selection import train_test_split

    keep, _ = train_test_split(
        np.arange(len(y)), train_size=int(n), stratify=y, random_state=random_state
    )
    return np.sort(keep)


def load_pair(
    name: str,
    a: int | str,
    b: int | str,
    protocol: str | None = None,
    data_dir: str | os.PathLike | None = None,
    n_train: int | None = None,
    random_state: int = 0,
    color: str = "stacked",
) -> PairData:
    """Two classes of a dataset as a binary problem with labels -1 (``a``) and +1 (``b``).

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS` (``DEFAULT_DATASET`` is "mnist-5k").
    a, b : int or str
        The classes, by integer label or by name, case-insensitive ("airplane",
        "t-shirt/top", "3").  ``a`` gets label -1, ``b`` label +1.
    protocol : {None, "thesis"}
        "thesis" (full datasets only): MNIST / Fashion-MNIST train on the pair among
        the first 10,000 training images, validate on those among images
        10,000-19,999, test on all of the pair in the test set; CIFAR-10 trains on
        data_batch_1, validates on data_batch_2, tests on test_batch.  None: the
        built-in datasets' fixed stratified 70/10/20 % split (seed 0); for MNIST /
        Fashion-MNIST training images 0-49,999 / 50,000-59,999 / test set; for CIFAR-10
        data_batch_1 (+ batches 3-5 when present) / data_batch_2 / test_batch.
    data_dir : path, optional
        Where the files are; see :func:`data_home`.
    n_train : int, optional
        Keep only this many training images: a stratified subsample seeded by
        ``random_state``, in the original order.  Larger than the split: keep all.
    random_state : int, default=0
        Seed of the ``n_train`` subsample only (the splits themselves never change).
    color : {"stacked", "rgb", "gray"}, default="stacked"
        CIFAR-10 only: the thesis's R, G, B planes stacked to (1, 96, 32), three
        channels (3, 32, 32), or BT.601 luminance (1, 32, 32).

    Returns
    -------
    PairData

    Raises
    ------
    DatasetError
        Unknown dataset, class, protocol or colour; the same class twice; missing or
        corrupt files (the message names them and the fetch command).
    """
    entry = spec(name)
    _check_protocol(protocol)
    if name != "cifar10":
        # A typo fails before any file is read.  CIFAR-10's names come from its
        # batches.meta when present, so they are resolved once the files are found.
        _resolve_pair(name, entry.classes, a, b)
    raw = _raw(name, protocol, data_dir, color, multiclass=False)
    ia, ib = _resolve_pair(name, raw.class_names, a, b)

    pair = {ia: -1, ib: 1}
    X_train, y_train = _pick(raw, raw.train, pair, n_train, random_state)
    X_val, y_val = _pick(raw, raw.val, pair, None, random_state)
    X_test, y_test = _pick(raw, raw.test, pair, None, random_state)

    def count(y: np.ndarray) -> tuple[int, int]:
        return int(np.sum(y < 0)), int(np.sum(y > 0))

    return PairData(
        X_train=X_train,
        y_train=y_train,
        X_val=X_val,
        y_val=y_val,
        X_test=X_test,
        y_test=y_test,
        image_shape=tuple(X_test.shape[1:]),
        class_names=(raw.class_names[ia], raw.class_names[ib]),
        classes=(ia, ib),
        counts={"train": count(y_train), "validation": count(y_val), "test": count(y_test)},
        source=raw.source,
        dataset=name,
    )


def _pick(
    raw: _Raw,
    part: tuple[np.ndarray, np.ndarray],
    new_labels: dict[int, int],
    keep_n: int | None,
    random_state: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The images of the classes in ``new_labels`` (original label -> new label) from one
    split, relabelled, optionally a stratified subsample of ``keep_n``."""
    X, y = part
    table = np.zeros(len(raw.class_names), dtype=np.int64)
    chosen = np.zeros(len(raw.class_names), dtype=bool)
    for old, new in new_labels.items():
        table[old], chosen[old] = new, True
    idx = np.flatnonzero(chosen[y])
    labels = table[y[idx]]
    sub = stratified_subsample(labels, keep_n, random_state)
    if sub is not None:
        idx, labels = idx[sub], labels[sub]
    # Select on the uint8 images, then scale: converting a whole 50,000-image split
    # to float32 first would cost 150 MB and a tenth of a second per call.
    return np.ascontiguousarray(raw.to_float(X[idx]), dtype=np.float32), labels


def _counts(y: np.ndarray, k: int) -> tuple[int, ...]:
    """Images per label 0..k-1."""
    return tuple(int(c) for c in np.bincount(y, minlength=k))


def _resolve_pair(name: str, names: tuple[str, ...], a: Any, b: Any) -> tuple[int, int]:
    ia, ib = _class_index(name, names, a), _class_index(name, names, b)
    if ia == ib:
        raise DatasetError(f"Choose two different classes: {a!r} and {b!r} are both {names[ia]!r}.")
    return ia, ib


def load_multiclass(
    name: str,
    protocol: str | None = None,
    data_dir: str | os.PathLike | None = None,
    n_train: int | None = None,
    random_state: int = 0,
    color: str = "stacked",
) -> MulticlassData:
    """Every class of a dataset with integer labels 0..9.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS`.
    protocol : {None, "thesis"}, default=None
        As in :func:`load_pair` (whose default it shares).  For MNIST / Fashion-MNIST
        both give table 3.1's split: training images 0-49,999, validation
        50,000-59,999, the test set.  CIFAR-10: "thesis" trains on data_batch_1 only,
        None on every training batch but data_batch_2 (the validation batch).  The
        built-in datasets accept None only.
    data_dir, n_train, random_state, color
        As in :func:`load_pair`.

    Returns
    -------
    MulticlassData
    """
    raw = _raw(name, protocol, data_dir, color, multiclass=True)
    (Xtr, ytr), (Xva, yva), (Xte, yte) = raw.train, raw.val, raw.test
    keep = stratified_subsample(ytr, n_train, random_state)
    if keep is not None:
        Xtr, ytr = Xtr[keep], ytr[keep]
    n = len(raw.class_names)
    X_test = raw.to_float(Xte)
    return MulticlassData(
        X_train=raw.to_float(Xtr),
        y_train=ytr.copy(),
        X_val=raw.to_float(Xva),
        y_val=yva.copy(),
        X_test=X_test,
        y_test=yte.copy(),
        image_shape=tuple(X_test.shape[1:]),
        class_names=tuple(raw.class_names),
        counts={"train": _counts(ytr, n), "validation": _counts(yva, n), "test": _counts(yte, n)},
        source=raw.source,
        dataset=name,
    )


def load_classes(
    name: str,
    classes: list[int | str] | tuple[int | str, ...],
    protocol: str | None = None,
    data_dir: str | os.PathLike | None = None,
    n_train: int | None = None,
    random_state: int = 0,
    color: str = "stacked",
) -> MulticlassData:
    """Some classes of a dataset, relabelled 0..k-1 in the order given.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS`.
    classes : sequence of int or str
        Two or more different classes, by label or name (as in :func:`load_pair`);
        ``classes[i]`` gets label ``i``.
    protocol, data_dir, color
        As in :func:`load_multiclass` (``"thesis"`` is table 3.1's split).
    n_train, random_state
        A stratified, seeded subsample of the chosen classes' training images.

    Returns
    -------
    MulticlassData
        ``class_names`` and ``counts`` follow the order of ``classes``.

    Raises
    ------
    DatasetError
        Unknown or repeated class, fewer than two classes, or as :func:`load_multiclass`.
    """
    raw = _raw(name, protocol, data_dir, color, multiclass=True)
    index = [_class_index(name, raw.class_names, c) for c in classes]
    if len(index) < 2 or len(set(index)) != len(index):
        raise DatasetError(
            f"Choose two or more different classes of {name}; got {list(classes)!r}."
        )
    relabel = {old: new for new, old in enumerate(index)}
    (Xtr, ytr), (Xva, yva), (Xte, yte) = (
        _pick(raw, raw.train, relabel, n_train, random_state),
        _pick(raw, raw.val, relabel, None, random_state),
        _pick(raw, raw.test, relabel, None, random_state),
    )
    k = len(index)
    return MulticlassData(
        X_train=Xtr,
        y_train=ytr,
        X_val=Xva,
        y_val=yva,
        X_test=Xte,
        y_test=yte,
        image_shape=tuple(Xte.shape[1:]),
        class_names=tuple(raw.class_names[i] for i in index),
        counts={"train": _counts(ytr, k), "validation": _counts(yva, k), "test": _counts(yte, k)},
        source=raw.source,
        dataset=name,
    )


def load_images(
    name: str,
    split: str = "train",
    data_dir: str | os.PathLike | None = None,
    color: str = "stacked",
) -> tuple[np.ndarray, np.ndarray]:
    """All images of one split (under ``protocol=None``) with their integer labels.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS`.
    split : {"train", "validation", "test"}
    data_dir, color
        As in :func:`load_pair`.

    Returns
    -------
    X : ndarray of float32, shape (n, C, H, W), values in [0, 1]
    y : ndarray of int64, shape (n,)
    """
    parts = {"train": "train", "validation": "val", "val": "val", "test": "test"}
    if split not in parts:
        raise DatasetError(f"Unknown split {split!r}: choose train, validation or test.")
    raw = _raw(name, None, data_dir, color, multiclass=True)
    X, y = getattr(raw, parts[split])
    return raw.to_float(X), y.copy()


def clear_cache() -> None:
    """Forget every decoded array (they are cached in memory after the first load)."""
    idx.clear_cache()
    cifar.clear_cache()
