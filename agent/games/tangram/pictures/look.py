"""The real game's look, as data: one description for the simulator's pictures, the tests, the
replays and the agent's repair of the pictures it gets.

Everything here is a number measured from the GAIPS game or read from its scene
(``tangran/Scenes/Main_scene.tscn``, ``Main_scene.gd``, ``shapes.gd``) and from the pictures the
real game sent (GAME_FACTS, "Seen in the real game"); none of the game's pictures or code is in
the project. What the game shows in its two crops:

- **Board** (562 x 540 px): the inner panel of the board sprite, a near-black texture of faint
  diagonal streaks (median RGB 21, 21, 21; luminance spread about 3 levels), with the tip of a
  green vine reaching into the top-right corner (:data:`VINE`, our own approximation: a stem and a
  leaf whose place, size and colours were measured on the game's picture).
- **Drawer** (210 x 210 px): the inside of the drawer sprite, the same kind of texture, a little
  lighter (median 32).
- **Pieces**: flat polygons in the scene's colours (:data:`PIECE_COLORS`), no outline, no
  anti-aliasing, drawn in the scene's node order (:data:`DRAW_ORDER`, the last on top).
- **Human-turn dimming**: while the human has moved a piece, every *other* piece is drawn at
  ``145/255`` of its colour (:data:`HUMAN_TURN_DIM`); the picture of a playRequest is read from
  that screen, so it carries the dimming, in the board and the drawer alike.
- **Overlap tint**: a piece whose area overlaps another piece or the frame is drawn modulated by
  ``#ff291784`` (:data:`OVERLAP_TINT`: red kept, green and blue cut to 16 % and 9 %, and 52 %
  opacity over what is under it), a dark red on the dark board. It can linger on a feedback
  picture for a piece the state reports clean (the state is the truth).

The module is plain data and pure functions (no Pillow), so anything that draws (the simulator's
Pillow renderer, an SVG replay, a test) reads the same numbers. Coordinates are the crops' own
pixels at the 1920 x 1080 reference size, x right and y down.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from agent.games.tangram.geometry.screen import BOARD_CROP, DRAWER_CROP

RGB = tuple[int, int, int]
Point = tuple[float, float]
Box = tuple[float, float, float, float]

__all__ = [
    "BOARD_CROP",
    "BOARD_SIZE",
    "BOARD_TEXTURE",
    "DRAWER_CROP",
    "DRAWER_SIZE",
    "DRAWER_TEXTURE",
    "DRAWN_POLYGONS",
    "DRAW_ORDER",
    "GAME_LOOK",
    "HUMAN_TURN_DIM",
    "LIGHT_LOOK",
    "OVERLAP_TINT",
    "PIECE_COLORS",
    "PIECE_COLORS_FLOAT",
    "VINE",
    "DrawnPolygon",
    "Look",
    "Modulate",
    "Texture",
    "VinePart",
    "dimmed",
    "drawn_outline",
    "piece_color",
    "tinted",
]

BOARD_SIZE: tuple[int, int] = (BOARD_CROP[2], BOARD_CROP[3])
"""(width, height) of the board picture: 562 x 540."""
DRAWER_SIZE: tuple[int, int] = (DRAWER_CROP[2], DRAWER_CROP[3])
"""(width, height) of the drawer picture: 210 x 210."""

PIECE_COLORS_FLOAT: dict[str, tuple[float, float, float]] = {
    # Each piece's Polygon2D ``color`` in the scene, as Godot stores it (0..1).
    "Red": (0.823529, 0.0, 0.117647),
    "Cream": (0.982343, 0.757204, 0.578067),
    "Blue": (0.0, 0.392157, 0.788235),
    "Green": (0.293972, 0.999015, 0.256818),
    "Yellow": (0.854902, 0.647059, 0.12549),
    "Purple": (0.635038, 0.000510475, 0.681769),
    "Brown": (0.627451, 0.321569, 0.176471),
}


def _to8(c: tuple[float, float, float]) -> RGB:
    return (round(c[0] * 255), round(c[1] * 255), round(c[2] * 255))


PIECE_COLORS: dict[str, RGB] = {name: _to8(c) for name, c in PIECE_COLORS_FLOAT.items()}
"""The pieces' colours in 8-bit RGB, as the game draws them at full brightness."""

DRAW_ORDER: tuple[str, ...] = ("Purple", "Brown", "Cream", "Red", "Yellow", "Green", "Blue")
"""The scene's node order: a later piece is drawn over an earlier one where they overlap."""

NODE_SCALE = 0.4
"""Every piece node is scaled by 0.4 in the scene."""


@dataclass(frozen=True, slots=True)
class DrawnPolygon:
    """A piece's Polygon2D (what is drawn, a little different from its collision shape): its offset,
    rotation (radians) and scale inside the node, and its points, in the node's pre-scale units."""

    position: Point
    rotation: float
    scale: Point
    points: tuple[Point, ...]


