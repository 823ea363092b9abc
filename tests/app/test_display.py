"""explorer.display's text helpers."""

from explorer.display import keep_units


def test_keep_units_binds_each_figure_to_its_percent_and_each_p_value_to_its_p():
    line = "K-CSVM: 97.00 % test — plain SVM 96.50 % (p = 0.62), CNN 90.00 % (p < 0.001)"
    kept = keep_units(line)
    assert kept == (
        "K-CSVM: 97.00\u00a0% test — plain SVM 96.50\u00a0% (p\u00a0=\u00a00.62), "
        "CNN 90.00\u00a0% (p\u00a0<\u00a00.001)"
    )
    assert kept.replace("\u00a0", " ") == line  # nothing else changes
    assert keep_units("step = 3, top = 5") == "step = 3, top = 5"  # only a p-value's p


def test_a_source_line_on_a_teaching_page_names_no_folder():
    # "no developer paths on teaching pages": the Train page's caption under the example
    # images read "CIFAR-10 from /work/shared/data/cifar10/cifar-10-batches-py: ...".
    from explorer.measured import source_words

    line = "CIFAR-10 from /srv/data/cifar10/cifar-10-batches-py: train data_batch_1, test x"
    assert source_words(line) == "CIFAR-10: train data_batch_1, test x"
    assert source_words("mnist from ../shared/data/mnist: train images 0–49,999") == (
        "mnist: train images 0–49,999"
    )
    bundled = "5,000 real MNIST digits bundled with the package; works offline"
    assert source_words(bundled) == bundled
