"""A stored run cut off mid-training is headed "interrupted at step k", not "failed"."""

from csvm.runs.config import RunConfig
from csvm.runs.summary import headline


def _outcome(error_type: str, error: str) -> dict:
    return {"csvm": {"state": "error", "result": None, "error_type": error_type, "error": error}}


def test_an_interrupted_run_is_headed_interrupted_with_its_reason():
    text = headline(
        RunConfig(),
        _outcome("Interrupted", "the server stopped while it trained"),
        [{}, {}, {}],
        finished=True,
    )
    assert text == "## K-CSVM interrupted at step 3: the server stopped while it trained"


def test_a_run_that_failed_still_says_failed_with_the_error_type():
    text = headline(RunConfig(), _outcome("ValueError", "bad filter"), [{}], finished=True)
    assert text == "## K-CSVM failed at step 1: ValueError: bad filter"
