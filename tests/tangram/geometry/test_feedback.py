"""Feedback: trust the game's report; correct once when it shows a collision; never repeat a pose."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from agent.games.tangram.geometry.collide import BOUNDARY, CLEARANCE_PX, gap_px, is_valid
from agent.games.tangram.geometry.feedback import correct_from_feedback
from agent.games.tangram.geometry.frames import Pose, pose_from_marker
from agent.games.tangram.geometry.sampling import random_board, random_proposal
from agent.games.tangram.protocol import OnBoardPiece


def report(pose: Pose, collisions: list[str]) -> OnBoardPiece:
    """What the game would send back for ``pose``."""
    return OnBoardPiece(position=pose.marker_board(), vertices=pose.vertex_markers_board(),
                        rotation=pose.rotation, collisions=collisions)


def test_no_collision_means_the_placement_stands() -> None:
    board = {"Red": Pose("Red", 50, 50, 0)}
    # Even a pose we would call invalid is fine if the game says so.
    intended = Pose("Green", 50, 62.5, 0)
    r = report(intended, [])
    assert correct_from_feedback(intended, r.position, r.rotation, r.collisions, board) is None


def test_stale_board_is_fixed_in_one_play() -> None:
    # We planned Green at (50, 65) on an old board; meanwhile the partner put Yellow there.
    old = {"Red": Pose("Red", 50, 40, 0)}
    new = dict(old, Yellow=Pose("Yellow", 50, 70, 0))
    intended = Pose("Green", 50, 65, 0)
    assert is_valid(intended, old)
    r = report(intended, ["Yellow"])
    fixed = correct_from_feedback(intended, r.position, r.rotation, r.collisions, new)
    assert fixed is not None and fixed != intended
    assert is_valid(fixed, new, CLEARANCE_PX)
    assert fixed.rotation == intended.rotation


def test_model_error_widens_the_margin() -> None:
    # We see a 1.85 px gap to Red, yet the game says they collide: move further than that.
    board = {"Red": Pose("Red", 50, 50, 0)}
    intended = Pose("Green", 50, 62.5, 0)
    seen = gap_px(intended, board["Red"])
    assert 1.5 < seen < 2.5
    r = report(intended, ["Red"])
    fixed = correct_from_feedback(intended, r.position, r.rotation, r.collisions, board)
    assert fixed is not None
    assert gap_px(fixed, board["Red"]) >= seen + 2.0 - 1e-6


def test_boundary_report_moves_inwards() -> None:
    intended = Pose("Purple", 94.0, 50.0, 0)
    r = report(intended, [BOUNDARY])
    fixed = correct_from_feedback(intended, r.position, r.rotation, r.collisions, {})
    assert fixed is not None and fixed.x < intended.x and is_valid(fixed, {}, 3.0)


def test_the_reported_pose_is_used_not_the_intended_one() -> None:
    # The game's piece ended up somewhere other than we intended (e.g. the partner's frame was
    # older); the correction starts from where the game says it is.
    board = {"Red": Pose("Red", 50, 50, 0)}
    intended = Pose("Green", 20, 20, 0)
    actual = Pose("Green", 50, 53, 0)
    r = report(actual, ["Red"])
    fixed = correct_from_feedback(intended, r.position, r.rotation, r.collisions, board)
    assert fixed is not None and abs(fixed.x - 50) < 10 and abs(fixed.y - 53) < 15


def test_unknown_collider_cannot_be_fixed_by_geometry() -> None:
    intended = Pose("Green", 50, 65, 0)
    r = report(intended, ["Yellow"])
    assert correct_from_feedback(intended, r.position, r.rotation, r.collisions, {}) is None


def test_nan_report_is_ignored() -> None:
    intended = Pose("Green", 50, 65, 0)
    assert correct_from_feedback(intended, (float("nan"), 3.0), 0.0, ["Red"], {}) is None


def test_unnormalised_reported_rotation() -> None:
    board = {"Red": Pose("Red", 50, 50, 0)}
    intended = Pose("Blue", 50, 55, 270.0)
    actual = pose_from_marker("Blue", *intended.marker_board(), -90.0)
    r = report(actual, ["Red"])
    fixed = correct_from_feedback(intended, r.position, -90.0, r.collisions, board)
    assert fixed is not None and is_valid(fixed, board)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 6))
def test_never_returns_a_pose_already_tried(seed: int, n: int) -> None:
    rng = random.Random(seed)
    board = random_board(rng, n)
    intended = random_proposal(rng)
    collisions = [rng.choice(sorted(board)) for _ in range(rng.randint(1, 2))]
    r = report(intended, collisions)
    fixed = correct_from_feedback(intended, r.position, r.rotation, r.collisions, board)
    if fixed is not None:
        assert (fixed.x, fixed.y, fixed.rotation) != (intended.x, intended.y, intended.rotation)
        assert abs(fixed.x - intended.x) + abs(fixed.y - intended.y) > 1e-3 or fixed.rotation != intended.rotation
        assert is_valid(fixed, board, CLEARANCE_PX)
