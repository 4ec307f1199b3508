"""The pictures the model gets show the board as it is (issue 49, item 3): pieces in their own colours.

The real game's pictures are read from its last drawn screen, so they carry what the screen showed
then: every playRequest picture has all pieces but the human's just-moved one dimmed to 145/255
(dimmed Cream looks like Brown), and a feedback picture can show pieces in the dark-red overlap
tint while the state says ``"collisions": []`` (GAME_FACTS, "Seen in the real game"). The state is
the truth, and it says exactly where every piece is, so ``images.source`` chooses:

- ``restored`` (the default): the game's own picture, with each piece the state places repainted in
  its true colour: its polygon, and the pixels just around it that are a dimmed or tinted version of
  that piece's colour (our outline and the game's may differ by a pixel); anywhere else, a pixel in
  the exact dimmed colour of a piece gets that piece's colour back. Everything else stays the game's.
- ``redrawn``: the picture drawn anew from the state in the game's look (:mod:`agent.games.tangram.pictures.paint`).
- ``game``: the picture exactly as the game sent it.

Pure functions on Pillow pictures; CPU-bound (about 2 ms for a board at 562 x 540 on one free core, 4 before
the lookups were narrowed), run by the image pool's threads before the picture is shrunk.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import numpy as np
from PIL import Image, ImageDraw

from agent.core.config import ImageConfig
from agent.core.images import PreparedImage, check_pixels, encode_image, fitted_size, png_size, prepare_image
from agent.games.tangram.config import TangramImageConfig
from agent.games.tangram.contract import board_of, drawer_of
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.screen import BOARD_CROP, DRAWER_CROP, Crop, world_to_image
from agent.games.tangram.pictures.look import (
    BOARD_SIZE,
    DRAWER_SIZE,
    GAME_LOOK,
    RGB,
    Look,
    dimmed,
    drawn_outline,
    tinted,
)
from agent.games.tangram.pictures.paint import empty_crop, paint_pieces
from agent.games.tangram.protocol import GameState

log = logging.getLogger(__name__)

Source = Literal["game", "restored", "redrawn"]
Which = Literal["board", "drawer"]
Point = tuple[float, float]

RING_PX = 2.0
"""How far around a piece's outline (at the 562 px reference) a pixel in one of its false colours is
taken back: our outline and the game's drawn polygon differ by up to a pixel or so."""
TINT_TOLERANCE = 24
"""A tinted pixel depends on the texture under it (about +-5 levels through the 52 % blend)."""
DIM_TOLERANCE = 3
"""A dimmed pixel is exact (a flat colour times 145/255) but for the 8-bit rounding."""
BACKGROUND_MARGIN = 30
"""A false colour this close to the panel's own colour is not taken back (tinted Blue is almost the
board's colour: taking it back would grow Blue by the ring onto the board)."""


def outlines(poses: Mapping[str, Pose], which: Which, size: tuple[int, int]) -> dict[str, list[Point]]:
    """Each piece's outline as the game draws it (its Polygon2D) in the pixels of a ``which`` picture of ``size``."""
    crop: Crop = BOARD_CROP if which == "board" else DRAWER_CROP
    return {name: [world_to_image(p, crop, size)
                   for p in drawn_outline(name, pose.origin_px, math.radians(pose.rotation))]
            for name, pose in poses.items()}


def state_outlines(state: GameState, which: Which, size: tuple[int, int]) -> dict[str, list[Point]]:
    return outlines(board_of(state) if which == "board" else drawer_of(state), which, size)


