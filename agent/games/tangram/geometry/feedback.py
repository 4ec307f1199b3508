"""Feedback: after a ``play`` the game reports where the piece is and what it collides with.

The game is the authority. When it reports no collision, the placement stands, whatever our
prediction said. When it reports collisions, the usual cause is a board we saw before the partner
moved something, or a model error of a pixel or two; either way one more ``play`` computed from
the *reported* pose and board, with a wider margin, fixes it. The margin grows with how wrong our
model evidently was, so a second correction (if the caller asks for one) moves further, never back
to a pose already tried.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from agent.games.tangram.geometry.collide import BOUNDARY, CLEARANCE_PX, board_gap_px, gap_px
from agent.games.tangram.geometry.frames import Pose, pose_from_marker, rotation_distance
from agent.games.tangram.geometry.pieces import PIECES, Point
from agent.games.tangram.geometry.repair import repair

FEEDBACK_EXTRA_PX = 2.0
"""Margin added on top of the observed model error when correcting after a reported collision."""


def correct_from_feedback(intended: Pose, marker: Point, rotation: float, collisions: Sequence[str],
                          board: Mapping[str, Pose], *, clearance_px: float = CLEARANCE_PX) -> Pose | None:
    """One corrected pose after the game reported ``collisions`` for the piece we played.

    ``intended`` is the pose we sent; ``marker`` and ``rotation`` are what the game reports for the
    piece (its ``position`` marker, board units); ``board`` holds the other pieces, ideally as the
    same feedback reports them. Returns None when the placement is fine (no collisions), when a
    collision involves a piece ``board`` does not know (geometry cannot help), or when no new valid
    pose exists. Never returns ``intended`` or the reported pose again.
    """
    if not collisions or intended.piece not in PIECES:
        return None
    if not (all(map(math.isfinite, marker)) and math.isfinite(rotation)):
        return None
    others = {n: p for n, p in board.items() if p.piece != intended.piece}
    known = {p.piece: p for p in others.values()}
    if any(c != BOUNDARY and c not in known for c in collisions):
        return None
    actual = pose_from_marker(intended.piece, marker[0], marker[1], rotation)
    # Where we still see a gap the game saw contact, our model is off by at least that gap.
    seen = [gap_px(actual, known[c]) for c in collisions if c in known]
    if BOUNDARY in collisions:
        seen.append(max(board_gap_px(actual), 0.0))
    margin = max(3.0 * clearance_px, clearance_px + max(seen, default=0.0) + FEEDBACK_EXTRA_PX)
    for c in (margin, 2.0 * margin):
        fixed = repair(actual, others, clearance_px=c)
        if fixed.pose is not None and not _same(fixed.pose, intended) and not _same(fixed.pose, actual):
            return fixed.pose
    return None


def _same(a: Pose, b: Pose, tol_units: float = 1e-3) -> bool:
    return (a.piece == b.piece and abs(a.x - b.x) < tol_units and abs(a.y - b.y) < tol_units
            and rotation_distance(a.rotation, b.rotation) < 1e-6)
