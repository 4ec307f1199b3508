"""From world pixels to the pixels of the pictures the game sends (GAME_FACTS, "Images").

The game photographs its own window, normalised to 1920 x 1080: the board picture is the region
(880, 115, 562, 540) of that screen and the drawer picture (1600, 425, 210, 210). Its camera maps
world to screen as ``screen = (world - (573, 327)) * 1.67 + (960, 540)``. A larger window gives a
larger picture of the same region, and the agent downscales it; either way a point's place in the
picture is its place in the 562 x 540 (or 210 x 210) crop, scaled to the picture's size.
"""

from __future__ import annotations

from agent.games.tangram.geometry.frames import board_to_world
from agent.games.tangram.geometry.pieces import Point

Crop = tuple[int, int, int, int]

CAMERA_ZOOM = 1.67
CAMERA_CENTER: Point = (573.0, 327.0)
SCREEN_CENTER: Point = (960.0, 540.0)

BOARD_CROP: Crop = (880, 115, 562, 540)
"""x, y, width, height of the board picture on the 1920 x 1080 screen."""
DRAWER_CROP: Crop = (1600, 425, 210, 210)


def screen_offset(crop: Crop) -> Point:
    """The constant ``o`` with ``crop_pixel = world * zoom + o``."""
    return (SCREEN_CENTER[0] - crop[0] - CAMERA_CENTER[0] * CAMERA_ZOOM,
            SCREEN_CENTER[1] - crop[1] - CAMERA_CENTER[1] * CAMERA_ZOOM)


def world_to_crop(point: Point, crop: Crop) -> Point:
    """A world pixel in the crop's own pixels (at the 1920 x 1080 reference size)."""
    ox, oy = screen_offset(crop)
    return (point[0] * CAMERA_ZOOM + ox, point[1] * CAMERA_ZOOM + oy)


def world_to_image(point: Point, crop: Crop, size: tuple[int, int]) -> Point:
    """A world pixel in a picture of ``crop`` that is ``size`` (width, height) pixels large."""
    cx, cy = world_to_crop(point, crop)
    return (cx * size[0] / crop[2], cy * size[1] / crop[3])


def board_to_image(x: float, y: float, size: tuple[int, int]) -> Point:
    """Board units (y up) in a board picture of ``size`` pixels: where the game draws that point."""
    return world_to_image(board_to_world(x, y), BOARD_CROP, size)
