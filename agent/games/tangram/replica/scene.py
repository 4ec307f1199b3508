"""The game's scene as the simulator's own geometry: node transforms, collision shapes, overlaps.

This module deliberately shares no computation with :mod:`agent.games.tangram.geometry` (only its
``Pose`` record, for a piece's start). The agent's piece
table could be wrong (a misread scene, a different game build); if the simulator computed
collisions with the agent's own predictor, no test could ever notice. So the numbers below are the
scene file's raw values (``tangran/Scenes/Main_scene.tscn``: node positions and rotations in
radians, the 0.4 node scale, each ``CollisionPolygon2D``'s own offset, rotation and points, the
``VCenter``/``V1..V4`` marker nodes, the board and drawer rectangles and the BOUNDARY frame
polygon), composed the way Godot composes a ``Transform2D`` chain, and overlaps are decided with a
separating-axis test written here (Godot's physics runs SAT on convex shapes; the frame is tested
edge by edge), not with shapely.

Conventions are Godot's: world pixels with y down; a node rotation ``r`` (radians) maps a local
vector (x, y) to (x cos r - y sin r, x sin r + y cos r), which is clockwise on screen. As in the
game, shapes that merely touch overlap (GAME_FACTS: "shapes that exactly touch count as colliding").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from agent.games.tangram.geometry.frames import Pose

Vec = tuple[float, float]

NODE_SCALE = 0.4
"""Every piece node is scaled by 0.4 in the scene."""
TOUCH_EPS = 1e-9
"""Projections closer than this count as touching (floating-point noise only)."""


@dataclass(frozen=True, slots=True)
class ScenePiece:
    """One piece node as the scene file defines it (pre-scale local units, radians)."""

    name: str
    node_position: Vec
    node_rotation: float
    shape_position: Vec
    shape_rotation: float
    shape_points: tuple[Vec, ...]
    center_marker: Vec
    vertex_markers: tuple[Vec, ...]


SCENE_PIECES: dict[str, ScenePiece] = {p.name: p for p in (
    ScenePiece("Red", (1018.5, 291.0), 3.14159, (0.0, -1.52588e-05), 3.14159,
               ((-128.0, -64.0), (128.0, -64.0), (0.0, 64.0)),
               (-0.624999, 10.0), ((-0.624985, -65.0001), (131.875, 64.9999), (-128.125, 65.0))),
    ScenePiece("Cream", (991.0, 318.0), 1.5708, (1.52588e-05, -0.199997), -1.5708,
               ((-64.0, -127.8), (64.0, 0.200012), (-64.0, 128.2)),
               (3.55155e-07, 8.125), ((-6.48499e-05, -64.375), (-127.5, 63.125), (127.5, 63.125))),
    ScenePiece("Blue", (1058.0, 360.0), 3.92699, (0.0, 0.0), 2.35619,
               ((32.0, 32.0), (-96.0, 32.0), (32.0, -96.0)),
               (7.51301, 3.09359), ((44.6361, -90.5981), (-45.52, -0.441933), (44.6361, 89.7142))),
    ScenePiece("Green", (1018.0, 333.0), 0.0, (0.0, 0.0), 0.0,
               ((0.0, -32.0), (-64.0, 32.0), (64.0, 32.0)),
               (0.0, 0.0), ((0.0, -32.0), (-64.0, 32.0), (64.0, 32.0))),
    ScenePiece("Yellow", (1062.0, 292.0), -1.5708, (0.0, 0.0), 1.5708,
               ((24.0, -64.0), (24.0, 64.0), (-40.0, 0.0)),
               (0.0, 0.0), ((-1.33514e-05, -40.6251), (-62.5, 24.375), (65.0, 24.3751))),
    ScenePiece("Purple", (1045.0, 319.0), 0.785398, (1.32581, -1.32591), 0.785398,
               ((0.0, -65.0), (61.6, -0.399994), (-1.97998, 64.5392), (-65.0, 0.0)),
               (0.0, 0.0), ((-44.6361, -47.2878), (-46.4039, 42.8683), (45.52, 42.8684), (47.2878, -47.2878))),
    ScenePiece("Brown", (1002.5, 361.0), 0.0, (0.0, 0.0), 0.0,
               ((-32.0, -32.0), (96.0, -32.0), (32.0, 32.0), (-96.0, 32.0)),
               (0.0, 0.0), ((-32.0, -32.0), (96.0, -32.0), (-96.0, 32.0), (32.0, 32.0))),
)}
"""The seven piece nodes as the scene file sets them up (their start poses included)."""

GAME_ORDER: tuple[str, ...] = ("Red", "Yellow", "Green", "Blue", "Purple", "Brown", "Cream")
"""The order of the game's ``shapes`` dictionary, which is the order of ``on_board``/``off_board``."""