@functools.lru_cache(maxsize=8)
def _undim_table(look: Look) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every piece's exact dimmed colour (+-1 a channel, the frame buffer's rounding) packed as
    0xRRGGBB and sorted, the true colour for each, and which red and green levels any of them has
    (most pixels fail the red test alone: only those left are looked up)."""
    table: dict[int, RGB] = {}
    for name in look.draw_order:
        true = look.piece_colors[name]
        r, g, b = dimmed(true)
        for dr in (-1, 0, 1):
            for dg in (-1, 0, 1):
                for db in (-1, 0, 1):
                    table[(max(0, r + dr) << 16) | (max(0, g + dg) << 8) | max(0, b + db)] = true
    keys = np.array(sorted(table), dtype=np.int32)
    values = np.array([table[int(k)] for k in keys], dtype=np.uint8)
    red = np.zeros(256, dtype=bool)
    red[keys >> 16] = True
    green = np.zeros(256, dtype=bool)
    green[(keys >> 8) & 255] = True
    return keys, values, red, green


def _masks(polygon: Sequence[Point], ring: float, box: tuple[int, int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(inside, near) within ``box`` (x0, y0, x1, y1): the polygon's pixels, and those within ``ring`` px of it."""
    x0, y0, x1, y1 = box
    pts = [(x - x0, y - y0) for x, y in polygon]
    inside = Image.new("L", (x1 - x0, y1 - y0), 0)
    ImageDraw.Draw(inside).polygon(pts, fill=255)
    near = inside.copy()
    ImageDraw.Draw(near).line([*pts, pts[0]], fill=255, width=max(1, round(2 * ring)), joint="curve")
    return np.asarray(inside) > 0, np.asarray(near) > 0


def _far(a: RGB, b: RGB, margin: float) -> bool:
    return sum((x - y) ** 2 for x, y in zip(a, b, strict=True)) > margin * margin


def _undim_everywhere(out: np.ndarray, look: Look) -> None:
    """Every pixel in a piece's exact dimmed colour (+-1 a channel, the frame buffer's rounding) gets
    that piece's colour back, wherever it is (a pose the state and the picture disagree on).
    ``out``: a C-contiguous (height, width, 3) picture, changed in place."""
    keys, values, red, green = _undim_table(look)
    flat = out.reshape(-1, 3)  # a view: the writes below land in ``out``
    at_px = np.flatnonzero(np.take(red, flat[:, 0]))
    at_px = at_px[np.take(green, flat[at_px, 1])]
    if len(at_px) == 0:
        return
    px = flat[at_px].astype(np.int32)
    packed = (px[:, 0] << 16) | (px[:, 1] << 8) | px[:, 2]
    # Each pixel's place among the sorted keys (a tenth of np.isin's time: it sorts the pixels too).
    at = np.searchsorted(keys, packed)
    at[at == len(keys)] = 0
    hit = keys[at] == packed
    if hit.any():
        flat[at_px[hit]] = values[at[hit]]


def restore(img: Image.Image, piece_outlines: Mapping[str, Sequence[Point]], which: Which,
            look: Look = GAME_LOOK) -> Image.Image:
    """``img`` with every piece back in its own colour (a new picture; ``img`` is not changed)."""
    panel = (look.board_texture if which == "board" else look.drawer_texture).median
    out = np.array(img if img.mode == "RGB" else img.convert("RGB"), dtype=np.uint8)  # a copy of its own
    h, w = out.shape[:2]
    ring = RING_PX * max(w, h) / (BOARD_CROP[2] if which == "board" else DRAWER_CROP[2])
    _undim_everywhere(out, look)
    for name in look.draw_order:  # later pieces over earlier ones, as the game draws them
        polygon = piece_outlines.get(name)
        if not polygon or len(polygon) < 3:
            continue
        pad = int(ring) + 2
        x0 = max(0, int(min(p[0] for p in polygon)) - pad)
        y0 = max(0, int(min(p[1] for p in polygon)) - pad)
        x1 = min(w, int(max(p[0] for p in polygon)) + pad + 1)
        y1 = min(h, int(max(p[1] for p in polygon)) + pad + 1)
        if x1 <= x0 or y1 <= y0:
            continue
        true = look.piece_colors[name]
        inside, near = _masks(polygon, ring, (x0, y0, x1, y1))
        part = out[y0:y1, x0:x1]
        # Only the ring's pixels are compared with the false colours (a few hundred, not the box's thousands).
        ry, rx = np.nonzero(near & ~inside)
        if len(ry):
            ring_px = part[ry, rx].astype(np.int32)
            take = np.zeros(len(ry), dtype=bool)
            for colour in (tinted(true, panel), tinted(dimmed(true), panel)):
                if _far(colour, panel, BACKGROUND_MARGIN):
                    d = ring_px - np.asarray(colour, dtype=np.int32)
                    take |= (d * d).sum(axis=1) <= TINT_TOLERANCE * TINT_TOLERANCE
            part[ry[take], rx[take]] = true
        part[inside] = true
    return Image.fromarray(out, "RGB")


