"""Relations: place a piece relative to a piece on the board, exactly, instead of by coordinates.

A language model is good at "put the roof on top of the square" and poor at the coordinates that
make two edges meet. :func:`resolve_relation` turns the words into a pose whose edges are flush
with the anchor's (one clearance apart), aligned, and clear of everything else on the board.

Directional relations slide the piece towards the anchor along the direction until it meets it,
starting from the two bounding boxes' centres lined up; if that spot is taken or off the board the
piece slides along the anchor's side (staying within the direction's cone), and then other
rotations are tried. The shape relations (square_with, triangle_with) compute the one rotation and
position that completes the figure. Everything works in pixels through the configuration space of
:mod:`agent.games.tangram.geometry.cspace`, so a result is valid by
:func:`agent.games.tangram.geometry.collide.is_valid`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from shapely.geometry import LineString, Polygon
from shapely.geometry import Point as ShapelyPoint
from shapely.geometry.base import BaseGeometry
from shapely.geometry.polygon import orient
from shapely.ops import nearest_points

from agent.games.tangram.geometry.collide import CLEARANCE_PX, is_valid, polygon_px
from agent.games.tangram.geometry.cspace import (
    MARGIN_PX,
    build_cspace,
    distinct_rotations,
    forbidden_px,
    grown_offsets_px,
)
from agent.games.tangram.geometry.frames import (
    Pose,
    board_to_world,
    normalize_rotation,
    outline_offsets_px,
    rotate_px,
    rotation_distance,
)
from agent.games.tangram.geometry.pieces import PIECES, Point

RELATION_DOCS: dict[str, str] = {
    "left_of": "directly left of the anchor, touching it, centres level",
    "right_of": "directly right of the anchor, touching it, centres level",
    "above": "directly above the anchor, touching it, centres in one vertical line",
    "below": "directly below the anchor, touching it, centres in one vertical line",
    "above_left": "diagonally up and to the left of the anchor, corners close",
    "above_right": "diagonally up and to the right of the anchor, corners close",
    "below_left": "diagonally down and to the left of the anchor, corners close",
    "below_right": "diagonally down and to the right of the anchor, corners close",
    "touching": "against one side of the anchor with a whole side of each piece flush (the longest fit)",
    "square_with": "two equal triangles (Red+Cream or Green+Yellow) joined on their long sides into a square; "
                   "rotation is chosen for you",
    "triangle_with": "two equal triangles (Red+Cream or Green+Yellow) joined on a short side into one bigger "
                     "triangle; rotation is chosen for you",
    "on_top_of": "sitting on top of the anchor like a roof or a head: flat side down, centred, touching",
}
RELATIONS: tuple[str, ...] = tuple(RELATION_DOCS)

_S = math.sqrt(0.5)
# Directions in world pixels (y down), and how far a fallback may swing around the anchor.
_DIRECTIONS: dict[str, tuple[Point, float]] = {
    "left_of": ((-1.0, 0.0), 45.0),
    "right_of": ((1.0, 0.0), 45.0),
    "above": ((0.0, -1.0), 45.0),
    "below": ((0.0, 1.0), 45.0),
    "on_top_of": ((0.0, -1.0), 45.0),
    "above_left": ((-_S, -_S), 22.5),
    "above_right": ((_S, -_S), 22.5),
    "below_left": ((-_S, _S), 22.5),
    "below_right": ((_S, _S), 22.5),
}
DIRECTIONAL_RELATIONS: tuple[str, ...] = tuple(_DIRECTIONS)
"""The relations that combine in pairs (:func:`resolve_two`): the directions."""
_FAR = 5000.0  # px; longer than anything on screen
_PARALLEL_DEG = 0.5
_SNAP_DEG = 3.0


def relation_vocabulary() -> list[dict[str, str]]:
    """The relations and their one-line meanings, in a fixed order, for the prompt."""
    return [{"name": name, "description": RELATION_DOCS[name]} for name in RELATIONS]


def resolve_relation(piece: str, relation: str, anchor: str, board: Mapping[str, Pose],
                     rotation: float | None = None, *, near: Point | None = None,
                     clearance_px: float = CLEARANCE_PX) -> Pose | None:
    """An exact, valid, flush pose of ``piece`` in ``relation`` to ``anchor`` on ``board``.

    ``rotation`` is kept when given (directional relations and ``touching`` try it first and fall
    back to other multiples of 45); ``square_with`` and ``triangle_with`` decide it themselves.
    ``near`` (board units) breaks ties between equally good spots. Returns None when the anchor is
    not on the board, the relation cannot be made with these pieces, or there is no room for it.
    """
    if piece not in PIECES or relation not in RELATION_DOCS or piece == anchor:
        return None
    anchor_pose = board.get(anchor)
    if anchor_pose is None or anchor_pose.piece not in PIECES:
        return None
    others = {n: p for n, p in board.items() if p.piece != piece}
    ctx = _Context(piece, anchor, anchor_pose, others, clearance_px,
                   board_to_world(*near) if near is not None else None)
    if rotation is not None and not math.isfinite(rotation):
        rotation = None
    if relation in _DIRECTIONS:
        return _directional(ctx, relation, rotation)
    if relation == "touching":
        return _touching(ctx, rotation)
    if relation == "square_with":
        return _square_with(ctx)
    return _triangle_with(ctx)


@dataclass(frozen=True)
class _Context:
    piece: str
    anchor: str
    anchor_pose: Pose
    obstacles: Mapping[str, Pose]
    clearance_px: float
    near_px: Point | None

    @property
    def gap(self) -> float:
        """The gap we aim for: the clearance plus the rounding margin."""
        return self.clearance_px + MARGIN_PX

    @property
    def anchor_poly(self) -> Polygon:
        return polygon_px(self.anchor_pose)

    def valid(self, pose: Pose) -> bool:
        return is_valid(pose, self.obstacles, self.clearance_px)

    def pose(self, origin_px: Point, rotation: float) -> Pose:
        return Pose(self.piece, 0.0, 0.0, float(rotation)).moved_to_px(float(origin_px[0]), float(origin_px[1]))


# ------------------------------------------------------------------ directional relations


def _directional(ctx: _Context, relation: str, rotation: float | None) -> Pose | None:
    direction, cone = _DIRECTIONS[relation]
    if rotation is not None:
        for r in distinct_rotations(ctx.piece, rotation):
            pose = _ray_contact(ctx, r, direction, cone)
            if pose is not None:
                return pose
        return None
    # No rotation asked for: take the one that sits best (flat side down for on_top_of, then the
    # longest flush contact), preferring rotation 0 on ties.
    best: tuple[tuple[float, float, float], Pose] | None = None
    for r in distinct_rotations(ctx.piece, 0.0):
        pose = _ray_contact(ctx, r, direction, cone)
        if pose is None:
            continue
        flat = _down_edge_px(ctx.piece, r) if relation == "on_top_of" else 0.0
        key = (-round(flat, 0), -round(_contact_px(pose, ctx.anchor_poly, ctx.gap), 0), rotation_distance(r, 0.0))
        if best is None or key < best[0]:
            best = (key, pose)
    return best[1] if best else None


def _ray_contact(ctx: _Context, rotation: float, direction: Point, cone_deg: float) -> Pose | None:
    """Slide the piece from the anchor's centre along ``direction`` until it no longer touches."""
    cs = build_cspace(ctx.piece, rotation, ctx.obstacles, ctx.gap)
    hull = cs.forbidden[ctx.anchor]
    start = _aligned_origin(ctx, rotation, hull)
    d = np.asarray(direction)
    ray = LineString([start, tuple(np.asarray(start) + d * _FAR)])
    seg = ray.intersection(hull)
    coords = np.asarray(_coords(seg)) if not seg.is_empty else np.asarray([start])
    exit_pt = tuple(coords[np.argmax((coords - np.asarray(start)) @ d)])
    pose = ctx.pose(exit_pt, rotation)
    if ctx.valid(pose):
        return pose
    # Taken or off the board: slide around the anchor's outline, within the direction's cone.
    ring = forbidden_px(ctx.anchor_poly, grown_offsets_px(ctx.piece, rotation, ctx.gap + MARGIN_PX)).exterior
    allowed = ring.intersection(cs.free).intersection(_cone(start, direction, cone_deg))
    return _nearest_valid_on(ctx, allowed, exit_pt, rotation)


