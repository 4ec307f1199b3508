"""Repair: turn any proposed pose into the nearest pose the game will accept.

Order of preference, as a player would expect:
1. the proposal itself, when it is already clear of everything by the clearance;
2. the nearest free origin at the same rotation, if it is within ``max_search_units``;
3. the nearest free origin at another multiple of 45 degrees, trying the rotations closest to the
   proposed one first, again within ``max_search_units``;
4. otherwise the free spot nearest to the proposal at any of those rotations (the intent "about
   here" is kept as well as the board allows), unless it is farther than ``max_move_units``;
5. otherwise no pose, and a sentence saying why, for the chat.

Each rotation costs one exact configuration-space computation (see :mod:`agent.games.tangram.geometry.cspace`),
so a repair is a few milliseconds at worst. Every returned pose is checked with the predictor.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from agent.games.tangram.geometry.collide import BOUNDARY, CLEARANCE_PX, is_valid, predict_collisions
from agent.games.tangram.geometry.cspace import MARGIN_PX, CSpace, build_cspace, distinct_rotations
from agent.games.tangram.geometry.frames import (
    PX_PER_UNIT_X,
    PX_PER_UNIT_Y,
    Pose,
    normalize_rotation,
    rotation_distance,
)
from agent.games.tangram.geometry.pieces import PIECES, Point

DEFAULT_MAX_SEARCH_UNITS = 15.0
"""How far (board units) a piece may slide at its own rotation before other rotations are tried."""
ROTATION_PENALTY_UNITS = 3.0
"""When nothing is near, a turn of 45 degrees is worth this much distance in choosing the spot."""


@dataclass(frozen=True, slots=True)
class RepairResult:
    pose: Pose | None
    """The pose to play, or None when nothing on the board will do."""
    displacement: float
    """Board units between the proposed and the returned node origin (0 when unchanged or None)."""
    rotation_changed: bool
    reason: str
    """One short sentence for the chat; empty when the proposal was fine as it was."""
    original: Pose | None = None
    collisions: tuple[str, ...] = ()
    """What the game would have reported for the proposal itself."""

    @property
    def changed(self) -> bool:
        return self.pose != self.original


def repair(pose: Pose, board: Mapping[str, Pose], *, clearance_px: float = CLEARANCE_PX,
           max_search_units: float = DEFAULT_MAX_SEARCH_UNITS,
           max_move_units: float | None = None) -> RepairResult:
    """The nearest valid pose to ``pose`` on ``board`` (other pieces; ``pose.piece`` itself is ignored)."""
    piece = pose.piece
    if piece not in PIECES:
        return RepairResult(None, 0.0, False, f"I don't know a piece called {piece[:20]!r}.", pose)
    others = {n: p for n, p in board.items() if p.piece != piece}
    target = _sanitised(pose)
    if is_valid(target, others, clearance_px):
        if target == pose:
            return RepairResult(pose, 0.0, False, "", pose)
        return RepairResult(target, 0.0, target.rotation != pose.rotation,
                            f"The proposal for {piece} had a number that is not a number, so I filled it in.", pose)
    collisions = tuple(predict_collisions(target, others, 0.0))
    target_px = target.origin_px

    best: tuple[float, Pose] | None = None
    for rotation in distinct_rotations(piece, target.rotation):
        cs = build_cspace(piece, rotation, others, clearance_px + MARGIN_PX)
        found = _nearest_valid(cs, target_px, others, clearance_px)
        if found is None:
            continue
        moved = found if rotation != target.rotation else Pose(piece, found.x, found.y, target.rotation)
        d = _distance_units(target, moved)
        # A proposal off the board must travel at least back onto it; only the rest counts as "far".
        if d - _unavoidable_units(cs, target_px) <= max_search_units:
            return _result(pose, target, moved, d, collisions)
        score = d + ROTATION_PENALTY_UNITS * rotation_distance(rotation, target.rotation) / 45.0
        if best is None or score < best[0]:
            best = (score, moved)

    if best is None:
        return RepairResult(None, 0.0, False, f"There is no free spot left on the board for {piece}.",
                            pose, collisions)
    moved = best[1]
    d = _distance_units(target, moved)
    if max_move_units is not None and d > max_move_units:
        return RepairResult(None, 0.0, False,
                            f"The nearest free spot for {piece} is {d:.0f} units from where I meant to put it, "
                            "too far to keep the idea.", pose, collisions)
    return _result(pose, target, moved, d, collisions, far=True)


def _sanitised(pose: Pose) -> Pose:
    """Non-finite numbers from a model become the board centre / rotation 0 instead of crashing."""
    x = pose.x if math.isfinite(pose.x) else 50.0
    y = pose.y if math.isfinite(pose.y) else 50.0
    r = pose.rotation if math.isfinite(pose.rotation) else 0.0
    if (x, y, r) == (pose.x, pose.y, pose.rotation):
        return pose
    return Pose(pose.piece, x, y, r)


def _nearest_valid(cs: CSpace, target_px: Point, others: Mapping[str, Pose], clearance_px: float) -> Pose | None:
    p = cs.nearest(target_px)
    if p is None:
        return None
    pose = cs.pose_at(p)
    if is_valid(pose, others, clearance_px):
        return pose
    # Rounding put the point a hair outside the free set: step inwards a little.
    for r in (0.05, 0.15, 0.4, 1.0):
        for k in range(16):
            a = 2 * math.pi * k / 16
            q = cs.pose_at((p[0] + r * math.cos(a), p[1] + r * math.sin(a)))
            if is_valid(q, others, clearance_px):
                return q
    return None


def _unavoidable_units(cs: CSpace, target_px: Point) -> float:
    """How far the origin must move just to get the piece onto the board at this rotation."""
    if cs.origin_box is None:
        return 0.0
    x0, y0, x1, y1 = cs.origin_box.bounds
    dx = max(x0 - target_px[0], 0.0, target_px[0] - x1) / PX_PER_UNIT_X
    dy = max(y0 - target_px[1], 0.0, target_px[1] - y1) / PX_PER_UNIT_Y
    return math.hypot(dx, dy)


def _distance_units(a: Pose, b: Pose) -> float:
    return math.hypot(a.x - b.x, a.y - b.y)


def _what(collisions: tuple[str, ...]) -> str:
    names = ["the board edge" if c == BOUNDARY else c for c in collisions]
    if not names:
        return "the other pieces"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _result(original: Pose, target: Pose, moved: Pose, d: float, collisions: tuple[str, ...],
            far: bool = False) -> RepairResult:
    rotated = moved.rotation != target.rotation
    mx, my = moved.marker_board()
    tx, ty = target.marker_board()
    piece = moved.piece
    if far:
        reason = (f"There was no room for {piece} near ({tx:.0f}, {ty:.0f}), so I put it at "
                  f"({mx:.0f}, {my:.0f}) instead" + (f", turned to {moved.rotation:g} degrees." if rotated else "."))
    elif rotated:
        reason = (f"{piece} did not fit at {normalize_rotation(target.rotation):g} degrees there, so I turned it to "
                  f"{moved.rotation:g} and moved it {d:.1f} units.")
    elif collisions == (BOUNDARY,):
        reason = f"I moved {piece} {d:.1f} units so it stays on the board."
    elif collisions:
        reason = f"I moved {piece} {d:.1f} units so it does not overlap {_what(collisions)}."
    else:
        reason = f"I moved {piece} {d:.1f} units to keep a small gap from {_what(collisions)}."
    return RepairResult(moved, d, rotated, reason, original, collisions)
