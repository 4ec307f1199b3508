"""Pose algebra in world pixels: move, turn, mirror and compare pieces.

Pieces are rigid in pixels (a board unit is 3.37 px across but 3.22 px up), so every transform of
a figure happens on pixel outlines and only the resulting node origins are converted back to
board units. Two pieces of the same kind (Red and Cream, Green and Yellow) are interchangeable:
``as_piece`` gives the pose that puts one exactly where the other was.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence

from shapely.geometry import Polygon

from agent.games.tangram.geometry.frames import Pose, board_to_world, normalize_rotation, rotate_px, world_to_board
from agent.games.tangram.geometry.pieces import PIECES, Point


def kind(piece: str) -> str:
    return PIECES[piece].kind


def same_kind(a: str, b: str) -> bool:
    return PIECES[a].kind == PIECES[b].kind


def outline(pose: Pose) -> list[Point]:
    return pose.outline_px()


def polygon(pose: Pose) -> Polygon:
    return Polygon(pose.outline_px())


def vertex_centroid(pose: Pose) -> Point:
    pts = pose.outline_px()
    return (sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts))


def _outline_centroid(piece: str) -> Point:
    pts = PIECES[piece].outline
    return (sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts))


def piece_area(piece: str) -> float:
    return Polygon(PIECES[piece].outline).area


def tidy_rotation(degrees: float) -> float:
    """[0, 360), rounded to the game's 0.01 and snapped onto whole degrees that are that close."""
    r = normalize_rotation(round(degrees, 2))
    return 0.0 if math.isclose(r, 360.0, abs_tol=0.005) else r


def with_origin_px(piece: str, ox: float, oy: float, rotation: float) -> Pose:
    x, y = world_to_board(ox, oy)
    return Pose(piece, x, y, rotation)


def translate(pose: Pose, dx_px: float, dy_px: float) -> Pose:
    ox, oy = pose.origin_px
    return with_origin_px(pose.piece, ox + dx_px, oy + dy_px, pose.rotation)


def translate_board(pose: Pose, dx: float, dy: float) -> Pose:
    return Pose(pose.piece, pose.x + dx, pose.y + dy, pose.rotation)


def rotate_about(pose: Pose, degrees: float, center: Point) -> Pose:
    """Turn the whole piece ``degrees`` clockwise on screen about a pixel point."""
    ox, oy = pose.origin_px
    vx, vy = rotate_px((ox - center[0], oy - center[1]), degrees)
    return with_origin_px(pose.piece, center[0] + vx, center[1] + vy, tidy_rotation(pose.rotation + degrees))


def as_piece(pose: Pose, piece: str) -> Pose:
    """The pose of ``piece`` (same kind) that covers exactly the outline ``pose`` covers."""
    if piece == pose.piece:
        return pose
    if not same_kind(piece, pose.piece):
        raise ValueError(f"{piece} is not the same kind of piece as {pose.piece}")
    ca, cb = _outline_centroid(pose.piece), _outline_centroid(piece)
    dx, dy = rotate_px((ca[0] - cb[0], ca[1] - cb[1]), pose.rotation)
    ox, oy = pose.origin_px
    return with_origin_px(piece, ox + dx, oy + dy, pose.rotation)


def fit_pose(piece: str, target: Sequence[Point], snap_deg: float = 2.0) -> tuple[Pose, float]:
    """The rigid pose (no reflection) of ``piece`` whose outline best covers ``target`` pixels.

    Tries every pairing of the outline's corners with the target's (both windings) and solves
    the 2-D Procrustes problem for each. Returns the pose and the RMS corner distance in pixels,
    which is large when the target is the mirror image of a chiral piece (the parallelogram).
    An angle within ``snap_deg`` of a multiple of 45 degrees is snapped onto it (the game's square
    is slightly skewed, so its best fit is often a fraction of a degree off).
    """
    outline0 = PIECES[piece].outline
    n = len(outline0)
    if len(target) != n:
        raise ValueError(f"{piece} has {n} corners, target has {len(target)}")
    best: tuple[float, float, Point] | None = None
    co = (sum(p[0] for p in outline0) / n, sum(p[1] for p in outline0) / n)
    for order in (list(target), list(reversed(target))):
        ct = (sum(p[0] for p in order) / n, sum(p[1] for p in order) / n)
        for shift in range(n):
            pairs = [(outline0[i], order[(i + shift) % n]) for i in range(n)]
            sxx = sum((o[0] - co[0]) * (t[0] - ct[0]) + (o[1] - co[1]) * (t[1] - ct[1]) for o, t in pairs)
            sxy = sum((o[0] - co[0]) * (t[1] - ct[1]) - (o[1] - co[1]) * (t[0] - ct[0]) for o, t in pairs)
            angle = math.degrees(math.atan2(sxy, sxx))
            nearest = 45.0 * round(angle / 45.0)
            if abs(angle - nearest) <= snap_deg:
                angle = nearest
            rc = rotate_px(co, angle)
            origin = (ct[0] - rc[0], ct[1] - rc[1])
            err = 0.0
            for o, t in pairs:
                r = rotate_px(o, angle)
                err += (origin[0] + r[0] - t[0]) ** 2 + (origin[1] + r[1] - t[1]) ** 2
            rms = math.sqrt(err / n)
            if best is None or rms < best[0]:
                best = (rms, angle, origin)
    assert best is not None
    rms, angle, origin = best
    return with_origin_px(piece, origin[0], origin[1], tidy_rotation(angle)), rms


def mirror(pose: Pose, axis_x_px: float) -> tuple[Pose, float]:
    """The pose covering the mirror image (about a vertical pixel line) and how far off it is."""
    reflected = [(2 * axis_x_px - x, y) for x, y in pose.outline_px()]
    return fit_pose(pose.piece, reflected)


def placement_error(a: Pose, b: Pose) -> float:
    """Largest distance in pixels from a corner of ``a`` to the nearest corner of ``b``.

    Zero when both cover the same outline, whatever the names (Red/Cream) or the equivalent
    rotations (a square turned 90 degrees) are.
    """
    if not same_kind(a.piece, b.piece):
        return math.inf
    pb = b.outline_px()
    worst = 0.0
    for x, y in a.outline_px():
        worst = max(worst, min(math.hypot(x - u, y - v) for u, v in pb))
    return worst


def bounds(poses: Iterable[Pose]) -> tuple[float, float, float, float]:
    xs: list[float] = []
    ys: list[float] = []
    for p in poses:
        for x, y in p.outline_px():
            xs.append(x)
            ys.append(y)
    return (min(xs), min(ys), max(xs), max(ys))


def board_center_px() -> Point:
    return board_to_world(50.0, 50.0)


def slot_offsets(board: Mapping[str, Pose], slots: Mapping[str, Pose], tolerance_px: float) -> Iterator[Point]:
    """Translations (pixels) of a layout that would put one of its slots exactly where a board
    piece of the same kind lies, within ``tolerance_px``: the ways a figure can be re-anchored."""
    for piece, pose in board.items():
        pc = vertex_centroid(pose)
        for slot, slot_pose in slots.items():
            if not same_kind(piece, slot):
                continue
            sc = vertex_centroid(slot_pose)
            dx, dy = pc[0] - sc[0], pc[1] - sc[1]
            if placement_error(pose, translate(slot_pose, dx, dy)) <= tolerance_px:
                yield dx, dy
