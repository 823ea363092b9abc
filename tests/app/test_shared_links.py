"""Shared links that were edited: a run is always drawn from its own settings, and a link
that mixes jobs of different runs is named and shown read-only, never an exception."""

from tests._apptest import open_app, query, wait_for_results

SMALL_RUN = {
    "n_iter": "2",
    "n_train": "200",
    "baselines": "svm",
    "pace": "live",
}


def _finished_run(params: dict) -> tuple[dict, object]:
    at = open_app(SMALL_RUN | params)
    at.button(key="start").click().run()
    at = wait_for_results(at)
    return {k: query(at, k) for k in at.query_params}, at


def _run_of(at):
    return at.session_state["runs"][at.session_state["current_run"]]


def test_a_link_with_edited_settings_draws_the_run_as_it_was_trained():
    url, owner_page = _finished_run({"class_a": "3", "class_b": "5"})
    # The link edited to other classes and fewer images than the run was trained on.
    viewer = wait_for_results(open_app(url | {"class_a": "1", "class_b": "7", "n_train": "50"}))
    assert not viewer.exception
    run = _run_of(viewer)
    assert (run.config.class_a, run.config.class_b, run.config.n_train) == ("3", "5", 200)
    assert run.config == _run_of(owner_page).config
    assert any(
        "A shared run, drawn with the settings it was trained with" in i.value for i in viewer.info
    )
    # The edited values stay the viewer's own settings for a next run.
    assert query(viewer, "class_a") == "1"
    assert viewer.button(key="start").disabled is False
    assert not [b for b in viewer.button if b.label.endswith("Stop")]


def test_a_link_mixing_jobs_of_two_runs_is_named_and_read_only():
    url_a, page_a = _finished_run({})
    url_b, _ = _finished_run({"seed": "1"})
    own_csvm = url_a["jobs"].split(",")[0]
    their_svm = url_b["jobs"].split(",")[1]
    assert own_csvm.startswith("csvm:") and their_svm.startswith("svm:")
    mixed = url_a | {"jobs": f"{own_csvm},{their_svm}"}
    at = open_app(mixed)
    assert not at.exception
    assert any("jobs of another run (svm)" in w.value for w in at.warning)
    assert set(_run_of(at).jobs) == {"csvm"}


def test_a_link_whose_csvm_job_is_another_runs_is_refused_by_name():
    url_a, _ = _finished_run({})
    url_b, _ = _finished_run({"seed": "2"})
    at = open_app(url_a | {"jobs": url_b["jobs"]})
    assert not at.exception
    assert any("does not name a run of this server" in w.value for w in at.warning)
    assert "current_run" not in at.session_state


def test_a_link_to_jobs_that_are_gone_says_so():
    at = open_app({"run": "deadbeef", "jobs": "csvm:0123456789ab,svm:x"})
    assert not at.exception
    assert any("no longer on the server" in w.value for w in at.warning)


def test_a_viewer_joins_a_run_where_it_is_not_at_step_zero():
    """A second browser (or a reload) shows the run's current step at once and follows
    it at the pace from there, rather than replaying it from the start at the pace."""
    url, _ = _finished_run({})
    viewer = open_app(url | {"pace": "2 s per step"})  # 4 s to replay from step 0
    assert not viewer.exception
    run = _run_of(viewer)
    play = viewer.session_state[f"play_{run.id}"]
    assert play.cursor == play.target == int(SMALL_RUN["n_iter"])
    assert any(s.value == "Comparison on the same split" for s in viewer.header)


