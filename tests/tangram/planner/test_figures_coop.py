"""Every figure of the library is built by the planner together with the simulator's cooperative
partner over real sockets: figure score >= 0.9, every turn finished, none undone (issue 32)."""

from __future__ import annotations

import pytest

from agent.games.tangram.config import Config
from agent.games.tangram.planner import load_library
from agent.games.tangram.sim.runner import RunOptions, run_in_process, summarize

_IN_THE_GAME = {"house", "fish", "human", "rocket", "cat", "robot"}
NEW_FIGURES = sorted(f.name for f in load_library() if f.name not in _IN_THE_GAME)


@pytest.mark.parametrize("name", NEW_FIGURES)
async def test_figure_is_built_with_the_cooperative_partner(tmp_path, name):
    config = Config.model_validate({"player": "planner", "transcripts": {"dir": str(tmp_path / "t")}})
    options = RunOptions(games=1, turns=5, human="cooperative", seed=7, objective=f"a {name}", tween=0.0,
                         deadline=20)
    results = await run_in_process(config, options, tmp_path / "t")
    summary = summarize(results, options, "planner", transcripts=True)
    assert summary["turns_ended"] == summary["turns_finished"] == summary["turns"] == 5
    assert summary["turns_undone"] == 0 and summary["protocol_violations"] == 0
    assert summary["pieces_on_board_mean"] == 7
    assert summary["figure_score_mean"] >= 0.9
