"""What Godot's texture importer does to a picture before packing it, for the options the game uses.

``process/fix_alpha_border`` (on by default): every nearly transparent pixel (alpha below 20) takes
the colour of the nearest pixel that is not, within 4 pixels, so that filtering a scaled sprite
does not bleed the transparent pixels' colour (often black) into its edge. Same constants, same
order of search as Godot's ``Image::fix_alpha_edges`` (nearest by squared distance; of equal ones the
first in row-then-column order), done with numpy on the few pixels near an edge.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

ALPHA_THRESHOLD = 20
MAX_RADIUS = 4
OFFSETS = sorted((dy * dy + dx * dx, dy, dx) for dy in range(-MAX_RADIUS, MAX_RADIUS + 1)
                 for dx in range(-MAX_RADIUS, MAX_RADIUS + 1))


def _dilate(mask: np.ndarray, radius: int) -> np.ndarray:
    """True within ``radius`` pixels (a square) of a True pixel."""
    out = mask.copy()
    for axis in (0, 1):
        grown = out.copy()
        for shift in range(1, radius + 1):
            if axis == 0:
                grown[shift:] |= out[:-shift]
                grown[:-shift] |= out[shift:]
            else:
                grown[:, shift:] |= out[:, :-shift]
                grown[:, :-shift] |= out[:, shift:]
        out = grown
    return out


def fix_alpha_edges(image: Image.Image) -> Image.Image:
    """The picture with its transparent pixels near an edge coloured like that edge (RGBA only)."""
    if image.mode != "RGBA":
        return image
    data = np.array(image)
    opaque = data[..., 3] >= ALPHA_THRESHOLD
    if opaque.all() or not opaque.any():
        return image
    ys, xs = np.nonzero(~opaque & _dilate(opaque, MAX_RADIUS))
    height, width = opaque.shape
    done = np.zeros(len(ys), dtype=bool)
    colour = np.zeros((len(ys), 3), dtype=np.uint8)
    for _dist, dy, dx in OFFSETS:
        ny, nx = ys + dy, xs + dx
        open_ = np.flatnonzero(~done & (ny >= 0) & (ny < height) & (nx >= 0) & (nx < width))
        hit = open_[opaque[ny[open_], nx[open_]]]
        colour[hit] = data[ny[hit], nx[hit], :3]
        done[hit] = True
    data[ys[done], xs[done], :3] = colour[done]
    return Image.fromarray(data, "RGBA")


def apply_import_options(image: Image.Image, params: dict[str, str]) -> Image.Image:
    """The processing a ``.import`` file's ``[params]`` ask of Godot's texture importer that we do."""
    if params.get("process/fix_alpha_border", "true") == "true":
        # Godot decodes a palette picture with transparency to RGBA8, grey with alpha to LA8 (left alone).
        if image.mode in ("PA", "RGBa") or (image.mode == "P" and "transparency" in image.info):
            image = image.convert("RGBA")
        image = fix_alpha_edges(image)
    return image
