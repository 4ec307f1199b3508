"""The simulator's report (issue 11, item 4): decisions under their own round (by turn id, not wall
time), a readable summary, per-objective and per-game tables, and each LLM call's prompt and reply
folded under its round."""

from __future__ import annotations

import copy
from pathlib import Path

from agent.core.transcript import Transcript
from agent.games.tangram.config import Config
from agent.games.tangram.contract import Decision, Player, TurnView
from agent.games.tangram.sim.report import write_report
from agent.games.tangram.sim.runner import (
    RunOptions,
    agent_notes,
    format_summary,
    per_game_rows,
    per_objective_rows,
    run_in_process,
    summarize,
    turn_map,
)
from agent.games.tangram.sim.scripted_agent import free_spot


class _PromptedPlayer(Player):
    """Places the next piece on a grid and records an LLM call the way the LLM player does."""

    name = "prompted"
    uses_images = False

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.calls = 0

    async def play(self, view: TurnView) -> Decision:
        self.calls += 1
        digest = self.transcript.text_once("system_prompt", "SYSTEM <rules>")
        self.transcript.record("llm", purpose="play", outcome="ok", system_sha256=digest,
                               messages=[{"role": "user", "text": f"PROMPT {self.calls} <board>"}],
                               text=f"REPLY {self.calls}", prompt_tokens=100, completion_tokens=10, elapsed_s=0.1)
        if self.calls == 2:  # as the LLM player records a salvaged answer and a re-ask
            self.transcript.record("reask", purpose="play", problem="no_piece", detail="place without a piece",
                                   sent=True)
            self.transcript.record("salvage", purpose="play", salvage="clamped", said="Red at (140, 50)",
                                   played="Red at (100, 50)", why="the board runs from 0 to 100 on both axes")
        pose = free_spot(view.board())
        return Decision(pose, f"Move {self.calls}.", reasoning=f"reason {self.calls}", source="llm")

    async def adjust(self, view: TurnView) -> Decision:
        return Decision(None, "I'll leave it.", source="test")

    async def chat(self, view: TurnView) -> str:
        return "Sure!"


async def _run(tmp_path: Path, games: int = 2, turns: int = 3) -> tuple[RunOptions, list]:
    options = RunOptions(games=games, turns=turns, human="random", seed=5, tween=0.0, parallel=games, deadline=20,
                         objective=None)
    results = await run_in_process(Config(), options, tmp_path / "tr", player_factory=_PromptedPlayer)
    return options, results


async def test_decisions_are_matched_by_turn_id_even_when_clocks_disagree(tmp_path: Path) -> None:
    _, results = await _run(tmp_path, games=1, turns=3)
    result = results[0]
    notes = agent_notes(result)
    assert {n: [r["reasoning"] for r in recs] for n, recs in notes.items()} == {
        1: ["reason 1"], 2: ["reason 2"], 3: ["reason 3"]}
    # Wall times that say nothing (an agent on another machine, a clock step) change nothing.
    assert result.agent_records is not None
    skewed = copy.copy(result)
    skewed.agent_records = [{**rec, "t": 0.0} for rec in result.agent_records]
    assert agent_notes(skewed) == {n: [{**r, "t": 0.0} for r in recs] for n, recs in notes.items()}


def test_turn_map_follows_the_playrequests_the_agent_read() -> None:
    records = [{"kind": "frame_in", "type": "playRequest", "turn": 4}, {"kind": "frame_in", "type": "chatRequest"},
               {"kind": "frame_in", "type": "playRequest", "turn": 5}]
    assert turn_map(records) == {4: 1, 5: 2}
    assert turn_map([{"kind": "turn_start", "turn": 2}, {"kind": "turn_start", "turn": 1}]) == {1: 1, 2: 2}


async def test_report_has_readable_summary_tables_and_folded_prompts(tmp_path: Path) -> None:
    options, results = await _run(tmp_path)
    summary = summarize(results, options, "in-process", transcripts=True)
    text = format_summary(summary)
    assert "None" not in text and "{" not in text

    games = per_game_rows(results)
    assert [g["game"] for g in games] == [1, 2] and all(g["AI turns"] == 3 and g["LLM calls"] == 3 for g in games)
    objectives = per_objective_rows(results)
    assert sum(o["games"] for o in objectives) == 2 and {o["objective"] for o in objectives} == {
        r.objective for r in results}

    index = write_report(tmp_path / "report", summary, results)
    html = index.read_text()
    assert "Per objective" in html and "Per game" in html and "None" not in html
    assert html.count("<details>") == 6  # one LLM call per AI turn, folded
    assert "PROMPT 2 &lt;board&gt;" in html and "REPLY 3" in html and "SYSTEM &lt;rules&gt;" in html
    # Round 2's call sits in round 2's block, after round 1's.
    game1 = html[html.index('id="game-1"'):html.index('id="game-2"')]
    assert game1.index("PROMPT 1") < game1.index("Round 2 &middot; human") < game1.index("PROMPT 2")
    # Salvages and re-asks show among the round's decisions, in round 2 only.
    salvaged = "[salvaged: clamped] the model said Red at (140, 50); played Red at (100, 50), because the board"
    assert game1.count(salvaged) == 1 and game1.count("[re-ask: no_piece] place without a piece: asked again") == 1
    assert game1.index("Round 2 &middot; human") < game1.index(salvaged) < game1.index("Round 3 &middot; human")


def test_summary_without_transcripts_says_so() -> None:
    text = format_summary(summarize([], RunOptions(), "x", transcripts=False))
    assert "not known" in text and "None" not in text


def test_an_agent_that_cannot_be_reached_is_one_error_line(capsys) -> None:
    from agent.games.tangram.sim.__main__ import main

    assert main(["--connect", "ws://127.0.0.1:1", "--games", "2", "--turns", "1", "--no-progress"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: no game could be played against ws://127.0.0.1:1: ")
