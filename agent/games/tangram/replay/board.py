"""The board and drawer of a replay step as SVG shapes, in the real game's look. Pure functions.

Drawn the way the simulator's pictures are (:mod:`agent.games.tangram.pictures.look`): the two crops the
game photographs (board 562 x 540, drawer 210 x 210, the SVG viewBoxes in crop pixels), dark
panels, the vine's tip, flat pieces in the scene's colours and drawing order, the human-turn
dimming of every piece but the one just moved, and the overlap tint on a piece the state says
collides. Outlines come from the exact geometry: the reported marker and rotation give the node
pose (:func:`~agent.games.tangram.geometry.frames.pose_from_marker`), whose collision polygon is
mapped world -> crop by the game's camera.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agent.games.tangram.geometry.frames import Pose, world_to_board
from agent.games.tangram.geometry.pieces import PIECES, Point
from agent.games.tangram.geometry.screen import BOARD_CROP, DRAWER_CROP, Crop, world_to_crop
from agent.games.tangram.pictures.look import GAME_LOOK, RGB, Look, piece_color
from agent.games.tangram.replay.model import Board

DECIMALS = 2


@dataclass(frozen=True, slots=True)
class Shape:
    piece: str
    points: str
    """SVG ``points``: crop pixels, two decimals."""
    fill: str
    dimmed: bool
    tinted: bool


@dataclass(frozen=True, slots=True)
class Picture:
    width: int
    height: int
    panel: str
    """The panel's colour (the texture's median)."""
    vine: tuple[tuple[str, str], ...]
    """(points, fill) of each vine part (board only)."""
    shapes: tuple[Shape, ...]


def hex_color(c: RGB) -> str:
    return f"#{c[0]:02x}{c[1]:02x}{c[2]:02x}"


def crop_points(points: Iterable[Point], crop: Crop) -> str:
    out = []
    for p in points:
        x, y = world_to_crop(p, crop)
        out.append(f"{x:.{DECIMALS}f},{y:.{DECIMALS}f}")
    return " ".join(out)


def piece_fill(name: str, *, dim: bool, tint: bool, under: RGB) -> str:
    """The colour the game shows: full, dimmed by the human-turn highlight, overlap-tinted."""
    return hex_color(piece_color(name, dim=dim, tint=tint, under=under))


def drawer_pose(name: str, rotation: float) -> Pose:
    """Where an off-board piece is drawn: its place in the drawer, turned as the state reports."""
    x, y = world_to_board(*PIECES[name].start_origin)
    return Pose(name, x, y, rotation)


def board_picture(board: Board, moved: Iterable[str] = (), *, dim_others: bool = False,
                  look: Look = GAME_LOOK) -> Picture:
    """The board crop: every on-board piece at its reported pose."""
    under = look.board_texture.median
    placed = ((name, piece.pose(), bool(piece.collisions)) for name in look.draw_order
              if (piece := board.on_board.get(name)) is not None)
    shapes = _shapes(placed, BOARD_CROP, under, set(moved), dim_others)
    vine = tuple((" ".join(f"{x:g},{y:g}" for x, y in part.polygon), hex_color(part.color)) for part in look.vine)
    return Picture(BOARD_CROP[2], BOARD_CROP[3], hex_color(under), vine, shapes)


def drawer_picture(board: Board, moved: Iterable[str] = (), *, dim_others: bool = False,
                   look: Look = GAME_LOOK) -> Picture:
    """The drawer crop: every off-board piece at its drawer place."""
    under = look.drawer_texture.median
    waiting = ((name, drawer_pose(name, rotation), False) for name in look.draw_order
               if (rotation := board.off_board.get(name)) is not None)
    shapes = _shapes(waiting, DRAWER_CROP, under, set(moved), dim_others)
    return Picture(DRAWER_CROP[2], DRAWER_CROP[3], hex_color(under), (), shapes)


def _shapes(drawn: Iterable[tuple[str, Pose, bool]], crop: Crop, under: RGB, moved: set[str],
            dim_others: bool) -> tuple[Shape, ...]:
    """Each (piece, pose, overlap-tinted) in drawing order as a shape in ``crop`` on the ``under``
    texture, dimmed when ``dim_others`` and the piece is not one just ``moved``. One body for the
    board and the drawer, so both crops colour and dim pieces the same way."""
    shapes = []
    for name, pose, tint in drawn:
        dim = dim_others and name not in moved
        shapes.append(Shape(name, crop_points(pose.outline_px(), crop),
                            piece_fill(name, dim=dim, tint=tint, under=under), dim, tint))
    return tuple(shapes)
