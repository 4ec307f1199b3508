"""The target figure of an objective, and how close a board came to it.

The figure comes from the offline planner's library (``match_objective``), which is part of the
project: its errors are not hidden here, they propagate. The score is the planner's
``silhouette_iou``: the IoU of the board's silhouette with the figure's, after the best translation
(and over the figure's turned / mirrored variants). The one case without a figure, and so without
a target or a score (None), is an empty objective; any other objective gets the library's figure
for it, or its fallback figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from shapely import affinity
from shapely.geometry import Polygon
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.pieces import PIECES
from agent.games.tangram.planner import Figure, match_objective, silhouette_iou


def match_figure(objective: str) -> Figure | None:
    """The planner's figure for ``objective``; None only when there is no objective to match."""
    if not objective:
        return None
    figure, _exact = match_objective(objective)
    return figure


def _poses_of(items: Any) -> dict[str, Pose]:
    if isinstance(items, Mapping):
        poses = [p for p in items.values() if isinstance(p, Pose)]
    elif isinstance(items, Iterable) and not isinstance(items, (str, bytes)):
        poses = [p for p in items if isinstance(p, Pose)]
    else:
        poses = []
    return {p.piece: p for p in poses if p.piece in PIECES}


def figure_poses(figure: Any) -> dict[str, Pose] | None:
    """The figure's piece poses (its ``slots``, or a mapping / sequence of poses), in its build order."""
    if figure is None:
        return None
    items: Any = figure
    if not isinstance(figure, (Mapping, list, tuple)):
        items = next((v for a in ("slots", "poses", "pieces") if (v := getattr(figure, a, None))), None)
    poses = _poses_of(items)
    order = [n for n in (getattr(figure, "order", None) or ()) if n in poses]
    ordered = {n: poses[n] for n in order}
    ordered.update({n: p for n, p in poses.items() if n not in ordered})
    return ordered or None


def target_poses(objective: str) -> dict[str, Pose] | None:
    return figure_poses(match_figure(objective))


def _silhouette(poses: Iterable[Pose]) -> BaseGeometry:
    return unary_union([Polygon(p.outline_px()) for p in poses])


def _iou(a: BaseGeometry, b: BaseGeometry) -> float:
    union = a.union(b).area
    return a.intersection(b).area / union if union > 0 else 0.0


def best_translation_iou(board: Iterable[Pose], target: Iterable[Pose], min_step_px: float = 0.5) -> float:
    """IoU of two silhouettes after moving ``target`` where it overlaps ``board`` best.

    Starts with the centroids together, then a compass search with halving steps: the IoU of
    two compact shapes is smooth enough near its peak for that to find it to ``min_step_px``.
    """
    a, b = _silhouette(board), _silhouette(target)
    if a.is_empty or b.is_empty:
        return 0.0
    dx, dy = a.centroid.x - b.centroid.x, a.centroid.y - b.centroid.y
    best = _iou(a, affinity.translate(b, dx, dy))
    step = 16.0
    while step >= min_step_px:
        moved = False
        for sx, sy in ((step, 0.0), (-step, 0.0), (0.0, step), (0.0, -step)):
            value = _iou(a, affinity.translate(b, dx + sx, dy + sy))
            if value > best + 1e-9:
                best, dx, dy, moved = value, dx + sx, dy + sy, True
        if not moved:
            step /= 2
    return best


def figure_score(board: Mapping[str, Pose], objective: str) -> float | None:
    """Silhouette IoU (0..1) of the board against the objective's figure; None without an objective."""
    figure = match_figure(objective)
    if figure is None:
        return None
    return round(float(silhouette_iou(dict(board), figure)), 4)
