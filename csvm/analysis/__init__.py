"""Analysis on top of the models and data: statistics, tuning, the fixed-filter ablation,
filter stability, the Filter lab's maths, and the saved reproductions and full-scale runs.

Imports :mod:`csvm.model` and :mod:`csvm.data`, never :mod:`csvm.runs` or above.
"""
