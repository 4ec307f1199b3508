"""Where on the board the figure is built: re-anchoring the target to the pieces already there.

An anchor is a variant of the figure (turned and/or mirrored, as the figure allows) plus a pixel
translation. Candidates come from every piece on the board that could already be one of the
figure's parts: the translation that makes it fit exactly. Each candidate is scored by the area
of board pieces it leaves in place, minus the area of misplaced pieces sitting in the way, with
small preferences for the previous anchor (stability) and for the figure as drawn, centred.
Pieces of the same kind (Red and Cream, Green and Yellow) may swap slots.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
from PIL import Image, ImageDraw
from shapely import affinity
from shapely.geometry import Polygon
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

from agent.games.tangram.geometry.collide import BOARD_PX, CLEARANCE_PX, inside_board
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.pieces import PIECE_NAMES, Point
from agent.games.tangram.planner import shapes
from agent.games.tangram.planner.library import Figure

MATCH_TOLERANCE_PX = 8.0
"""A piece within this many pixels of its slot (every corner) counts as in place."""
_VARIANT_PENALTY = 150.0       # px^2 of matched area a turned/mirrored variant must win by
_MOVE_PENALTY = 1.0            # px^2 per pixel away from the previous anchor
_CENTRE_PENALTY = 0.2          # px^2 per pixel away from the canonical, centred figure
_CONFLICT_WEIGHT = 0.5         # px^2 of matched area one px^2 of blocking piece costs
_CELL_PX = 2.0                 # raster cell for the search of a free spot for the figure


@dataclass(frozen=True)
class Anchor:
    variant: int = 0
    dx: float = 0.0
    dy: float = 0.0

    def slots(self, figure: Figure) -> dict[str, Pose]:
        """Slot owner name -> target pose, for this variant and translation."""
        base = figure.variants[self.variant].slots
        if not self.dx and not self.dy:
            return dict(base)
        return {n: shapes.translate(p, self.dx, self.dy) for n, p in base.items()}

    def distance(self, other: Anchor) -> float:
        return math.hypot(self.dx - other.dx, self.dy - other.dy) + (0.0 if self.variant == other.variant else 200.0)


@dataclass(frozen=True)
class Fit:
    """A chosen anchor with its piece-to-slot assignment."""

    anchor: Anchor
    targets: Mapping[str, Pose]
    """Piece -> the pose it should have (already converted for swapped pieces)."""
    slot_of: Mapping[str, str]
    """Piece -> the slot (named by its canonical piece) it fills; parts are looked up by slot."""
    matched: frozenset[str]
    """Pieces on the board that are already in their slot."""
    score: float = 0.0
    blockers: frozenset[str] = field(default_factory=frozenset)
    """Misplaced pieces that overlap the figure's area."""

    def part(self, figure: Figure, piece: str) -> str:
        return figure.parts[self.slot_of[piece]]

    def piece_for_slot(self, slot: str) -> str:
        for piece, s in self.slot_of.items():
            if s == slot:
                return piece
        return slot


def _kind_groups() -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for n in PIECE_NAMES:
        groups.setdefault(shapes.kind(n), []).append(n)
    return list(groups.values())


_GROUPS = _kind_groups()


def assign(slots: Mapping[str, Pose], board: Mapping[str, Pose], pins: Mapping[str, str] | None = None,
           tolerance: float = MATCH_TOLERANCE_PX) -> tuple[dict[str, Pose], dict[str, str], frozenset[str]]:
    """Give each piece a slot of its kind so that as many board pieces as possible are in place.

    ``pins`` (piece -> slot) are requests from the chat ("use Cream for the roof") and always win.
    """
    pins = pins or {}
    targets: dict[str, Pose] = {}
    slot_of: dict[str, str] = {}
    matched: set[str] = set()
    for group in _GROUPS:
        best: tuple[float, tuple[str, ...], set[str]] | None = None
        for perm in itertools.permutations(group):
            mapping = dict(zip(group, perm, strict=True))  # piece -> slot
            if any(mapping.get(p) != s for p, s in pins.items() if p in mapping):
                continue
            hits = {p for p, s in mapping.items()
                    if p in board and shapes.placement_error(board[p], slots[s]) <= tolerance}
            value = sum(shapes.piece_area(p) for p in hits) - (0.0 if perm == tuple(group) else 1.0)
            if best is None or value > best[0]:
                best = (value, perm, hits)
        assert best is not None
        for p, s in zip(group, best[1], strict=True):
            slot_of[p] = s
            targets[p] = shapes.as_piece(slots[s], p)
        matched |= best[2]
    return targets, slot_of, frozenset(matched)


