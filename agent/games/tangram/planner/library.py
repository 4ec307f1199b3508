"""The figure library: YAML files in ``agent/planner/figures`` validated into :class:`Figure` objects.

A figure file names the figure, the words that ask for it, and for each of the seven pieces its
exact pose (node origin in board units, degrees clockwise) and the part of the figure it forms.
Loading checks what the game will check: every piece on the board with a clearance, and no two
pieces touching. Each figure also carries its *variants*: the same layout turned or mirrored, as
far as the figure allows and the rigid pieces can do it (the parallelogram cannot be flipped, so a
mirrored variant keeps it only when a nearby pose still fits).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from shapely.geometry import Polygon
from shapely.ops import unary_union

from agent.games.tangram.geometry.collide import CLEARANCE_PX, is_valid
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.pieces import PIECE_NAMES, TOTAL_AREA_PX, Point
from agent.games.tangram.planner import shapes
from agent.games.tangram.planner.search import nearest_valid

FIGURES_DIR = Path(__file__).resolve().parent / "figures"
FALLBACK_FIGURE = "house"
_AREA_TOLERANCE_PX2 = 150.0
_MIRROR_NUDGE_PX = 12.0
_MIRROR_MIN_IOU = 0.9


class FigureError(ValueError):
    """A figure file that cannot be used; the message names the file and the reason."""


class SlotSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    x: float = Field(ge=0, le=100)
    y: float = Field(ge=0, le=100)
    rotation: float = Field(ge=-720, le=720)
    part: str = Field(min_length=1, max_length=40)


class FigureSpec(BaseModel):
    """One figure file as written."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9 ]{0,30}$")
    aliases: list[str] = Field(default_factory=list)
    related: list[str] = Field(default_factory=list)
    traits: list[str] = Field(default_factory=list, description=(
        "Words that pick this figure among others of its kind ('sitting', 'kneeling')."))
    kind_of: str | None = Field(None, description=(
        "A figure whose words also name this one when a trait is said ('a man sitting' -> sitting person)."))
    description: str = ""
    rotations: list[float] = Field(default_factory=lambda: [0.0],
                                   description="Whole-figure turns allowed when re-anchoring.")
    mirror: bool = Field(True, description="May the figure be built as its mirror image?")
    order: list[str] | None = Field(None, description="Build order; default: big pieces first, lower ones first.")
    pieces: dict[str, SlotSpec]

    @field_validator("aliases", "related", "traits")
    @classmethod
    def _words(cls, v: list[str]) -> list[str]:
        return [normalize_text(w) for w in v if normalize_text(w)]

    @model_validator(mode="after")
    def _complete(self) -> FigureSpec:
        if set(self.pieces) != set(PIECE_NAMES):
            missing = sorted(set(PIECE_NAMES) - set(self.pieces))
            extra = sorted(set(self.pieces) - set(PIECE_NAMES))
            raise ValueError(f"pieces must be exactly the seven; missing {missing}, unknown {extra}")
        if self.order is not None and sorted(self.order) != sorted(PIECE_NAMES):
            raise ValueError("order must list each of the seven pieces once")
        if 0.0 not in [r % 360 for r in self.rotations]:
            raise ValueError("rotations must include 0")
        return self


@dataclass(frozen=True)
class Variant:
    """The figure turned ``rotation`` degrees clockwise, then mirrored if ``mirrored``.

    ``slots`` keep the canonical figure's centre, so a variant is placed by one translation.
    """

    rotation: float
    mirrored: bool
    slots: Mapping[str, Pose]

    @property
    def label(self) -> str:
        parts = []
        if self.rotation:
            parts.append(f"turned {self.rotation:g} degrees")
        if self.mirrored:
            parts.append("mirrored")
        return " and ".join(parts) or "as drawn"


