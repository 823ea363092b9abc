"""Datasets: a real offline default, MNIST / Fashion-MNIST / CIFAR-10 from files, and the
thesis's exact subsets.

Every loader returns images as float32 ``(n, C, H, W)`` scaled to [0, 1].  Files are
looked for in the ``data_dir`` argument, else ``$CSVM_DATA_DIR``, else a per-user cache
folder; ``python -m csvm data fetch NAME`` puts them there.  Problems raise
:class:`~csvm.exceptions.DatasetError` with a message that names the files, the folders
searched and the command that fixes it.

Binary problems (:func:`load_pair`) use the label -1 for the first class ``a`` and +1 for
the second class ``b``.

The package has one module per job: :mod:`~csvm.data.registry` (names, classes,
where files are looked for), :mod:`~csvm.data.idx` (IDX files),
:mod:`~csvm.data.cifar` (CIFAR-10 pickles), :mod:`~csvm.data.offline` (the
built-in datasets), :mod:`~csvm.data.protocols` (splits and loaders) and
:mod:`~csvm.data.downloads` (``fetch`` and the command line).
"""

from csvm.data.downloads import fetch, main_data
from csvm.data.protocols import (
    MulticlassData,
    PairData,
    clear_cache,
    load_classes,
    load_images,
    load_multiclass,
    load_pair,
)
from csvm.data.registry import (
    COLORS,
    DATASETS,
    DEFAULT_DATASET,
    PROTOCOLS,
    DatasetSpec,
    available,
    data_home,
    list_datasets,
)

__all__ = [
    "COLORS",
    "DATASETS",
    "DEFAULT_DATASET",
    "PROTOCOLS",
    "DatasetSpec",
    "MulticlassData",
    "PairData",
    "available",
    "clear_cache",
    "data_home",
    "fetch",
    "list_datasets",
    "load_classes",
    "load_images",
    "load_multiclass",
    "load_pair",
    "main_data",
]
