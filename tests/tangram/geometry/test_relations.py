"""Relations: each resolves to a valid pose, flush with the anchor (one clearance apart), on the
named side, and the shape relations really make a square or a bigger triangle."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely.geometry import Polygon
from shapely.ops import unary_union

from agent.games.tangram.geometry.collide import CLEARANCE_PX, board_gap_px, is_valid, polygon_px
from agent.games.tangram.geometry.cspace import MARGIN_PX
from agent.games.tangram.geometry.frames import Pose, rotation_distance
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.geometry.relations import RELATION_DOCS, RELATIONS, relation_vocabulary, resolve_relation
from agent.games.tangram.geometry.sampling import random_board

GAP = CLEARANCE_PX + MARGIN_PX
DIRECTIONAL = ("left_of", "right_of", "above", "below", "above_left", "above_right", "below_left",
               "below_right", "on_top_of")
SIGNS = {"left_of": (-1, 0), "right_of": (1, 0), "above": (0, 1), "below": (0, -1), "on_top_of": (0, 1),
         "above_left": (-1, 1), "above_right": (1, 1), "below_left": (-1, -1), "below_right": (1, -1)}


def gap(a: Pose, b: Pose) -> float:
    return float(polygon_px(a).distance(polygon_px(b)))


def centre(p: Pose) -> tuple[float, float]:
    x0, y0, x1, y1 = p.bounds_board()
    return ((x0 + x1) / 2, (y0 + y1) / 2)


def contact_px(a: Pose, b: Pose, within: float = 0.3) -> float:
    """Length of a's outline within a hair of b: long for edges laid flush, ~0 for corners."""
    band = polygon_px(b).buffer(GAP + within, join_style="mitre")
    return float(polygon_px(a).exterior.intersection(band).length)


def closed_union(a: Pose, b: Pose) -> Polygon:
    """The two pieces as one shape, the thin gap between them closed (grow, then shrink back)."""
    r = GAP / 2 + 0.1
    return unary_union([polygon_px(a), polygon_px(b)]).buffer(r).buffer(-r)


def corners(poly: Polygon) -> list[tuple[float, float]]:
    """The real corners of a convex outline: drop near-duplicate points and straight-through ones."""
    pts: list[tuple[float, float]] = []
    for p in list(poly.exterior.coords)[:-1]:
        if not pts or math.dist(p, pts[-1]) > 2.0:
            pts.append(p)
    if len(pts) > 1 and math.dist(pts[0], pts[-1]) <= 2.0:
        pts.pop()
    out = []
    for i, p in enumerate(pts):
        a, b = pts[i - 1], pts[(i + 1) % len(pts)]
        turn = math.degrees(abs(math.atan2(b[1] - p[1], b[0] - p[0]) - math.atan2(p[1] - a[1], p[0] - a[0])))
        turn = min(turn % 360, 360 - turn % 360)
        if turn > 10.0:
            out.append(p)
    return out


def test_vocabulary_is_documented_one_line_each() -> None:
    assert RELATIONS == ("left_of", "right_of", "above", "below", "above_left", "above_right", "below_left",
                         "below_right", "touching", "square_with", "triangle_with", "on_top_of")
    vocab = relation_vocabulary()
    assert [v["name"] for v in vocab] == list(RELATIONS)
    for v in vocab:
        assert v["description"] == RELATION_DOCS[v["name"]]
        assert "\n" not in v["description"] and 10 < len(v["description"]) < 160


@pytest.mark.parametrize("relation", DIRECTIONAL)
@pytest.mark.parametrize("piece", ["Green", "Cream", "Blue", "Brown"])
@pytest.mark.parametrize("rotation", [None, 0.0, 45.0, 90.0])
def test_directional_relations_are_flush_valid_and_on_the_right_side(relation: str, piece: str,
                                                                      rotation: float | None) -> None:
    anchor = Pose("Purple", 50, 50, 0)
    board = {"Purple": anchor, "Red": Pose("Red", 15, 85, 0)}
    pose = resolve_relation(piece, relation, "Purple", board, rotation=rotation)
    assert pose is not None and pose.piece == piece
    assert is_valid(pose, board)
    # Flush: the clearance apart (a mitred corner meeting an edge may keep up to ~2.7 px).
    assert CLEARANCE_PX < gap(pose, anchor) <= 2.8
    if rotation is not None:
        assert rotation_distance(pose.rotation, rotation) < 1e-9
    (px, py), (ax, ay) = centre(pose), centre(anchor)
    sx, sy = SIGNS[relation]
    for s, d in ((sx, px - ax), (sy, py - ay)):
        if s:
            assert d * s > 5.0
    if not sx:  # above / below: centres in one vertical line
        assert abs(px - ax) < 0.5
    if not sy:  # left / right: centres level
        assert abs(py - ay) < 0.5