def _aligned_origin(ctx: _Context, rotation: float, hull: Polygon) -> Point:
    """Origin at which the piece's bounding-box centre sits on the anchor's (or, failing that, the
    two centroids coincide, which always makes them overlap)."""
    offs = np.asarray(outline_offsets_px(ctx.piece, rotation))
    ax0, ay0, ax1, ay1 = ctx.anchor_poly.bounds
    centre = ((ax0 + ax1) / 2, (ay0 + ay1) / 2)
    own = (offs.min(axis=0) + offs.max(axis=0)) / 2
    start = (centre[0] - own[0], centre[1] - own[1])
    if hull.contains(ShapelyPoint(start)):
        return start
    ac = ctx.anchor_poly.centroid
    pc = Polygon(offs).centroid
    return (ac.x - pc.x, ac.y - pc.y)


def _cone(apex: Point, direction: Point, half_angle_deg: float) -> Polygon:
    a = math.atan2(direction[1], direction[0])
    h = math.radians(half_angle_deg)
    return Polygon([apex,
                    (apex[0] + _FAR * math.cos(a - h), apex[1] + _FAR * math.sin(a - h)),
                    (apex[0] + _FAR * math.cos(a + h), apex[1] + _FAR * math.sin(a + h))])


def _nearest_valid_on(ctx: _Context, geom: BaseGeometry, target: Point, rotation: float) -> Pose | None:
    if geom.is_empty:
        return None
    p = nearest_points(geom, ShapelyPoint(target))[0]
    pose = ctx.pose((p.x, p.y), rotation)
    return pose if ctx.valid(pose) else None


