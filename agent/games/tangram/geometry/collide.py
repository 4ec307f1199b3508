"""Collision prediction with the game's rule: Area2D overlaps, where touching already collides.

Everything is computed on the pixel outlines, because that is where the game's physics runs.

The game's BOUNDARY is a frame-shaped area whose hole is about 1-2 px larger than the 0..100 board
on every side. We treat the board rectangle itself as the limit, which is slightly stricter than
the game and therefore safe: a pose we call valid never touches BOUNDARY.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from shapely.geometry import Polygon, box
from shapely.prepared import prep

from agent.games.tangram.geometry.frames import BOARD_ORIGIN_PX, BOARD_SIZE_PX, Pose

BOUNDARY = "BOUNDARY"
CLEARANCE_PX = 1.0
"""Gap we keep between our piece and everything else, so rounding never turns 'near' into 'touching'."""

BOARD_BOUNDS_PX: tuple[float, float, float, float] = (
    BOARD_ORIGIN_PX[0], BOARD_ORIGIN_PX[1] - BOARD_SIZE_PX[1],
    BOARD_ORIGIN_PX[0] + BOARD_SIZE_PX[0], BOARD_ORIGIN_PX[1])
"""(min_x, min_y, max_x, max_y) of the board in world pixels."""
BOARD_PX = box(*BOARD_BOUNDS_PX)


def polygon_px(pose: Pose) -> Polygon:
    return Polygon(pose.outline_px())


def grow(poly: Polygon, clearance_px: float) -> Polygon:
    """The polygon widened by ``clearance_px`` with mitred corners (a superset of the true offset)."""
    return poly.buffer(clearance_px, join_style="mitre") if clearance_px else poly


def inside_board(poly: Polygon, clearance_px: float = 0.0) -> bool:
    """True when the piece stays off the board's edge; touching the edge counts as BOUNDARY."""
    minx, miny, maxx, maxy = poly.bounds
    bx0, by0, bx1, by1 = BOARD_BOUNDS_PX
    c = clearance_px
    return minx > bx0 + c and miny > by0 + c and maxx < bx1 - c and maxy < by1 - c


def _poses(others: Mapping[str, Pose] | Iterable[Pose]) -> Iterable[Pose]:
    return others.values() if isinstance(others, Mapping) else others


def predict_collisions(pose: Pose, others: Mapping[str, Pose] | Iterable[Pose],
                       clearance_px: float = 0.0) -> list[str]:
    """What the game will list in ``collisions`` for ``pose``: other pieces and ``BOUNDARY``.

    With ``clearance_px`` > 0 a piece nearer than that also counts, which is how we keep a margin.
    A pose of the same piece among ``others`` is ignored (it is the piece being moved).
    """
    mine = polygon_px(pose)
    grown = prep(grow(mine, clearance_px))
    hits = [o.piece for o in _poses(others) if o.piece != pose.piece and grown.intersects(polygon_px(o))]
    if not inside_board(mine, clearance_px):
        hits.append(BOUNDARY)
    return hits


def is_valid(pose: Pose, others: Mapping[str, Pose] | Iterable[Pose], clearance_px: float = CLEARANCE_PX) -> bool:
    return not predict_collisions(pose, others, clearance_px)


def gap_px(a: Pose, b: Pose) -> float:
    """Shortest distance between two pieces' outlines in pixels (0 when they touch or overlap)."""
    return float(polygon_px(a).distance(polygon_px(b)))


def board_gap_px(pose: Pose) -> float:
    """Distance from the piece to the nearest board edge, negative when it sticks out."""
    minx, miny, maxx, maxy = polygon_px(pose).bounds
    bx0, by0, bx1, by1 = BOARD_BOUNDS_PX
    return min(minx - bx0, miny - by0, bx1 - maxx, by1 - maxy)
