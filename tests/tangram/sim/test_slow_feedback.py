"""The agent against the simulator answering plays as slowly as the real game (issue 49, must have 1).

Over real sockets, in real time: the simulator's ``real`` feedback delay (2.3-4.8 s a play, drawn
per play). Every AI turn must end with ``finish``, none before its plays' feedback (the simulator
flags ``did_not_wait_for_feedback`` and ``finish_during_animation``), and no chat line may say the
turn ran out of time after a play was made.
"""

from __future__ import annotations

from pathlib import Path

from agent.games.tangram.config import Config
from agent.games.tangram.sim.feedback_delay import PRESETS, FeedbackDelay
from agent.games.tangram.sim.runner import RunOptions, run_in_process, summarize
from agent.games.tangram.turn.lines import shipped_turn_lines


async def test_the_offline_agent_on_the_real_games_feedback_times_ends_every_turn_after_its_feedback(
        tmp_path: Path) -> None:
    config = Config.model_validate({"player": "planner", "turn": {"deadline": 12},
                                    "transcripts": {"dir": str(tmp_path / "t")}})
    options = RunOptions(games=1, turns=3, human="cooperative", seed=2, objective="A house", tween=0.5,
                         deadline=40, feedback_delay=PRESETS["real"])
    [result] = await run_in_process(config, options, tmp_path / "t")
    summary = summarize([result], options, "planner", transcripts=True)
    assert summary["violations_by_kind"] == {} and summary["turns_finished"] == summary["turns"] == 3
    turns = result.game.turns
    played = [p for turn in turns for p in turn.plays]
    assert len(played) >= 2 and all(p.landing is not None and 2.3 <= p.landing <= 4.8 for p in played)
    for turn in turns:
        assert turn.ended_by == "finish" and turn.ended_at is not None and not turn.landed_unchecked
        for play in turn.plays:
            assert play.landing is not None and turn.ended_at >= play.at + play.landing
    ran_out = shipped_turn_lines()("ran_out")
    assert not any(turn.plays and ran_out in turn.agent_chat for turn in turns)
    # The agent measured the game's landings (as sent and received over the socket).
    landings = [r["seconds"] for r in result.agent_records or [] if r["kind"] == "landing"]
    assert len(landings) == len(played) and min(landings) >= 2.3


async def test_a_deadline_shorter_than_the_games_landing_waits_for_the_first_play_then_starts_none(
        tmp_path: Path) -> None:
    # A 4 s turn on a game that takes 2.3-4.8 s to land a play: the first turn (half the turn
    # reserved for the landing, as nothing is known yet) plays, and its finish waits for the
    # feedback even past the 4 s (the old 1.5 s grace sent it during the landing); from then on the
    # learnt landing time leaves no room for a play, and each turn says so instead of starting one.
    config = Config.model_validate({"player": "planner", "turn": {"deadline": 4},
                                    "transcripts": {"dir": str(tmp_path / "t")}})
    options = RunOptions(games=1, turns=3, human="cooperative", seed=4, objective="A fish", tween=0.5,
                         deadline=40, feedback_delay=FeedbackDelay(3.5, 4.5))
    [result] = await run_in_process(config, options, tmp_path / "t")
    summary = summarize([result], options, "planner", transcripts=True)
    assert summary["violations_by_kind"] == {} and summary["turns_finished"] == 3
    first, *later = result.game.turns
    [play] = first.plays
    assert play.landing is not None and first.ended_at is not None
    assert first.ended_at >= play.at + play.landing and first.ended_at - first.started_at > 3.5
    no_time = shipped_turn_lines()("no_time")
    assert all(not turn.plays and no_time in turn.agent_chat for turn in later)
