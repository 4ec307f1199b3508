"""The reply benchmark: its held-back set is well formed (never played here), its games reach their stage,
its count is the judge's marks."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agent.games.tangram.planner import load_library
from benchmarks.tangram.bench_replies import count, describe, recorded, situation, under_way

SET = Path(__file__).resolve().parents[3] / "benchmarks" / "tangram" / "replies" / "heldback_replies.yaml"
RUBRIC = SET.parent / "rubric.md"
LIBRARY = load_library()


def test_the_held_back_set_has_a_hundred_lines_half_portuguese() -> None:
    items = yaml.safe_load(SET.read_text(encoding="utf-8"))
    assert len(items) >= 100
    assert 2 * sum(i["lang"] == "pt" for i in items) == len(items)
    assert len({i["id"] for i in items}) == len(items)
    for item in items:
        assert set(item) >= {"id", "lang", "objective", "stage", "say", "right_when"}, item
        assert item["stage"] in ("start", "early", "mid", "done"), item
        assert item["objective"] in ("A house", "A fish", "A human", "A rocket", "A cat", "A robot"), item
    assert RUBRIC.is_file()


@pytest.mark.parametrize(("stage", "pieces"), [("start", 0), ("early", 2), ("mid", 4)])
def test_a_game_reaches_its_stage(stage: str, pieces: int) -> None:
    planner, board, movers, _ = situation({"objective": "A fish", "stage": stage, "partner": ["Purple"]}, LIBRARY)
    assert len(board) == pieces
    assert sorted(movers.values()).count("partner") == pieces // 2
    if pieces:
        assert movers["Purple"] == "partner"


def test_a_done_game_has_the_figure_complete() -> None:
    planner, board, movers, _ = situation({"objective": "A house", "stage": "done"}, LIBRARY)
    assert len(planner.fit(board, commit=False).matched) == 7
    assert describe(planner, board, movers)[-1] == "in the drawer: none"


def test_a_line_while_the_agent_moves_finds_its_move_decided_and_not_landed() -> None:
    planner, board, movers, said = situation({"objective": "A fish", "stage": "early", "moving": True}, LIBRARY)
    pose = planner.state.announced_pose
    assert pose is not None and pose.piece not in board and len(board) == 2
    assert said != planner.state.last_line  # the move's own line is said when the turn ends
    assert under_way(planner, board).startswith(f"{pose.piece}: the agent is placing it from the drawer as the ")


def test_the_score_is_the_judges_marks() -> None:
    sheet = [{"id": "a", "lang": "en", "say": "x", "reply": "y"}, {"id": "b", "lang": "pt", "say": "z", "reply": "w"}]
    text = count(sheet, {"a": {"right": True}, "b": {"right": False, "rule": 3}})
    assert "all: 1 of 2 replies right (50 %)" in text
    assert "wrong b (rule 3)" in text


def test_without_arguments_every_marked_run_is_scored(tmp_path: Path) -> None:
    row = '{"id": "a", "lang": "en", "say": "x", "reply": "y"}\n'
    (tmp_path / "sheet-sim-9.jsonl").write_text(row, encoding="utf-8")
    (tmp_path / "marks-sim-9.yaml").write_text("a: {right: true}\n", encoding="utf-8")
    (tmp_path / "sheet-real-9.jsonl").write_text("", encoding="utf-8")
    text = recorded(tmp_path)
    assert "sim-9: all: 1 of 1 replies right (100 %)" in text and "real-9: not marked yet" in text
