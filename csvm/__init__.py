"""CSVM: Convolutional Support Vector Machines (linear and kernelised), after Sugg (2018).

>>> from csvm import KernelCSVM, LinearCSVM, RunConfig, SmallCNN
>>> clf = KernelCSVM(image_shape=(28, 28), filter_shape=(5, 5), n_iter=10)  # doctest: +SKIP
"""

from csvm import _legacy
from csvm._version import version as _package_version
from csvm.exceptions import (
    CSVMError,
    CSVMWarning,
    DatasetError,
    DivergenceError,
    ImageShapeWarning,
    SVMIterationWarning,
)
from csvm.model.baselines import SmallCNN
from csvm.model.hog import HOGSVC
from csvm.model.kernelised import KernelCSVM
from csvm.model.linear import LinearCSVM
from csvm.model.mkl import FilterBankMKL
from csvm.model.mlsvm import MultiLayerSVM
from csvm.model.recommend import recommended
from csvm.model.smo import SMO
from csvm.runs.config import RunConfig

__version__ = _package_version()  # pyproject.toml's, through the package metadata once installed

_legacy.install()  # the flat module names of 0.1 (csvm.config, ...) still import

__all__ = [
    "CSVMError",
    "CSVMWarning",
    "DatasetError",
    "DivergenceError",
    "FilterBankMKL",
    "HOGSVC",
    "ImageShapeWarning",
    "KernelCSVM",
    "LinearCSVM",
    "MultiLayerSVM",
    "RunConfig",
    "SMO",
    "SVMIterationWarning",
    "SmallCNN",
    "__version__",
    "recommended",
]
