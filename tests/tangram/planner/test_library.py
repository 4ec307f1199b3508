"""The figure library: every figure is a valid tangram layout, objectives find their figure,
and the silhouette score behaves."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from agent.games.tangram.geometry.collide import CLEARANCE_PX, is_valid
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.planner import FigureError, load_figure, load_library, match_objective, shapes, silhouette_iou
from agent.games.tangram.planner.library import FIGURES_DIR

LIBRARY = load_library()
FIGURES = sorted(LIBRARY.names)
OBJECTIVES = {"A house": "house", "A fish": "fish", "A human": "human", "A rocket": "rocket", "A cat": "cat",
              "A robot": "robot"}
TANGRAM_AREA_PX = 102.4 ** 2


def test_library_covers_the_six_objectives_and_six_more() -> None:
    assert set(OBJECTIVES.values()) <= set(FIGURES)
    assert len(FIGURES) >= 12


@pytest.mark.parametrize("name", FIGURES)
def test_figure_is_a_valid_layout(name: str) -> None:
    fig = LIBRARY[name]
    assert set(fig.slots) == set(PIECE_NAMES)
    for piece, pose in fig.slots.items():
        others = [p for n, p in fig.slots.items() if n != piece]
        assert is_valid(pose, others, CLEARANCE_PX), f"{name}: {piece} touches something"
        assert pose.rotation % 45 == 0, f"{name}: {piece} turned {pose.rotation}"
        assert fig.parts[piece].strip()
    area = sum(shapes.polygon(p).area for p in fig.slots.values())
    assert area == pytest.approx(TANGRAM_AREA_PX, abs=120)
    assert sorted(fig.order) == sorted(PIECE_NAMES)


@pytest.mark.parametrize("name", FIGURES)
def test_figure_pieces_are_flush_not_scattered(name: str) -> None:
    """Every piece is within a few pixels of another one: the figure is one shape."""
    fig = LIBRARY[name]
    for piece, pose in fig.slots.items():
        gaps = [shapes.polygon(pose).distance(shapes.polygon(o)) for n, o in fig.slots.items() if n != piece]
        assert min(gaps) < 6.0, f"{name}: {piece} is {min(gaps):.1f} px from everything"


@pytest.mark.parametrize("name", FIGURES)
def test_figure_is_centred_and_its_variants_are_valid(name: str) -> None:
    fig = LIBRARY[name]
    x0, y0, x1, y1 = shapes.bounds(fig.slots.values())
    cx, cy = shapes.board_center_px()
    assert math.hypot((x0 + x1) / 2 - cx, (y0 + y1) / 2 - cy) < 2.0
    assert fig.variants[0].rotation == 0 and not fig.variants[0].mirrored
    for variant in fig.variants:
        for piece, pose in variant.slots.items():
            mine = shapes.polygon(pose).buffer(CLEARANCE_PX, join_style="mitre")
            assert not any(mine.intersects(shapes.polygon(o)) for n, o in variant.slots.items() if n != piece)


def test_mirror_and_turn_variants_exist_where_allowed() -> None:
    assert any(v.mirrored for v in LIBRARY["house"].variants)
    assert {v.rotation for v in LIBRARY["square"].variants} == {0.0, 90.0, 180.0, 270.0}
    assert not any(v.mirrored for v in LIBRARY["square"].variants)


@pytest.mark.parametrize("text,name", [
    ("A house", "house"), ("house", "house"), ("a little cat", "cat"), ("A Rocket!", "rocket"),
    ("the robot", "robot"), ("A human", "human"), ("a person", "human"), ("fish", "fish"),
    ("hous", "house"), ("a spaceship", "rocket"), ("Christmas tree", "tree"), ("a sail boat", "boat"),
])
def test_objective_matches_exactly(text: str, name: str) -> None:
    fig, exact = match_objective(text, LIBRARY)
    assert (fig.name, exact) == (name, True)


@pytest.mark.parametrize("text,name", [("a stingray", "fish"), ("a tiger", "cat"), ("a puppy dog", "dog"),
                                       ("a spaceship launch", "rocket"), ("A cow", "horse"),
                                       ("a spoon", "house"), ("", "house")])
def test_unknown_objective_picks_a_sensible_figure(text: str, name: str) -> None:
    fig, exact = match_objective(text, LIBRARY)
    assert fig.name == name
    assert exact is (text == "a puppy dog" or text == "a spaceship launch")


def test_unknown_objective_uses_the_configured_default() -> None:
    fig, exact = match_objective("a spoon", LIBRARY, default="cat")
    assert (fig.name, exact) == ("cat", False)


def test_short_words_are_not_typos() -> None:
    fig, exact = match_objective("what are you doing", LIBRARY)
    assert (fig.name, exact) == ("house", False)  # "are" is not "hare"


def test_silhouette_iou_of_the_figure_itself_is_one_anywhere() -> None:
    fig = LIBRARY["house"]
    assert silhouette_iou(fig.slots, fig) == pytest.approx(1.0, abs=1e-6)
    moved = {n: shapes.translate(p, -37.0, 21.5) for n, p in fig.slots.items()}
    assert silhouette_iou(moved, fig) == pytest.approx(1.0, abs=1e-3)
    assert silhouette_iou({}, fig) == 0.0


def test_silhouette_iou_of_a_mirrored_build_counts_the_variant() -> None:
    fig = LIBRARY["house"]
    mirrored = next(v for v in fig.variants if v.mirrored)
    assert silhouette_iou(mirrored.slots, fig) == pytest.approx(1.0, abs=1e-3)
    assert silhouette_iou(mirrored.slots, fig, variants=False) < 0.9


def test_silhouette_iou_of_partial_and_wrong_boards() -> None:
    fig = LIBRARY["fish"]
    half = {n: fig.slots[n] for n in ("Red", "Cream")}
    assert 0.45 < silhouette_iou(half, fig) < 0.55  # two large triangles are half the area
    scattered = {n: Pose(n, 12 + 12 * i, 15 + 11 * i, 0.0) for i, n in enumerate(PIECE_NAMES)}
    assert silhouette_iou(scattered, fig) < 0.35


def _write_figure(tmp: Path, pieces: dict[str, dict[str, float | str]]) -> Path:
    path = tmp / "bad.yaml"
    path.write_text(yaml.safe_dump({"name": "bad", "pieces": pieces}), encoding="utf-8")
    return path


def test_figure_files_are_validated(tmp_path: Path) -> None:
    house = yaml.safe_load((FIGURES_DIR / "house.yaml").read_text(encoding="utf-8"))["pieces"]
    missing = {n: v for n, v in house.items() if n != "Brown"}
    with pytest.raises(FigureError, match="exactly the seven"):
        load_figure(_write_figure(tmp_path, missing))
    overlapping = dict(house)
    overlapping["Brown"] = {**house["Red"], "rotation": 0.0, "part": "oops"}
    with pytest.raises(FigureError, match="touches"):
        load_figure(_write_figure(tmp_path, overlapping))
    assert load_figure(FIGURES_DIR / "house.yaml").name == "house"


def test_design_tool_reproduces_the_house_file() -> None:
    from agent.games.tangram.planner.tools.design import HERE, build

    sketch = yaml.safe_load((HERE / "sketches.yaml").read_text(encoding="utf-8"))["house"]
    built = build("house", sketch)
    stored = LIBRARY["house"].slots
    for name in PIECE_NAMES:
        assert shapes.placement_error(built[name], stored[name]) < 0.05
