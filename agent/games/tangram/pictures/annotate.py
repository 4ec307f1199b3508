"""Marks drawn on the pictures the LLM gets: a coordinate grid, piece names, candidate outlines.

Vision models ground far better when the picture carries the marks the text speaks of: labelled
regions (Set-of-Mark prompting, Yang et al. 2023) and a coordinate scaffold drawn on the image
(Lei et al. 2024). The prompt speaks of board units 0-100 with y up and of pieces by name; here the
same numbers and names are drawn where the game itself puts those points, through the game's own
world-to-screen mapping (:mod:`agent.games.tangram.geometry.screen`), from the state already parsed.

Layers (``images.annotate``), drawn in this order:

- ``grid``: thin lines every 10 board units, numbered along the bottom and left edges;
- ``labels``: each piece's name at its centre (the outline's centroid), on the board and in the drawer;
- ``candidates``: each checked candidate's outline, dashed, and its letter at its centre.

Every mark stays legible on the real game's near-black board and on any piece (issue 49): a line
pixel is light grey over a dark pixel and black over a light one, whichever contrasts more with the
pixel under it (WCAG contrast at least 3.2:1 for any colour under it), and text is white with a
black halo (21:1 against its halo).

Pure functions from PNG/JPEG bytes to bytes; CPU-bound (a few milliseconds at 512 px), so callers
run them in a worker thread. The game's picture is never changed when no layer applies.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from agent.core.images import encode_image
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.pieces import Point
from agent.games.tangram.geometry.screen import BOARD_CROP, DRAWER_CROP, Crop, board_to_image, world_to_image
from agent.games.tangram.planner.candidates import Candidate

GRID_STEP = 10
LINE_LIGHT = (200, 200, 200)
"""A line's colour over dark pixels (the board, dark pieces): 9.5:1 on the board's 21, 21, 21."""
LINE_DARK = (0, 0, 0)
"""A line's colour over light pixels (Cream, Green, Yellow)."""
GRID_TEXT = (255, 255, 255, 255)
TEXT_HALO = (0, 0, 0, 255)
LABEL_TEXT = (255, 255, 255, 255)
LABEL_HALO = (0, 0, 0, 255)
CANDIDATE_LINE = (0, 0, 0, 255)
CANDIDATE_DISC = (255, 255, 255, 255)
REFERENCE_SIDE = 512
"""Font sizes below are for a picture whose longest side is this; they scale with the picture."""


@dataclass(frozen=True, slots=True)
class Encoding:
    """How the marked picture is written: as the images config asks for the unmarked one."""

    format: str = "png"
    jpeg_quality: int = 85


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return _cached_font(max(6, size))


@lru_cache(maxsize=16)
def _cached_font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    # Pillow's bundled font (FreeType); without FreeType the small bitmap font still draws.
    return ImageFont.load_default(size=size)


def _scale(size: tuple[int, int]) -> float:
    return max(size) / REFERENCE_SIDE


def _centroid(points: Sequence[Point]) -> Point:
    """Area centroid of a simple polygon (inside it for the convex tangram pieces)."""
    area = cx = cy = 0.0
    for (x0, y0), (x1, y1) in zip(points, [*points[1:], points[0]], strict=True):
        cross = x0 * y1 - x1 * y0
        area += cross
        cx += (x0 + x1) * cross
        cy += (y0 + y1) * cross
    if abs(area) < 1e-9:
        return (sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points))
    return (cx / (3 * area), cy / (3 * area))


def piece_outline(pose: Pose, crop: Crop, size: tuple[int, int]) -> list[Point]:
    """The piece's outline in the picture's pixels."""
    return [world_to_image(p, crop, size) for p in pose.outline_px()]


def label_point(pose: Pose, crop: Crop, size: tuple[int, int]) -> Point:
    """Where a piece's name goes: the centroid of its outline in the picture."""
    return _centroid(piece_outline(pose, crop, size))


def _text(draw: ImageDraw.ImageDraw, at: Point, text: str, size: int, fill: tuple[int, ...],
          halo: tuple[int, ...], anchor: str = "mm") -> None:
    draw.text(at, text, font=_font(size), fill=fill, anchor=anchor, stroke_width=max(1, round(size / 6)),
              stroke_fill=halo)


_LEVELS = np.arange(256) / 255.0
_LINEAR = np.where(_LEVELS <= 0.04045, _LEVELS / 12.92, ((_LEVELS + 0.055) / 1.055) ** 2.4)
"""sRGB level (0-255) to linear light, as WCAG 2 defines it."""


