"""After a K-CSVM run on few images, the fixed-filter comparison runs by itself and the
headline says which won (issue 19, item 0)."""

import time

from tests._apptest import open_app, wait_for_results

SMALL_RUN = {"n_iter": "3", "n_train": "100", "baselines": "-", "pace": "live"}


def _verdict(at) -> str:
    """The verdict line as it reads (markdown escapes removed)."""
    line = next((m.value for m in at.markdown if "best fixed filter at its norm" in m.value), "")
    return line.replace("\\", "")


def test_a_small_kcsvm_run_is_compared_with_fixed_filters_without_a_click():
    at = open_app(SMALL_RUN)
    at.button(key="start").click().run()
    at = wait_for_results(at)
    assert not at.exception
    assert not [b for b in at.button if b.label == "Run the ablation"]
    deadline = time.time() + 120
    while not _verdict(at) and time.time() < deadline:
        time.sleep(0.5)
        at.run()
    line = _verdict(at)
    assert line.startswith("**Learned filter ") and " points, p " in line
    assert any(w in line for w in ("a fixed filter does as well", "learning the filter won",
                                   "the fixed filter won"))  # fmt: skip
    assert any(s.value == "What did learning the filter buy?" for s in at.subheader)


def test_a_large_run_waits_for_the_click():
    at = open_app(SMALL_RUN | {"n_train": "none", "n_iter": "1"})  # every image of the pair
    at.button(key="start").click().run()
    at = wait_for_results(at)
    assert [b for b in at.button if b.label == "Run the ablation"]
    assert not _verdict(at)