def _coords(geom: BaseGeometry) -> list[Point]:
    if hasattr(geom, "geoms"):
        return [c for g in geom.geoms for c in _coords(g)]
    return [tuple(c) for c in geom.coords]


def _contact_px(pose: Pose, anchor_poly: Polygon, gap: float) -> float:
    """Length of the piece's outline lying within the gap (plus a hair) of the anchor."""
    band = anchor_poly.buffer(gap + 0.3, join_style="mitre")
    return float(polygon_px(pose).exterior.intersection(band).length)


def _down_edge_px(piece: str, rotation: float) -> float:
    """Length of the piece's edges that face straight down at this rotation (a flat bottom)."""
    total = 0.0
    for (a, b), n in _edges_with_normals(outline_offsets_px(piece, rotation)):
        if n[1] > math.cos(math.radians(_PARALLEL_DEG)):
            total += math.dist(a, b)
    return total


# ------------------------------------------------------------------ edge-to-edge relations


def _edges_with_normals(points: Iterable[Point]) -> list[tuple[tuple[Point, Point], Point]]:
    """Edges of a convex polygon with their outward unit normals."""
    ring = list(orient(Polygon(list(points)), sign=1.0).exterior.coords)[:-1]
    out = []
    for i, a in enumerate(ring):
        b = ring[(i + 1) % len(ring)]
        dx, dy = b[0] - a[0], b[1] - a[1]
        length = math.hypot(dx, dy)
        # Counter-clockwise in the x-right/y-down plane as shapely sees it: outward is (dy, -dx).
        out.append(((a, b), (dy / length, -dx / length)))
    return out


def _angle(v: Point) -> float:
    return math.degrees(math.atan2(v[1], v[0]))


def _clean_rotation(r: float, asked: float | None = None) -> float | None:
    """Snap an edge-matching rotation to the rotation asked for, or else to a multiple of 45, when
    it is within a few degrees (the game's outlines are a little irregular, and players think in
    45-degree steps). With ``asked`` given, None means this edge pair cannot be used at all."""
    r = normalize_rotation(round(r, 6))
    if asked is not None:
        return asked if rotation_distance(r, asked) <= _SNAP_DEG else None
    snapped = normalize_rotation(45.0 * round(r / 45.0))
    return snapped if rotation_distance(r, snapped) <= _SNAP_DEG else r


def _flush_along(ctx: _Context, rotation: float, guess: Point, normal: Point) -> Point | None:
    """Starting from ``guess``, move the origin along the anchor's edge normal to the exact spot where
    the piece is one gap away from the anchor (the edge of its forbidden region)."""
    hull = forbidden_px(ctx.anchor_poly, grown_offsets_px(ctx.piece, rotation, ctx.gap))
    n = np.asarray(normal)
    g = np.asarray(guess)
    seg = LineString([tuple(g - n * 60.0), tuple(g + n * 60.0)]).intersection(hull)
    if seg.is_empty:
        return None
    coords = np.asarray(_coords(seg))
    return tuple(coords[np.argmax((coords - g) @ n)])


@dataclass(frozen=True, slots=True)
class _Flush:
    """A piece edge laid against an anchor edge: the pose's rotation and origin, and the shared length."""

    rotation: float
    origin: Point
    normal: Point
    contact: float


