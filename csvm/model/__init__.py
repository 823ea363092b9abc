"""The model maths: correlation, kernels, regularisers and the estimators.

The lowest layer of :mod:`csvm`: it imports only :mod:`csvm.events`,
:mod:`csvm.exceptions` and :mod:`csvm.parallel`, never the data, analysis, runs, jobs,
figures or command-line layers (``tests/test_layers.py`` checks it).
"""
