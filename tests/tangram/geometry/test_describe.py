"""The board description: exact numbers, orientation words, touching pairs and free space."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from shapely.geometry import Polygon, box

from agent.games.tangram.geometry.describe import _grid_cells, _largest_empty, describe_board
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.relations import resolve_relation


def test_empty_board() -> None:
    d = describe_board({})
    assert d.pieces == () and d.touching == ()
    assert "0 of 7 pieces" in d.text and "empty" in d.text
    assert [(f.x0, f.y0, f.x1, f.y1) for f in d.free] == [(0.0, 0.0, 100.0, 100.0)]


def test_piece_numbers_are_its_geometry() -> None:
    pose = Pose("Red", 30.0, 60.0, 0.0)
    d = describe_board({"Red": pose})
    (p,) = d.pieces
    x0, y0, x1, y1 = pose.bounds_board()
    assert p.bounds == pytest.approx((x0, y0, x1, y1))
    # "centre" is the reported marker, 4 px below Red's origin; the centroid is a third of the way up.
    assert p.position == pytest.approx((30.0 - 0.25 / 3.37, 60.0 - 4.0 / 3.22))
    assert p.centroid == pytest.approx((30.0, 60.0 - 25.6 / 3 / 3.22))
    assert x0 < p.position[0] < x1 and y0 < p.position[1] < y1
    assert "Red (large triangle): centre (29.9, 58.8), spans x 14.8-45.2, y 52.0-68.0, rotation 0:" in d.text


@pytest.mark.parametrize("piece,rotation,words", [
    ("Red", 0.0, "right angle pointing up, long side facing down"),
    ("Red", 180.0, "right angle pointing down"),
    ("Cream", 90.0, "right angle pointing right"),
    ("Yellow", -90.0, "right angle pointing left"),
    ("Blue", 0.0, "right angle pointing left, long side facing right"),
    ("Blue", 225.0, "right angle pointing down-right"),
    ("Green", 45.0, "right angle pointing up-right"),
    ("Purple", 0.0, "sides level"),
    ("Purple", 45.0, "diamond"),
    ("Purple", 30.0, "tilted 30 degrees"),
    ("Brown", 0.0, "long sides horizontal"),
    ("Brown", 90.0, "long sides vertical"),
    ("Brown", 45.0, "falling to the right"),
    ("Brown", 135.0, "rising to the right"),
])
def test_orientation_words(piece: str, rotation: float, words: str) -> None:
    d = describe_board({piece: Pose(piece, 50, 50, rotation)})
    assert words in d.pieces[0].orientation


def test_touching_and_overlapping_pairs() -> None:
    board = {"Purple": Pose("Purple", 50, 50, 0)}
    green = resolve_relation("Green", "left_of", "Purple", board)
    assert green is not None
    board["Green"] = green
    board["Red"] = Pose("Red", 80, 20, 0)
    board["Cream"] = Pose("Cream", 82, 22, 0)
    d = describe_board(board)
    assert d.touching == (("Green", "Purple"),)
    assert d.overlapping == (("Red", "Cream"),)
    assert "Touching: Green-Purple." in d.text
    assert "Red-Cream" in d.text and "collision" in d.text


def test_piece_off_the_board_is_flagged() -> None:
    d = describe_board({"Red": Pose("Red", 2, 50, 0)})
    assert d.off_board == ("Red",)
    assert "Sticking out of the board: Red." in d.text


def test_free_areas_avoid_the_pieces_and_are_described_by_region() -> None:
    board = {"Red": Pose("Red", 50, 50, 0), "Purple": Pose("Purple", 80, 80, 45)}
    d = describe_board(board)
    assert 1 <= len(d.free) <= 3
    for f in d.free:
        assert f.x1 - f.x0 >= 8 and f.y1 - f.y0 >= 8
        for pose in board.values():
            # The rectangle may pass a piece's bounding box only where the piece itself is not.
            assert not box(f.x0, f.y0, f.x1, f.y1).intersects(Polygon(pose.outline_board()))
    assert re.search(r"Largest free areas: x \d+-\d+, y \d+-\d+ \((top|bottom|left|right|centre)", d.text)


def test_text_is_deterministic_and_order_independent() -> None:
    a = {"Red": Pose("Red", 50, 50, 0), "Blue": Pose("Blue", 20, 20, 45)}
    b = {"Blue": Pose("Blue", 20, 20, 45), "Red": Pose("Red", 50, 50, 0)}
    assert describe_board(a).text == describe_board(b).text == describe_board(a).text
    assert describe_board(a).lines[1].startswith("- Red")  # the game's piece order, not the dict's


def _largest_empty_reference(occupied: np.ndarray, min_side: int) -> tuple[int, int, int, int] | None:
    """The search as first written (heights row by row, min/max per rectangle), to hold the
    faster one to the same answers, ties included."""
    rows, cols = occupied.shape
    heights = [0] * (cols + 1)
    best: tuple[float, tuple[int, int, int, int]] | None = None
    for r in range(rows):
        for c in range(cols):
            heights[c] = 0 if occupied[r, c] else heights[c] + 1
        stack: list[int] = []
        for c in range(cols + 1):
            h = heights[c]
            while stack and heights[stack[-1]] >= h:
                height = heights[stack.pop()]
                left = stack[-1] + 1 if stack else 0
                width = c - left
                if height >= min_side and width >= min_side:
                    score = min(height, width) * math.sqrt(max(height, width))
                    if best is None or score > best[0]:
                        best = (score, (r - height + 1, left, r + 1, left + width))
            stack.append(c)
    return best[1] if best else None


@pytest.mark.parametrize("seed", range(40))
def test_largest_empty_finds_what_the_plain_search_finds(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(1, 30)), int(rng.integers(1, 30)))
    occupied = rng.random(shape) < rng.uniform(0.0, 0.6)
    if seed % 5 == 0:
        occupied[:] = False  # one big square-ish tie-rich area
    for min_side in (1, 2, 4):
        assert _largest_empty(occupied, min_side) == _largest_empty_reference(occupied, min_side)


def test_grid_cells_are_made_once_and_cannot_be_changed() -> None:
    cells = _grid_cells(50)
    assert _grid_cells(50) is cells
    assert cells.shape == (50, 50)
    assert cells[0, 1].bounds == (2.0, 0.0, 4.0, 2.0)  # [row from bottom, column from left]
    with pytest.raises(ValueError):
        cells[0, 0] = None
