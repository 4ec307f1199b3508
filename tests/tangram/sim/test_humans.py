"""Scripted humans: valid moves only, and the same choices for the same seed."""

from __future__ import annotations

import pytest

from agent.games.tangram.sim import humans
from agent.games.tangram.sim.figure import figure_score, target_poses
from agent.games.tangram.sim.humans import HUMAN_KINDS, make_human
from agent.games.tangram.sim.simgame import SimGame


def _play_moves(kind: str, seed: int | str, rounds: int = 6) -> list[object]:
    game = SimGame("A house")
    human = make_human(kind, seed, "A house")
    out: list[object] = []
    for _ in range(rounds):
        out.append(tuple(human.chat_before(game)))
        move = human.choose_move(game)
        if move is not None:
            assert game.human_move(*move), f"{kind} chose a drop the game refuses: {move}"
        out.append(move)
        out.append(tuple(human.chat_during(game)))
        game.start_ai_turn()
        game.finish()
    return out


@pytest.mark.parametrize("kind", HUMAN_KINDS)
def test_same_seed_same_game(kind: str) -> None:
    assert _play_moves(kind, 7) == _play_moves(kind, 7)


@pytest.mark.parametrize("kind", ["random", "chatty"])
def test_different_seeds_differ(kind: str) -> None:
    assert _play_moves(kind, 1) != _play_moves(kind, 2)


def test_passive_never_moves_or_talks() -> None:
    assert all(x in (None, ()) for x in _play_moves("passive", 3))


def test_random_moves_every_turn_and_every_move_is_valid() -> None:
    moves = _play_moves("random", 5)[1::3]
    assert all(m is not None for m in moves)


def test_cooperative_without_a_figure_keeps_pieces_together(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(humans, "target_poses", lambda objective: None)
    game = SimGame("A house")
    human = make_human("cooperative", 0, "A house")
    for _ in range(4):
        move = human.choose_move(game)
        assert move is not None and game.human_move(*move)
        game.start_ai_turn()
        game.finish()
    xs = [p.centroid_board()[0] for p in game.on_board().values()]
    ys = [p.centroid_board()[1] for p in game.on_board().values()]
    assert len(xs) == 4
    assert max(xs) - min(xs) < 60 and max(ys) - min(ys) < 60


def test_cooperative_builds_the_target_figure() -> None:
    assert target_poses("A house") is not None  # the planner's figure: part of the project, never missing
    game = SimGame("A house")
    human = make_human("cooperative", 0, "A house")
    for _ in range(7):
        move = human.choose_move(game)
        assert move is not None and game.human_move(*move)
        game.start_ai_turn()
        game.finish()
    score = figure_score(game.on_board(), "A house")
    assert score is not None and score > 0.98


def test_cooperative_follows_a_figure_started_elsewhere() -> None:
    targets = target_poses("A house")
    assert targets is not None
    first, goal = next(iter(targets.items()))
    game = SimGame("A house")
    game.place(first, goal.x - 6, goal.y + 4, goal.rotation)  # the agent started it shifted
    move = make_human("cooperative", 0, "A house").choose_move(game)
    assert move is not None
    name, x, y, rot = move
    assert name != first
    assert (x, y) == pytest.approx((targets[name].x - 6, targets[name].y + 4), abs=3.5)


def test_chatty_talks_before_and_during_turns() -> None:
    out = _play_moves("chatty", 11, rounds=10)
    before, during = out[0::3], out[2::3]
    assert any(before) and any(during)


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError):
        make_human("sleepy")
