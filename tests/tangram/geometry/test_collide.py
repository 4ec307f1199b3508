"""Collision prediction: the game's rule (touching collides), clearance, BOUNDARY, and agreement with
an independent separating-axis test written here from scratch (no shapely)."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from agent.games.tangram.geometry.collide import (
    BOUNDARY,
    CLEARANCE_PX,
    board_gap_px,
    gap_px,
    inside_board,
    is_valid,
    polygon_px,
    predict_collisions,
)
from agent.games.tangram.geometry.frames import Pose, world_to_board
from agent.games.tangram.geometry.pieces import PIECE_NAMES

Pt = tuple[float, float]


def at_px(piece: str, wx: float, wy: float, rotation: float = 0.0) -> Pose:
    x, y = world_to_board(wx, wy)
    return Pose(piece, x, y, rotation)


# ------------------------------------------------------------------ an independent check


def _axes(poly: list[Pt]) -> list[Pt]:
    out = []
    for i, (x0, y0) in enumerate(poly):
        x1, y1 = poly[(i + 1) % len(poly)]
        n = (y1 - y0, x0 - x1)
        length = math.hypot(*n)
        out.append((n[0] / length, n[1] / length))
    return out


def separation(a: list[Pt], b: list[Pt]) -> float:
    """Largest gap between the projections of two convex polygons over all edge normals.

    > 0: separated by that much along some axis; <= 0: they overlap or touch (a collision)."""
    best = -math.inf
    for ax, ay in _axes(a) + _axes(b):
        pa = [x * ax + y * ay for x, y in a]
        pb = [x * ax + y * ay for x, y in b]
        best = max(best, min(pb) - max(pa), min(pa) - max(pb))
    return best


def mitre_grow(poly: list[Pt], d: float) -> list[Pt]:
    """Push every edge of a convex polygon out by d and intersect neighbouring edge lines."""
    area2 = sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(poly, poly[1:] + poly[:1], strict=True))
    sign = 1.0 if area2 > 0 else -1.0
    lines = []
    for i, (x0, y0) in enumerate(poly):
        x1, y1 = poly[(i + 1) % len(poly)]
        nx, ny = (y1 - y0) * sign, (x0 - x1) * sign
        length = math.hypot(nx, ny)
        nx, ny = nx / length, ny / length
        lines.append(((x0 + nx * d, y0 + ny * d), (x1 - x0, y1 - y0)))
    out = []
    for i in range(len(lines)):
        (p, r), (q, s) = lines[i - 1], lines[i]
        den = r[0] * s[1] - r[1] * s[0]
        t = ((q[0] - p[0]) * s[1] - (q[1] - p[1]) * s[0]) / den
        out.append((p[0] + t * r[0], p[1] + t * r[1]))
    return out


# ------------------------------------------------------------------ fixed cases


def test_exactly_touching_pieces_collide() -> None:
    # Green's flat bottom (y = +12.8 px) on Brown's flat top (y = -12.8 px), 25.6 px apart.
    green = at_px("Green", 700.0, 200.0)
    brown = at_px("Brown", 700.0, 225.6)
    assert polygon_px(green).distance(polygon_px(brown)) == 0.0
    assert polygon_px(green).intersection(polygon_px(brown)).area == pytest.approx(0.0, abs=1e-9)
    assert predict_collisions(green, [brown]) == ["Brown"]


def test_clearance_counts_near_pieces_as_colliding() -> None:
    green = at_px("Green", 700.0, 200.0)
    brown = at_px("Brown", 700.0, 226.1)  # 0.5 px below
    assert predict_collisions(green, [brown]) == []
    assert predict_collisions(green, [brown], clearance_px=1.0) == ["Brown"]
    assert not is_valid(green, [brown])
    far = at_px("Brown", 700.0, 227.0)  # 1.4 px below
    assert is_valid(green, [far], clearance_px=CLEARANCE_PX)
    assert gap_px(green, far) == pytest.approx(1.4, abs=1e-6)


def test_the_moving_piece_is_ignored_in_the_board() -> None:
    red = Pose("Red", 50, 50, 0)
    assert predict_collisions(red, {"Red": Pose("Red", 50, 50, 0)}) == []


def test_mapping_and_iterable_boards_agree() -> None:
    red = Pose("Red", 50, 50, 0)
    board = {"Cream": Pose("Cream", 55, 50, 0), "Blue": Pose("Blue", 90, 90, 0)}
    assert predict_collisions(red, board) == predict_collisions(red, list(board.values())) == ["Cream"]


@pytest.mark.parametrize("x,y,out", [(50, 50, False), (2, 50, True), (98, 50, True), (50, 3, True),
                                     (50, 97, True), (-30, 50, True), (130, 130, True), (20, 20, False)])
def test_boundary(x: float, y: float, out: bool) -> None:
    pose = Pose("Purple", x, y, 0)
    assert (BOUNDARY in predict_collisions(pose, {})) is out


def test_touching_the_board_edge_is_boundary() -> None:
    # Green's leftmost corner is 25.6 px left of its origin; put it exactly on the board's left edge.
    pose = at_px("Green", 523.0 + 25.6, 200.0)
    assert not inside_board(polygon_px(pose))
    assert board_gap_px(pose) == pytest.approx(0.0, abs=1e-9)
    inside = at_px("Green", 523.0 + 25.6 + 0.5, 200.0)
    assert inside_board(polygon_px(inside)) and not inside_board(polygon_px(inside), clearance_px=1.0)


def test_independent_check_helpers_work() -> None:
    square = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
    moved = [(x + 3.0, y) for x, y in square]
    assert separation(square, moved) == pytest.approx(2.0)
    assert separation(square, [(x + 1.0, y) for x, y in square]) == pytest.approx(0.0)
    grown = mitre_grow(square, 0.5)
    want = sorted([(-0.5, -0.5), (1.5, -0.5), (1.5, 1.5), (-0.5, 1.5)])
    for got, expected in zip(sorted(grown), want, strict=True):
        assert got == pytest.approx(expected)
    # Clockwise input grows outwards too.
    for got, expected in zip(sorted(mitre_grow(square[::-1], 0.5)), want, strict=True):
        assert got == pytest.approx(expected)


# ------------------------------------------------------------------ properties

pieces = st.sampled_from(PIECE_NAMES)
rotations = st.one_of(st.integers(0, 7).map(lambda k: 45.0 * k), st.floats(-720, 720, allow_nan=False))


@st.composite
def near_pairs(draw: st.DrawFn) -> tuple[Pose, Pose]:
    a, b = draw(st.lists(pieces, min_size=2, max_size=2, unique=True))
    x, y = draw(st.floats(10, 90)), draw(st.floats(10, 90))
    dx, dy = draw(st.floats(-35, 35)), draw(st.floats(-35, 35))
    return Pose(a, x, y, draw(rotations)), Pose(b, x + dx, y + dy, draw(rotations))


@settings(max_examples=300, deadline=None)
@given(near_pairs())
def test_predictor_agrees_with_separating_axes(pair: tuple[Pose, Pose]) -> None:
    a, b = pair
    s = separation(a.outline_px(), b.outline_px())
    assume(abs(s) > 1e-7)  # exact contact is decided by the last bit of rounding; skip it
    assert (b.piece in predict_collisions(a, [b])) == (s <= 0)


@settings(max_examples=200, deadline=None)
@given(near_pairs(), st.sampled_from([0.5, 1.0, 3.0]))
def test_clearance_agrees_with_separating_axes_on_grown_outline(pair: tuple[Pose, Pose], c: float) -> None:
    a, b = pair
    s = separation(mitre_grow(a.outline_px(), c), b.outline_px())
    assume(abs(s) > 1e-7)
    assert (b.piece in predict_collisions(a, [b], clearance_px=c)) == (s <= 0)


@settings(max_examples=200, deadline=None)
@given(pieces, st.floats(-10, 110), st.floats(-10, 110), rotations)
def test_boundary_agrees_with_corner_check(piece: str, x: float, y: float, r: float) -> None:
    pts = Pose(piece, x, y, r).outline_px()
    margin = min(min(px - 523.0, 860.0 - px, py - 72.0, 394.0 - py) for px, py in pts)
    assume(abs(margin) > 1e-7)
    assert (BOUNDARY in predict_collisions(Pose(piece, x, y, r), [])) == (margin <= 0)
