"""CSVM: Convolutional Support Vector Machines (linear and kernelised), after Sugg (2018).

>>> from csvm import KernelCSVM, LinearCSVM, SmallCNN
>>> clf = KernelCSVM(image_shape=(28, 28), filter_shape=(5, 5), n_iter=10)  # doctest: +SKIP
"""

from csvm.baselines import SmallCNN
from csvm.exceptions import (
    CSVMError,
    CSVMWarning,
    DatasetError,
    DivergenceError,
    ImageShapeWarning,
    SVMIterationWarning,
)
from csvm.kernelised import KernelCSVM
from csvm.linear import LinearCSVM
from csvm.model.hog import HOGSVC
from csvm.model.mkl import FilterBankMKL
from csvm.model.mlsvm import MultiLayerSVM

__version__ = "0.1.0"

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
    "SVMIterationWarning",
    "SmallCNN",
    "__version__",
]
