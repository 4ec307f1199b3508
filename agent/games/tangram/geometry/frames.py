"""Frames of reference: board units, world pixels, node origin and reported markers.

Board units run 0..100 on both axes with (0, 0) at the bottom-left and y up. World pixels are
Godot's, y down. Pieces are rigid in pixels, so every rotation happens in pixels and only the
result is converted; in board units a piece is slightly stretched (3.37 px across, 3.22 up).
Rotation is in degrees, positive clockwise on screen, which with y down is the ordinary
counter-clockwise matrix applied to pixel coordinates.

A ``play`` sets the node origin. The state reports the ``VCenter`` marker as ``position`` and the
``V1``..``V4`` markers as ``vertices``; all markers turn with the piece.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from agent.games.tangram.geometry.pieces import PIECES, Point

BOARD_ORIGIN_PX: Point = (523.0, 394.0)
"""World position of board (0, 0): the scene's VBottomLeftCorner marker."""
PX_PER_UNIT_X = 3.37
PX_PER_UNIT_Y = 3.22
BOARD_SIZE_PX: Point = (337.0, 322.0)
BOARD_UNITS = 100.0


def board_to_world(x: float, y: float) -> Point:
    return (BOARD_ORIGIN_PX[0] + PX_PER_UNIT_X * x, BOARD_ORIGIN_PX[1] - PX_PER_UNIT_Y * y)


def world_to_board(wx: float, wy: float) -> Point:
    return ((wx - BOARD_ORIGIN_PX[0]) / PX_PER_UNIT_X, (BOARD_ORIGIN_PX[1] - wy) / PX_PER_UNIT_Y)


def px_to_units(dx: float, dy: float) -> Point:
    """A pixel displacement (y down) as a board-unit displacement (y up)."""
    return (dx / PX_PER_UNIT_X, -dy / PX_PER_UNIT_Y)


def units_to_px(dx: float, dy: float) -> Point:
    return (dx * PX_PER_UNIT_X, -dy * PX_PER_UNIT_Y)


def rotate_px(v: Point, degrees: float) -> Point:
    """Turn a pixel vector (y down) by ``degrees`` clockwise on screen."""
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    return (v[0] * c - v[1] * s, v[0] * s + v[1] * c)


def normalize_rotation(degrees: float) -> float:
    """Fold any angle into [0, 360), so -90, 270 and 630 compare equal."""
    r = math.fmod(degrees, 360.0)
    if r < 0:
        r += 360.0
    return 0.0 if math.isclose(r, 360.0, abs_tol=1e-9) else r + 0.0  # + 0.0 turns -0.0 into 0.0


def rotation_to_send(current: float, target: float) -> float:
    """The rotation to put in a ``play`` so the piece turns the short way on screen.

    The game tweens ``rotation`` numerically from the node's current, unnormalised value to the
    number sent (GAME_FACTS: Yellow starts at -90; sending 270 spins it a full turn). So send the
    current value plus the signed difference folded into (-180, 180].
    """
    delta = normalize_rotation(target - current)
    if delta > 180.0:
        delta -= 360.0
    return current + delta


def rotation_distance(a: float, b: float) -> float:
    """Smallest angle in degrees between two rotations, in [0, 180]."""
    d = normalize_rotation(a - b)
    return min(d, 360.0 - d)


@lru_cache(maxsize=8192)
def outline_offsets_px(piece: str, rotation: float) -> tuple[Point, ...]:
    """The piece's outline relative to its node origin after turning (pixels, y down).

    Cached because repair and relations ask for the same few rotations many times.
    """
    return tuple(rotate_px(v, rotation) for v in PIECES[piece].outline)


@dataclass(frozen=True, slots=True)
class Pose:
    """A piece placed with its node origin at (x, y) board units, turned ``rotation`` degrees.

    This is exactly what a ``play`` frame carries.
    """

    piece: str
    x: float
    y: float
    rotation: float

    @property
    def origin_px(self) -> Point:
        return board_to_world(self.x, self.y)

    def outline_px(self) -> list[Point]:
        ox, oy = self.origin_px
        return [(ox + dx, oy + dy) for dx, dy in outline_offsets_px(self.piece, self.rotation)]

    def outline_board(self) -> list[Point]:
        return [world_to_board(*p) for p in self.outline_px()]

    def _marker_px(self, offset: Point) -> Point:
        ox, oy = self.origin_px
        dx, dy = rotate_px(offset, self.rotation)
        return (ox + dx, oy + dy)

    def marker_board(self) -> Point:
        """The point the game reports as this piece's ``position``."""
        return world_to_board(*self._marker_px(PIECES[self.piece].marker))

    def vertex_markers_board(self) -> list[Point]:
        """The points the game reports as this piece's ``vertices`` (V1..V4 markers), in order."""
        return [world_to_board(*self._marker_px(v)) for v in PIECES[self.piece].vertex_markers]

    def centroid_board(self) -> Point:
        """Mean of the outline's corners, in board units."""
        pts = self.outline_px()
        cx = sum(p[0] for p in pts) / len(pts)
        cy = sum(p[1] for p in pts) / len(pts)
        return world_to_board(cx, cy)

    def bounds_board(self) -> tuple[float, float, float, float]:
        """(min_x, min_y, max_x, max_y) of the outline in board units."""
        pts = self.outline_board()
        xs = [p[0] for p in pts]
        ys = [p[1] for p in pts]
        return (min(xs), min(ys), max(xs), max(ys))

    def moved_to_px(self, wx: float, wy: float) -> Pose:
        """The same piece and rotation with the node origin at world pixel (wx, wy)."""
        x, y = world_to_board(wx, wy)
        return Pose(self.piece, x, y, self.rotation)


def pose_from_marker(piece: str, marker_x: float, marker_y: float, rotation: float) -> Pose:
    """The pose whose reported marker is at (marker_x, marker_y): subtract the turned offset."""
    mx, my = board_to_world(marker_x, marker_y)
    dx, dy = rotate_px(PIECES[piece].marker, rotation)
    x, y = world_to_board(mx - dx, my - dy)
    return Pose(piece, x, y, rotation)


def start_pose(piece: str) -> Pose:
    spec = PIECES[piece]
    x, y = world_to_board(*spec.start_origin)
    return Pose(piece, x, y, spec.start_rotation)
