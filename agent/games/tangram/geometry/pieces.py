"""The seven tangram pieces as the game defines them: one table of facts, no behaviour.

Units are world pixels with y pointing down, at rotation 0, relative to each piece's node origin.

- ``outline``: the piece's collision polygon (what the game's physics uses).
- ``marker``: where the game's ``VCenter`` marker sits. The state reports that point as the
  piece's ``position``, not the node origin, and the offset turns with the piece.
- ``vertex_markers``: the ``V1``..``V4`` markers, in that order. The state reports them as
  ``vertices``; they sit near, not on, the outline's corners.
- ``start_origin`` / ``start_rotation``: the pose each piece has in the drawer when a game begins.
- ``symmetry``: the smallest turn (degrees) that maps the ideal shape onto itself (360 for the
  triangles, 90 for the square, 180 for the parallelogram). Used for describing orientations.

The marker numbers are the scene file's (``tangran/Scenes/Main_scene.tscn``), multiplied by the
pieces' node scale of 0.4. Outlines are the collision polygons after their own node transforms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Point = tuple[float, float]

NODE_SCALE = 0.4
"""Every piece node in the scene is scaled by 0.4; the marker numbers below are pre-scale."""


def _scaled(*points: Point) -> tuple[Point, ...]:
    return tuple((x * NODE_SCALE, y * NODE_SCALE) for x, y in points)


@dataclass(frozen=True, slots=True)
class PieceSpec:
    name: str
    kind: str
    outline: tuple[Point, ...]
    marker: Point
    start_origin: Point
    start_rotation: float
    vertex_markers: tuple[Point, ...] = ()
    symmetry: float = 360.0

    @property
    def area_px(self) -> float:
        """Area of the outline in square pixels (shoelace)."""
        pts = self.outline
        s = 0.0
        for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1], strict=True):
            s += x0 * y1 - x1 * y0
        return abs(s) / 2.0

    @property
    def is_triangle(self) -> bool:
        return len(self.outline) == 3


# The medium triangle's outline is the scene's (32, 32) (-96, 32) (32, -96) turned by 135 degrees and
# scaled by 0.4; written with sqrt(2) so that the seven areas add up to exactly 102.4^2.
_B = 32.0 * 2.0 ** 0.5 * NODE_SCALE  # 18.1019...

PIECE_TABLE: tuple[PieceSpec, ...] = (
    PieceSpec("Red", "large triangle",
              ((51.2, 25.6), (-51.2, 25.6), (0.0, -25.6)),
              _scaled((-0.624999, 10.0))[0], (1018.5, 291.0), 180.0,
              _scaled((-0.624985, -65.0001), (131.875, 64.9999), (-128.125, 65.0))),
    PieceSpec("Cream", "large triangle",
              ((-51.12, 25.52), (0.08, -25.68), (51.28, 25.52)),
              _scaled((3.55155e-07, 8.125))[0], (991.0, 318.0), 90.0,
              _scaled((-6.48499e-05, -64.375), (-127.5, 63.125), (127.5, 63.125))),
    PieceSpec("Blue", "medium triangle",
              ((-_B, 0.0), (_B, -2.0 * _B), (_B, 2.0 * _B)),
              _scaled((7.51301, 3.09359))[0], (1058.0, 360.0), 225.0,
              _scaled((44.6361, -90.5981), (-45.52, -0.441933), (44.6361, 89.7142))),
    PieceSpec("Green", "small triangle",
              ((0.0, -12.8), (-25.6, 12.8), (25.6, 12.8)),
              (0.0, 0.0), (1018.0, 333.0), 0.0,
              _scaled((0.0, -32.0), (-64.0, 32.0), (64.0, 32.0))),
    PieceSpec("Yellow", "small triangle",
              ((25.6, 9.6), (-25.6, 9.6), (0.0, -16.0)),
              (0.0, 0.0), (1062.0, 292.0), -90.0,
              _scaled((-1.33514e-05, -40.6251), (-62.5, 24.375), (65.0, 24.3751))),
    PieceSpec("Purple", "square",
              ((18.92, -18.92), (18.07, 16.78), (-18.28, 17.16), (-17.85, -18.92)),
              (0.0, 0.0), (1045.0, 319.0), 45.0,
              _scaled((-44.6361, -47.2878), (-46.4039, 42.8683), (45.52, 42.8684), (47.2878, -47.2878)),
              symmetry=90.0),
    PieceSpec("Brown", "parallelogram",
              ((-12.8, -12.8), (38.4, -12.8), (12.8, 12.8), (-38.4, 12.8)),
              (0.0, 0.0), (1002.5, 361.0), 0.0,
              _scaled((-32.0, -32.0), (96.0, -32.0), (-96.0, 32.0), (32.0, 32.0)),
              symmetry=180.0),
)

PIECES: dict[str, PieceSpec] = {spec.name: spec for spec in PIECE_TABLE}
PIECE_NAMES: tuple[str, ...] = tuple(PIECES)

PieceName = Literal["Red", "Cream", "Blue", "Green", "Yellow", "Purple", "Brown"]
"""A piece's name as a type, for the models that cross a boundary (the LLM's move, the console's messages)."""
assert set(PieceName.__args__) == set(PIECE_NAMES)  # type: ignore[attr-defined]
TOTAL_AREA_PX = 102.4 ** 2
"""The seven pieces tile a 102.4 px square."""
