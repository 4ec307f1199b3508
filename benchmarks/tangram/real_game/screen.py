"""Where things are on the game's 1920 x 1080 canvas (read off Main_scene.tscn: its Camera2D sits at
world (573, 327) with zoom 1.67, the window is 1920 x 1080 with stretch mode canvas_items)."""

from __future__ import annotations

import math
from dataclasses import dataclass

WIDTH, HEIGHT = 1920, 1080
CAMERA = (573.0, 327.0)
ZOOM = 1.67

BOARD_LEFT, BOARD_BOTTOM = 523.0, 394.0
"""World pixels of the board's (0, 0) corner; one board unit is 3.37 px across and 3.22 px up."""
UNIT_X, UNIT_Y = 3.37, 3.22

START_ORIGINS: dict[str, tuple[float, float]] = {
    "Red": (1018.5, 291.0), "Cream": (991.0, 318.0), "Blue": (1058.0, 360.0), "Green": (1018.0, 333.0),
    "Yellow": (1062.0, 292.0), "Purple": (1045.0, 319.0), "Brown": (1002.5, 361.0),
}
"""Each piece's node origin in the drawer (world pixels): where a human grabs it."""

HUMAN_ORDER = ("Green", "Yellow", "Purple", "Blue", "Brown", "Red", "Cream")
"""The scripted human takes the small pieces first: they fit where the AI left room."""

PIECE_RADIUS_PX = 40.0
"""About half a large piece's extent in world pixels: a drop this far from every piece's marker
rarely touches it (the game refuses a drop that overlaps and puts the piece back, which we see)."""


def world_to_screen(x: float, y: float) -> tuple[float, float]:
    return (x - CAMERA[0]) * ZOOM + WIDTH / 2, (y - CAMERA[1]) * ZOOM + HEIGHT / 2


def board_to_world(x: float, y: float) -> tuple[float, float]:
    return BOARD_LEFT + UNIT_X * x, BOARD_BOTTOM - UNIT_Y * y


@dataclass(frozen=True)
class Button:
    name: str
    left: float
    top: float
    width: float
    height: float
    """World pixels of the button's rectangle."""

    def center(self) -> tuple[float, float]:
        return world_to_screen(self.left + self.width / 2, self.top + self.height / 2)


# TextureButtons at scale 0.1 whose texture is 1276 x 513 (offsets in the scene).
END_TURN = Button("End Turn", 754.0, 454.0, 127.6, 51.3)
UNDO = Button("Undo", 755.0, 513.0, 127.6, 51.3)
FINISH = Button("Finish", 951.0, 454.0, 127.6, 51.3)
# The chat's TextEdit and Send button are Controls under the ChatBox sprite (position (233.982, 322),
# scale (0.233515, 0.283045)); a Control under a Node2D anchors to an empty rect, so only offsets count.
_CHAT_X, _CHAT_Y, _CHAT_SX, _CHAT_SY = 233.982, 322.0, 0.233515, 0.283045
CHAT_INPUT = Button("chat input", _CHAT_X - 675.121 * _CHAT_SX, _CHAT_Y + 790.664 * _CHAT_SY,
                    1200.0 * _CHAT_SX, 78.0 * _CHAT_SY)
SEND = Button("Send", _CHAT_X + 415.468 * _CHAT_SX, _CHAT_Y + 688.936 * _CHAT_SY,
              1413.0 * 0.25 * _CHAT_SX, 640.0 * 0.25 * _CHAT_SY)


def drop_spot(on_board: dict[str, tuple[float, float]],
              candidates: list[tuple[float, float]] | None = None) -> list[tuple[float, float]]:
    """Board points (units) to drop a piece at, the roomiest first: by the distance in world pixels
    to the nearest on-board piece's marker (``on_board``: name -> board units)."""
    spots = candidates if candidates is not None else [
        (x, y) for y in (15.0, 50.0, 85.0) for x in (15.0, 50.0, 85.0)]
    placed = [board_to_world(*p) for p in on_board.values()]

    def room(spot: tuple[float, float]) -> float:
        wx, wy = board_to_world(*spot)
        return min((math.hypot(wx - px, wy - py) for px, py in placed), default=math.inf)

    return sorted(spots, key=room, reverse=True)
