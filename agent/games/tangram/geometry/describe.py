"""A short, exact description of the board for the prompt, computed from geometry.

Vision models misjudge positions in screenshots; the description gives them numbers instead: each
piece's centre, extent and orientation in board units and words, which pieces touch, and the
largest free rectangles. The text is deterministic (same board, same words) so prompts can be
compared and cached.

A piece's "centre" in the text is the game's own centre marker (VCenter), the point the state
reports as its position and the point a move's x, y name, so the model can reuse the numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

import numpy as np
import shapely
from shapely.geometry import Polygon

from agent.games.tangram.geometry.collide import inside_board, polygon_px
from agent.games.tangram.geometry.frames import BOARD_UNITS, Pose, normalize_rotation, rotation_distance
from agent.games.tangram.geometry.pieces import PIECE_NAMES, PIECES, Point

TOUCH_PX = 4.0
"""Pieces closer than this (about one board unit) are described as touching."""
GRID_UNITS = 2.0
"""Cell size of the free-space grid."""
MIN_FREE_SIDE = 8.0
"""Free rectangles narrower than this (a small triangle is about 15 x 8 units) are not worth naming."""
MAX_FREE_AREAS = 3


@dataclass(frozen=True, slots=True)
class PieceDescription:
    name: str
    kind: str
    position: Point
    """The game's centre marker (VCenter): what the state reports and what x, y of a move mean."""
    centroid: Point
    """The outline's centre of mass; within about a unit of ``position``."""
    bounds: tuple[float, float, float, float]
    rotation: float
    orientation: str

    @property
    def line(self) -> str:
        x0, y0, x1, y1 = self.bounds
        return (f"{self.name} ({self.kind}): centre ({self.position[0]:.1f}, {self.position[1]:.1f}), "
                f"spans x {x0:.1f}-{x1:.1f}, y {y0:.1f}-{y1:.1f}, rotation {self.rotation:g}: {self.orientation}.")


