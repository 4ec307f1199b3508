"""Configuration space of one piece at one rotation: where its node origin may go.

A piece turned by r with its origin at p collides (keeping clearance c) with an obstacle O exactly
when grow(A_r, c) + p intersects O, where A_r is its outline around the origin; that is, when p
lies in the Minkowski difference O - grow(A_r, c). Every tangram piece is convex, so this set is
the convex hull of all vertex differences: exact, and cheap. The board adds a rectangle of origins
that keep the piece inside. What remains is the free region: every point in it is a valid origin
by :func:`agent.games.tangram.geometry.collide.predict_collisions` with that clearance.

Everything here is in world pixels, like the collision test it mirrors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np
import shapely
from shapely.geometry import Point as ShapelyPoint
from shapely.geometry import Polygon, box
from shapely.geometry.base import BaseGeometry
from shapely.ops import nearest_points

from agent.games.tangram.geometry.collide import BOARD_BOUNDS_PX, grow, polygon_px
from agent.games.tangram.geometry.frames import Pose, outline_offsets_px, rotation_distance, world_to_board
from agent.games.tangram.geometry.pieces import Point

MARGIN_PX = 0.05
"""Added to the clearance when computing regions, so a point on a region's edge is still strictly
valid for the plain clearance despite floating-point rounding (and the 4-decimal play frame)."""


@lru_cache(maxsize=8192)
def grown_offsets_px(piece: str, rotation: float, clearance_px: float) -> tuple[Point, ...]:
    """Corners of the piece's outline (around its origin) widened by the clearance, mitred."""
    poly = grow(Polygon(outline_offsets_px(piece, rotation)), clearance_px)
    return tuple((float(x), float(y)) for x, y in list(poly.exterior.coords)[:-1])


def forbidden_px(obstacle: Polygon, grown: tuple[Point, ...]) -> Polygon:
    """Origins at which the grown piece would touch ``obstacle`` (closed convex polygon)."""
    ov = np.asarray(obstacle.exterior.coords)[:-1]
    gv = np.asarray(grown)
    pts = (ov[:, None, :] - gv[None, :, :]).reshape(-1, 2)
    return shapely.convex_hull(shapely.multipoints(pts))


def origin_box_px(piece: str, rotation: float, clearance_px: float) -> Polygon | None:
    """Origins that keep the piece at least ``clearance_px`` inside the board (None if none do)."""
    offs = outline_offsets_px(piece, rotation)
    minx = min(p[0] for p in offs)
    maxx = max(p[0] for p in offs)
    miny = min(p[1] for p in offs)
    maxy = max(p[1] for p in offs)
    bx0, by0, bx1, by1 = BOARD_BOUNDS_PX
    x0, x1 = bx0 + clearance_px - minx, bx1 - clearance_px - maxx
    y0, y1 = by0 + clearance_px - miny, by1 - clearance_px - maxy
    if x0 >= x1 or y0 >= y1:
        return None
    return box(x0, y0, x1, y1)


@dataclass(frozen=True)
class CSpace:
    """The free origins of ``piece`` at ``rotation`` among ``obstacles`` (names -> forbidden sets)."""

    piece: str
    rotation: float
    clearance_px: float
    origin_box: Polygon | None
    forbidden: Mapping[str, Polygon] = field(default_factory=dict)

    @cached_property
    def blocked(self) -> BaseGeometry:
        polys = list(self.forbidden.values())
        if not polys:
            return Polygon()
        return shapely.union_all(polys) if len(polys) > 1 else polys[0]

    @cached_property
    def free(self) -> BaseGeometry:
        if self.origin_box is None:
            return Polygon()
        if not self.forbidden:
            return self.origin_box
        return self.origin_box.difference(self.blocked)

    def nearest(self, target: Point) -> Point | None:
        """The free origin nearest to ``target`` (``target`` itself when it is free)."""
        free = self.free
        if free.is_empty:
            return None
        p = nearest_points(free, ShapelyPoint(target))[0]
        return (p.x, p.y)

    def pose_at(self, origin_px: Point) -> Pose:
        x, y = world_to_board(*origin_px)
        return Pose(self.piece, x, y, self.rotation)


def build_cspace(piece: str, rotation: float, obstacles: Mapping[str, Pose], clearance_px: float) -> CSpace:
    """Configuration space for ``piece`` at ``rotation``; a pose of ``piece`` itself is ignored."""
    grown = grown_offsets_px(piece, rotation, clearance_px)
    forb = {name: forbidden_px(polygon_px(p), grown) for name, p in obstacles.items() if p.piece != piece}
    return CSpace(piece, rotation, clearance_px, origin_box_px(piece, rotation, clearance_px), forb)


def distinct_rotations(piece: str, first: float) -> list[float]:
    """``first``, then the multiples of 45 degrees nearest to it (ties: the smaller angle first),
    skipping any rotation whose outline is the same as one already listed (e.g. the parallelogram
    turned by 180 degrees), since it would give the same answer."""
    candidates = [first, *sorted((k * 45.0 for k in range(8)), key=lambda r: (rotation_distance(r, first), r))]
    order: list[float] = []
    seen: set[frozenset[tuple[float, float]]] = set()
    for r in candidates:
        key = frozenset((round(x, 3), round(y, 3)) for x, y in outline_offsets_px(piece, r))
        if key not in seen:
            seen.add(key)
            order.append(r)
    return order