@dataclass(frozen=True)
class Figure:
    name: str
    aliases: tuple[str, ...]
    related: tuple[str, ...]
    description: str
    slots: Mapping[str, Pose]
    """Canonical target pose of each piece (board units)."""
    parts: Mapping[str, str]
    """Piece name -> part of the figure it forms ("roof")."""
    order: tuple[str, ...]
    center_px: Point
    variants: tuple[Variant, ...] = field(default=())
    source: Path | None = None
    traits: tuple[str, ...] = ()
    kind_of: str | None = None

    def part(self, piece: str) -> str:
        return self.parts[piece]

    def pieces_with_part(self, words: str) -> list[str]:
        """Pieces whose part name contains all the given words (so "ear" finds both ears)."""
        wanted = normalize_text(words).split()
        if not wanted:
            return []
        hits = [p for p in self.order if all(w in normalize_text(self.parts[p]).split() or
                                               w.rstrip("s") in normalize_text(self.parts[p]).split()
                                               for w in wanted)]
        return hits

    @property
    def words(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


@dataclass(frozen=True, eq=False)  # hashed by identity: the matcher caches its index per library
class FigureLibrary:
    figures: Mapping[str, Figure]

    def __iter__(self) -> Iterator[Figure]:
        return iter(self.figures.values())

    def __len__(self) -> int:
        return len(self.figures)

    def __getitem__(self, name: str) -> Figure:
        return self.figures[name]

    def get(self, name: str | None) -> Figure | None:
        return self.figures.get(normalize_text(name or ""))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.figures)


# ---------------------------------------------------------------- loading


def _default_order(slots: Mapping[str, Pose]) -> tuple[str, ...]:
    """Big pieces first; among equals the lower one first, since it is what others rest on."""
    def key(name: str) -> tuple[float, float]:
        return (-round(shapes.piece_area(name)), -shapes.vertex_centroid(slots[name])[1])
    return tuple(sorted(slots, key=key))


def _check_layout(slots: Mapping[str, Pose], where: str, boundary: bool = True) -> None:
    for name, pose in slots.items():
        others = [p for n, p in slots.items() if n != name]
        if boundary and not is_valid(pose, others, CLEARANCE_PX):
            raise FigureError(f"{where}: {name} touches another piece or the board's edge")
        if not boundary:
            mine = shapes.polygon(pose).buffer(CLEARANCE_PX, join_style="mitre")
            if any(mine.intersects(shapes.polygon(o)) for o in others):
                raise FigureError(f"{where}: {name} touches another piece")
    area = sum(shapes.polygon(p).area for p in slots.values())
    if abs(area - TOTAL_AREA_PX) > _AREA_TOLERANCE_PX2:
        raise FigureError(f"{where}: pieces cover {area:.0f} px^2, not a tangram's {TOTAL_AREA_PX:.0f}")


def _nearest_clear(pose: Pose, others: list[Pose], max_px: float = 12.0) -> Pose | None:
    """A small shift of ``pose`` that clears ``others`` with some margin, or None."""
    return nearest_valid(pose, {o.piece: o for o in others}, max_px=max_px, clearance=CLEARANCE_PX + 0.3)


def rigid_covers(piece: str, region: Polygon, fitted: Pose) -> list[Pose]:
    """Poses of ``piece`` that might stand in for ``region``: the least-squares fit, and each turn
    by a multiple of 45 degrees centred on the region."""
    cx, cy = region.centroid.x, region.centroid.y
    out = [fitted]
    for k in range(8):
        probe = shapes.with_origin_px(piece, 0.0, 0.0, 45.0 * k)
        gx, gy = shapes.polygon(probe).centroid.coords[0]
        ox0, oy0 = probe.origin_px
        out.append(shapes.with_origin_px(piece, ox0 + cx - gx, oy0 + cy - gy, 45.0 * k))
    return out


def _silhouette_iou(a: Iterable[Polygon], b: Iterable[Polygon]) -> float:
    ua, ub = unary_union(list(a)), unary_union(list(b))
    return ua.intersection(ub).area / ua.union(ub).area


