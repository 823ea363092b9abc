"""The app's typed state without Streamlit: a run's playback (pace, pause, step, stop),
the run record, the Filter lab's settings value and the live fragment's view helpers."""

import pickle
from dataclasses import FrozenInstanceError
from types import SimpleNamespace

import pytest

from csvm.analysis.lab import SETTING_NAMES
from csvm.runs.config import RunConfig
from explorer.lab_settings import LabSettings
from explorer.live import flatten, is_busy
from explorer.state import Playback, Run


def test_paced_playback_shows_one_more_step_per_tick_and_never_runs_ahead():
    play = Playback()
    assert [play.advance(3, pace=1.0) for _ in range(5)] == [1, 2, 3, 3, 3]
    assert not play.behind(3) and play.behind(4)
    assert play.advance(5, pace=1.0) == 4  # new steps recorded: one more per tick


def test_live_pace_shows_every_recorded_step_at_once():
    play = Playback()
    assert play.advance(7, pace=0.0) == 7
    assert play.advance(9, pace=0.0) == 9


def test_pause_holds_the_cursor_and_resume_goes_on_from_there():
    play = Playback()
    play.advance(10, pace=1.0)
    play.advance(10, pace=1.0)
    play.pause()
    assert play.paused and play.target == 2
    assert [play.advance(10, pace=1.0) for _ in range(3)] == [2, 2, 2]
    assert play.advance(10, pace=0.0) == 2, "paused beats the live pace"
    play.resume()
    assert not play.paused and play.advance(10, pace=1.0) == 3


def test_toggle_switches_between_pause_and_resume():
    play = Playback(cursor=4)
    play.toggle()
    assert play.paused and play.target == 4
    play.toggle()
    assert not play.paused and play.target == 4


def test_step_pauses_and_shows_exactly_one_more_step():
    play = Playback()
    play.advance(5, pace=1.0)
    assert play.step(5) is False  # the step is recorded: no need to ask the worker
    assert play.paused and play.target == 2 and play.shown() == 2
    assert play.advance(5, pace=1.0) == 2
    assert play.advance(5, pace=1.0) == 2  # held there


def test_step_beyond_the_recorded_steps_asks_the_worker():
    play = Playback(cursor=3, paused=True, target=3)
    assert play.step(3) is True
    assert play.advance(3, pace=1.0) == 3  # not there yet
    assert play.advance(4, pace=1.0) == 4  # the worker's step arrived


def test_shown_is_the_cursor_while_playing_and_the_target_while_paused():
    play = Playback(cursor=2)
    assert play.shown() == 2
    play.step(10)
    assert play.shown() == 3 and play.cursor == 2


def test_stop_unpauses_and_jumps_to_the_last_step():
    play = Playback(cursor=1, paused=True, target=1)
    play.stop(now=100.0)
    assert not play.paused and play.stop_at == 100.0
    assert play.advance(8, pace=2.0) == 8


def test_a_stop_is_overdue_once_after_the_grace_period():
    play = Playback()
    assert not play.stop_overdue(now=5.0, grace=1.0)
    play.stop(now=10.0)
    assert not play.stop_overdue(now=10.5, grace=1.0)
    assert play.stop_overdue(now=11.5, grace=1.0)
    assert not play.stop_overdue(now=20.0, grace=1.0), "reported once"


def test_run_and_playback_survive_pickling_like_the_dicts_they_replace():
    run = Run(id="ab12", config=RunConfig(), jobs={"csvm": "j1", "svm": "j2"}, owner="me")
    assert run.jobs_param() == "csvm:j1,svm:j2"
    assert run.owned_by("me") and not run.owned_by("someone else")
    assert not Run(id="x", config=RunConfig(), jobs={}).owned_by("me")
    again = pickle.loads(pickle.dumps(run))
    assert again == run and again.ablation is None
    play = Playback(cursor=3, paused=True, target=4)
    assert pickle.loads(pickle.dumps(play)) == play


def test_lab_settings_are_the_setting_names_of_the_lab():
    config = RunConfig()
    settings = LabSettings.from_config(config)
    assert tuple(settings.as_kwargs()) == SETTING_NAMES
    assert settings.as_kwargs() == {n: getattr(config, n) for n in SETTING_NAMES}
    assert "lam" not in settings.raw_pixel_kwargs()
    assert "regulariser" not in settings.raw_pixel_kwargs()
    assert settings == LabSettings.from_config(config) and hash(settings)
    changed = LabSettings.from_config(config.replace(C=3.0))
    assert changed != settings and changed.C == 3.0
    with pytest.raises(FrozenInstanceError):
        settings.C = 1.0


def test_busy_looks_through_nested_views():
    done, running = SimpleNamespace(state="done"), SimpleNamespace(state="running")
    assert list(flatten({"a": [done, running], "b": done})) == [done, running, done]
    assert is_busy({"a": [done, running]})
    assert not is_busy({"a": [done, None], "b": {"c": SimpleNamespace(state="stopped")}})
    assert not is_busy([]) and is_busy(running)
