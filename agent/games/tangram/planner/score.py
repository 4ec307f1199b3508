"""How close a board is to a figure: silhouette IoU after the best translation.

The union of the pieces on the board is compared with the union of the figure's slots (in pixels,
where the pieces are rigid). The figure may sit anywhere, so the translation is searched: first
the ones that lay a board piece exactly onto a slot of its kind, plus the centroid offset, then a
local pattern search from the best few. The figure's variants (turned or mirrored, as far as the
figure allows re-anchoring to them) are tried too.
"""

from __future__ import annotations

from collections.abc import Mapping

from shapely import affinity
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.planner import shapes
from agent.games.tangram.planner.library import Figure

_STEPS_PX = (8.0, 4.0, 2.0, 1.0, 0.5)


def _iou(a: BaseGeometry, b: BaseGeometry) -> float:
    inter = a.intersection(b).area
    union = a.area + b.area - inter
    return inter / union if union > 0 else 0.0


def _refine(placed: BaseGeometry, target: BaseGeometry, dx: float, dy: float,
            value: float) -> tuple[float, float, float]:
    for step in _STEPS_PX:
        improved = True
        while improved:
            improved = False
            for ex, ey in ((step, 0), (-step, 0), (0, step), (0, -step)):
                v = _iou(placed, affinity.translate(target, dx + ex, dy + ey))
                if v > value + 1e-9:
                    value, dx, dy, improved = v, dx + ex, dy + ey, True
                    break
    return value, dx, dy


def silhouette_iou(board: Mapping[str, Pose], figure: Figure, variants: bool = True) -> float:
    """IoU of the pieces on ``board`` against ``figure``'s silhouette, best translation (and
    variant, unless ``variants`` is False). 0.0 for an empty board, 1.0 for the figure itself."""
    if not board:
        return 0.0
    placed = unary_union([shapes.polygon(p) for p in board.values()])
    pcx, pcy = placed.centroid.x, placed.centroid.y
    best = 0.0
    for variant in (figure.variants if variants else figure.variants[:1]):
        target = unary_union([shapes.polygon(p) for p in variant.slots.values()])
        offsets = {(round(pcx - target.centroid.x, 2), round(pcy - target.centroid.y, 2))}
        offsets.update((round(dx, 2), round(dy, 2))
                       for dx, dy in shapes.slot_offsets(board, variant.slots, tolerance_px=2.0))
        starts = sorted(((_iou(placed, affinity.translate(target, dx, dy)), dx, dy) for dx, dy in offsets),
                        reverse=True)[:3]
        for value, dx, dy in starts:
            best = max(best, _refine(placed, target, dx, dy, value)[0])
    return best
