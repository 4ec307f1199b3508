"""SVG tangram solutions become playable library figures (issue 32, point 3).

The SVGs are made here from our own figures' outlines, scaled and shifted as a drawing program
would, so the expected silhouette is known exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from shapely.affinity import scale, translate
from shapely.geometry import Polygon
from shapely.ops import unary_union

from agent.games.tangram.offline.agent import OfflineAgent
from agent.games.tangram.planner import shapes
from agent.games.tangram.planner.library import FigureError, load_library
from agent.games.tangram.planner.matching import find_figure
from agent.games.tangram.planner.svgimport import FigureNames, import_svg, read_polygons
from agent.games.tangram.planner.tools import design
from agent.games.tangram.planner.tools import import_svg as tool

LIBRARY = load_library()


def _drawing(name: str, mirror: bool = False, factor: float = 0.6) -> list[Polygon]:
    polys = [Polygon(shapes.polygon(p).exterior.coords) for p in LIBRARY[name].slots.values()]
    if mirror:
        polys = [scale(p, xfact=-1.0, yfact=1.0, origin=(0, 0)) for p in polys]
    polys = [scale(p, xfact=factor, yfact=factor, origin=(0, 0)) for p in polys]
    x0, y0, _, _ = unary_union(polys).bounds
    return [translate(p, 10 - x0, 10 - y0) for p in polys]


def _touching_drawing(name: str) -> list[Polygon]:
    """The figure as drawn in its sketch: every piece flush against its neighbours, as in a
    published solution (the library's own figures are already spread apart)."""
    sketch = yaml.safe_load((Path(design.__file__).parent / "sketches.yaml").read_text(encoding="utf-8"))[name]
    return [Polygon(shapes.polygon(p).exterior.coords) for p in design.fit_sketch(name, sketch).values()]


def _svg(polys: list[Polygon]) -> str:
    items = "".join(
        f'<polygon fill="gray" id="{i}" points="{" ".join(f"{x:.4f},{y:.4f}" for x, y in p.exterior.coords[:-1])}"/>'
        for i, p in enumerate(polys))
    return f'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 300 300">{items}</svg>'


def _iou_with_drawing(imported_pieces: dict[str, tuple[float, float, float]], polys: list[Polygon]) -> float:
    from agent.games.tangram.geometry.frames import Pose

    built = unary_union([shapes.polygon(Pose(n, x, y, r)) for n, (x, y, r) in imported_pieces.items()])
    drawing = unary_union(polys)
    k = (built.area / drawing.area) ** 0.5
    drawing = scale(drawing, xfact=k, yfact=k, origin=(0, 0))
    drawing = translate(drawing, built.centroid.x - drawing.centroid.x, built.centroid.y - drawing.centroid.y)
    return float(built.intersection(drawing).area / built.union(drawing).area)


@pytest.mark.parametrize("name,mirror", [("house", False), ("cat", False), ("fish", True), ("running person", True)])
def test_an_svg_solution_becomes_a_checked_figure_close_to_the_drawing(name: str, mirror: bool) -> None:
    polys = _drawing(name, mirror)
    imported = import_svg(_svg(polys), FigureNames(name="my figure", aliases=["thing"]))
    pieces = {n: (s.x, s.y, s.rotation) for n, s in imported.spec.pieces.items()}
    # Measured independently of the importer's own number.
    assert _iou_with_drawing(pieces, polys) >= 0.9
    assert imported.iou >= 0.9
    assert all(s.part for s in imported.spec.pieces.values())


@pytest.mark.parametrize("name", ["square", "house", "bird", "cat", "human", "rocket"])
def test_a_drawing_with_pieces_flush_against_each_other_is_spread_and_stays_close(name: str) -> None:
    polys = _touching_drawing(name)
    imported = import_svg(_svg(polys), FigureNames(name="flush"))
    pieces = {n: (s.x, s.y, s.rotation) for n, s in imported.spec.pieces.items()}
    assert imported.iou >= 0.9 and not imported.mirrored_parallelogram
    assert _iou_with_drawing(pieces, polys) >= 0.85  # without closing the clearance gaps


def test_a_mirrored_parallelogram_is_reported() -> None:
    mirrored = import_svg(_svg(_drawing("fish", mirror=True)), FigureNames(name="a"))
    plain = import_svg(_svg(_drawing("fish")), FigureNames(name="b"))
    assert mirrored.mirrored_parallelogram and not plain.mirrored_parallelogram
    assert plain.iou > 0.97


def test_the_tool_writes_playable_figures_that_figures_dir_loads(tmp_path: Path) -> None:
    svg_dir, out = tmp_path / "svg", tmp_path / "figures"
    svg_dir.mkdir()
    (svg_dir / "page-1.svg").write_text(_svg(_drawing("house")), encoding="utf-8")
    (svg_dir / "page-2.svg").write_text(_svg(_drawing("dog", mirror=True)), encoding="utf-8")
    (tmp_path / "names.yaml").write_text(
        "page-1: {name: cottage by the sea, aliases: [seaside cottage]}\npage-2: wolf figure\n", encoding="utf-8")
    assert tool.main([str(svg_dir), str(out), "--names", str(tmp_path / "names.yaml")]) == 0
    library = load_library(extra=[out])
    assert len(library) == len(LIBRARY) + 2
    fig, exact = find_figure("a seaside cottage", library)
    assert fig is not None and (fig.name, exact) == ("cottage by the sea", True)
    for name in ("cottage by the sea", "wolf figure"):
        planner, board = OfflineAgent(library), {}
        for _ in range(9):
            d = planner.play(name, board)
            if d.pose is not None:
                board[d.pose.piece] = d.pose
        assert len(board) == 7
        assert all(shapes.placement_error(board[n], p) < 0.01 for n, p in library[name].slots.items())


def test_bad_drawings_are_refused_with_the_reason(tmp_path: Path) -> None:
    six = _drawing("house")[:6]
    with pytest.raises(FigureError, match="seven"):
        import_svg(_svg(six), FigureNames(name="x"))
    with pytest.raises(FigureError, match="not an SVG"):
        read_polygons("<svg><polygon")
    svg_dir = tmp_path / "svg"
    svg_dir.mkdir()
    (svg_dir / "bad.svg").write_text(_svg(six), encoding="utf-8")
    assert tool.main([str(svg_dir), str(tmp_path / "out")]) == 1
    with pytest.raises(FigureError, match="not a folder"):
        load_library(extra=[tmp_path / "nowhere"])


def test_figures_dir_takes_one_folder_or_a_list_and_a_bad_one_fails_at_start(tmp_path: Path) -> None:
    from agent.core.config import ConfigError
    from agent.games.tangram.config import Config
    from agent.games.tangram.link.factory import check_planner_config
    from agent.games.tangram.offline.player import PlannerPlayer

    svg_dir, out = tmp_path / "svg", tmp_path / "figures"
    svg_dir.mkdir()
    (svg_dir / "lighthouse-keeper.svg").write_text(_svg(_drawing("human")), encoding="utf-8")
    assert tool.main([str(svg_dir), str(out)]) == 0
    one = Config.model_validate({"planner": {"figures_dir": str(out), "default_figure": "lighthouse keeper"}})
    assert one.planner.figures_dir == [out]
    check_planner_config(one)  # the default figure is found among the extra figures
    assert "lighthouse keeper" in PlannerPlayer(one).planner.library.names
    bad = Config.model_validate({"planner": {"figures_dir": [str(out), str(tmp_path / "nowhere")]}})
    with pytest.raises(ConfigError, match="figures_dir"):
        check_planner_config(bad)