@dataclass(frozen=True, slots=True)
class FreeArea:
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def where(self) -> str:
        return _region((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    @property
    def text(self) -> str:
        return (f"x {self.x0:.0f}-{self.x1:.0f}, y {self.y0:.0f}-{self.y1:.0f} "
                f"({self.where}, {self.x1 - self.x0:.0f} x {self.y1 - self.y0:.0f})")


@dataclass(frozen=True, slots=True)
class BoardDescription:
    pieces: tuple[PieceDescription, ...]
    touching: tuple[tuple[str, str], ...]
    overlapping: tuple[tuple[str, str], ...]
    off_board: tuple[str, ...]
    free: tuple[FreeArea, ...]

    @property
    def lines(self) -> list[str]:
        n = len(self.pieces)
        out = [f"Board: 100 x 100 units, (0, 0) bottom-left, y up. {n} of 7 pieces on the board."]
        if not n:
            out.append("The board is empty.")
        out.extend("- " + p.line for p in self.pieces)
        if n > 1:
            out.append("Touching: " + (_pairs(self.touching) if self.touching else "none") + ".")
        if self.overlapping:
            out.append("Overlapping or touching exactly (the game reports a collision): "
                       + _pairs(self.overlapping) + ".")
        if self.off_board:
            out.append("Sticking out of the board: " + ", ".join(self.off_board) + ".")
        if self.free:
            out.append("Largest free areas: " + "; ".join(f.text for f in self.free) + ".")
        else:
            out.append("No free area of 8 x 8 units or more is left.")
        return out

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def describe_board(board: Mapping[str, Pose]) -> BoardDescription:
    """Describe the pieces of ``board`` (keyed by name) in board units and words."""
    poses = sorted((p for p in board.values() if p.piece in PIECES), key=lambda p: PIECE_NAMES.index(p.piece))
    polys = {p.piece: polygon_px(p) for p in poses}
    pieces = tuple(_describe_piece(p) for p in poses)
    touching: list[tuple[str, str]] = []
    overlapping: list[tuple[str, str]] = []
    for i, a in enumerate(poses):
        for b in poses[i + 1:]:
            pa, pb = polys[a.piece], polys[b.piece]
            if pa.intersects(pb):
                overlapping.append((a.piece, b.piece))
            elif pa.distance(pb) <= TOUCH_PX:
                touching.append((a.piece, b.piece))
    off = tuple(p.piece for p in poses if not inside_board(polys[p.piece]))
    free = _free_areas([Polygon(p.outline_board()) for p in poses])
    return BoardDescription(pieces, tuple(touching), tuple(overlapping), off, free)


def _describe_piece(pose: Pose) -> PieceDescription:
    spec = PIECES[pose.piece]
    outline = pose.outline_board()
    c = Polygon(outline).centroid
    rotation = round(normalize_rotation(pose.rotation), 2)
    return PieceDescription(pose.piece, spec.kind, pose.marker_board(), (c.x, c.y), pose.bounds_board(), rotation,
                            _orientation(pose, outline))


_COMPASS = ("right", "up-right", "up", "up-left", "left", "down-left", "down", "down-right")


def _compass(dx: float, dy: float) -> str:
    a = math.degrees(math.atan2(dy, dx))
    return _COMPASS[round(a / 45.0) % 8]


def _orientation(pose: Pose, outline: list[Point]) -> str:
    """Orientation in words, from the outline in board units (y up)."""
    spec = PIECES[pose.piece]
    if spec.is_triangle:
        edges = [(outline[i], outline[(i + 1) % 3]) for i in range(3)]
        a, b = max(edges, key=lambda e: math.dist(*e))
        corner = next(p for p in outline if p not in (a, b))
        mid = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
        d = _compass(corner[0] - mid[0], corner[1] - mid[1])
        back = _compass(mid[0] - corner[0], mid[1] - corner[1])
        return f"right angle pointing {d}, long side facing {back}"
    turn = normalize_rotation(pose.rotation)
    if spec.symmetry == 90.0:
        if rotation_distance(turn % 90.0, 0.0) < 1.0:
            return "sides level"
        if rotation_distance(turn % 90.0, 45.0) < 1.0:
            return "a diamond standing on a corner"
        return f"tilted {turn % 90.0:.0f} degrees"
    # Parallelogram: describe the long sides.
    edges = [(outline[i], outline[(i + 1) % 4]) for i in range(4)]
    a, b = max(edges, key=lambda e: math.dist(*e))
    ang = math.degrees(math.atan2(b[1] - a[1], b[0] - a[0])) % 180.0
    if min(ang, 180.0 - ang) < 5.0:
        return "long sides horizontal"
    if abs(ang - 90.0) < 5.0:
        return "long sides vertical"
    return "long sides rising to the right" if ang < 90.0 else "long sides falling to the right"


def _region(x: float, y: float) -> str:
    col = "left" if x < BOARD_UNITS / 3 else "right" if x > 2 * BOARD_UNITS / 3 else ""
    row = "top" if y > 2 * BOARD_UNITS / 3 else "bottom" if y < BOARD_UNITS / 3 else ""
    if row and col:
        return f"{row}-{col}"
    return row or col or "centre"


def _pairs(pairs: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{a}-{b}" for a, b in pairs)


def _free_areas(polys: list[Polygon]) -> tuple[FreeArea, ...]:
    """The few largest empty axis-aligned rectangles, on a grid, each taken out before the next."""
    n = int(BOARD_UNITS / GRID_UNITS)
    occupied = np.zeros((n, n), dtype=bool)  # [row from bottom, column from left]
    if polys:
        # A cell counts as taken when a piece comes within half a unit of it.
        taken = shapely.union_all([p.buffer(0.5) for p in polys])
        shapely.prepare(taken)
        # The prepared shape first: shapely uses a prepared geometry only as the first argument
        # (a seventh of the time with the cells first); the predicate is symmetric.
        occupied = shapely.intersects(taken, _grid_cells(n))
    areas: list[FreeArea] = []
    min_cells = math.ceil(MIN_FREE_SIDE / GRID_UNITS)
    for _ in range(MAX_FREE_AREAS):
        rect = _largest_empty(occupied, min_cells)
        if rect is None:
            break
        r0, c0, r1, c1 = rect
        areas.append(FreeArea(c0 * GRID_UNITS, r0 * GRID_UNITS, c1 * GRID_UNITS, r1 * GRID_UNITS))
        occupied = occupied.copy()
        occupied[r0:r1, c0:c1] = True
    return tuple(areas)


@cache
def _grid_cells(n: int) -> np.ndarray:
    """The free-space grid's n x n cells as shapely boxes, [row from bottom, column from left]:
    the same for every board, so made once (building them took as long as the rest of the
    search). Read-only: shared by every session's worker threads, never prepared or changed."""
    edges = np.arange(n) * GRID_UNITS
    xs, ys = np.meshgrid(edges, edges)
    cells = shapely.box(xs, ys, xs + GRID_UNITS, ys + GRID_UNITS)
    cells.flags.writeable = False
    return cells


def _largest_empty(occupied: np.ndarray, min_side: int = 1) -> tuple[int, int, int, int] | None:
    """(row0, col0, row1, col1), end-exclusive, of the best all-False rectangle with both sides at
    least ``min_side`` cells (largest, favouring square-ish shapes); ties go to the first found,
    scanning rows from the bottom."""
    rows, cols = occupied.shape
    # Each cell's run of free cells down its column (ending at its row), all rows at once: the
    # running count of free cells minus that count at the column's last taken cell so far.
    count = np.cumsum(~occupied, axis=0)
    heights_by_row = (count - np.maximum.accumulate(np.where(occupied, count, 0), axis=0)).tolist()
    # Plain lists and a square-root table: this loop is pure Python and numpy scalars are slow here.
    roots = [math.sqrt(i) for i in range(max(rows, cols) + 1)]
    best_score = -1.0
    best: tuple[int, int, int, int] | None = None
    for r, heights in enumerate(heights_by_row):
        heights.append(0)  # a sentinel 0 at the end flushes the stack
        stack: list[int] = []
        for c, h in enumerate(heights):
            while stack and heights[stack[-1]] >= h:
                height = heights[stack.pop()]
                if height < min_side:
                    continue
                left = stack[-1] + 1 if stack else 0
                width = c - left
                if width >= min_side:
                    # Prefer usable shapes: a 2 x 50 strip is worth less than a 10 x 10 square.
                    score = height * roots[width] if height < width else width * roots[height]
                    if score > best_score:
                        best_score = score
                        best = (r - height + 1, left, r + 1, left + width)
            stack.append(c)
    return best