def _fits_board(slots: Mapping[str, Pose]) -> bool:
    return all(inside_board(shapes.polygon(p), CLEARANCE_PX) for p in slots.values())


def _candidates(figure: Figure, board: Mapping[str, Pose], previous: Anchor | None) -> list[Anchor]:
    out: dict[tuple[int, float, float], Anchor] = {}

    def add(a: Anchor) -> None:
        out.setdefault((a.variant, round(a.dx, 1), round(a.dy, 1)), a)

    add(Anchor())
    if previous is not None and previous.variant < len(figure.variants):
        add(previous)
    for vi, variant in enumerate(figure.variants):
        for dx, dy in shapes.slot_offsets(board, variant.slots, tolerance_px=1.0):
            add(Anchor(vi, dx, dy))
    return list(out.values())


def _raster(polys: Iterable[Polygon], origin: Point, shape: tuple[int, int]) -> np.ndarray:
    """Polygons (pixels) filled into a grid of ``_CELL_PX`` cells whose corner is ``origin``."""
    img = Image.new("L", (shape[1], shape[0]), 0)
    draw = ImageDraw.Draw(img)
    for poly in polys:
        draw.polygon([((x - origin[0]) / _CELL_PX, (y - origin[1]) / _CELL_PX) for x, y in poly.exterior.coords],
                     fill=1)
    return np.asarray(img, dtype=np.float64)