DRAWN_POLYGONS: dict[str, DrawnPolygon] = {
    "Purple": DrawnPolygon((2.80005, -1.20001), 0.785397, (1.0, 1.0),
                           ((-66.1315, 0.953491), (-3.63159, 65.9535), (61.3685, 0.953613), (-1.13147, -64.0465))),
    "Brown": DrawnPolygon((8.0, -8.0), 0.0, (1.0, 1.0), ((-40.0, -24.0), (88.0, -24.0), (24.0, 40.0), (-104.0, 40.0))),
    "Cream": DrawnPolygon((-64.0404, 6.84457), -2.35619, (1.00003, 0.999299),
                          ((-175.23, 95.7112), (5.07672, 95.7102), (5.07587, -84.7285))),
    "Red": DrawnPolygon((8.0, -64.0), 2.35619, (1.0, 1.0), ((3.62378, -178.81), (5.3916, 6.80591), (187.472, 5.03833))),
    "Yellow": DrawnPolygon((24.0, 0.0), 0.785397, (1.0, 1.0),
                           ((46.2271, -11.7554), (-45.6967, -11.7556), (-45.6968, 80.1682))),
    "Green": DrawnPolygon((3.05176e-05, 32.0), 0.0, (1.0, 1.0), ((-0.625, -64.5), (-63.125, 0.5), (64.375, 0.5))),
    "Blue": DrawnPolygon((-96.0, 32.0), -1.57079, (1.0, 1.0),
                         ((32.4423, 50.48), (-57.7133, 140.636), (122.599, 140.635))),
}
"""Each piece's Polygon2D in the scene."""


def drawn_outline(name: str, origin: Point, rotation: float) -> list[Point]:
    """Piece ``name``'s drawn polygon in world pixels, for a node at ``origin`` (world pixels) turned
    ``rotation`` radians (Godot's: clockwise on screen, y down)."""
    poly = DRAWN_POLYGONS[name]
    cp, sp = math.cos(poly.rotation), math.sin(poly.rotation)
    cn, sn = math.cos(rotation), math.sin(rotation)
    out = []
    for x, y in poly.points:
        x, y = x * poly.scale[0], y * poly.scale[1]
        lx, ly = x * cp - y * sp + poly.position[0], x * sp + y * cp + poly.position[1]
        lx, ly = lx * NODE_SCALE, ly * NODE_SCALE
        out.append((origin[0] + lx * cn - ly * sn, origin[1] + lx * sn + ly * cn))
    return out

HUMAN_TURN_DIM: float = 145 / 255
"""The human-turn highlight (``Color8(145, 145, 145)`` on every piece but the moved one)."""


@dataclass(frozen=True, slots=True)
class Modulate:
    """A Godot ``modulate``: the colour is multiplied by ``rgb`` and drawn at ``alpha`` over what is under it."""

    rgb: tuple[float, float, float]
    alpha: float


OVERLAP_TINT = Modulate((1.0, 0x29 / 255, 0x17 / 255), 0x84 / 255)
"""``shapes.gd``: ``modulate = "#ff291784"`` while the piece overlaps anything."""


@dataclass(frozen=True, slots=True)
class Texture:
    """A dark textured panel, by its statistics (measured on the game's picture of it).

    ``median`` is the panel's typical colour; ``std`` the spread of its luminance (``ramp``
    included); ``p5``/``p95`` the luminance percentiles; ``ramp`` the panel's shading, the
    luminance change from its left edge to its right and from its top to its bottom (a straight-line
    fit). ``scales`` says how the rest of the variance is spread over feature sizes:
    (Gaussian sigma in px, share of the variance), from fine grain to the long streaks; the
    streaks run at ``streak_angle`` degrees (counter-clockwise from the x axis, y up) and are
    ``streak_stretch`` times longer than wide. A renderer makes its own texture with these
    statistics (seeded by ``seed``, so the same picture every time).
    """

    median: RGB
    std: float
    p5: float
    p95: float
    scales: tuple[tuple[float, float], ...]
    streak_angle: float
    streak_stretch: float
    seed: int
    ramp: tuple[float, float] = (0.0, 0.0)


BOARD_TEXTURE = Texture(median=(21, 21, 21), std=2.75, p5=16.0, p95=25.0,
                        scales=((0.8, 0.25), (4.0, 0.25), (24.0, 0.5)),
                        streak_angle=35.0, streak_stretch=4.0, seed=21, ramp=(1.0, -6.0))
"""The board panel: measured structure function of the luminance (relative to its std) 0.31 at
1 px, 0.52 at 4 px, 0.67 at 16 px, 0.72 at 64 px: a quarter of the variance is pixel grain, the
rest smooth streaks; 6 levels darker at the bottom than at the top."""

DRAWER_TEXTURE = Texture(median=(32, 32, 32), std=3.0, p5=29.0, p95=38.0,
                         scales=((0.8, 0.1), (4.0, 0.2), (24.0, 0.7)),
                         streak_angle=20.0, streak_stretch=4.0, seed=32, ramp=(-5.2, -5.0))