def _variants(slots: Mapping[str, Pose], center: Point, rotations: Iterable[float],
              mirror: bool) -> tuple[Variant, ...]:
    out: list[Variant] = []
    for rot in dict.fromkeys(float(r) % 360 for r in rotations):
        turned = {n: shapes.rotate_about(p, rot, center) if rot else p for n, p in slots.items()}
        out.append(Variant(rot, False, turned))
        if not mirror:
            continue
        mirrored: dict[str, Pose] = {}
        chiral: list[str] = []
        for n, p in turned.items():
            m, err = shapes.mirror(p, center[0])
            mirrored[n] = m
            if err > 2.0:
                chiral.append(n)
        ok = True
        for n in chiral:
            # The parallelogram cannot be flipped: of the poses that come close to its mirror image,
            # take the one covering most of it once nudged clear of its neighbours.
            region = Polygon([(2 * center[0] - x, y) for x, y in turned[n].outline_px()])
            others = [p for k, p in mirrored.items() if k != n]
            best: tuple[float, Pose] | None = None
            for cand in rigid_covers(n, region, mirrored[n]):
                fixed = _nearest_clear(cand, others, max_px=_MIRROR_NUDGE_PX)
                if fixed is not None:
                    cover = shapes.polygon(fixed).intersection(region).area
                    if best is None or cover > best[0]:
                        best = (cover, fixed)
            if best is None:
                ok = False
                break
            mirrored[n] = best[1]
        if ok:
            exact = [Polygon([(2 * center[0] - x, y) for x, y in p.outline_px()]) for p in turned.values()]
            ok = _silhouette_iou(exact, [shapes.polygon(p) for p in mirrored.values()]) >= _MIRROR_MIN_IOU
        if ok:
            try:
                _check_layout(mirrored, "mirror", boundary=False)
            except FigureError:
                ok = False
        if ok:
            out.append(Variant(rot, True, mirrored))
    return tuple(out)


def figure_from_spec(spec: FigureSpec, source: Path | None = None) -> Figure:
    where = str(source or spec.name)
    slots = {n: Pose(n, s.x, s.y, s.rotation) for n, s in spec.pieces.items()}
    slots = {n: slots[n] for n in PIECE_NAMES}
    _check_layout(slots, where)
    x0, y0, x1, y1 = shapes.bounds(slots.values())
    center = ((x0 + x1) / 2, (y0 + y1) / 2)
    order = tuple(spec.order) if spec.order else _default_order(slots)
    return Figure(
        name=spec.name, aliases=tuple(spec.aliases), related=tuple(spec.related), description=spec.description,
        slots=slots, parts={n: spec.pieces[n].part for n in PIECE_NAMES}, order=order, center_px=center,
        variants=_variants(slots, center, spec.rotations, spec.mirror), source=source,
        traits=tuple(spec.traits), kind_of=spec.kind_of)


def load_figure(path: str | Path) -> Figure:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise FigureError(f"{path}: cannot read ({exc})") from exc
    try:
        spec = FigureSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise FigureError(f"{path}: {loc}: {err['msg']}") from exc
    return figure_from_spec(spec, path)


@functools.lru_cache(maxsize=8)
def _load_dir(directory: Path) -> FigureLibrary:
    figures: dict[str, Figure] = {}
    for path in sorted(directory.glob("*.yaml")):
        fig = load_figure(path)
        if fig.name in figures:
            raise FigureError(f"{path}: figure {fig.name!r} is defined twice")
        figures[fig.name] = fig
    if not figures:
        raise FigureError(f"{directory}: no figure files")
    return FigureLibrary(figures)


def load_library(directory: str | Path | None = None, extra: Iterable[str | Path] = ()) -> FigureLibrary:
    """All figures of a folder (default: the built-in library) plus those of the ``extra`` folders,
    where a figure of an extra folder replaces a same-named one before it; read once and cached."""
    base = _load_dir(Path(directory or FIGURES_DIR).resolve())
    dirs = tuple(Path(d).resolve() for d in extra)
    return _merged(base, dirs) if dirs else base


@functools.lru_cache(maxsize=8)
def _merged(base: FigureLibrary, dirs: tuple[Path, ...]) -> FigureLibrary:
    figures = dict(base.figures)
    for directory in dirs:
        if not directory.is_dir():
            raise FigureError(f"{directory}: not a folder of figure files")
        figures.update(_load_dir(directory).figures)
    return FigureLibrary(figures)


# ---------------------------------------------------------------- objective matching


def normalize_text(text: str) -> str:
    text = text.lower().replace("'", "")
    return " ".join(re.findall(r"[a-z0-9]+", text))