def _least_blocked(figure: Figure, variant: int, polys: Mapping[str, Polygon]) -> Anchor | None:
    """The translation of the variant, on the board, that overlaps the given pieces least (ties:
    the one nearest the figure as drawn). All translations on a 2 px grid are scored at once by
    cross-correlating the two rasters with FFTs."""
    slots = [shapes.polygon(p) for p in figure.variants[variant].slots.values()]
    x0, y0, x1, y1 = shapes.bounds(figure.variants[variant].slots.values())
    bx0, by0, bx1, by1 = BOARD_PX.bounds
    margin = CLEARANCE_PX + _CELL_PX
    cols = int((bx1 - bx0) // _CELL_PX) + 1
    rows = int((by1 - by0) // _CELL_PX) + 1
    zc, zr = int((x1 - x0) // _CELL_PX) + 2, int((y1 - y0) // _CELL_PX) + 2
    free_c, free_r = cols - zc - 2, rows - zr - 2
    if free_c < 0 or free_r < 0:
        return None
    board = _raster(polys.values(), (bx0, by0), (rows, cols))
    zone = np.zeros((rows, cols))
    zone[:zr, :zc] = _raster(slots, (x0, y0), (zr, zc))
    # corr[j, i] = overlap when the zone's corner sits at cell (i, j) of the board.
    corr = np.fft.irfft2(np.fft.rfft2(board) * np.conj(np.fft.rfft2(zone)), s=board.shape)
    ii, jj = np.meshgrid(np.arange(1, free_c + 1), np.arange(1, free_r + 1))
    dx = bx0 + ii * _CELL_PX - x0
    dy = by0 + jj * _CELL_PX - y0
    cost = corr[1:free_r + 1, 1:free_c + 1] * _CELL_PX ** 2 + _CENTRE_PENALTY * np.hypot(dx, dy)
    j, i = np.unravel_index(int(np.argmin(cost)), cost.shape)
    anchor = Anchor(variant, float(dx[j, i]), float(dy[j, i]))
    sx0, sy0, sx1, sy1 = x0 + anchor.dx, y0 + anchor.dy, x1 + anchor.dx, y1 + anchor.dy
    if sx0 < bx0 + margin or sy0 < by0 + margin or sx1 > bx1 - margin or sy1 > by1 - margin:
        return None
    return anchor


def _zone(figure: Figure, variant: int) -> BaseGeometry:
    """The variant's silhouette, grown by the clearance, at translation zero."""
    polys = [shapes.polygon(p) for p in figure.variants[variant].slots.values()]
    return unary_union(polys).buffer(CLEARANCE_PX, join_style="mitre")


def _in_the_way(zone: BaseGeometry, polys: Mapping[str, Polygon],
                matched: frozenset[str]) -> tuple[frozenset[str], float]:
    """Misplaced pieces overlapping ``zone`` and how much they are in the way (px^2, plus a fixed
    cost per piece since each costs a move). ``polys`` are the board's pieces in pixels."""
    hits: list[str] = []
    area = 0.0
    zx0, zy0, zx1, zy1 = zone.bounds
    for n, poly in polys.items():
        if n in matched:
            continue
        x0, y0, x1, y1 = poly.bounds
        if x1 < zx0 or x0 > zx1 or y1 < zy0 or y0 > zy1:
            continue
        if zone.intersects(poly):
            hits.append(n)
            area += zone.intersection(poly).area + 200.0
    return frozenset(hits), area


def fit_anchor(figure: Figure, board: Mapping[str, Pose], previous: Anchor | None = None,
               pins: Mapping[str, str] | None = None, fixed: bool = False) -> Fit:
    """The best anchor for the figure given the pieces on the board.

    With ``fixed`` the previous anchor is kept and only the assignment is redone.
    """
    zones: dict[int, BaseGeometry] = {}
    polys = {n: shapes.polygon(p) for n, p in board.items()}

    def zone_at(a: Anchor) -> BaseGeometry:
        if a.variant not in zones:
            zones[a.variant] = _zone(figure, a.variant)
        return affinity.translate(zones[a.variant], a.dx, a.dy)

    if fixed and previous is not None:
        slots = previous.slots(figure)
        targets, slot_of, matched = assign(slots, board, pins)
        blockers, _ = _in_the_way(zone_at(previous), polys, matched)
        return Fit(previous, targets, slot_of, matched, 0.0, blockers)

    Result = tuple[dict[str, Pose], dict[str, str], frozenset[str]]
    scored: list[tuple[float, Anchor, Result]] = []
    for cand in _candidates(figure, board, previous):
        slots = cand.slots(figure)
        if not _fits_board(slots):
            continue
        result = assign(slots, board, pins)
        # Pieces in place count by area, less the further they are off: the anchor follows the
        # pieces that fit exactly rather than drifting toward one that had to be nudged.
        score = sum(shapes.piece_area(p) * (1.0 - 0.5 * shapes.placement_error(board[p], slots[result[1][p]])
                                            / MATCH_TOLERANCE_PX) for p in result[2])
        score -= _VARIANT_PENALTY if cand.variant else 0.0
        score -= _CENTRE_PENALTY * math.hypot(cand.dx, cand.dy)
        if previous is not None:
            score -= _MOVE_PENALTY * min(cand.distance(previous), 300.0)
        scored.append((score, cand, result))
    scored.sort(key=lambda t: -t[0])
    best: tuple[float, Anchor, Result, frozenset[str]] | None = None
    for score, cand, result in scored[:6]:
        blockers, conflict = _in_the_way(zone_at(cand), polys, result[2])
        total = score - _CONFLICT_WEIGHT * conflict
        if best is None or total > best[0]:
            best = (total, cand, result, blockers)
    if best is not None and best[3] and not best[2][2]:
        # Nothing of the figure is on the board yet but pieces are in the way: slide the figure to
        # where it overlaps them least (they will still be moved in later, but not twice).
        shifted = _least_blocked(figure, best[1].variant, polys)
        if shifted is not None and _fits_board(shifted.slots(figure)):
            blockers, conflict = _in_the_way(zone_at(shifted), polys, frozenset())
            total = -_CONFLICT_WEIGHT * conflict - _CENTRE_PENALTY * math.hypot(shifted.dx, shifted.dy)
            if total > best[0]:
                best = (total, shifted, assign(shifted.slots(figure), board, pins), blockers)
    if best is None:  # nowhere on the board fits: fall back to the figure as drawn
        slots = Anchor().slots(figure)
        targets, slot_of, matched = assign(slots, board, pins)
        blockers, _ = _in_the_way(zone_at(Anchor()), polys, matched)
        return Fit(Anchor(), targets, slot_of, matched, 0.0, blockers)
    total, cand, (targets, slot_of, matched), blockers = best
    return Fit(cand, targets, slot_of, matched, total, blockers)