def _flush_candidates(ctx: _Context, rotation: float | None) -> list[_Flush]:
    anchor_edges = _edges_with_normals(ctx.anchor_poly.exterior.coords[:-1])
    piece_edges0 = _edges_with_normals(outline_offsets_px(ctx.piece, 0.0))
    out: list[_Flush] = []
    for (a1, a2), n in anchor_edges:
        la = math.dist(a1, a2)
        t = ((a2[0] - a1[0]) / la, (a2[1] - a1[1]) / la)
        amid = ((a1[0] + a2[0]) / 2 + n[0] * ctx.gap, (a1[1] + a2[1]) / 2 + n[1] * ctx.gap)
        for (b1, b2), m in piece_edges0:
            r = _clean_rotation(_angle((-n[0], -n[1])) - _angle(m), rotation)
            if r is None:
                continue
            lb = math.dist(b1, b2)
            bmid = rotate_px(((b1[0] + b2[0]) / 2, (b1[1] + b2[1]) / 2), r)
            for frac in (0.0, 0.25, -0.25, 0.5, -0.5, 0.75, -0.75):
                shift = frac * (la + lb) / 2
                overlap = min(la / 2, shift + lb / 2) - max(-la / 2, shift - lb / 2)
                if overlap <= 0.2 * min(la, lb):
                    continue
                origin = (amid[0] + t[0] * shift - bmid[0], amid[1] + t[1] * shift - bmid[1])
                out.append(_Flush(r, origin, n, overlap))
    return out


def _touching(ctx: _Context, rotation: float | None) -> Pose | None:
    preferred = rotation if rotation is not None else 0.0
    for restrict in ((rotation,) if rotation is not None else ()) + (None,):
        cands = _flush_candidates(ctx, restrict)

        def key(f: _Flush) -> tuple[float, float, float]:
            near = 0.0
            if ctx.near_px is not None:
                near = math.dist(ctx.pose(f.origin, f.rotation).origin_px, ctx.near_px)
            return (-round(f.contact, 0), rotation_distance(f.rotation, preferred), near)

        for f in sorted(cands, key=key):
            origin = _flush_along(ctx, f.rotation, f.origin, f.normal)
            if origin is None:
                continue
            pose = ctx.pose(origin, f.rotation)
            if ctx.valid(pose):
                return pose
    return None


def _triangle_pair(ctx: _Context) -> bool:
    a, b = PIECES[ctx.piece], PIECES[ctx.anchor_pose.piece]
    return a.is_triangle and b.is_triangle and abs(_longest(a.outline) - _longest(b.outline)) < 1.0


def _longest(points: Iterable[Point]) -> float:
    pts = list(points)
    return max(math.dist(p, q) for p, q in zip(pts, pts[1:] + pts[:1], strict=False))


def _hypotenuse(points: Iterable[Point]) -> tuple[tuple[Point, Point], Point, Point]:
    """(hypotenuse edge, its outward normal, the right-angle corner) of a right triangle."""
    edges = _edges_with_normals(points)
    (h, n) = max(edges, key=lambda e: math.dist(*e[0]))
    corner = next(p for (p, _), _ in edges if p not in h)
    return h, n, corner


def _square_with(ctx: _Context) -> Pose | None:
    if not _triangle_pair(ctx):
        return None
    (a1, a2), n, _ = _hypotenuse(ctx.anchor_poly.exterior.coords[:-1])
    _, m, _ = _hypotenuse(outline_offsets_px(ctx.piece, 0.0))
    r = _clean_rotation(_angle((-n[0], -n[1])) - _angle(m))
    assert r is not None
    (c1, c2), _, _ = _hypotenuse(outline_offsets_px(ctx.piece, r))
    bmid = ((c1[0] + c2[0]) / 2, (c1[1] + c2[1]) / 2)
    amid = ((a1[0] + a2[0]) / 2 + n[0] * ctx.gap, (a1[1] + a2[1]) / 2 + n[1] * ctx.gap)
    origin = _flush_along(ctx, r, (amid[0] - bmid[0], amid[1] - bmid[1]), n)
    if origin is None:
        return None
    pose = ctx.pose(origin, r)
    return pose if ctx.valid(pose) else None


def _triangle_with(ctx: _Context) -> Pose | None:
    """Mirror the anchor across one of its legs (for these isosceles triangles, a quarter turn about
    the right-angle corner): the two legs become one long side of a bigger right triangle."""
    if not _triangle_pair(ctx):
        return None
    _, hn, corner = _hypotenuse(ctx.anchor_poly.exterior.coords[:-1])
    _, m, _ = _hypotenuse(outline_offsets_px(ctx.piece, 0.0))
    options: list[Pose] = []
    for (l1, l2), ln in _edges_with_normals(ctx.anchor_poly.exterior.coords[:-1]):
        if corner not in (l1, l2):
            continue  # the hypotenuse
        # The mirrored triangle's hypotenuse normal is the anchor's reflected across this leg.
        dot = hn[0] * ln[0] + hn[1] * ln[1]
        want = (hn[0] - 2 * dot * ln[0], hn[1] - 2 * dot * ln[1])
        r = _clean_rotation(_angle(want) - _angle(m))
        assert r is not None
        _, _, own_corner = _hypotenuse(outline_offsets_px(ctx.piece, r))
        target = (corner[0] + ln[0] * ctx.gap, corner[1] + ln[1] * ctx.gap)
        origin = _flush_along(ctx, r, (target[0] - own_corner[0], target[1] - own_corner[1]), ln)
        if origin is not None:
            options.append(ctx.pose(origin, r))
    near = ctx.near_px
    if near is not None:
        options.sort(key=lambda p: math.dist(p.origin_px, near))
    return next((p for p in options if ctx.valid(p)), None)