def test_without_rotation_a_flat_side_is_laid_against_the_anchor() -> None:
    anchor = Pose("Purple", 50, 50, 0)
    for relation in ("left_of", "right_of", "above", "below"):
        pose = resolve_relation("Cream", relation, "Purple", {"Purple": anchor})
        assert pose is not None
        assert abs(gap(pose, anchor) - GAP) < 1e-3
        # The square's whole side, within a pixel (its outline in the game is ~1 degree irregular).
        assert contact_px(pose, anchor, within=1.0) > 30


def test_on_top_of_puts_the_flat_side_down_and_centres() -> None:
    house = Pose("Purple", 50, 40, 0)
    for piece, want in (("Red", 0.0), ("Cream", 0.0), ("Blue", 90.0), ("Green", 0.0), ("Brown", 0.0)):
        pose = resolve_relation(piece, "on_top_of", "Purple", {"Purple": house})
        assert pose is not None and rotation_distance(pose.rotation, want) < 1e-9, (piece, pose)
        assert abs(centre(pose)[0] - centre(house)[0]) < 0.5
        assert pose.bounds_board()[1] > house.bounds_board()[3] - 0.01
        assert abs(gap(pose, house) - GAP) < 1e-3


@pytest.mark.parametrize("anchor_rotation", [0.0, 45.0, 90.0, 135.0, 180.0, 225.0, 270.0, 315.0, 12.5])
@pytest.mark.parametrize("piece,anchor", [("Green", "Purple"), ("Brown", "Red"), ("Blue", "Cream"), ("Red", "Blue")])
def test_touching_lays_an_edge_flush(anchor_rotation: float, piece: str, anchor: str) -> None:
    anchor_pose = Pose(anchor, 50, 50, anchor_rotation)
    pose = resolve_relation(piece, "touching", anchor, {anchor: anchor_pose})
    assert pose is not None and is_valid(pose, {anchor: anchor_pose})
    assert abs(gap(pose, anchor_pose) - GAP) < 0.01
    assert contact_px(pose, anchor_pose) > 0.2 * 36.0  # a real stretch of edge, not a corner


def test_touching_keeps_a_workable_requested_rotation() -> None:
    anchor = Pose("Purple", 50, 50, 0)
    pose = resolve_relation("Green", "touching", "Purple", {"Purple": anchor}, rotation=45.0)
    assert pose is not None and pose.rotation == 45.0
    assert abs(gap(pose, anchor) - GAP) < 0.01 and contact_px(pose, anchor) > 20


@pytest.mark.parametrize("anchor_rotation", [0.0, 45.0, 90.0, 135.0, 180.0, 225.0, 270.0, 315.0, 20.0])
@pytest.mark.parametrize("piece,anchor", [("Cream", "Red"), ("Red", "Cream"), ("Green", "Yellow"), ("Yellow", "Green")])
def test_square_with_makes_a_square(anchor_rotation: float, piece: str, anchor: str) -> None:
    anchor_pose = Pose(anchor, 50, 50, anchor_rotation)
    pose = resolve_relation(piece, "square_with", anchor, {anchor: anchor_pose}, rotation=123.0)
    assert pose is not None and is_valid(pose, {anchor: anchor_pose})
    assert abs(gap(pose, anchor_pose) - GAP) < 0.01
    union = closed_union(pose, anchor_pose)
    hull = union.convex_hull
    assert union.area / hull.area > 0.99
    pts = corners(hull)
    assert len(pts) == 4
    # All four sides about equal: a square, not a parallelogram.
    sides = [math.dist(pts[i], pts[i - 1]) for i in range(4)]
    assert max(sides) - min(sides) < 2.0


@pytest.mark.parametrize("anchor_rotation", [0.0, 45.0, 90.0, 180.0, 270.0, 315.0])
@pytest.mark.parametrize("piece,anchor", [("Cream", "Red"), ("Yellow", "Green")])
def test_triangle_with_makes_a_bigger_triangle(anchor_rotation: float, piece: str, anchor: str) -> None:
    anchor_pose = Pose(anchor, 50, 50, anchor_rotation)
    pose = resolve_relation(piece, "triangle_with", anchor, {anchor: anchor_pose})
    assert pose is not None and is_valid(pose, {anchor: anchor_pose})
    assert abs(gap(pose, anchor_pose) - GAP) < 0.01
    union = closed_union(pose, anchor_pose)
    hull = union.convex_hull
    assert union.area / hull.area > 0.99
    assert len(corners(hull)) == 3