# ArenaBoard at (694.5, 232.868); its VBottomLeftCorner / VUpperRightCorner pins, and its 338 x 323
# BoardShape rectangle centred at (-2.5, 0.632004) from the node.
_ARENA_BOARD: Vec = (694.5, 232.868)
BOTTOM_LEFT: Vec = (_ARENA_BOARD[0] - 171.5, _ARENA_BOARD[1] + 161.132)
UPPER_RIGHT: Vec = (_ARENA_BOARD[0] + 165.5, _ARENA_BOARD[1] - 160.868)
BOARD_AREA: tuple[float, float, float, float] = (
    _ARENA_BOARD[0] - 2.5 - 169.0, _ARENA_BOARD[1] + 0.632004 - 161.5,
    _ARENA_BOARD[0] - 2.5 + 169.0, _ARENA_BOARD[1] + 0.632004 + 161.5)
"""(x0, y0, x1, y1) of the board's Area2D: a piece overlapping it is "on the board"."""
# ArenaPieceDrawer at (689.625, 534.58), DrawerShape 131 x 128 centred at (329.375, -213.58).
DRAWER_AREA: tuple[float, float, float, float] = (
    689.625 + 329.375 - 65.5, 534.58 - 213.58 - 64.0, 689.625 + 329.375 + 65.5, 534.58 - 213.58 + 64.0)

# The frame around everything: Arena/Background (at (0, -1)) / Area2D / CollisionPolygon2D (at
# (2, -2)). Its outline runs in through thin slits to cut out the board and the drawer.
_FRAME_LOCAL: tuple[Vec, ...] = (
    (0, -421), (525, -421), (519, 75), (520, 398), (860, 400), (862, 74), (522, 72), (522, 2), (525, -429),
    (1738, -410), (1739, 1029), (619, 1047), (955, 387), (1080, 386), (1080, 262), (954, 263), (953, 385),
    (617, 1045), (-388, 1036), (-368, -433))
FRAME: tuple[Vec, ...] = tuple((float(x) + 2.0, float(y) - 3.0) for x, y in _FRAME_LOCAL)
BOUNDARY = "BOUNDARY"
"""What the game calls an overlap with the frame (its Area2D is literally named "Area2D")."""


def _rot(v: Vec, radians: float) -> Vec:
    c, s = math.cos(radians), math.sin(radians)
    return (v[0] * c - v[1] * s, v[0] * s + v[1] * c)


def to_world(piece: ScenePiece, origin: Vec, rotation_rad: float, local: Vec) -> Vec:
    """A point of the piece node's own (pre-scale) space, in world pixels."""
    r = _rot((local[0] * NODE_SCALE, local[1] * NODE_SCALE), rotation_rad)
    return (origin[0] + r[0], origin[1] + r[1])


def shape_world(name: str, origin: Vec, rotation_rad: float) -> list[Vec]:
    """The piece's collision polygon in world pixels for a node at ``origin`` turned ``rotation_rad``."""
    piece = SCENE_PIECES[name]
    out = []
    for p in piece.shape_points:
        q = _rot(p, piece.shape_rotation)
        local = (q[0] + piece.shape_position[0], q[1] + piece.shape_position[1])
        out.append(to_world(piece, origin, rotation_rad, local))
    return out


_F = np.float32


def _xform32(origin: Vec, rotation_rad: float, local: Vec) -> Vec:
    """A child's ``global_position`` the way Godot computes it: a Transform2D in single precision."""
    r = _F(rotation_rad)
    c, s = _F(math.cos(r)) * _F(NODE_SCALE), _F(math.sin(r)) * _F(NODE_SCALE)
    lx, ly = _F(local[0]), _F(local[1])
    return (float(_F(c * lx) + _F(-s * ly) + _F(origin[0])), float(_F(s * lx) + _F(c * ly) + _F(origin[1])))


def markers_world(name: str, origin: Vec, rotation_rad: float) -> tuple[Vec, list[Vec]]:
    """(VCenter, [V1..V4]) in world pixels, in the game's single precision."""
    piece = SCENE_PIECES[name]
    return (_xform32(origin, rotation_rad, piece.center_marker),
            [_xform32(origin, rotation_rad, v) for v in piece.vertex_markers])


def real_to_simple(p: Vec) -> Vec:
    """The game's realToSimple: world pixels to board units through the two corner pins (single
    precision, as Vector2 arithmetic is in Godot)."""
    bl, ur = (_F(BOTTOM_LEFT[0]), _F(BOTTOM_LEFT[1])), (_F(UPPER_RIGHT[0]), _F(UPPER_RIGHT[1]))
    sx, sy = _F(100.0) / (ur[0] - bl[0]), _F(100.0) / (ur[1] - bl[1])
    return (float(_F(_F(p[0]) - bl[0]) * sx), float(_F(_F(p[1]) - bl[1]) * sy))