# ------------------------------------------------------------------ two anchors at once

TWO_ANCHOR_CONE_DEG = 67.5
"""How far from the named direction a piece may sit and still be "right of" (etc.) an anchor when it
must touch two anchors at once: wider than one relation's cone, since the two pull apart."""


def resolve_two(piece: str, relation: str, anchor: str, relation2: str, anchor2: str, board: Mapping[str, Pose],
                rotation: float | None = None, *, clearance_px: float = CLEARANCE_PX) -> Pose | None:
    """A valid pose of ``piece`` flush against two anchors at once ("right of Blue and above Red").

    In the piece's configuration space every origin one gap away from an anchor lies on the boundary
    of that anchor's forbidden region, so the spots touching both anchors are where the two
    boundaries cross. Of those, the ones on the named side of each anchor (within a widened cone)
    and clear of everything else are candidates; the one with the longest flush contact wins, the
    asked rotation before others. Only directional relations combine; None when nothing fits (the
    caller may then fall back to the first relation alone).
    """
    if relation not in _DIRECTIONS or relation2 not in _DIRECTIONS or anchor == anchor2:
        return None
    if piece not in PIECES or piece in (anchor, anchor2):
        return None
    first, second = board.get(anchor), board.get(anchor2)
    if first is None or second is None:
        return None
    others = {n: p for n, p in board.items() if p.piece != piece}
    ctx = _Context(piece, anchor, first, others, clearance_px, None)
    if rotation is not None and not math.isfinite(rotation):
        rotation = None
    rotations = distinct_rotations(ctx.piece, rotation if rotation is not None else 0.0)
    polys = (polygon_px(first), polygon_px(second))
    best: tuple[tuple[float, float], Pose] | None = None
    for r in rotations:
        # Grown with round corners, not mitred: where a corner meets a corner the mitre would stop
        # the piece short of the gap, and "touching both" must hold to the hundredth of a pixel.
        grown = _round_grown(piece, r, ctx.gap)
        hull_a, hull_b = forbidden_px(polys[0], grown), forbidden_px(polys[1], grown)
        crossing = hull_a.exterior.intersection(hull_b.exterior)
        for point in _coords(crossing):
            pose = ctx.pose(point, r)
            if not (ctx.valid(pose) and _on_side(pose, polys[0], relation) and _on_side(pose, polys[1], relation2)):
                continue
            contact = _contact_px(pose, polys[0], ctx.gap) + _contact_px(pose, polys[1], ctx.gap)
            key = (rotation_distance(r, rotation) if rotation is not None else 0.0, -round(contact, 1))
            if best is None or key < best[0]:
                best = (key, pose)
        if best is not None and rotation is not None and rotation_distance(r, rotation) < 1e-9:
            break  # the asked rotation fits: other rotations only serve when it does not
    return best[1] if best else None


def _round_grown(piece: str, rotation: float, gap: float) -> tuple[Point, ...]:
    poly = Polygon(outline_offsets_px(piece, rotation)).buffer(gap, quad_segs=32)
    return tuple((float(x), float(y)) for x, y in list(poly.exterior.coords)[:-1])


def _on_side(pose: Pose, anchor_poly: Polygon, relation: str) -> bool:
    """Whether the piece's bounding-box centre lies in ``relation``'s direction from the anchor's."""
    direction, _ = _DIRECTIONS[relation]
    x0, y0, x1, y1 = polygon_px(pose).bounds
    a0, b0, a1, b1 = anchor_poly.bounds
    dx, dy = (x0 + x1) / 2 - (a0 + a1) / 2, (y0 + y1) / 2 - (b0 + b1) / 2
    length = math.hypot(dx, dy)
    if length == 0.0:
        return False
    cos = (dx * direction[0] + dy * direction[1]) / (length * math.hypot(*direction))
    return cos >= math.cos(math.radians(TWO_ANCHOR_CONE_DEG))
