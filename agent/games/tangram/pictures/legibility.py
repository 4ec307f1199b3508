"""How legible the marks are on a picture: WCAG contrast of every mark against what is around it.

Issue 49 asks every mark to stay legible on the real game's near-black board: at least 3:1 for
lines, 4.5:1 for text. Measured per kind of mark on a picture (a simulator picture in the game's
look, or a real capture), each kind drawn on its own:

- **lines** (``grid lines``, ``candidate outlines``): every line pixel's colour against the pixel it
  covers in the unmarked picture;
- **text** (``grid numbers``, ``labels``, ``candidate letters``): the text's fill colour against the
  pixels right around its glyphs in the marked picture (its halo, or the candidate's disc: what the
  eye reads the letters against). A glyph pixel is one of the text's layer nearer the fill colour
  than the halo's; the pixels around are those within one pixel of a glyph pixel that are not one.

Each result gives the share of pixels meeting the threshold, the 5th percentile and the minimum.
Used by ``benchmarks/tangram/bench_marks.py --contrast`` and by the tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageFilter

from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.screen import BOARD_CROP, DRAWER_CROP
from agent.games.tangram.pictures.annotate import (
    CANDIDATE_LINE,
    GRID_TEXT,
    LABEL_TEXT,
    candidate_line_mask,
    contrast_ratio,
    grid_layers,
    ink_lines,
    text_layer,
)
from agent.games.tangram.planner.candidates import Candidate

LINE_MIN = 3.0
TEXT_MIN = 4.5


@dataclass(frozen=True, slots=True)
class Contrast:
    kind: str
    threshold: float
    pixels: int
    share_ok: float
    p5: float
    minimum: float

    @property
    def ok(self) -> bool:
        return self.pixels > 0 and self.minimum >= self.threshold


def _stats(kind: str, threshold: float, ratios: np.ndarray) -> Contrast:
    if ratios.size == 0:
        return Contrast(kind, threshold, 0, float("nan"), float("nan"), float("nan"))
    return Contrast(kind, threshold, int(ratios.size), float((ratios >= threshold).mean()),
                    float(np.percentile(ratios, 5)), float(ratios.min()))


def line_contrast(kind: str, base: Image.Image, mask: Image.Image) -> Contrast:
    """A line mask inked on ``base``: each line pixel against the pixel it covers."""
    marked = base.convert("RGB")
    ink_lines(marked, mask)
    m = np.asarray(mask) > 0
    return _stats(kind, LINE_MIN, contrast_ratio(np.asarray(marked)[m], np.asarray(base.convert("RGB"))[m]))


def text_contrast(kind: str, base: Image.Image, layer: Image.Image, fill: tuple[int, ...]) -> Contrast:
    """A text layer pasted on ``base``: its fill colour against the pixels 2 px outside its glyphs."""
    marked = base.convert("RGB")
    marked.paste(layer, (0, 0), layer)
    px = np.asarray(layer).astype(int)
    fill_rgb = np.asarray(fill[:3])
    away = 255 - fill_rgb  # the halo is the fill's opposite (white on black, black on white)
    near_fill = np.abs(px[..., :3] - fill_rgb).sum(axis=2) < np.abs(px[..., :3] - away).sum(axis=2)
    glyph = (px[..., 3] >= 128) & near_fill
    if not glyph.any():
        return _stats(kind, TEXT_MIN, np.array([]))
    grown = np.asarray(Image.fromarray((glyph * 255).astype(np.uint8)).filter(ImageFilter.MaxFilter(3))) > 0
    around = np.asarray(marked)[grown & ~glyph]
    return _stats(kind, TEXT_MIN, contrast_ratio(around, np.broadcast_to(fill_rgb, around.shape)))


def board_contrast(base: Image.Image, board: Mapping[str, Pose],
                   candidates: Sequence[Candidate] = ()) -> list[Contrast]:
    """Every kind of mark the board picture can carry, measured on ``base`` (the unmarked picture)."""
    size = base.size
    lines, numbers = grid_layers(size)
    gridded = base.convert("RGB")
    ink_lines(gridded, lines)
    out = [line_contrast("grid lines", base, lines), text_contrast("grid numbers", gridded, numbers, GRID_TEXT)]
    if board:
        out.append(text_contrast("labels", base, text_layer("labels", size, board), LABEL_TEXT))
    if candidates:
        out.append(line_contrast("candidate outlines", base, candidate_line_mask(size, candidates)))
        out.append(text_contrast("candidate letters", base, text_layer("letters", size, candidates=candidates),
                                 CANDIDATE_LINE))
    return out


def drawer_contrast(base: Image.Image, drawer: Mapping[str, Pose]) -> list[Contrast]:
    """The drawer's labels measured on ``base``."""
    return [text_contrast("drawer labels", base, text_layer("labels", base.size, drawer, crop=DRAWER_CROP),
                          LABEL_TEXT)] if drawer else []


__all__ = ["BOARD_CROP", "Contrast", "board_contrast", "drawer_contrast", "line_contrast", "text_contrast"]
