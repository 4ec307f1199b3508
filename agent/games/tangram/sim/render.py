"""Board and drawer pictures as the game's screen crops would show them, drawn with Pillow.

The game photographs its own window: at 1920 x 1080 the board crop is 562 x 540 px taken at
screen (880, 115) and the drawer crop 210 x 210 px at (1600, 425). The camera maps world to
screen as ``screen = (world - (573, 327)) * 1.67 + (960, 540)``, so a crop pixel is
``world * 1.67 + offset``. Pieces are flat polygons in the scene's colours; there is no
anti-aliasing in the game either. Rendering is cheap (a few ms) and cached per board state by
the caller, because every frame carries both images.
"""

from __future__ import annotations

import io
from collections.abc import Iterable

from PIL import Image, ImageDraw

from agent.games.tangram.geometry.frames import BOARD_ORIGIN_PX, BOARD_SIZE_PX, Pose
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.geometry.screen import BOARD_CROP, DRAWER_CROP, world_to_crop

Color = tuple[int, int, int]

PIECE_COLORS: dict[str, Color] = {
    # The scene's Polygon2D colours, converted from Godot's 0..1 floats.
    "Red": (210, 0, 30),
    "Cream": (250, 193, 147),
    "Blue": (0, 100, 201),
    "Green": (75, 255, 65),
    "Yellow": (218, 165, 32),
    "Purple": (162, 0, 174),
    "Brown": (160, 82, 45),
}
BACKGROUND: Color = (58, 64, 74)
"""The window around the board (the game shows a dark textured backdrop there)."""
BOARD_COLOR: Color = (238, 234, 224)
DRAWER_COLOR: Color = (74, 60, 52)
EDGE_DARKEN = 0.6


def _darker(c: Color) -> Color:
    return (int(c[0] * EDGE_DARKEN), int(c[1] * EDGE_DARKEN), int(c[2] * EDGE_DARKEN))


def _draw_pieces(draw: ImageDraw.ImageDraw, poses: Iterable[Pose], crop: tuple[int, int, int, int]) -> None:
    # A fixed order keeps overlapping pieces drawn the same way every time.
    by_name = {p.piece: p for p in poses}
    for name in PIECE_NAMES:
        pose = by_name.get(name)
        if pose is None:
            continue
        pts = [world_to_crop(p, crop) for p in pose.outline_px()]
        color = PIECE_COLORS[name]
        draw.polygon(pts, fill=color, outline=_darker(color))


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    # Flat colours compress well even at the fastest level; speed matters more here.
    img.save(buf, "PNG", compress_level=1)
    return buf.getvalue()


def render_board(poses: Iterable[Pose]) -> bytes:
    """PNG bytes of the 562 x 540 board crop."""
    _, _, w, h = BOARD_CROP
    img = Image.new("RGB", (w, h), BACKGROUND)
    draw = ImageDraw.Draw(img)
    x0, y1 = BOARD_ORIGIN_PX
    x1, y0 = x0 + BOARD_SIZE_PX[0], y1 - BOARD_SIZE_PX[1]
    a = world_to_crop((x0, y0), BOARD_CROP)
    b = world_to_crop((x1, y1), BOARD_CROP)
    draw.rectangle([a, b], fill=BOARD_COLOR)
    _draw_pieces(draw, poses, BOARD_CROP)
    return _png(img)


DRAWER_WORLD_RECT = (953.5, 257.0, 1084.5, 385.0)
"""The drawer's area in world pixels (the scene's DrawerShape, 131 x 128 around (1019, 321))."""


def render_drawer(poses: Iterable[Pose]) -> bytes:
    """PNG bytes of the 210 x 210 drawer crop; pieces still in the drawer show there."""
    _, _, w, h = DRAWER_CROP
    img = Image.new("RGB", (w, h), BACKGROUND)
    draw = ImageDraw.Draw(img)
    a = world_to_crop(DRAWER_WORLD_RECT[:2], DRAWER_CROP)
    b = world_to_crop(DRAWER_WORLD_RECT[2:], DRAWER_CROP)
    draw.rectangle([a, b], fill=DRAWER_COLOR)
    _draw_pieces(draw, poses, DRAWER_CROP)
    return _png(img)
