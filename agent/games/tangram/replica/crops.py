"""Board and drawer pictures as the game's screen crops would show them, drawn with Pillow.

The game photographs its own window: at 1920 x 1080 the board crop is 562 x 540 px taken at
screen (880, 115) and the drawer crop 210 x 210 px at (1600, 425). The camera maps world to
screen as ``screen = (world - (573, 327)) * 1.67 + (960, 540)``, so a crop pixel is
``world * 1.67 + offset``. The look is the real game's (:mod:`agent.games.tangram.pictures.look`): a
near-black textured panel with the vine in the board's top-right corner, flat pieces with no
outline and no anti-aliasing (each the scene's Polygon2D), the human-turn dimming (``lit``) and
the overlap tint (``tinted``) when the caller says the game would show them. Rendering is cheap
(a few ms) and cached per board state by the caller, because every frame carries both images.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Collection, Iterable

from PIL import Image

from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.screen import BOARD_CROP, DRAWER_CROP, Crop, world_to_crop
from agent.games.tangram.pictures.look import GAME_LOOK, PIECE_COLORS, Look, drawn_outline
from agent.games.tangram.pictures.paint import empty_crop, paint_pieces
from agent.games.tangram.replica import scene

__all__ = ["BOARD_CROP", "DRAWER_CROP", "PIECE_COLORS", "board_image", "drawer_image", "render_board",
           "render_drawer", "world_to_crop"]


def _outlines(poses: Iterable[Pose], crop: Crop) -> dict[str, list[tuple[float, float]]]:
    """Each piece's drawn polygon (the scene's Polygon2D, not its collision shape) in crop pixels,
    its node placed by the simulator's own reading of the scene."""
    out = {}
    for p in poses:
        origin = scene.simple_to_real((p.x, p.y))
        out[p.piece] = [world_to_crop(q, crop) for q in drawn_outline(p.piece, origin, math.radians(p.rotation))]
    return out


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    # The textured panel makes level 1 files larger (about 190 KB a board, like the game's own
    # 130-140 KB at its default level) but keeps rendering fast.
    img.save(buf, "PNG", compress_level=1)
    return buf.getvalue()


def board_image(poses: Iterable[Pose], *, lit: str | None = None, tinted: Collection[str] = (),
                look: Look = GAME_LOOK) -> Image.Image:
    """The 562 x 540 board crop as a picture. ``lit``: the human-turn highlight is on and this
    piece is the human's just-moved one (every other piece dimmed to 145/255); ``tinted``: pieces
    shown in the overlap tint."""
    img = empty_crop("board", look=look)
    return paint_pieces(img, _outlines(poses, BOARD_CROP), look=look, lit=lit, tinted=tinted)


def drawer_image(poses: Iterable[Pose], *, lit: str | None = None, tinted: Collection[str] = (),
                 look: Look = GAME_LOOK) -> Image.Image:
    """The 210 x 210 drawer crop; pieces still in the drawer show there (dimmed alike)."""
    img = empty_crop("drawer", look=look)
    return paint_pieces(img, _outlines(poses, DRAWER_CROP), look=look, lit=lit, tinted=tinted)


def render_board(poses: Iterable[Pose], *, lit: str | None = None, tinted: Collection[str] = (),
                 look: Look = GAME_LOOK) -> bytes:
    """PNG bytes of the 562 x 540 board crop."""
    return _png(board_image(poses, lit=lit, tinted=tinted, look=look))


def render_drawer(poses: Iterable[Pose], *, lit: str | None = None, tinted: Collection[str] = (),
                  look: Look = GAME_LOOK) -> bytes:
    """PNG bytes of the 210 x 210 drawer crop."""
    return _png(drawer_image(poses, lit=lit, tinted=tinted, look=look))


def start_images() -> tuple[str, str]:
    """(board_img, drawer_img) of a game's first position as base64 PNG, as the game sends them."""
    poses = [scene.start_pose(name) for name in scene.GAME_ORDER]
    return (base64.b64encode(render_board(poses)).decode("ascii"),
            base64.b64encode(render_drawer(poses)).decode("ascii"))