def test_triangle_with_near_picks_the_closer_side() -> None:
    anchor = Pose("Red", 50, 40, 0)
    left = resolve_relation("Cream", "triangle_with", "Red", {"Red": anchor}, near=(20.0, 45.0))
    right = resolve_relation("Cream", "triangle_with", "Red", {"Red": anchor}, near=(80.0, 45.0))
    assert left is not None and right is not None
    assert centre(left)[0] < 50 < centre(right)[0]


@pytest.mark.parametrize("piece,anchor", [("Blue", "Red"), ("Brown", "Green"), ("Green", "Red"), ("Purple", "Yellow")])
def test_shape_relations_need_two_equal_triangles(piece: str, anchor: str) -> None:
    board = {anchor: Pose(anchor, 50, 50, 0)}
    assert resolve_relation(piece, "square_with", anchor, board) is None
    assert resolve_relation(piece, "triangle_with", anchor, board) is None


def test_bad_requests_give_none() -> None:
    board = {"Red": Pose("Red", 50, 50, 0)}
    assert resolve_relation("Green", "left_of", "Blue", board) is None  # anchor not on the board
    assert resolve_relation("Red", "left_of", "Red", board) is None
    assert resolve_relation("Green", "inside", "Red", board) is None
    assert resolve_relation("Pink", "left_of", "Red", board) is None


def test_blocked_side_slides_along_the_anchor_or_gives_up_but_never_collides() -> None:
    anchor = Pose("Purple", 50, 50, 0)
    blocker = resolve_relation("Cream", "left_of", "Purple", {"Purple": anchor}, rotation=90.0)
    assert blocker is not None
    board = {"Purple": anchor, "Cream": blocker}
    pose = resolve_relation("Green", "left_of", "Purple", board, rotation=0.0)
    assert pose is None or (is_valid(pose, board) and centre(pose)[0] < centre(anchor)[0])


def test_edge_of_board_is_respected() -> None:
    # Upright (rotation 0) and flush above this anchor, a large triangle would stick out of the top
    # (flush above an anchor at y 75 its top is at 97.1); turned, it fits between anchor and edge.
    anchor = Pose("Purple", 50, 80, 0)
    board = {"Purple": anchor}
    pose = resolve_relation("Red", "above", "Purple", board, rotation=0.0)
    assert pose is not None and is_valid(pose, board)
    assert 0.0 <= board_gap_px(pose) < 3.0  # on the board, against its edge
    assert pose.bounds_board()[3] > 99.0  # ... the top one
    assert centre(pose)[1] > centre(anchor)[1] and gap(pose, anchor) < 3.0  # above the anchor, touching it


def test_no_room_at_the_edge_gives_none() -> None:
    anchor = Pose("Purple", 50, 93, 0)  # too close to the top for a large triangle above it, in any turn
    board = {"Purple": anchor}
    assert resolve_relation("Red", "above", "Purple", board, rotation=0.0) is None
    assert resolve_relation("Red", "above", "Purple", board) is None


def test_the_piece_itself_on_the_board_is_ignored() -> None:
    board = {"Purple": Pose("Purple", 50, 50, 0), "Green": Pose("Green", 50, 50, 0)}  # overlapping, being moved
    pose = resolve_relation("Green", "right_of", "Purple", board, rotation=0.0)
    assert pose is not None and is_valid(pose, board)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 6), st.sampled_from(RELATIONS),
       st.one_of(st.none(), st.integers(0, 7).map(lambda k: 45.0 * k)))
def test_any_resolved_relation_is_valid(seed: int, n: int, relation: str, rotation: float | None) -> None:
    rng = random.Random(seed)
    board = random_board(rng, n)
    anchor = rng.choice(sorted(board))
    piece = rng.choice([p for p in PIECE_NAMES if p != anchor])
    pose = resolve_relation(piece, relation, anchor, board, rotation=rotation)
    if pose is not None:
        assert pose.piece == piece
        assert is_valid(pose, board)
        assert gap(pose, board[anchor]) < 3.0  # it is next to the anchor, not somewhere else
