"""The offline planner through the simulator, over real sockets: the issue's 'done when'."""

from __future__ import annotations

import pytest

from agent.games.tangram.config import Config
from agent.games.tangram.planner import load_library
from agent.games.tangram.sim.runner import RunOptions, run_in_process, summarize

GAME_OBJECTIVES = ["A house", "A fish", "A human", "A rocket", "A cat", "A robot"]


def offline(tmp_path) -> Config:
    return Config.model_validate({"player": "planner", "transcripts": {"dir": str(tmp_path / "t")}})


_IN_THE_GAME = {"house", "fish", "human", "rocket", "cat", "robot"}


@pytest.mark.parametrize("objective", GAME_OBJECTIVES + [f"a {f.name}" for f in load_library()
                                                         if f.name not in _IN_THE_GAME])
async def test_every_figure_is_completed_with_a_passive_human(tmp_path, objective):
    options = RunOptions(games=1, turns=8, human="passive", seed=3, objective=objective, tween=0.0, deadline=20)
    results = await run_in_process(offline(tmp_path), options, tmp_path / "t")
    summary = summarize(results, options, "planner", transcripts=True)
    assert summary["turns_ended"] == summary["turns"] == 8
    assert summary["turns_undone"] == 0 and summary["protocol_violations"] == 0
    assert summary["pieces_on_board_mean"] == 7
    assert summary["figure_score_mean"] >= 0.9


async def test_random_human_mean_iou_and_no_undone_turns(tmp_path):
    options = RunOptions(games=6, turns=9, human="random", seed=11, tween=0.0, deadline=20, parallel=6)
    results = await run_in_process(offline(tmp_path), options, tmp_path / "t")
    summary = summarize(results, options, "planner", transcripts=True)
    assert summary["turns_ended"] == summary["turns"]
    assert summary["turns_undone"] == 0 and summary["protocol_violations"] == 0
    assert summary["figure_score_mean"] >= 0.7


async def test_reanchoring_to_a_cooperative_human_builds_the_figure_together(tmp_path):
    options = RunOptions(games=3, turns=4, human="cooperative", seed=5, tween=0.0, deadline=20, parallel=3)
    results = await run_in_process(offline(tmp_path), options, tmp_path / "t")
    summary = summarize(results, options, "planner", transcripts=True)
    assert summary["pieces_on_board_mean"] == 7 and summary["turns_undone"] == 0
    assert summary["figure_score_mean"] >= 0.9
