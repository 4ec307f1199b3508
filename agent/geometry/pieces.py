"""The seven tangram pieces as the game defines them.

Outlines are the collision polygons of the game's scene, in world pixels with y pointing down,
at rotation 0, relative to each piece's node origin. ``marker`` is where the game's ``VCenter``
marker sits relative to the origin: the state reports that point, not the origin, and the offset
turns with the piece. ``start`` is the pose each piece has in the drawer when a game begins.
"""

from __future__ import annotations

from dataclasses import dataclass

Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class PieceSpec:
    name: str
    kind: str
    outline: tuple[Point, ...]
    marker: Point
    start_origin: Point
    start_rotation: float


PIECE_TABLE: tuple[PieceSpec, ...] = (
    PieceSpec("Red", "large triangle",
              ((51.2, 25.6), (-51.2, 25.6), (0.0, -25.6)), (-0.25, 4.0), (1018.5, 291.0), 180.0),
    PieceSpec("Cream", "large triangle",
              ((-51.12, 25.52), (0.08, -25.68), (51.28, 25.52)), (0.0, 3.25), (991.0, 318.0), 90.0),
    PieceSpec("Blue", "medium triangle",
              ((-18.1, 0.0), (18.1, -36.2), (18.1, 36.2)), (3.01, 1.24), (1058.0, 360.0), 225.0),
    PieceSpec("Green", "small triangle",
              ((0.0, -12.8), (-25.6, 12.8), (25.6, 12.8)), (0.0, 0.0), (1018.0, 333.0), 0.0),
    PieceSpec("Yellow", "small triangle",
              ((25.6, 9.6), (-25.6, 9.6), (0.0, -16.0)), (0.0, 0.0), (1062.0, 292.0), -90.0),
    PieceSpec("Purple", "square",
              ((18.92, -18.92), (18.07, 16.78), (-18.28, 17.16), (-17.85, -18.92)), (0.0, 0.0),
              (1045.0, 319.0), 45.0),
    PieceSpec("Brown", "parallelogram",
              ((-12.8, -12.8), (38.4, -12.8), (12.8, 12.8), (-38.4, 12.8)), (0.0, 0.0),
              (1002.5, 361.0), 0.0),
)

PIECES: dict[str, PieceSpec] = {spec.name: spec for spec in PIECE_TABLE}
PIECE_NAMES: tuple[str, ...] = tuple(PIECES)