def relative_luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG 2 relative luminance of sRGB pixels (..., 3) in 0..255."""
    lin = _LINEAR[np.clip(np.rint(np.asarray(rgb)), 0, 255).astype(np.intp)]
    return np.asarray(lin @ np.array([0.2126, 0.7152, 0.0722]))


_INK_SWITCH = float(np.sqrt((relative_luminance(np.array(LINE_LIGHT)) + 0.05)
                           * (relative_luminance(np.array(LINE_DARK)) + 0.05)) - 0.05)
"""The luminance under a line above which black contrasts more than the light grey."""


def contrast_ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """WCAG 2 contrast ratio (1 to 21) between two arrays of sRGB pixels."""
    la, lb = relative_luminance(a), relative_luminance(b)
    return np.asarray((np.maximum(la, lb) + 0.05) / (np.minimum(la, lb) + 0.05))


def _ink_lines(img: Image.Image, mask: Image.Image) -> None:
    """Draw the lines of ``mask`` (L, 255 = line) on ``img`` in place, each pixel light or dark,
    whichever contrasts more with the pixel it covers."""
    at = np.flatnonzero(np.asarray(mask))
    if at.size == 0:
        return
    px = np.array(img)
    flat = px.reshape(-1, 3)
    # Light ink contrasts more than dark exactly when the pixel is darker than the luminance at
    # which the two contrasts are equal.
    use_light = relative_luminance(flat[at]) <= _INK_SWITCH
    flat[at] = np.where(use_light[:, None], np.array(LINE_LIGHT), np.array(LINE_DARK)).astype(np.uint8)
    img.paste(Image.fromarray(px, img.mode))


def _draw_grid_lines(draw: ImageDraw.ImageDraw, size: tuple[int, int]) -> None:
    for v in range(0, 101, GRID_STEP):
        x, _ = board_to_image(v, 0, size)
        _, y = board_to_image(0, v, size)
        top = board_to_image(v, 100, size)[1]
        bottom = board_to_image(v, 0, size)[1]
        left = board_to_image(0, v, size)[0]
        right = board_to_image(100, v, size)[0]
        draw.line([(x, top), (x, bottom)], fill=255, width=1)
        draw.line([(left, y), (right, y)], fill=255, width=1)


def _draw_grid_numbers(draw: ImageDraw.ImageDraw, size: tuple[int, int]) -> None:
    w, h = size
    scale = _scale(size)
    font_size = round(11 * scale)
    inset = 2 * scale
    # Numbers along the bottom (x) and the left (y) edges, kept inside the picture: the board
    # reaches the crop's very edge.
    half = font_size * 0.6
    for v in range(0, 101, GRID_STEP):
        x, _ = board_to_image(v, 0, size)
        bx = min(max(x, half + inset), w - half - inset)
        by = min(board_to_image(v, 0, size)[1], h) - inset
        _text(draw, (bx, by), str(v), font_size, GRID_TEXT, TEXT_HALO, anchor="mb")
        if v == 0:
            continue  # one "0" in the corner serves both axes
        _, y = board_to_image(0, v, size)
        lx = max(board_to_image(0, v, size)[0], 0) + inset
        ly = min(max(y, half), h - half)
        _text(draw, (lx, ly), str(v), font_size, GRID_TEXT, TEXT_HALO, anchor="lm")


def _draw_labels(draw: ImageDraw.ImageDraw, poses: Mapping[str, Pose], crop: Crop, size: tuple[int, int],
                 font_size: int) -> None:
    for name, pose in poses.items():
        _text(draw, label_point(pose, crop, size), name, font_size, LABEL_TEXT, LABEL_HALO)


def _dashed(draw: ImageDraw.ImageDraw, points: Sequence[Point], dash: float, width: int) -> None:
    """A closed dashed outline on a line mask (every other dash; the gaps keep it apart from a piece's edge)."""
    for (x0, y0), (x1, y1) in zip(points, [*points[1:], points[0]], strict=True):
        length = math.hypot(x1 - x0, y1 - y0)
        steps = max(1, math.ceil(length / dash))
        for i in range(0, steps, 2):
            a, b = i / steps, (i + 1) / steps
            draw.line([(x0 + (x1 - x0) * a, y0 + (y1 - y0) * a), (x0 + (x1 - x0) * b, y0 + (y1 - y0) * b)],
                      fill=255, width=width)


def candidate_line_mask(size: tuple[int, int], candidates: Sequence[Candidate]) -> Image.Image:
    """The candidates' dashed outlines as a line mask (L, 255 = line) for a picture of ``size``."""
    scale = _scale(size)
    mask = Image.new("L", size, 0)
    draw = ImageDraw.Draw(mask)
    for cand in candidates:
        _dashed(draw, piece_outline(cand.pose, BOARD_CROP, size), 6 * scale, max(2, round(2 * scale)))
    return mask


def _candidate_outlines(img: Image.Image, candidates: Sequence[Candidate]) -> None:
    """Each candidate's dashed outline, inked light or dark against what it covers."""
    _ink_lines(img, candidate_line_mask(img.size, candidates))


def grid_layers(size: tuple[int, int]) -> tuple[Image.Image, Image.Image]:
    """(line mask, numbers layer) of the grid for a picture of ``size`` (shared: do not draw on them)."""
    return _grid_layers(size)


def ink_lines(img: Image.Image, mask: Image.Image) -> None:
    """Draw a line mask on ``img`` in place, each pixel light or dark against the pixel it covers."""
    _ink_lines(img, mask)


def text_layer(kind: str, size: tuple[int, int], poses: Mapping[str, Pose] | None = None,
               candidates: Sequence[Candidate] = (), crop: Crop = BOARD_CROP) -> Image.Image:
    """One text layer on its own (RGBA, transparent elsewhere), as :func:`annotate_board` draws it:
    ``labels`` (the pieces' names; ``crop`` says which picture) or ``letters`` (the candidates' discs)."""
    layer = Image.new("RGBA", size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    if kind == "labels":
        font = round(13 * _scale(size)) if crop == BOARD_CROP else max(9, round(11 * max(size) / 210))
        _draw_labels(draw, poses or {}, crop, size, font)
    elif kind == "letters":  # the discs' rims left out: only the letters are text
        _draw_candidates(draw, candidates, size, disc_outline=False)
    else:
        raise ValueError(f"no text layer {kind!r}")
    return layer


def _draw_candidates(draw: ImageDraw.ImageDraw, candidates: Sequence[Candidate], size: tuple[int, int],
                     disc_outline: bool = True) -> None:
    """Each candidate's letter in a white disc at its centre (the outlines: :func:`_candidate_outlines`)."""
    scale = _scale(size)
    for cand in candidates:
        outline = piece_outline(cand.pose, BOARD_CROP, size)
        cx, cy = _centroid(outline)
        r = 9 * scale
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=CANDIDATE_DISC,
                     outline=CANDIDATE_LINE if disc_outline else CANDIDATE_DISC, width=max(1, round(1.5 * scale)))
        draw.text((cx, cy), cand.letter, font=_font(round(13 * scale)), fill=CANDIDATE_LINE, anchor="mm")


def _open(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as img:
        return img.convert("RGB")


@lru_cache(maxsize=8)
def _grid_layers(size: tuple[int, int]) -> tuple[Image.Image, Image.Image]:
    """(line mask, numbers) for a picture of ``size``: the same for every board, so drawn once per
    picture size (the game's pictures keep their size for a whole game) and applied after."""
    lines = Image.new("L", size, 0)
    _draw_grid_lines(ImageDraw.Draw(lines), size)
    numbers = Image.new("RGBA", size, (0, 0, 0, 0))
    _draw_grid_numbers(ImageDraw.Draw(numbers), size)
    return lines, numbers


def _encode(img: Image.Image, encoding: Encoding) -> bytes:
    # The core's writer, as for the unmarked picture: the real game's boards are textured, and
    # Pillow's PNG writer took 10.6 ms and 161 kB for a marked 512 px board against 3.5 ms and 126 kB.
    return encode_image(img, encoding)


def annotate_board(data: bytes | Image.Image, board: Mapping[str, Pose], layers: Sequence[str],
                   candidates: Sequence[Candidate] = (), encoding: Encoding = Encoding()) -> bytes:
    """The board picture with the ``layers`` drawn; the same bytes back when none applies. ``data``
    may also be the picture already decoded (it is not changed): then it is encoded either way."""
    drawn = drawn_board_layers(layers, board, candidates)
    if isinstance(data, Image.Image):
        img = data.convert("RGB")  # a copy: the caller's pixels stay as they were
        if not drawn:
            return _encode(img, encoding)
    elif not drawn:
        return data
    else:
        img = _open(data)
    if "grid" in drawn:
        lines, numbers = _grid_layers(img.size)
        _ink_lines(img, lines)
        img.paste(numbers, (0, 0), numbers)
    if "candidates" in drawn:
        _candidate_outlines(img, candidates)
    # An RGBA drawer on the RGB picture blends the translucent colours as it draws.
    draw = ImageDraw.Draw(img, "RGBA")
    if "labels" in drawn:
        _draw_labels(draw, board, BOARD_CROP, img.size, round(13 * _scale(img.size)))
    if "candidates" in drawn:
        _draw_candidates(draw, candidates, img.size)
    return _encode(img, encoding)


def annotate_drawer(data: bytes, drawer: Mapping[str, Pose], layers: Sequence[str],
                    encoding: Encoding = Encoding()) -> bytes:
    """The drawer picture with the pieces' names when ``labels`` is asked for (the only drawer layer)."""
    if "labels" not in layers or not drawer:
        return data
    img = _open(data)
    # The drawer picture is small (210 px): its labels are sized for it, not for the board.
    _draw_labels(ImageDraw.Draw(img, "RGBA"), drawer, DRAWER_CROP, img.size, max(9, round(11 * max(img.size) / 210)))
    return _encode(img, encoding)


def drawn_board_layers(layers: Sequence[str], board: Mapping[str, Pose],
                       candidates: Sequence[Candidate]) -> list[str]:
    """The layers that put something on the board picture: labels need a piece, candidates one."""
    return [layer for layer in layers
            if layer == "grid" or (layer == "labels" and board) or (layer == "candidates" and candidates)]
