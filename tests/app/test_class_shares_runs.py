"""A class pressing Start on one preset: the Train page's identical jobs are computed once
(csvm/jobs/shared.py), each student keeping runs and jobs of its own."""

from explorer.pool import get_pool
from tests._apptest import open_app, wait_for_results

# A seed no other test uses, so no other test's run of these settings is shared here.
SETTINGS = {"n_iter": "3", "n_train": "100", "baselines": "svm", "pace": "live", "seed": "4242"}


def _run(at):
    return at.session_state["runs"][at.session_state["current_run"]]


def test_two_students_starting_the_same_run_share_its_jobs():
    before = get_pool().stats()["shared"]
    students = [open_app(SETTINGS), open_app(SETTINGS)]
    for at in students:
        at.button(key="start").click().run()
    students = [wait_for_results(at) for at in students]
    after = get_pool().stats()["shared"]
    runs = [_run(at) for at in students]
    assert runs[0].id != runs[1].id and runs[0].owner != runs[1].owner
    assert set(runs[0].jobs.values()).isdisjoint(runs[1].jobs.values()), "jobs of their own"
    # One computation per job, read by both students: the K-CSVM's and the SVM's results
    # are one object (two computations would give two), under each student's own job.
    for model in ("csvm", "svm"):
        views = [get_pool().get(run.jobs[model]) for run in runs]
        assert [v.owner for v in views] == [run.owner for run in runs]
        assert views[0].result is views[1].result
    # The K-CSVM, the SVM and the ablation each results shows (on 100 images it runs by
    # itself) were computed once; the second student joined them.
    assert after["computed"] - before["computed"] <= 3
    assert after["attached"] + after["reused"] - before["attached"] - before["reused"] >= 2
