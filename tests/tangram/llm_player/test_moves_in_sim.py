"""Every kind of move the LLM may answer, played through the simulator as the real game behaves
(shipped build, 0.5 s animation), checked with the simulator's own geometry."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from shapely.geometry import Polygon

from agent.core.testing.fake_openai import FakeOpenAI
from agent.games.tangram.geometry.frames import normalize_rotation
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.llm_player.salvage import salvage_answer
from agent.games.tangram.sim.client import GameClient
from agent.games.tangram.sim.simgame import GODOT_TWEEN_S, outline_world
from tests.tangram.support import assert_agent_frames_valid, good_replies, llm_config

NONE = {"piece": None, "rotation": None, "x": None, "y": None, "relation": None, "anchor": None,
        "relation2": None, "anchor2": None, "reasoning": "test"}


def move(**fields: Any) -> dict[str, Any]:
    return {**NONE, "action": "place", "chat": "Here goes.", **fields}


def gap(game: GameClient, a: str, b: str) -> float:
    poses = game.game.current_poses()
    return float(Polygon(outline_world(poses[a])).distance(Polygon(outline_world(poses[b]))))


async def one_turn(tmp_path: Path, reply: dict[str, Any],
                   setup: Mapping[str, tuple[float, float, float]]) -> GameClient:
    async with FakeOpenAI(responder=good_replies(reply)) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, deadline=8), host="127.0.0.1", port=0) as server:
        game = GameClient(server.url, tween=GODOT_TWEEN_S)
        async with game:
            for name, pose in setup.items():
                game.game.place(name, *pose)
            turn = await game.ai_turn(deadline=15)
            assert turn.finished and not turn.undone
            assert_agent_frames_valid(game)
        return game


async def test_coordinates(tmp_path: Path) -> None:
    game = await one_turn(tmp_path, move(piece="Purple", rotation=45, x=40, y=60), {})
    (play,) = game.game.turns[-1].plays
    assert play.shape == "Purple" and play.spin == pytest.approx(0.0, abs=0.01)  # it starts at 45 in the drawer
    assert "Purple" in game.game.on_board()


async def test_one_relation_is_flush(tmp_path: Path) -> None:
    game = await one_turn(tmp_path, move(piece="Purple", rotation=0, relation="right_of", anchor="Red"),
                          {"Red": (40, 50, 0)})
    assert 0.5 < gap(game, "Purple", "Red") < 2.0


async def test_two_relations_touch_both_anchors(tmp_path: Path) -> None:
    setup = {"Blue": (30, 60, 0), "Red": (45, 35, 0)}
    game = await one_turn(tmp_path, move(piece="Purple", rotation=0, relation="right_of", anchor="Blue",
                                         relation2="above", anchor2="Red"), setup)
    assert 0.5 < gap(game, "Purple", "Blue") < 2.0
    assert 0.5 < gap(game, "Purple", "Red") < 2.0


async def test_rotate_in_place_keeps_the_origin_and_turns_the_short_way(tmp_path: Path) -> None:
    game = await one_turn(tmp_path, {**NONE, "action": "rotate", "piece": "Blue", "rotation": 270,
                                     "chat": "Turning Blue."}, {"Blue": (50, 50, 0)})
    (play,) = game.game.turns[-1].plays
    assert math.isclose(play.x, 50, abs_tol=1e-3) and math.isclose(play.y, 50, abs_tol=1e-3)
    assert play.rotation == pytest.approx(-90.0) and play.spin == pytest.approx(90.0, abs=0.01)
    assert normalize_rotation(game.game.poses["Blue"].rotation) == pytest.approx(270.0)


async def test_a_pass_that_says_the_figure_looks_done(tmp_path: Path) -> None:
    game = await one_turn(tmp_path, {**NONE, "action": "pass", "chat": "I think it looks finished!"}, {})
    turn = game.game.turns[-1]
    assert not turn.plays and "I think it looks finished!" in turn.agent_chat


def test_a_rotate_needs_a_rotation_and_a_second_relation_needs_its_anchor() -> None:
    board = {"Blue": (40.0, 40.0), "Red": (60.0, 40.0)}
    rotate = salvage_answer({**NONE, "action": "rotate", "piece": "Blue", "chat": "x"}, board)
    assert rotate.move is None and rotate.problem is not None and rotate.problem.kind == "rotate_without_rotation"
    half = salvage_answer(move(piece="Blue", relation="left_of", anchor="Red", relation2="above"), board)
    assert half.move is not None and half.move.relation == "left_of" and half.move.relation2 is None
    assert [s.kind for s in half.salvages] == ["second_half"]
