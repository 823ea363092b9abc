"""A busy server stretches the pages' ticks; the Train playback keeps its pace by time."""

import pytest

from explorer.state import Playback
from explorer.tick_load import MAX_INTERVAL, TickLoad


def test_a_quiet_server_ticks_at_the_base_interval():
    load = TickLoad(share=0.5, cores=2)
    load.record("a", 0.2, now=0.0)
    assert load.interval(1.0, now=0.5) == 1.0


def test_twenty_pages_stretch_the_interval_to_keep_ticks_within_their_share():
    load = TickLoad(share=0.5, cores=2)
    for page in range(20):
        load.record(f"p{page}", 0.2, now=10.0)
    interval = load.interval(1.0, now=10.0)
    # 20 pages x 0.2 s per tick / interval = the CPU the ticks use: at most half of 2 cores.
    assert 20 * 0.2 / interval <= 0.5 * 2 + 1e-9
    assert interval == pytest.approx(4.0)


def test_pages_that_stopped_ticking_are_forgotten_and_the_interval_is_bounded():
    load = TickLoad(share=0.5, cores=1)
    for page in range(100):
        load.record(f"p{page}", 1.0, now=0.0)
    assert load.interval(1.0, now=0.0) == MAX_INTERVAL
    assert load.watching(now=100.0) == 0
    assert load.interval(1.0, now=100.0) == 1.0


def test_a_timed_playback_moves_by_elapsed_time():
    play = Playback()
    assert play.advance(20, pace=1.0, now=0.0) == 1  # the first tick shows a step
    assert play.advance(20, pace=1.0, now=1.0) == 2
    assert play.advance(20, pace=1.0, now=4.0) == 5  # a tick 3 s later: three steps
    assert play.advance(20, pace=0.5, now=4.25) == 5  # half a step earned, kept
    assert play.advance(20, pace=0.5, now=4.5) == 6


def test_waiting_for_the_worker_earns_no_burst_and_a_pause_earns_no_steps():
    play = Playback()
    play.advance(2, pace=1.0, now=0.0)
    play.advance(2, pace=1.0, now=1.0)
    assert play.advance(2, pace=1.0, now=30.0) == 2  # nothing new recorded for 29 s
    assert play.advance(10, pace=1.0, now=31.0) == 3  # one step, not 30
    play.pause()
    play.resume()
    assert play.advance(10, pace=1.0, now=100.0) == 4
