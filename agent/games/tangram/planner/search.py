"""Finding a valid pose near a wanted one, or a free spot to park a piece out of the way.

Both use the exact configuration space of the piece at its rotation
(:mod:`agent.games.tangram.geometry.cspace`): the set of node origins where it keeps the clearance from every
other piece and the board's edge. The nearest point of that set is the nearest valid pose, found
in a few milliseconds; every answer is checked once more with the collision predictor.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import shapely
from shapely.geometry import Point as ShapelyPoint
from shapely.geometry import Polygon
from shapely.geometry.base import BaseGeometry
from shapely.ops import nearest_points

from agent.games.tangram.geometry.collide import CLEARANCE_PX, is_valid
from agent.games.tangram.geometry.cspace import MARGIN_PX, build_cspace, forbidden_px, grown_offsets_px
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.planner import shapes


def _others(board: Mapping[str, Pose], piece: str) -> dict[str, Pose]:
    return {n: p for n, p in board.items() if n != piece}


def _closest_valid(free: BaseGeometry, target: tuple[float, float], piece: str, rotation: float,
                   others: Mapping[str, Pose], clearance: float) -> Pose | None:
    if free.is_empty:
        return None
    p = nearest_points(free, ShapelyPoint(target))[0]
    for r in (0.0, 0.05, 0.15, 0.4, 1.0):  # rounding may leave the point a hair outside
        for k in range(1 if r == 0 else 16):
            a = 2 * math.pi * k / 16
            cand = shapes.with_origin_px(piece, p.x + r * math.cos(a), p.y + r * math.sin(a), rotation)
            if is_valid(cand, others, clearance):
                return cand
    return None


def nearest_valid(pose: Pose, board: Mapping[str, Pose], max_px: float = 8.0,
                  clearance: float = CLEARANCE_PX, avoid: Pose | None = None) -> Pose | None:
    """``pose`` itself if valid, else the nearest valid pose at the same rotation within ``max_px``
    pixels of it, else None. ``avoid`` is a pose the game rejected: nothing within a pixel of it."""
    others = _others(board, pose.piece)
    near_avoid = avoid is not None and avoid.piece == pose.piece and shapes.placement_error(pose, avoid) < 1.0
    if not near_avoid and is_valid(pose, others, clearance):
        return pose
    cs = build_cspace(pose.piece, pose.rotation, others, clearance + MARGIN_PX)
    free = cs.free
    target = pose.origin_px
    if avoid is not None and avoid.piece == pose.piece and avoid.rotation == pose.rotation:
        free = free.difference(ShapelyPoint(avoid.origin_px).buffer(1.0))
    found = _closest_valid(free, target, pose.piece, pose.rotation, others, clearance)
    if found is None:
        return None
    fx, fy = found.origin_px
    return found if math.hypot(fx - target[0], fy - target[1]) <= max_px else None


def park(pose: Pose, board: Mapping[str, Pose], keep_out: Iterable[Polygon], margin_px: float = 3.0,
         clearance: float = CLEARANCE_PX) -> Pose | None:
    """The valid pose nearest to where the piece is (same turn first, then the other multiples of
    45 degrees) that stays ``margin_px`` clear of every ``keep_out`` polygon (convex, pixels).

    Used to move a piece that sits where the figure needs to go: it goes the shortest way out.
    """
    others = _others(board, pose.piece)
    zones = list(keep_out)
    start = pose.origin_px
    rotations = [pose.rotation] + [45.0 * k for k in range(8) if abs((45.0 * k - pose.rotation) % 360) > 1e-6]
    for rotation in rotations:
        cs = build_cspace(pose.piece, rotation, others, clearance + MARGIN_PX)
        grown = grown_offsets_px(pose.piece, rotation, margin_px)
        extra = [forbidden_px(z, grown) for z in zones]
        free = cs.free.difference(shapely.union_all(extra)) if extra else cs.free
        found = _closest_valid(free, start, pose.piece, rotation, others, clearance)
        if found is not None and not any(shapes.polygon(found).intersects(z) for z in zones):
            return found
    return None
