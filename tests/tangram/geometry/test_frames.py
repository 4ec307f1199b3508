"""Pieces table and frames of reference, checked against facts written out by hand.

The expectations here do not come from the engine: the marker offsets are the numbers of the game's
scene file (tangran/Scenes/Main_scene.tscn, before the pieces' 0.4 node scale), the turn uses a
hand-written cos/sin table for 45-degree steps, and the board mapping is the one in GAME_FACTS.
"""

from __future__ import annotations

import math

import pytest
from shapely.geometry import Polygon
from shapely.ops import unary_union

from agent.games.tangram.geometry.frames import (
    Pose,
    board_to_world,
    normalize_rotation,
    pose_from_marker,
    px_to_units,
    rotate_px,
    rotation_distance,
    start_pose,
    units_to_px,
    world_to_board,
)
from agent.games.tangram.geometry.pieces import PIECE_NAMES, PIECES

H = 0.7071067811865476  # sqrt(2)/2
# (cos, sin) for each multiple of 45 degrees, clockwise on screen = counter-clockwise matrix with y down.
COS_SIN = {0: (1.0, 0.0), 45: (H, H), 90: (0.0, 1.0), 135: (-H, H),
           180: (-1.0, 0.0), 225: (-H, -H), 270: (0.0, -1.0), 315: (H, -H)}

# Scene-file markers (pre-scale): VCenter, then V1..V4.
SCENE_MARKERS = {
    "Red": ((-0.624999, 10.0), [(-0.624985, -65.0001), (131.875, 64.9999), (-128.125, 65.0)]),
    "Cream": ((3.55155e-07, 8.125), [(-6.48499e-05, -64.375), (-127.5, 63.125), (127.5, 63.125)]),
    "Blue": ((7.51301, 3.09359), [(44.6361, -90.5981), (-45.52, -0.441933), (44.6361, 89.7142)]),
    "Green": ((0.0, 0.0), [(0.0, -32.0), (-64.0, 32.0), (64.0, 32.0)]),
    "Yellow": ((0.0, 0.0), [(-1.33514e-05, -40.6251), (-62.5, 24.375), (65.0, 24.3751)]),
    "Purple": ((0.0, 0.0), [(-44.6361, -47.2878), (-46.4039, 42.8683), (45.52, 42.8684), (47.2878, -47.2878)]),
    "Brown": ((0.0, 0.0), [(-32.0, -32.0), (96.0, -32.0), (-96.0, 32.0), (32.0, 32.0)]),
}
SCALE = 0.4


def expected_vertices(piece: str, mx: float, my: float, k: int) -> list[tuple[float, float]]:
    """Where the game reports V1..V4 when the VCenter marker is at (mx, my) and the rotation is k degrees."""
    (cx, cy), vs = SCENE_MARKERS[piece]
    c, s = COS_SIN[k]
    out = []
    for vx, vy in vs:
        ox, oy = (vx - cx) * SCALE, (vy - cy) * SCALE  # pixels from the marker, y down
        rx, ry = ox * c - oy * s, ox * s + oy * c
        out.append((mx + rx / 3.37, my - ry / 3.22))
    return out


@pytest.mark.parametrize("piece", PIECE_NAMES)
@pytest.mark.parametrize("k", sorted(COS_SIN))
def test_vertices_reproduced_from_reported_position(piece: str, k: int) -> None:
    mx, my = 41.5, 57.25
    pose = pose_from_marker(piece, mx, my, float(k))
    got = pose.vertex_markers_board()
    want = expected_vertices(piece, mx, my, k)
    assert len(got) == len(want)
    for (gx, gy), (wx, wy) in zip(got, want, strict=True):
        assert abs(gx - wx) < 0.5 and abs(gy - wy) < 0.5
        assert abs(gx - wx) < 1e-3 and abs(gy - wy) < 1e-3  # in fact exact up to the scene's rotation rounding
    gx, gy = pose.marker_board()
    assert gx == pytest.approx(mx, abs=1e-9) and gy == pytest.approx(my, abs=1e-9)


@pytest.mark.parametrize("rotation,k", [(-90.0, 270), (405.0, 45), (-315.0, 45), (720.0, 0), (-135.0, 225)])
def test_unnormalised_rotations_behave_like_their_normal_form(rotation: float, k: int) -> None:
    got = pose_from_marker("Blue", 60.0, 30.0, rotation).vertex_markers_board()
    for (gx, gy), (wx, wy) in zip(got, expected_vertices("Blue", 60.0, 30.0, k), strict=True):
        assert abs(gx - wx) < 1e-3 and abs(gy - wy) < 1e-3


def test_game_facts_sample_state_is_reproduced() -> None:
    """The Red entry of the sample state in GAME_FACTS: marker, rotation 0, and its three vertices."""
    pose = pose_from_marker("Red", 49.92582, 28.75776, 0.0)
    want = [(49.92582, 38.07453), (65.65282, 21.92547), (34.79228, 21.92547)]
    for (gx, gy), (wx, wy) in zip(pose.vertex_markers_board(), want, strict=True):
        assert abs(gx - wx) < 1e-3 and abs(gy - wy) < 1e-3


def test_board_corners_map_to_the_scene_markers() -> None:
    # VBottomLeftCorner at world (523, 394), VUpperRightCorner at (860, 72).
    assert board_to_world(0, 0) == pytest.approx((523.0, 394.0))
    assert board_to_world(100, 100) == pytest.approx((860.0, 72.0))
    assert board_to_world(50, 50) == pytest.approx((691.5, 233.0))
    assert world_to_board(860.0, 72.0) == pytest.approx((100.0, 100.0))