def simple_to_real(p: Vec) -> Vec:
    """The game's simpleToReal: board units to world pixels (single precision)."""
    bl, ur = (_F(BOTTOM_LEFT[0]), _F(BOTTOM_LEFT[1])), (_F(UPPER_RIGHT[0]), _F(UPPER_RIGHT[1]))
    sx, sy = (ur[0] - bl[0]) / _F(100.0), (ur[1] - bl[1]) / _F(100.0)
    return (float(bl[0] + _F(_F(p[0]) * sx)), float(bl[1] + _F(_F(p[1]) * sy)))


# ------------------------------------------------------------------ overlap tests


def _axes(poly: Sequence[Vec]) -> Iterable[Vec]:
    n = len(poly)
    for i in range(n):
        ax, ay = poly[i]
        bx, by = poly[(i + 1) % n]
        yield (ay - by, bx - ax)


def _project(poly: Sequence[Vec], axis: Vec) -> tuple[float, float]:
    values = [p[0] * axis[0] + p[1] * axis[1] for p in poly]
    return min(values), max(values)


def convex_overlap(a: Sequence[Vec], b: Sequence[Vec]) -> bool:
    """Separating-axis test for two convex polygons; touching counts as overlapping (no axis
    separates them by more than TOUCH_EPS)."""
    return separation(a, b) <= TOUCH_EPS


def separation(a: Sequence[Vec], b: Sequence[Vec]) -> float:
    """The largest gap between the two polygons' projections over all edge normals: positive when
    they are apart (a lower bound on their distance), zero or negative when they overlap."""
    best = -math.inf
    for axis in (*_axes(a), *_axes(b)):
        length = math.hypot(*axis)
        if length == 0.0:
            continue
        unit = (axis[0] / length, axis[1] / length)
        a0, a1 = _project(a, unit)
        b0, b1 = _project(b, unit)
        best = max(best, b0 - a1, a0 - b1)
    return best


def _cross(o: Vec, a: Vec, b: Vec) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _on_segment(p: Vec, a: Vec, b: Vec) -> bool:
    return min(a[0], b[0]) - TOUCH_EPS <= p[0] <= max(a[0], b[0]) + TOUCH_EPS \
        and min(a[1], b[1]) - TOUCH_EPS <= p[1] <= max(a[1], b[1]) + TOUCH_EPS


def segments_meet(p1: Vec, p2: Vec, q1: Vec, q2: Vec) -> bool:
    """True when the closed segments share a point."""
    d1, d2 = _cross(q1, q2, p1), _cross(q1, q2, p2)
    d3, d4 = _cross(p1, p2, q1), _cross(p1, p2, q2)
    if ((d1 > 0 > d2) or (d1 < 0 < d2)) and ((d3 > 0 > d4) or (d3 < 0 < d4)):
        return True
    return ((abs(d1) <= TOUCH_EPS and _on_segment(p1, q1, q2)) or (abs(d2) <= TOUCH_EPS and _on_segment(p2, q1, q2))
            or (abs(d3) <= TOUCH_EPS and _on_segment(q1, p1, p2)) or (abs(d4) <= TOUCH_EPS and _on_segment(q2, p1, p2)))


def point_in_polygon(p: Vec, poly: Sequence[Vec]) -> bool:
    """Even-odd rule (the frame's one self-crossing lies far above the screen)."""
    inside = False
    n = len(poly)
    for i in range(n):
        (x0, y0), (x1, y1) = poly[i], poly[(i + 1) % n]
        if (y0 > p[1]) != (y1 > p[1]):
            x = x0 + (p[1] - y0) * (x1 - x0) / (y1 - y0)
            if x > p[0]:
                inside = not inside
    return inside


def touches_frame(poly: Sequence[Vec]) -> bool:
    """Whether a piece overlaps the BOUNDARY frame: an edge meets the frame's outline, or the piece
    lies inside the frame's material (with no edge crossing, one corner tells)."""
    n, m = len(poly), len(FRAME)
    for i in range(n):
        a, b = poly[i], poly[(i + 1) % n]
        for j in range(m):
            if segments_meet(a, b, FRAME[j], FRAME[(j + 1) % m]):
                return True
    return point_in_polygon(poly[0], FRAME)


def overlaps_rect(poly: Sequence[Vec], rect: tuple[float, float, float, float]) -> bool:
    x0, y0, x1, y1 = rect
    return convex_overlap(poly, ((x0, y0), (x1, y0), (x1, y1), (x0, y1)))


def start_pose(name: str) -> Pose:
    """The piece's pose when a game begins, from the scene's node (radians, as stored)."""
    node = SCENE_PIECES[name]
    x, y = real_to_simple(node.node_position)
    return Pose(name, x, y, math.degrees(node.node_rotation))
