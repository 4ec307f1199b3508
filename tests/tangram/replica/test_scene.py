"""The simulator's own scene geometry against the agent's geometry table, on random poses.

The two are written independently (the simulator from the scene file's raw numbers and its own
separating-axis test; the agent from its piece table and shapely), so agreement here means the
agent's table really describes the game, and a mistake in either shows up.
"""

from __future__ import annotations

import math
import random

import pytest

from agent.games.tangram.geometry.collide import BOUNDARY, board_gap_px, polygon_px, predict_collisions
from agent.games.tangram.geometry.frames import Pose, start_pose
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.replica import scene
from agent.games.tangram.replica.scene import start_pose as scene_start_pose
from agent.games.tangram.sim.simgame import SimGame, markers_board, outline_world

NEAR_PX = 0.05
"""Pairs closer than this to touching are skipped: the two tables differ by hundredths of a pixel
(the scene stores 3.14159, not pi), so exact contact may fall either way."""


def _random_pose(rng: random.Random, name: str) -> Pose:
    rotation = rng.choice([rng.uniform(-720, 720), 45.0 * rng.randint(-8, 8)])
    return Pose(name, rng.uniform(-5, 105), rng.uniform(-5, 105), rotation)


def test_pieces_agree_with_the_agents_table_and_start_in_the_drawer() -> None:
    for name in PIECE_NAMES:
        ours = polygon_px(start_pose(name))
        theirs = outline_world(scene_start_pose(name))
        assert len(theirs) == len(ours.exterior.coords) - 1
        for x, y in theirs:
            assert min(math.dist((x, y), q) for q in ours.exterior.coords) < 0.01, name
        assert not scene.overlaps_rect(theirs, scene.BOARD_AREA)
        assert scene.overlaps_rect(theirs, scene.DRAWER_AREA)


@pytest.mark.parametrize("seed", range(4))
def test_collisions_agree_on_random_poses(seed: int) -> None:
    rng = random.Random(seed)
    compared = 0
    for _ in range(400):
        a, b = rng.sample(PIECE_NAMES, 2)
        pa, pb = _random_pose(rng, a), _random_pose(rng, b)
        # Bring the pair close often, so contacts are tested, not only far-apart pieces.
        if rng.random() < 0.7:
            pb = Pose(b, pa.x + rng.uniform(-12, 12), pa.y + rng.uniform(-12, 12), pb.rotation)
        gap = polygon_px(pa).distance(polygon_px(pb))
        depth = scene.separation(outline_world(pa), outline_world(pb))
        if gap < NEAR_PX and -NEAR_PX < depth <= 0:
            continue
        agent_hit = b in predict_collisions(pa, [pb])
        sim_hit = scene.convex_overlap(outline_world(pa), outline_world(pb))
        assert agent_hit == sim_hit, (pa, pb, gap, depth)
        compared += 1
    assert compared > 300


@pytest.mark.parametrize("seed", range(3))
def test_markers_agree_on_random_poses(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(200):
        pose = _random_pose(rng, rng.choice(PIECE_NAMES))
        center, vertices = markers_board(pose)
        assert math.dist(center, pose.marker_board()) < 1e-3
        assert len(vertices) == len(pose.vertex_markers_board())
        for v, w in zip(vertices, pose.vertex_markers_board(), strict=False):
            assert math.dist(v, w) < 1e-3


@pytest.mark.parametrize("seed", range(3))
def test_the_agents_board_limit_is_never_looser_than_the_games_frame(seed: int) -> None:
    """The agent keeps pieces inside the 337 x 322 board; the game's frame hole is a little larger.
    Whatever the agent calls inside, the game must not call BOUNDARY; well outside, it must."""
    rng = random.Random(seed)
    game = SimGame()
    inside = outside = 0
    for _ in range(300):
        pose = _random_pose(rng, rng.choice(PIECE_NAMES))
        gap = board_gap_px(pose)  # negative when the piece sticks out of the board
        frame = scene.touches_frame(outline_world(pose))
        if BOUNDARY not in predict_collisions(pose, []):
            inside += 1
            assert not frame, pose
        elif gap < -5.0 and scene.overlaps_rect(outline_world(pose), scene.BOARD_AREA):
            outside += 1
            assert frame and BOUNDARY in game.collisions(pose.piece, pose), pose
    assert inside > 20 and outside > 20


def test_the_frame_has_holes_for_the_board_and_the_drawer_only() -> None:
    assert not scene.point_in_polygon((690.0, 230.0), scene.FRAME)  # the board
    assert not scene.point_in_polygon((1019.0, 321.0), scene.FRAME)  # the drawer
    assert scene.point_in_polygon((900.0, 230.0), scene.FRAME)  # between them
    assert scene.point_in_polygon((690.0, 420.0), scene.FRAME)  # below the board