"""The drawer panel (structure function 0.21 at 1 px, 0.32 at 4 px, 0.50 at 16 px, 0.70 at 64 px;
about 5 levels darker at its right and at its bottom)."""


@dataclass(frozen=True, slots=True)
class VinePart:
    """One part of the vine in the board crop: a polygon (crop pixels) and its colour statistics."""

    name: str
    polygon: tuple[Point, ...]
    color: RGB
    """The part's median colour."""
    color_std: tuple[float, float, float]


VINE: tuple[VinePart, ...] = (
    # Measured on the game's board crop: 259 green pixels, all at x >= 547 and y <= 53.
    VinePart("stem", ((547.0, 0.0), (555.0, 0.0), (554.5, 6.0), (556.5, 11.0), (559.5, 15.0), (562.0, 18.0),
                      (562.0, 26.0), (558.0, 23.0), (553.5, 18.0), (550.0, 13.5), (547.0, 7.0)),
             color=(73, 126, 3), color_std=(29.0, 24.3, 9.4)),
    VinePart("tip", ((556.0, 5.5), (562.0, 3.0), (562.0, 10.0), (558.5, 9.5)),
             color=(73, 126, 3), color_std=(29.0, 24.3, 9.4)),
    VinePart("leaf", ((562.0, 27.0), (559.0, 32.0), (558.5, 42.0), (556.0, 48.0), (554.0, 53.0), (557.5, 51.0),
                      (562.0, 46.0)),
             color=(58, 152, 4), color_std=(33.4, 47.2, 10.8)),
)
"""The tip of the green vine that reaches into the board crop's top-right corner (our own
polygons, shaped and coloured after the game's picture)."""


@dataclass(frozen=True, slots=True, eq=False)
class Look:
    """Everything a renderer needs to draw the two crops one way."""

    name: str
    board_texture: Texture
    drawer_texture: Texture
    vine: tuple[VinePart, ...]
    piece_colors: dict[str, RGB]
    draw_order: tuple[str, ...]
    outline_darken: float | None
    """None: flat pieces (the game). A factor: each piece outlined in its colour times this."""
    board_panel: Box | None = None
    """Only for a look whose board panel does not fill the crop: (x0, y0, x1, y1) in crop pixels."""
    board_panel_color: RGB | None = None
    drawer_panel: Box | None = None
    drawer_panel_color: RGB | None = None


GAME_LOOK = Look(name="game", board_texture=BOARD_TEXTURE, drawer_texture=DRAWER_TEXTURE, vine=VINE,
                 piece_colors=PIECE_COLORS, draw_order=DRAW_ORDER, outline_darken=None)
"""The real game's look: what the simulator draws."""

_FLAT_GREY = Texture(median=(58, 64, 74), std=0.0, p5=0.0, p95=0.0, scales=(), streak_angle=0.0,
                     streak_stretch=1.0, seed=0)
LIGHT_LOOK = Look(name="light", board_texture=_FLAT_GREY, drawer_texture=_FLAT_GREY, vine=(),
                  piece_colors=PIECE_COLORS, draw_order=("Red", "Cream", "Blue", "Green", "Yellow", "Purple", "Brown"),
                  outline_darken=0.6, board_panel=(-3.5, -0.85, 559.29, 536.89), board_panel_color=(238, 234, 224),
                  drawer_panel=(-4.565, -1.9, 214.205, 211.86), drawer_panel_color=(74, 60, 52))
"""The simulator's look before it was calibrated on the real game (a light board, outlined
pieces): kept only so the look benchmark can print its "before" numbers."""


def dimmed(color: RGB, factor: float = HUMAN_TURN_DIM) -> RGB:
    """``color`` under the human-turn highlight's modulate (rounded as an 8-bit frame buffer does)."""
    return (round(color[0] * factor), round(color[1] * factor), round(color[2] * factor))


def tinted(color: RGB, under: RGB, tint: Modulate = OVERLAP_TINT) -> RGB:
    """``color`` drawn with the overlap tint over ``under`` (the pixel behind the piece)."""
    a = tint.alpha
    return tuple(round(under[i] * (1 - a) + color[i] * tint.rgb[i] * a) for i in range(3))  # type: ignore[return-value]


def piece_color(name: str, *, dim: bool = False, tint: bool = False, under: RGB = BOARD_TEXTURE.median) -> RGB:
    """The colour the game shows for piece ``name``: full, dimmed, tinted over ``under``, or both."""
    base = PIECE_COLORS_FLOAT[name]
    f = HUMAN_TURN_DIM if dim else 1.0
    scaled = (base[0] * 255 * f, base[1] * 255 * f, base[2] * 255 * f)
    if not tint:
        return (round(scaled[0]), round(scaled[1]), round(scaled[2]))
    a = OVERLAP_TINT.alpha
    return tuple(round(under[i] * (1 - a) + scaled[i] * OVERLAP_TINT.rgb[i] * a) for i in range(3))  # type: ignore[return-value]
