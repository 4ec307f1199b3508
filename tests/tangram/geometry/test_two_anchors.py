"""Two relations at once: the piece touches both anchors (one clearance apart), on the named sides."""

from __future__ import annotations

import random

import pytest

from agent.games.tangram.geometry.collide import CLEARANCE_PX, is_valid, polygon_px
from agent.games.tangram.geometry.cspace import MARGIN_PX
from agent.games.tangram.geometry.frames import Pose, rotation_distance
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.geometry.relations import DIRECTIONAL_RELATIONS, resolve_two

GAP = CLEARANCE_PX + MARGIN_PX


def gap(a: Pose, b: Pose) -> float:
    return float(polygon_px(a).distance(polygon_px(b)))


def centre(p: Pose) -> tuple[float, float]:
    x0, y0, x1, y1 = p.bounds_board()
    return ((x0 + x1) / 2, (y0 + y1) / 2)


CORNER = {"Blue": Pose("Blue", 30, 60, 0), "Red": Pose("Red", 45, 35, 0)}


@pytest.mark.parametrize("piece", ["Purple", "Green", "Yellow", "Brown", "Cream"])
def test_right_of_one_and_above_the_other_is_flush_with_both(piece: str) -> None:
    pose = resolve_two(piece, "right_of", "Blue", "above", "Red", CORNER, rotation=None)
    assert pose is not None
    assert is_valid(pose, CORNER)
    for anchor in CORNER.values():
        assert gap(pose, anchor) == pytest.approx(GAP, abs=0.02)
    (px, py), (bx, _), (_, ry) = centre(pose), centre(CORNER["Blue"]), centre(CORNER["Red"])
    assert px > bx and py > ry


def test_the_asked_rotation_is_kept_when_it_fits() -> None:
    for asked in (0.0, 90.0, 180.0):
        pose = resolve_two("Purple", "right_of", "Blue", "above", "Red", CORNER, rotation=asked)
        assert pose is not None and rotation_distance(pose.rotation, asked) < 1e-9


def test_impossible_combinations_give_none() -> None:
    assert resolve_two("Purple", "left_of", "Blue", "right_of", "Blue", CORNER) is None  # one anchor twice
    assert resolve_two("Purple", "square_with", "Blue", "above", "Red", CORNER) is None  # not directional
    assert resolve_two("Purple", "right_of", "Blue", "above", "Cream", CORNER) is None  # anchor not on board
    far = {"Blue": Pose("Blue", 10, 90, 0), "Red": Pose("Red", 80, 15, 0)}
    assert resolve_two("Green", "left_of", "Blue", "right_of", "Red", far) is None  # they cannot both be touched


@pytest.mark.parametrize("seed", range(6))
def test_random_pairs_are_valid_and_flush_whenever_resolved(seed: int) -> None:
    rng = random.Random(seed)
    resolved = 0
    for _ in range(60):
        a, b, piece = rng.sample(PIECE_NAMES, 3)
        board = {a: Pose(a, rng.uniform(25, 75), rng.uniform(25, 75), 45.0 * rng.randint(0, 7))}
        board[b] = Pose(b, board[a].x + rng.uniform(-25, 25), board[a].y + rng.uniform(-25, 25),
                        45.0 * rng.randint(0, 7))
        if not is_valid(board[b], {a: board[a]}):
            continue
        r1, r2 = rng.sample(DIRECTIONAL_RELATIONS, 2)
        pose = resolve_two(piece, r1, a, r2, b, board, rotation=rng.choice([None, 0.0, 90.0]))
        if pose is None:
            continue
        resolved += 1
        assert is_valid(pose, board)
        assert gap(pose, board[a]) == pytest.approx(GAP, abs=0.02)
        assert gap(pose, board[b]) == pytest.approx(GAP, abs=0.02)
    assert resolved >= 3