def test_a_viewer_of_a_paced_run_joins_at_the_owners_step_not_the_workers():
    """The worker trains ahead of the paced page: a viewer (or the owner's reload) starts
    where the owner's page is, so the ending is not given away."""
    import time

    from explorer import pool
    from explorer.run_registry import owner_shown

    owner = open_app(SMALL_RUN | {"n_iter": "6", "pace": "2 s per step"})
    owner.button(key="start").click().run()
    deadline = time.time() + 60
    run_id = owner.session_state["current_run"]
    while time.time() < deadline:  # the worker records every step; the page shows one
        owner.run()
        view = pool.get_pool().get(owner.session_state["runs"][run_id].jobs["csvm"])
        if view.state == "done" and (owner_shown(run_id) or 0) >= 1:
            break
        time.sleep(0.3)
    shown = owner_shown(run_id)
    assert 1 <= shown < 6
    url = {k: query(owner, k) for k in owner.query_params}
    viewer = open_app(url)
    play = viewer.session_state[f"play_{run_id}"]
    assert play.target == shown and play.cursor <= shown + 1


def test_a_shared_view_shows_the_owners_ablation():
    """The owner's page starts the fixed-filter ablation; a viewer of the link sees its
    verdict and table too (it used to see neither)."""
    import time

    from explorer import pool
    from explorer.run_registry import ablation_job

    url, owner_page = _finished_run({"baselines": "-"})
    run = _run_of(owner_page)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = ablation_job(run)
        view = pool.get_pool().get(job) if job else None
        if view is not None and view.state == "done":
            break
        owner_page.run()
        time.sleep(0.2)
    assert view is not None and view.state == "done"
    owner_page.run()
    owner_lines = {m.value for m in owner_page.markdown if "filter" in m.value.lower()}
    viewer = wait_for_results(open_app(url))
    assert not viewer.exception
    viewer_lines = {m.value for m in viewer.markdown}
    verdicts = {line for line in owner_lines if line.startswith("**") and line in viewer_lines}
    assert verdicts, "the owner's ablation verdict is missing from the shared view"
    assert (
        any("What did learning the filter buy?" in h.value for h in viewer.header)
        and len(viewer.dataframe) >= 2
    )


def test_a_paused_run_stays_paused_at_its_step_in_a_new_page_and_resumes_with_its_owner():
    """A reload or a shared view of a paused run shows the step the owner paused on, not
    the ending; when the owner resumes, the shared view plays on."""
    import time

    from explorer.run_registry import owner_shown

    owner = open_app(SMALL_RUN | {"n_iter": "6", "pace": "2 s per step"})
    owner.button(key="start").click().run()
    run_id = owner.session_state["current_run"]
    deadline = time.time() + 60
    while time.time() < deadline and (owner_shown(run_id) or 0) < 1:
        owner.run()
        time.sleep(0.3)
    assert (owner.button(key="start").proto.type, owner.button(key="pause").proto.type) == (
        "primary",
        "secondary",
    )
    owner.button(key="pause").click().run()
    paused_at = owner.session_state[f"play_{run_id}"].shown()
    # Paused, its line does not also say it is playing back ("Paused · … playing back").
    (line,) = [p.proto.text for p in owner.get("progress")]
    assert line.startswith("Paused · ") and "playing back" not in line
    # Training is done: the line names no job that ended well ("— CSVM: done" read as if
    # Pause had stopped the training).
    assert "training done" in line and ": done" not in line
    # Paused, the next press is Resume: it is the coloured button, not Start (a new run).
    assert (owner.button(key="start").proto.type, owner.button(key="pause").proto.type) == (
        "secondary",
        "primary",
    )
    time.sleep(2.5)  # more than a step of the pace: a playing page would move on
    url = {k: query(owner, k) for k in owner.query_params}
    viewer = open_app(url)
    for _ in range(3):
        viewer.run()
    play = viewer.session_state[f"play_{run_id}"]
    assert play.paused and play.shown() == paused_at
    assert not any(b.label == "Pause" for b in viewer.button)  # read only, as before
    owner.button(key="pause").click().run()  # Resume
    owner.run()
    assert owner.button(key="start").proto.type == "primary"
    viewer.run()
    assert not viewer.session_state[f"play_{run_id}"].paused