@pytest.mark.parametrize("x,y", [(0.0, 0.0), (12.5, 99.0), (-20.0, 130.0), (57.3, 3.1)])
def test_board_world_round_trip(x: float, y: float) -> None:
    assert world_to_board(*board_to_world(x, y)) == pytest.approx((x, y), abs=1e-9)


def test_unit_and_pixel_displacements() -> None:
    assert units_to_px(1.0, 1.0) == pytest.approx((3.37, -3.22))
    assert px_to_units(3.37, -3.22) == pytest.approx((1.0, 1.0))


def test_rotation_is_clockwise_on_screen() -> None:
    # With y down, "right" turned a quarter clockwise is "down", and "up" becomes "right".
    assert rotate_px((1.0, 0.0), 90.0) == pytest.approx((0.0, 1.0), abs=1e-12)
    assert rotate_px((0.0, -1.0), 90.0) == pytest.approx((1.0, 0.0), abs=1e-12)
    assert rotate_px((1.0, 0.0), 45.0) == pytest.approx((H, H), abs=1e-12)


@pytest.mark.parametrize("given,want", [(0.0, 0.0), (-90.0, 270.0), (405.0, 45.0), (360.0, 0.0), (-0.0, 0.0),
                                        (-720.0, 0.0), (359.999, 359.999), (-1e-12, 0.0)])
def test_normalize_rotation(given: float, want: float) -> None:
    got = normalize_rotation(given)
    assert got == pytest.approx(want, abs=1e-9)
    assert 0.0 <= got < 360.0
    assert math.copysign(1.0, got) == 1.0


def test_rotation_distance() -> None:
    assert rotation_distance(10, 350) == pytest.approx(20)
    assert rotation_distance(-90, 270) == pytest.approx(0)
    assert rotation_distance(0, 180) == pytest.approx(180)


def test_origin_vs_marker_offset_for_blue_by_hand() -> None:
    # Blue's VCenter sits (7.51301, 3.09359) * 0.4 px from its origin; at rotation 90 that offset
    # turns to (-1.237436, 3.005204) px, i.e. (-0.36720, -0.93329) board units.
    pose = pose_from_marker("Blue", 50.0, 50.0, 90.0)
    assert pose.x == pytest.approx(50.0 + 1.237436 / 3.37, abs=1e-6)
    assert pose.y == pytest.approx(50.0 + 3.005204 / 3.22, abs=1e-6)


def test_pieces_with_centred_markers_have_origin_at_marker() -> None:
    for piece in ("Green", "Yellow", "Purple", "Brown"):
        pose = pose_from_marker(piece, 30.0, 70.0, 135.0)
        assert (pose.x, pose.y) == pytest.approx((30.0, 70.0))


def test_outline_is_turned_about_the_node_origin() -> None:
    # Green at rotation 0: apex (0, -12.8) px above the origin, i.e. 12.8/3.22 units higher.
    pose = Pose("Green", 50.0, 50.0, 0.0)
    assert pose.outline_board()[0] == pytest.approx((50.0, 50.0 + 12.8 / 3.22))
    # At 180 the apex points down.
    assert Pose("Green", 50.0, 50.0, 180.0).outline_board()[0] == pytest.approx((50.0, 50.0 - 12.8 / 3.22))


# ------------------------------------------------------------------ the pieces table


def test_seven_pieces_with_marker_tables() -> None:
    assert PIECE_NAMES == ("Red", "Cream", "Blue", "Green", "Yellow", "Purple", "Brown")
    for name in PIECE_NAMES:
        spec = PIECES[name]
        assert len(spec.vertex_markers) == len(spec.outline)
        assert Polygon(spec.outline).is_valid and Polygon(spec.outline).convex_hull.area == pytest.approx(spec.area_px)


def test_areas_add_up_to_the_classic_square() -> None:
    total = sum(PIECES[n].area_px for n in PIECE_NAMES)
    assert total == pytest.approx(102.4 ** 2, rel=2e-3)
    assert PIECES["Red"].area_px == pytest.approx(102.4 ** 2 / 4, rel=1e-6)
    assert PIECES["Green"].area_px == pytest.approx(102.4 ** 2 / 16, rel=1e-6)
    assert PIECES["Blue"].area_px == pytest.approx(102.4 ** 2 / 8, rel=1e-6)


def test_start_poses_lay_out_the_square_in_the_drawer_without_overlaps() -> None:
    polys = {n: Polygon(start_pose(n).outline_px()) for n in PIECE_NAMES}
    for i, a in enumerate(PIECE_NAMES):
        for b in PIECE_NAMES[i + 1:]:
            assert not polys[a].intersects(polys[b]), (a, b)
    union = unary_union(list(polys.values()))
    x0, y0, x1, y1 = union.bounds
    assert 104 < x1 - x0 < 112 and 104 < y1 - y0 < 112
    # The drawer is right of the board: every start pose is off the board.
    assert all(start_pose(n).x > 100 for n in PIECE_NAMES)


def test_rotation_conventions_at_zero() -> None:
    # Every triangle but Blue has its hypotenuse at the bottom (apex up); Blue's faces right.
    for name in ("Red", "Cream", "Green", "Yellow"):
        pts = PIECES[name].outline
        ys = sorted(p[1] for p in pts)
        assert ys[1] == pytest.approx(ys[2], abs=0.01) and ys[0] < ys[1]  # two low corners share a line
    xs = sorted(p[0] for p in PIECES["Blue"].outline)
    assert xs[1] == pytest.approx(xs[2]) and xs[0] < xs[1]
