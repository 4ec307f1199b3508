"""The simulator's feedback delay (issue 48, item 3): fixed, a range drawn per play, or a preset."""

from __future__ import annotations

import pytest

from agent.games.tangram.sim.__main__ import build_parser
from agent.games.tangram.sim.feedback_delay import PRESETS, FeedbackDelay, parse_feedback_delay
from agent.games.tangram.sim.simgame import PHYSICS_STEP_S, SimGame


@pytest.mark.parametrize(("text", "low", "high"), [("0.5", 0.5, 0.5), ("2.3-4.8", 2.3, 4.8), ("2.3:4.8", 2.3, 4.8),
                                                   (" REAL ", 2.3, 4.8), ("loaded", 4.0, 6.0)])
def test_a_delay_is_seconds_a_range_or_a_preset(text: str, low: float, high: float) -> None:
    assert parse_feedback_delay(text) == FeedbackDelay(low, high)


@pytest.mark.parametrize("text", ["slow", "4.8-2.3", "-1", "nan", "1-500", ""])
def test_a_bad_delay_is_refused_with_what_is_accepted(text: str) -> None:
    with pytest.raises(ValueError, match="feedback delay"):
        parse_feedback_delay(text)


def test_the_real_preset_is_the_range_measured_on_the_real_game() -> None:
    assert PRESETS["real"] == FeedbackDelay(2.3, 4.8)


def _play(game: SimGame, x: float) -> float:
    reaction = game.handle_agent_frame(f'{{"type": "play", "shape": "Green", "position": [{x}, 50], "rotation": 0}}')
    assert reaction.play is not None
    return game.feedback_due(reaction.play) - reaction.play.at


def test_each_play_draws_its_own_time_within_the_range_and_keeps_it() -> None:
    now = [0.0]
    game = SimGame(animation=0.5, feedback_delay=PRESETS["real"], feedback_seed=7, clock=lambda: now[0])
    game.start_ai_turn()
    times = []
    for i in range(30):
        now[0] = 10.0 * i
        times.append(_play(game, 20 + i))
    assert all(2.3 <= t <= 4.8 for t in times) and len(set(times)) > 20
    assert max(times) - min(times) > 1.5  # the range is used, not one end of it
    again = SimGame(animation=0.5, feedback_delay=PRESETS["real"], feedback_seed=7, clock=lambda: now[0])
    again.start_ai_turn()
    now[0] = 0.0
    assert _play(again, 20) == pytest.approx(times[0])  # seeded: a run can be repeated
    play = game.turns[-1].plays[-1]
    assert game.feedback_due(play) == game.feedback_due(play)  # drawn once per play


def test_without_a_delay_the_feedback_follows_the_tween_and_a_frame_and_never_precedes_it() -> None:
    game = SimGame(animation=0.5, clock=lambda: 0.0)
    game.start_ai_turn()
    assert _play(game, 30) == pytest.approx(0.5 + PHYSICS_STEP_S)
    quick = SimGame(animation=0.5, feedback_delay=FeedbackDelay(0.1, 0.1), clock=lambda: 0.0)
    quick.start_ai_turn()
    assert _play(quick, 30) == pytest.approx(0.5 + PHYSICS_STEP_S)


def test_the_cli_takes_the_option_and_refuses_a_bad_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert build_parser().parse_args(["--feedback-delay", "real"]).feedback_delay == PRESETS["real"]
    assert build_parser().parse_args([]).feedback_delay is None
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["--feedback-delay", "slowish"])
    assert exit_info.value.code == 2 and "real" in capsys.readouterr().err