def redraw(state: GameState, which: Which, size: tuple[int, int], look: Look = GAME_LOOK) -> Image.Image:
    """The picture drawn from the state alone, in the game's look, at ``size``."""
    img = empty_crop(which, size, look)
    return paint_pieces(img, state_outlines(state, which, size), look=look)


def redrawn_image(b64: str, state: GameState, which: Which, cfg: ImageConfig, encode: bool = True) -> PreparedImage:
    """``images.source: redrawn`` as the image pool runs it: the picture drawn from the state at the
    size the model gets (the game's picture's size shrunk to ``max_side``), drawn at that size
    directly. Only the game's picture's header is read, for its size; its pixels are never decoded
    nor shrunk, which is what makes this source a quarter of ``restored``'s work."""
    size = png_size(b64)
    check_pixels(size, cfg)
    pic = redraw(state, which, fitted_size(size, cfg.max_side))
    mime = "image/jpeg" if cfg.format == "jpeg" else "image/png"
    received = len(b64) * 3 // 4
    if not encode:
        return PreparedImage(b"", mime, pic.width, pic.height, received, size, pixels=pic)
    return PreparedImage(encode_image(pic, cfg), mime, pic.width, pic.height, received, size)


def prepare_picture(b64: str, state: GameState, which: Which, cfg: TangramImageConfig,
                    encode: bool = True) -> PreparedImage:
    """The picture the model gets of ``which``, as ``cfg.source`` says: drawn from ``state``
    (:func:`redrawn_image`), or the game's own decoded, repaired (``restored``) and shrunk. CPU-bound:
    the session runs it in the image pool; raises ImageError (or what Pillow raises) for a broken picture."""
    if cfg.source == "redrawn":
        return redrawn_image(b64, state, which, cfg, encode)
    return prepare_image(b64, cfg, encode, repainter(cfg.source, state, which))


def warm_panels(cfg: ImageConfig, look: Look = GAME_LOOK) -> None:
    """Draw the empty board and drawer once at the sizes a redrawn picture of the game's crops takes
    (about 90 ms for a board: the texture is made in the frequency domain), so that no game's first
    turn pays for it. CPU-bound: for a worker thread at start-up."""
    for which, size in (("board", BOARD_SIZE), ("drawer", DRAWER_SIZE)):
        empty_crop(which, fitted_size(size, cfg.max_side), look)


def repainter(source: Literal["game", "restored"], state: GameState,
              which: Which) -> Callable[[Image.Image], Image.Image | None] | None:
    """What the image preparation applies to a decoded ``which`` picture before shrinking it:
    None for ``game`` (the picture as sent). (``redrawn`` pictures are drawn by :func:`redrawn_image`,
    the game's never decoded.)"""
    if source == "game":
        return None

    def apply(img: Image.Image) -> Image.Image | None:
        try:
            return restore(img, state_outlines(state, which, img.size), which)
        except Exception as exc:  # the game's own picture still serves: a repair is never worth the picture
            log.warning("%s picture left as the game sent it: %s: %s", which, type(exc).__name__, exc)
            return None

    return apply
