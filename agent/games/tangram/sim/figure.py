"""The target figure of an objective, and how close a board came to it.

The figure comes from the offline planner's library (``match_objective``). The score is the
planner's ``silhouette_iou`` when it offers one; otherwise the simulator's own: the IoU of the
board's silhouette (union of the on-board pieces, in world pixels) with the figure's, after the
translation of the figure that maximises it (and over the figure's turned / mirrored variants,
when the library gives them). The score is optional: without the planner, or for an objective
without a figure, it is None.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from shapely import affinity
from shapely.geometry import Polygon
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.pieces import PIECES

log = logging.getLogger(__name__)

_PLANNER_MODULES = ("agent.games.tangram.planner", "agent.games.tangram.planner.library")


def _planner_attr(name: str) -> Any | None:
    for module in _PLANNER_MODULES:
        try:
            mod = importlib.import_module(module)
        except Exception:  # the planner is optional; any import problem means "not there"
            return None
        value = getattr(mod, name, None)
        if value is not None:
            return value
    return None


def match_figure(objective: str) -> Any | None:
    """The planner's figure for ``objective``, or None."""
    match = _planner_attr("match_objective")
    if match is None or not objective:
        return None
    try:
        found = match(objective)
    except Exception as exc:
        log.warning("planner could not match %r: %s", objective, exc)
        return None
    if isinstance(found, tuple) and found:  # (figure, exact) from the library
        found = found[0]
    return found


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


def own_silhouette_iou(board: Mapping[str, Pose], figure: Any) -> float | None:
    canonical = figure_poses(figure)
    if not canonical:
        return None
    layouts = [canonical.values()] + [v.slots.values() for v in (getattr(figure, "variants", None) or ())
                                      if isinstance(getattr(v, "slots", None), Mapping)]
    return max(best_translation_iou(board.values(), layout) for layout in layouts)


def figure_score(board: Mapping[str, Pose], objective: str) -> float | None:
    """Silhouette IoU (0..1) of the board against the objective's figure, or None."""
    figure = match_figure(objective)
    if figure is None:
        return None
    iou = _planner_attr("silhouette_iou")
    try:
        if iou is not None:
            return round(float(iou(dict(board), figure)), 4)
        value = own_silhouette_iou(board, figure)
        return None if value is None else round(value, 4)
    except Exception as exc:  # a scoring problem must not lose the run's other numbers
        log.warning("figure score failed for %r: %s", objective, exc)
        return None
