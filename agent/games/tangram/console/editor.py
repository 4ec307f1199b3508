"""The board as the page draws it, and the checks behind the move editor. Pure functions.

The page overlays an SVG on the game's board picture. Its coordinates are the game's world pixels
(y down), so outlines go out exactly as the game's physics sees them and no geometry is repeated in
JavaScript: every collision the editor shows comes from :mod:`agent.games.tangram.geometry`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent.games.tangram.contract import board_of
from agent.games.tangram.geometry.collide import CLEARANCE_PX, predict_collisions
from agent.games.tangram.geometry.frames import Pose, normalize_rotation
from agent.games.tangram.geometry.repair import repair
from agent.games.tangram.protocol import GameState

CAMERA_ZOOM = 1.67
"""Screen pixels per world pixel in the game's window at 1920 x 1080 (GAME_FACTS)."""
BOARD_CROP_PX = (562.0, 540.0)
"""The board picture's size at 1920 x 1080; it grows with the window, in proportion."""
CROP_WORLD_ORIGIN = (525.1, 72.51)
"""World pixel at the top-left corner of the board picture: screen = (world - (573, 327)) * 1.67 +
(960, 540), and the crop starts at screen (880, 115)."""
VIEWBOX = (CROP_WORLD_ORIGIN[0], CROP_WORLD_ORIGIN[1], BOARD_CROP_PX[0] / CAMERA_ZOOM, BOARD_CROP_PX[1] / CAMERA_ZOOM)
"""The SVG viewBox (world pixels) that lies exactly over the board picture."""


def pose_json(pose: Pose | None) -> dict[str, Any] | None:
    if pose is None:
        return None
    return {"piece": pose.piece, "x": round(pose.x, 3), "y": round(pose.y, 3),
            "rotation": round(normalize_rotation(pose.rotation), 2)}


def outline_json(pose: Pose) -> list[list[float]]:
    return [[round(x, 2), round(y, 2)] for x, y in pose.outline_px()]


def pieces_json(state: GameState) -> list[dict[str, Any]]:
    """Every piece on the board with its pose, outline and the collisions the game reported."""
    out = []
    for name, pose in board_of(state).items():
        out.append({"pose": pose_json(pose), "outline": outline_json(pose),
                    "collisions": list(state.on_board[name].collisions)})
    return out


@dataclass(frozen=True, slots=True)
class Check:
    """What the editor shows for a pose: the game's verdict and what the agent would send."""

    pose: Pose
    collisions: tuple[str, ...]
    """What the game would report for the pose as it is."""
    too_close: bool
    """Clear of everything, but nearer than the clearance the agent keeps (the repair nudges it)."""
    repaired: Pose | None
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"pose": pose_json(self.pose), "outline": outline_json(self.pose),
                "collisions": list(self.collisions), "too_close": self.too_close,
                "repaired": pose_json(self.repaired),
                "repaired_outline": outline_json(self.repaired) if self.repaired is not None else None,
                "reason": self.reason}


def check_pose(pose: Pose, board: Mapping[str, Pose]) -> Check:
    """The game's view of ``pose`` on ``board`` and the pose the session would play after repair.

    A few milliseconds of shapely work: callers run it off the event loop.
    """
    others = {n: p for n, p in board.items() if n != pose.piece}
    collisions = tuple(predict_collisions(pose, others, 0.0))
    too_close = not collisions and bool(predict_collisions(pose, others, CLEARANCE_PX))
    fixed = repair(pose, others, clearance_px=CLEARANCE_PX)
    return Check(pose, collisions, too_close, fixed.pose, fixed.reason)
