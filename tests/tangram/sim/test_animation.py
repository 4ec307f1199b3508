"""The simulator's animation, spins and stale collisions on a hand-driven clock (GAME_FACTS, last section)."""

from __future__ import annotations

import json

import pytest

from agent.games.tangram.sim.simgame import UNDO_MESSAGE, SimGame


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def play(shape: str, x: float, y: float, rotation: float) -> str:
    return json.dumps({"type": "play", "shape": shape, "position": [x, y], "rotation": rotation})


def make(**options: object) -> tuple[SimGame, Clock]:
    clock = Clock()
    game = SimGame(clock=clock, animation=0.5, **options)  # type: ignore[arg-type]
    game.start_ai_turn()
    return game, clock


def test_a_play_tweens_position_and_rotation_numerically() -> None:
    game, clock = make()
    start = game.pose_now("Yellow")  # in the drawer at -90
    reaction = game.handle_agent_frame(play("Yellow", 50, 50, 0))
    assert reaction.send_feedback and game.animating("Yellow")
    clock.now += 0.25
    half = game.pose_now("Yellow")
    assert half.x == pytest.approx((start.x + 50) / 2) and half.rotation == pytest.approx(-45.0, abs=0.01)
    clock.now += 0.25
    assert not game.animating() and game.pose_now("Yellow").rotation == 0.0
    assert game.feedback_due(reaction.play) == pytest.approx(0.5 + 1 / 60)  # type: ignore[arg-type]


def test_spins_over_180_degrees_are_flagged() -> None:
    game, clock = make()
    game.handle_agent_frame(play("Yellow", 50, 50, 270))  # from -90: a full turn on screen
    assert [v.kind for v in game.violations] == ["spin_over_180"]
    assert game.spins == [pytest.approx(360.0, abs=0.01)]
    clock.now += 1
    game.handle_agent_frame(play("Yellow", 50, 50, 90))  # from 270 the short way: 180
    assert len(game.violations) == 1


def test_finish_during_the_animation_checks_the_half_moved_piece_and_the_tween_lands_it() -> None:
    game, clock = make()
    game.place("Purple", 83, 34, 0)
    # Green slides from the drawer across Purple to a free spot at the left: half-way, it overlaps.
    game.handle_agent_frame(play("Green", 20, 50, 0))
    clock.now += 0.25
    assert game.collisions("Green")  # over Purple right now
    reaction = game.handle_agent_frame('{"type": "finish"}')
    assert reaction.turn_ended and reaction.undone and game.chat_log[-1].text == UNDO_MESSAGE
    kinds = [v.kind for v in game.violations]
    assert kinds == ["finish_during_animation"]
    turn = game.turns[-1]
    assert turn.landed_unchecked
    clock.now += 0.5
    assert game.pose_now("Green").x == 20  # put back, yet the tween landed it where it was sent


def test_a_play_during_the_animation_is_flagged_and_starts_from_where_the_piece_is() -> None:
    game, clock = make()
    game.handle_agent_frame(play("Green", 50, 50, 0))
    clock.now += 0.2
    midway = game.pose_now("Green")
    record = game.handle_agent_frame(play("Green", 60, 50, 0)).play
    assert record is not None and record.during_animation and record.start == midway
    assert [v.kind for v in game.violations] == ["play_during_animation"]


def test_stale_collisions_describe_the_pose_one_physics_step_short() -> None:
    game, clock = make(stale_collisions=True)
    game.place("Purple", 50, 50, 0)
    # Green moves from right of Purple to its left, passing over it; it ends clear of Purple.
    game.place("Green", 80, 50, 0)
    record = game.handle_agent_frame(play("Green", 36, 50, 0)).play
    assert record is not None
    clock.now += 0.6
    assert game.collisions("Green") == []  # really clear
    feedback = game.play_feedback_frame(record)
    assert feedback["state"]["on_board"]["Green"]["collisions"] == ["Purple"]  # reported one step behind
    again = game.handle_agent_frame(play("Green", 36, 50, 0)).play  # the same play once more
    assert again is not None
    clock.now += 0.6
    assert game.play_feedback_frame(again)["state"]["on_board"]["Green"]["collisions"] == []
