"""Tangram solutions drawn as SVG (one file per figure, seven polygons) turned into library figures.

Published tangram collections commonly ship each solution as an SVG holding the seven pieces as
``<polygon points="...">`` elements (any scale, y down). This module reads one, tells the pieces
apart by shape and size (two large, one medium and two small triangles, the square, the
parallelogram), scales the drawing so its area is a tangram's in game pixels, fits each game piece
to its polygon, then spreads the pieces to the game's clearance, centres the figure and checks it
with the collision engine, exactly as the design tool does for our own sketches.

The game's pieces cannot be flipped. A drawing that uses the mirror image of the parallelogram
gets the game's parallelogram turned to cover as much of it as it can; the silhouette IoU against
the drawing, reported with every import, says how close the result is.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field
from shapely.affinity import translate
from shapely.geometry import Polygon
from shapely.ops import unary_union

from agent.games.tangram.geometry.collide import CLEARANCE_PX
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.pieces import TOTAL_AREA_PX, Point
from agent.games.tangram.planner import shapes
from agent.games.tangram.planner.library import FigureError, FigureSpec, SlotSpec, figure_from_spec, rigid_covers
from agent.games.tangram.planner.search import nearest_valid
from agent.games.tangram.planner.tools.design import GAP_PX, MAX_FIT_RMS_PX, centre, rounded, spread

MIRROR_NUDGE_PX = 24.0
"""How far the parallelogram's stand-in may move to clear the other pieces."""
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


class FigureNames(BaseModel):
    """What a research team tells the importer about one SVG: the name and the words for it."""

    model_config = ConfigDict(extra="forbid")

    name: str
    aliases: list[str] = Field(default_factory=list)
    related: list[str] = Field(default_factory=list)
    description: str = ""


class Imported(BaseModel):
    """One imported figure: the library file's content and how well it matches the drawing."""

    spec: FigureSpec
    iou: float = Field(description="Silhouette IoU of the figure's pieces against the SVG's polygons.")
    mirrored_parallelogram: bool


def read_polygons(svg_text: str) -> list[list[Point]]:
    """The ``<polygon>`` outlines of an SVG document, in its own units (y down)."""
    try:
        root = ET.fromstring(svg_text)
    except ET.ParseError as exc:
        raise FigureError(f"not an SVG document ({exc})") from exc
    out: list[list[Point]] = []
    for el in root.iter():
        tag = el.tag.rsplit("}", 1)[-1]
        if tag in ("polygon", "g", "svg") and el.get("transform"):
            raise FigureError(f"<{tag}> has a transform; export the drawing with absolute coordinates")
        if tag != "polygon":
            continue
        nums = [float(n) for n in _NUMBER.findall(el.get("points", ""))]
        pts = list(zip(nums[0::2], nums[1::2], strict=False))
        if len(pts) >= 3:
            out.append(_simplify(pts))
    return out


def _simplify(pts: Sequence[Point]) -> list[Point]:
    """Drop repeated closing points and points on a straight edge."""
    poly = Polygon(pts).simplify(1e-6 * max(1.0, Polygon(pts).length))
    coords = list(poly.exterior.coords)[:-1]
    return [(float(x), float(y)) for x, y in coords]


def _classify(polys: list[list[Point]]) -> dict[str, list[Point]]:
    if len(polys) != 7:
        raise FigureError(f"expected the seven tangram pieces, found {len(polys)} polygons")
    tris = sorted((p for p in polys if len(p) == 3), key=lambda p: Polygon(p).area, reverse=True)
    quads = [p for p in polys if len(p) == 4]
    if len(tris) != 5 or len(quads) != 2:
        raise FigureError(f"expected five triangles and two quadrilaterals, found {len(tris)} and {len(quads)}")

    def squareness(p: list[Point]) -> float:
        sides = [math.dist(p[i], p[(i + 1) % 4]) for i in range(4)]
        diags = [math.dist(p[0], p[2]), math.dist(p[1], p[3])]
        return (max(sides) - min(sides)) / max(sides) + abs(diags[0] - diags[1]) / max(diags)

    square, para = sorted(quads, key=squareness)
    return {"Red": tris[0], "Cream": tris[1], "Blue": tris[2], "Green": tris[3], "Yellow": tris[4],
            "Purple": square, "Brown": para}


def _part_name(piece: str, pose: Pose, center: Point) -> str:
    """A plain part name from where the piece sits: "top left large triangle"."""
    x, y = shapes.vertex_centroid(pose)
    dx, dy = x - center[0], y - center[1]
    where = [("top" if dy < 0 else "bottom") if abs(dy) > 20 else "", ("left" if dx < 0 else "right") if abs(dx) > 20
             else ""]
    kind = {"large": "large triangle", "medium": "medium triangle", "small": "small triangle"}.get(
        shapes.kind(piece), shapes.kind(piece))
    return " ".join(w for w in (*where, kind) if w) if any(where) else f"middle {kind}"


