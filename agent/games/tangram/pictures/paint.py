"""Drawing the game's two crops in a :class:`~agent.games.tangram.pictures.look.Look`, with Pillow.

One painter for the simulator's pictures and for the agent's own repair of the pictures it gets
(:mod:`agent.games.tangram.pictures.repaint`): the panel's texture, the vine, then the pieces in the scene's
order, each flat, dimmed by the human-turn highlight or tinted as an overlapping piece when asked.
Pieces are given as outlines already in the picture's pixels, so the caller decides whose geometry
places them (the simulator its own scene, the agent the state it was sent).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw

from agent.games.tangram.pictures.look import (
    BOARD_SIZE,
    DRAWER_SIZE,
    GAME_LOOK,
    HUMAN_TURN_DIM,
    OVERLAP_TINT,
    Look,
    Texture,
)

Point = tuple[float, float]


def texture_pixels(texture: Texture, size: tuple[int, int]) -> np.ndarray:
    """A (height, width, 3) uint8 panel with the texture's median, spread and feature sizes.

    Each scale is white noise shaped in the frequency domain by a Gaussian (stretched along the
    streaks), scaled to its share of the variance; the sum is the panel's luminance around its
    median. Seeded: the same picture every time."""
    w, h = size
    base = np.empty((h, w, 3), dtype=np.float64)
    base[...] = texture.median
    if (texture.std > 0 and texture.scales) or texture.ramp != (0.0, 0.0):
        rng = np.random.default_rng(texture.seed)
        fy = np.fft.fftfreq(h)[:, None]
        fx = np.fft.fftfreq(w)[None, :]
        a = np.radians(texture.streak_angle)
        # Along the streak (u) and across it (v); y is down in the picture, so the angle flips.
        fu = fx * np.cos(a) - fy * np.sin(a)
        fv = fx * np.sin(a) + fy * np.cos(a)
        total = np.zeros((h, w))
        for sigma, share in texture.scales:
            noise = rng.standard_normal((h, w))
            su, sv = sigma * texture.streak_stretch, sigma
            gain = np.exp(-2 * np.pi ** 2 * ((su * fu) ** 2 + (sv * fv) ** 2))
            field = np.real(np.fft.ifft2(np.fft.fft2(noise) * gain))
            std = field.std()
            if std > 0:
                total += field / std * np.sqrt(share)
        rx, ry = texture.ramp
        noise_std = np.sqrt(max(texture.std ** 2 - (rx * rx + ry * ry) / 12.0, 0.0))  # a ramp's own variance
        total *= noise_std / max(total.std(), 1e-9)
        total += rx * np.linspace(-0.5, 0.5, w)[None, :] + ry * np.linspace(-0.5, 0.5, h)[:, None]
        total -= np.median(total)  # the panel's median is the measured one, whatever the noise drew
        base += total[..., None]
    return np.clip(np.rint(base), 0, 255).astype(np.uint8)


@lru_cache(maxsize=8)
def _panel(look: Look, which: str, size: tuple[int, int]) -> Image.Image:
    """The empty crop (texture, panel and vine) for ``look``; drawn once per look and size."""
    texture = look.board_texture if which == "board" else look.drawer_texture
    img = Image.fromarray(texture_pixels(texture, size), "RGB")
    draw = ImageDraw.Draw(img)
    ref = BOARD_SIZE if which == "board" else DRAWER_SIZE
    sx, sy = size[0] / ref[0], size[1] / ref[1]
    panel = look.board_panel if which == "board" else look.drawer_panel
    colour = look.board_panel_color if which == "board" else look.drawer_panel_color
    if panel is not None and colour is not None:
        draw.rectangle([panel[0] * sx, panel[1] * sy, panel[2] * sx, panel[3] * sy], fill=colour)
    if which == "board":
        for part in look.vine:
            draw.polygon([(x * sx, y * sy) for x, y in part.polygon], fill=part.color)
    return img


def empty_crop(which: str, size: tuple[int, int] | None = None, look: Look = GAME_LOOK) -> Image.Image:
    """A copy of the crop with no piece on it: ``which`` is "board" or "drawer"."""
    if which not in ("board", "drawer"):
        raise ValueError(f"no crop named {which!r}")
    return _panel(look, which, size or (BOARD_SIZE if which == "board" else DRAWER_SIZE)).copy()


def paint_pieces(img: Image.Image, outlines: Mapping[str, Sequence[Point]], *, look: Look = GAME_LOOK,
                 lit: str | None = None, tinted: Collection[str] = ()) -> Image.Image:
    """Draw the pieces on ``img`` (changed in place and returned), in the look's order.

    ``lit``: the human-turn highlight is on and this is the human's just-moved piece: every other
    piece is drawn at 145/255. ``tinted``: pieces drawn in the overlap tint (their modulated
    colour at 52 % over what is under them)."""
    draw = ImageDraw.Draw(img, "RGBA")
    for name in look.draw_order:
        outline = outlines.get(name)
        if not outline:
            continue
        r, g, b = look.piece_colors[name]
        f = HUMAN_TURN_DIM if lit is not None and name != lit else 1.0
        pts = [(float(x), float(y)) for x, y in outline]
        if name in tinted:
            m = OVERLAP_TINT.rgb
            fill = (round(r * f * m[0]), round(g * f * m[1]), round(b * f * m[2]), round(OVERLAP_TINT.alpha * 255))
            draw.polygon(pts, fill=fill)
            continue
        colour = (round(r * f), round(g * f), round(b * f))
        if look.outline_darken is not None:
            d = look.outline_darken
            draw.polygon(pts, fill=colour, outline=(int(colour[0] * d), int(colour[1] * d), int(colour[2] * d)))
        else:
            draw.polygon(pts, fill=colour)
    return img
