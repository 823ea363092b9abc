"""CSVM: Convolutional Support Vector Machines (linear and kernelised), after Sugg (2018)."""

from csvm.exceptions import CSVMError, DatasetError, DivergenceError

__version__ = "0.1.0"

__all__ = ["CSVMError", "DatasetError", "DivergenceError", "__version__"]