def _scaled(polys: list[list[Point]]) -> dict[str, list[Point]]:
    """Each piece's polygon, scaled so that the drawing has a tangram's area in game pixels."""
    regions = _classify(polys)
    k = math.sqrt(TOTAL_AREA_PX / sum(Polygon(p).area for p in regions.values()))
    x0, y0, x1, y1 = unary_union([Polygon(p) for p in regions.values()]).bounds
    cx, cy = shapes.board_center_px()
    # Centred on the board already, so that the parallelogram's stand-in can be checked in place.
    return {n: [((x - (x0 + x1) / 2) * k + cx, (y - (y0 + y1) / 2) * k + cy) for x, y in p] for n, p in regions.items()}


def fit_drawing(scaled: Mapping[str, list[Point]]) -> tuple[dict[str, Pose], bool]:
    """Game poses for a drawing's seven scaled polygons, before spreading; True if the drawing's
    parallelogram is the mirror image of the game's."""
    poses: dict[str, Pose] = {}
    mirrored = False
    for piece, corners in scaled.items():
        pose, rms = shapes.fit_pose(piece, corners)
        if rms > MAX_FIT_RMS_PX and piece != "Brown":
            raise FigureError(f"{piece}: the drawing's {shapes.kind(piece)} is not the game's shape (rms {rms:.1f} px)")
        poses[piece] = pose
        mirrored = mirrored or rms > MAX_FIT_RMS_PX
    if mirrored:
        # The mirror image of the game's parallelogram: the turn of it that covers most of the
        # drawn one while overlapping the other pieces least (spreading will only nudge it).
        region = Polygon(scaled["Brown"])
        others = {n: p for n, p in poses.items() if n != "Brown"}
        rest = unary_union([shapes.polygon(p) for p in others.values()])

        def score(c: Pose) -> float:
            poly = shapes.polygon(c)
            return float(poly.intersection(region).area - 3.0 * poly.intersection(rest).area)

        covers = rigid_covers("Brown", region, poses["Brown"])
        clear = [nearest_valid(c, others, max_px=MIRROR_NUDGE_PX, clearance=CLEARANCE_PX + GAP_PX) for c in covers]
        poses["Brown"] = max([*covers, *(c for c in clear if c is not None)], key=score)
    return poses, mirrored


CLOSE_PX = 4.0
"""The pieces stand a clearance apart in the game; a silhouette closes gaps this narrow."""


def silhouette(polys: Iterable[Polygon]) -> Polygon:
    """The outline a person sees: the pieces' union with hairline gaps between them closed."""
    return unary_union(list(polys)).buffer(CLOSE_PX, join_style="mitre").buffer(-CLOSE_PX, join_style="mitre")


def _iou(drawing: Polygon, poses: Mapping[str, Pose]) -> float:
    """Silhouette IoU after matching the centroids (spreading and centring only translate pieces)."""
    built = silhouette(shapes.polygon(p) for p in poses.values())
    dx0, dy0 = built.centroid.x - drawing.centroid.x, built.centroid.y - drawing.centroid.y
    best = 0.0
    for dx in (-4.0, -2.0, 0.0, 2.0, 4.0):  # spreading drifts the pieces a few pixels: best small shift
        for dy in (-4.0, -2.0, 0.0, 2.0, 4.0):
            moved = translate(drawing, dx0 + dx, dy0 + dy)
            best = max(best, float(built.intersection(moved).area / built.union(moved).area))
    return best


def import_svg(svg_text: str, names: FigureNames) -> Imported:
    """One SVG solution as a checked library figure (raises :class:`FigureError` with the reason)."""
    scaled = _scaled(read_polygons(svg_text))
    poses, mirrored = fit_drawing(scaled)
    try:
        placed = rounded(centre(spread(poses)))
    except SystemExit as exc:  # the design tool's helpers stop a command line; here it is one bad file
        raise FigureError(str(exc)) from None
    drawing = silhouette(Polygon(p) for p in scaled.values())
    x0, y0, x1, y1 = shapes.bounds(placed.values())
    center = ((x0 + x1) / 2, (y0 + y1) / 2)
    spec = FigureSpec(
        name=names.name, aliases=names.aliases, related=names.related,
        description=names.description or f"{names.name} (imported from an SVG solution)",
        mirror=True,
        pieces={n: SlotSpec(x=p.x, y=p.y, rotation=p.rotation, part=_part_name(n, p, center))
                for n, p in placed.items()})
    figure_from_spec(spec)  # the geometry engine's checks: on the board, nothing touching, a tangram's area
    return Imported(spec=spec, iou=_iou(drawing, placed), mirrored_parallelogram=mirrored)


def figure_yaml(imported: Imported, source: Path | None = None) -> str:
    head = (f"# The {imported.spec.name} figure, imported from {source.name if source else 'an SVG'} "
            f"(silhouette IoU {imported.iou:.3f} against the drawing).\n"
            "# Generated by `python -m agent.games.tangram.planner.tools.import_svg`.\n")
    doc = imported.spec.model_dump(exclude_defaults=True)
    doc["name"] = imported.spec.name
    doc["pieces"] = {n: {"x": s.x, "y": s.y, "rotation": s.rotation, "part": s.part}
                     for n, s in imported.spec.pieces.items()}
    return head + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110, default_flow_style=None)
