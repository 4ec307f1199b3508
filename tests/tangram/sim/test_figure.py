"""The figure score: silhouette IoU after the best translation."""

from __future__ import annotations

import pytest

from agent.games.tangram.geometry.frames import Pose, start_pose
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.sim import figure as sim_figure
from agent.games.tangram.sim.figure import best_translation_iou, figure_poses, figure_score, target_poses

SQUARE = [start_pose(n) for n in PIECE_NAMES]  # the drawer's classic square


def _shift(poses: list[Pose], dx: float, dy: float) -> list[Pose]:
    return [Pose(p.piece, p.x + dx, p.y + dy, p.rotation) for p in poses]


def test_the_same_shape_elsewhere_scores_one() -> None:
    assert best_translation_iou(_shift(SQUARE, -120, 30), SQUARE) == pytest.approx(1.0, abs=0.01)


def test_part_of_the_shape_scores_its_share() -> None:
    big_two = [p for p in SQUARE if p.piece in ("Red", "Cream")]  # half of the square's area
    assert best_translation_iou(big_two, SQUARE) == pytest.approx(0.5, abs=0.02)


def test_empty_board_scores_zero() -> None:
    assert best_translation_iou([], SQUARE) == 0.0


def test_figure_poses_reads_mappings_and_sequences() -> None:
    assert figure_poses({p.piece: p for p in SQUARE}) == {p.piece: p for p in SQUARE}
    assert list(figure_poses(SQUARE) or {}) == list(PIECE_NAMES)
    assert figure_poses(None) is None and figure_poses(object()) is None


def test_score_against_the_planners_figure() -> None:
    targets = target_poses("A house")
    assert targets is not None and set(targets) == set(PIECE_NAMES)  # the planner is part of the project
    assert figure_score(targets, "A house") == pytest.approx(1.0, abs=0.01)
    assert figure_score({}, "A house") == 0.0


def test_only_an_empty_objective_has_no_figure() -> None:
    assert target_poses("") is None and figure_score({}, "") is None
    assert target_poses("a zqxv") is not None  # no such figure: the library's fallback one


def test_planner_errors_are_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(text: str) -> None:
        raise RuntimeError("figure library damaged")

    monkeypatch.setattr(sim_figure, "match_objective", broken)
    with pytest.raises(RuntimeError, match="figure library damaged"):
        target_poses("A house")
    with pytest.raises(RuntimeError, match="figure library damaged"):
        figure_score({}, "A house")
