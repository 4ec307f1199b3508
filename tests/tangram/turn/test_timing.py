"""The landing reserve and the turn's instants (turn/timing.py): pure arithmetic, no clock."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.games.tangram.turn.timing import (
    FALLBACK_RESERVE_S,
    FINISH_MARGIN_S,
    FIRST_LANDING_SHARE,
    LANDING_HEADROOM,
    LANDING_SAMPLES,
    MAX_LANDING_S,
    MIN_LANDING_S,
    MIN_WORK_S,
    SLOW_LANDING_S,
    LandingTimes,
    TurnTimes,
    quantile,
)


def learnt(*seconds: float) -> LandingTimes:
    times = LandingTimes()
    for s in seconds:
        times.observe(s)
    return times


def test_the_quantile_is_an_observed_value_by_nearest_rank() -> None:
    values = [float(v) for v in range(1, 11)]
    assert quantile(values, 0.9) == 9.0 and quantile(values, 1.0) == 10.0 and quantile(values, 0.0) == 1.0
    assert quantile([4.0, 0.5, 0.5], 0.9) == 4.0  # one slow play of three is not averaged away


def test_a_connection_that_has_shown_nothing_assumes_the_slow_real_game() -> None:
    assert LandingTimes().reserve(90.0) == SLOW_LANDING_S
    assert LandingTimes().reserve(60.0) == SLOW_LANDING_S


def test_the_slow_assumption_takes_at_most_half_a_short_turn_so_a_first_play_is_possible() -> None:
    assert LandingTimes().reserve(8.0) == pytest.approx(FIRST_LANDING_SHARE * 8.0)
    assert LandingTimes().reserve(1.0) == MIN_LANDING_S  # never below the animation and a frame


def test_fewer_than_three_plays_never_lower_the_reserve_below_the_slow_case() -> None:
    assert learnt(0.52).reserve(60.0) == SLOW_LANDING_S
    assert learnt(0.52, 0.52).reserve(60.0) == SLOW_LANDING_S
    assert learnt(7.0).reserve(60.0) == pytest.approx(LANDING_HEADROOM * 7.0)  # but they may raise it


def test_the_simulators_quick_answers_are_learnt_after_three_plays() -> None:
    assert learnt(0.52, 0.53, 0.52).reserve(60.0) == pytest.approx(LANDING_HEADROOM * 0.53)


def test_the_real_games_times_are_reserved_with_headroom() -> None:
    real = learnt(2.3, 3.1, 4.8, 2.9, 3.6, 4.1, 2.6, 3.3, 3.9, 4.4)
    assert real.reserve(90.0) == pytest.approx(LANDING_HEADROOM * 4.4)  # the 9th of 10
    assert real.reserve(90.0) > 4.8  # the slowest seen still lands within the reserve


def test_a_game_that_slows_down_is_followed_and_old_times_are_forgotten() -> None:
    times = learnt(*([0.5] * LANDING_SAMPLES))
    fast = times.reserve(60.0)
    for _ in range(LANDING_SAMPLES):
        times.observe(4.0)
    assert fast == pytest.approx(LANDING_HEADROOM * 0.5)
    assert times.reserve(60.0) == pytest.approx(LANDING_HEADROOM * 4.0)
    assert len(times.samples) == LANDING_SAMPLES


def test_one_freak_observation_is_capped_and_nonsense_is_ignored() -> None:
    assert learnt(0.5, 0.5, 0.5, 500.0).reserve(60.0) == MAX_LANDING_S
    times = learnt(math.nan, -1.0, math.inf)
    assert list(times.samples) == []


def test_the_turns_instants_keep_the_landing_and_the_finish_margin_free() -> None:
    times = TurnTimes.of(100.0, 90.0, 6.0)
    assert times.ends_at == 190.0
    assert times.work_until == pytest.approx(190.0 - 6.0 - FINISH_MARGIN_S)
    assert times.decide_by == pytest.approx(times.work_until - FALLBACK_RESERVE_S)
    assert times.time_for_a_play(times.work_until, 6.0)  # the work time's own end still counts
    assert not times.time_for_a_play(times.work_until + 0.01, 6.0)
    assert not times.time_for_a_play(times.work_until, 6.5)  # the game turned slower meanwhile
    assert TurnTimes.of(0.0, 2.0, 6.0).work_until == MIN_WORK_S  # a deadline too short still asks the player


@given(st.floats(1.5, 3600.0), st.floats(0.0, 20.0), st.floats(0.0, 3600.0))
def test_a_play_the_times_allow_always_lands_and_finishes_by_the_deadline(deadline: float, landing: float,
                                                                         at: float) -> None:
    times = TurnTimes.of(0.0, deadline, landing)
    assert times.started <= times.decide_by <= times.work_until <= times.ends_at
    if times.time_for_a_play(at, landing):
        assert at + landing + FINISH_MARGIN_S <= deadline + 1e-6
