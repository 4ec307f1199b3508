"""Repair: valid proposals stay, invalid ones go to the nearest valid pose, and nothing it returns
ever collides by the predictor (with the clearance)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely.geometry import Point as ShapelyPoint

from agent.games.tangram.geometry.collide import (
    BOUNDARY,
    CLEARANCE_PX,
    board_gap_px,
    gap_px,
    is_valid,
    predict_collisions,
)
from agent.games.tangram.geometry.cspace import MARGIN_PX, build_cspace, distinct_rotations
from agent.games.tangram.geometry.frames import Pose, world_to_board
from agent.games.tangram.geometry.repair import RepairResult, repair
from agent.games.tangram.geometry.sampling import random_board, random_proposal


def at_px(piece: str, wx: float, wy: float, rotation: float = 0.0) -> Pose:
    x, y = world_to_board(wx, wy)
    return Pose(piece, x, y, rotation)


def test_valid_proposal_is_returned_unchanged() -> None:
    board = {"Red": Pose("Red", 30, 30, 0)}
    pose = Pose("Green", 70, 70, 405.0)
    result = repair(pose, board)
    assert result.pose is pose and result.displacement == 0.0 and result.reason == ""
    assert not result.rotation_changed and not result.changed


def test_overlap_is_moved_to_a_flush_valid_spot_nearby() -> None:
    board = {"Red": Pose("Red", 50, 50, 0)}
    result = repair(Pose("Green", 50, 52, 0), board)
    assert result.pose is not None and is_valid(result.pose, board)
    assert result.collisions == ("Red",)
    assert not result.rotation_changed and result.pose.rotation == 0
    # Nearest means flush: the gap is the clearance (plus the small rounding margin), no more.
    assert CLEARANCE_PX < gap_px(result.pose, board["Red"]) <= CLEARANCE_PX + MARGIN_PX + 1e-6
    assert result.displacement == pytest.approx(math.hypot(result.pose.x - 50, result.pose.y - 52))
    assert "Green" in result.reason and "Red" in result.reason


@pytest.mark.parametrize("proposal", [Pose("Brown", 52, 60, 90), Pose("Green", 55, 57, 0)])
def test_nearest_matches_a_brute_force_grid_search(proposal: Pose) -> None:
    board = {"Red": Pose("Red", 45, 50, 0), "Purple": Pose("Purple", 62, 48, 45)}
    result = repair(proposal, board)
    assert result.pose is not None and not result.rotation_changed and result.collisions
    best = math.inf
    step = 0.2
    for i in range(-30, 31):
        for j in range(-30, 31):
            d = math.hypot(i * step, j * step)
            cand = Pose(proposal.piece, proposal.x + i * step, proposal.y + j * step, proposal.rotation)
            if d < best and is_valid(cand, board):
                best = d
    assert best < 6.0  # the grid is wide enough to contain the answer
    # The exact answer is at most a grid cell's diagonal better than the grid, and never worse.
    assert best - step * math.sqrt(2) <= result.displacement <= best + 1e-6


def test_off_board_proposal_is_brought_onto_the_board() -> None:
    result = repair(Pose("Yellow", -20, 150, 0), {})
    assert result.pose is not None and is_valid(result.pose, {})
    assert result.collisions == (BOUNDARY,)
    assert not result.rotation_changed
    assert 0 < board_gap_px(result.pose) < CLEARANCE_PX + 0.2  # in the corner, flush with two edges
    assert "stays on the board" in result.reason


def test_rotation_changes_when_the_piece_only_fits_turned() -> None:
    # A 40 px corridor between two large triangles' long sides: Brown lying flat (76.8 px wide)
    # cannot fit, and sliding it out of the corridor is far; turned, it fits where it is.
    board = {"Red": at_px("Red", 640.0, 233.0, 270.0), "Cream": at_px("Cream", 731.6, 233.0, 90.0)}
    gap = board["Cream"]
    assert 39 < gap_px(board["Red"], gap) < 41
    proposal = at_px("Brown", 685.8, 233.0, 0.0)
    result = repair(proposal, board, max_search_units=3.0)
    assert result.pose is not None and is_valid(result.pose, board)
    assert result.rotation_changed and result.pose.rotation != 0.0
    assert result.displacement < 3.0
    assert "turned" in result.reason


def test_same_rotation_is_kept_when_the_slide_is_short_enough() -> None:
    board = {"Red": at_px("Red", 640.0, 233.0, 270.0), "Cream": at_px("Cream", 731.6, 233.0, 90.0)}
    result = repair(at_px("Brown", 685.8, 233.0, 0.0), board, max_search_units=40.0)
    assert result.pose is not None and not result.rotation_changed


def test_no_room_anywhere_passes_with_a_reason() -> None:
    result = repair(Pose("Red", 50, 50, 0), {}, clearance_px=200.0)
    assert result.pose is None and result.displacement == 0.0
    assert "no free spot" in result.reason and "Red" in result.reason


def test_too_far_is_a_pass_when_a_limit_is_given() -> None:
    board = {"Red": Pose("Red", 50, 50, 0)}
    result = repair(Pose("Blue", 50, 50, 0), board, max_search_units=0.5, max_move_units=1.0)
    assert result.pose is None and "too far" in result.reason


def test_non_finite_numbers_do_not_crash() -> None:
    result = repair(Pose("Green", math.nan, 50, math.inf), {})
    assert result.pose is not None and math.isfinite(result.pose.x) and math.isfinite(result.pose.rotation)
    assert is_valid(result.pose, {})


def test_unknown_piece_is_refused() -> None:
    result = repair(Pose("Pink", 50, 50, 0), {})
    assert result.pose is None and "Pink" in result.reason


def test_distinct_rotations_skip_identical_outlines() -> None:
    assert distinct_rotations("Brown", 0.0) == [0.0, 45.0, 315.0, 90.0]  # 180 turns give the same outline
    assert distinct_rotations("Red", 30.0)[:3] == [30.0, 45.0, 0.0]
    assert len(distinct_rotations("Red", 0.0)) == 8


def test_free_region_points_are_valid() -> None:
    board = {"Red": Pose("Red", 50, 50, 0), "Blue": Pose("Blue", 20, 80, 45)}
    cs = build_cspace("Purple", 45.0, board, CLEARANCE_PX + MARGIN_PX)
    rng = random.Random(3)
    x0, y0, x1, y1 = cs.free.bounds
    checked = 0
    for _ in range(400):
        p = (rng.uniform(x0, x1), rng.uniform(y0, y1))
        inside = cs.free.contains(ShapelyPoint(p))
        assert is_valid(cs.pose_at(p), board) or not inside
        checked += inside
    assert checked > 100


# ------------------------------------------------------------------ properties


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 6))
def test_repaired_pose_never_collides(seed: int, n: int) -> None:
    rng = random.Random(seed)
    board = random_board(rng, n)
    for _ in range(3):
        proposal = random_proposal(rng)
        result = repair(proposal, board)
        assert isinstance(result, RepairResult)
        if result.pose is None:
            assert result.reason
            continue
        assert result.pose.piece == proposal.piece
        assert is_valid(result.pose, board, CLEARANCE_PX), predict_collisions(result.pose, board, CLEARANCE_PX)
        assert result.displacement == pytest.approx(math.hypot(result.pose.x - proposal.x,
                                                               result.pose.y - proposal.y))
        if not result.changed:
            assert result.displacement == 0.0


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31))
def test_small_boards_always_have_room(seed: int) -> None:
    rng = random.Random(seed)
    board = random_board(rng, 3)
    result = repair(random_proposal(rng), board)
    assert result.pose is not None
