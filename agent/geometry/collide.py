"""Collision prediction with the game's rule: Area2D overlaps, where touching already collides.

Everything is computed on the pixel outlines, because that is where the game's physics runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from shapely.geometry import Polygon, box
from shapely.prepared import prep

from agent.geometry.frames import BOARD_ORIGIN_PX, BOARD_SIZE_PX, Pose

BOUNDARY = "BOUNDARY"
CLEARANCE_PX = 1.0
"""Gap we keep between our piece and everything else, so rounding never turns 'near' into 'touching'."""

BOARD_PX = box(BOARD_ORIGIN_PX[0], BOARD_ORIGIN_PX[1] - BOARD_SIZE_PX[1],
               BOARD_ORIGIN_PX[0] + BOARD_SIZE_PX[0], BOARD_ORIGIN_PX[1])


def polygon_px(pose: Pose) -> Polygon:
    return Polygon(pose.outline_px())


def inside_board(poly: Polygon, clearance_px: float = 0.0) -> bool:
    """True when the piece stays off the board's edge; touching the edge counts as BOUNDARY."""
    inner = BOARD_PX.buffer(-clearance_px, join_style="mitre") if clearance_px else BOARD_PX
    minx, miny, maxx, maxy = poly.bounds
    bx0, by0, bx1, by1 = inner.bounds
    return minx > bx0 and miny > by0 and maxx < bx1 and maxy < by1


def predict_collisions(pose: Pose, others: Mapping[str, Pose] | Iterable[Pose],
                       clearance_px: float = 0.0) -> list[str]:
    """What the game will list in ``collisions`` for ``pose``: other pieces and ``BOUNDARY``.

    With ``clearance_px`` > 0 a piece nearer than that also counts, which is how we keep a margin.
    """
    poses = others.values() if isinstance(others, Mapping) else others
    mine = polygon_px(pose)
    grown = prep(mine.buffer(clearance_px, join_style="mitre")) if clearance_px else prep(mine)
    hits = [o.piece for o in poses if o.piece != pose.piece and grown.intersects(polygon_px(o))]
    if not inside_board(mine, clearance_px):
        hits.append(BOUNDARY)
    return hits


def is_valid(pose: Pose, others: Mapping[str, Pose] | Iterable[Pose], clearance_px: float = CLEARANCE_PX) -> bool:
    return not predict_collisions(pose, others, clearance_px)
