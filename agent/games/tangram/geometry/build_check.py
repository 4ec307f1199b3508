"""Does the game in front of us use the pieces our table describes?

The state reports, for each piece on the board, its ``VCenter`` marker as ``position`` and its
``V1``..``V4`` markers as ``vertices`` (GAME_FACTS). Rebuilding the pose from the centre marker and
placing our table's vertex markers there must reproduce the reported vertices up to the game's
printing (about seven significant digits) and single precision. A larger difference means a game
build whose pieces differ from ours: the agent should say so once and keep playing on what the
game reports.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from agent.games.tangram.geometry.frames import pose_from_marker
from agent.games.tangram.geometry.pieces import PIECES, Point

TOLERANCE_UNITS = 0.1
"""Largest difference (board units, about a third of a pixel) still put down to rounding."""


def marker_mismatch(piece: str, position: Point, rotation: float, vertices: Sequence[Point]) -> str | None:
    """Why the reported vertices do not fit our table at the reported pose, or None when they do
    (or when the game reported no vertices to compare)."""
    if piece not in PIECES or not vertices:
        return None
    if not (all(map(math.isfinite, position)) and math.isfinite(rotation)):
        return None
    expected = pose_from_marker(piece, position[0], position[1], rotation).vertex_markers_board()
    if len(expected) != len(vertices):
        return f"{piece} reports {len(vertices)} vertices, our table has {len(expected)}"
    worst = max(math.dist(e, v) for e, v in zip(expected, vertices, strict=False))
    if worst > TOLERANCE_UNITS:
        return f"{piece}'s reported vertices are up to {worst:.2f} board units from our table's"
    return None
