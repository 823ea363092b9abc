"""Models beyond the thesis's CSVMs: filter-bank MKL, HOG kernels, the two-layer SVM.

(The flat modules ``csvm.conv``, ``csvm.kernels`` ... move here in the reorganisation.)
"""
