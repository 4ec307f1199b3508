"""A study served by the real command (link/study.py): a waiting game answered while nobody is
active, a participant started from the command line while the agent serves, the agent killed
mid-game (SIGKILL) and started again continuing the same participant on the same condition, and
what counts as a completed tangram game."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent.games.tangram.config import Config
from agent.games.tangram.link.study import judge, server_mismatch
from agent.games.tangram.sim.client import GameClient
from agent.study_cli import main as study_main
from benchmarks.tangram.real_game.study import game_rows
from tests.tangram.link.test_shutdown import free_port

CONDITIONS = ("planner", "quiet", "short")


def write_study(tmp_path: Path) -> Path:
    (tmp_path / "base.yaml").write_text(yaml.safe_dump({
        "player": "planner", "turn": {"deadline": 20},
        "transcripts": {"dir": str(tmp_path / "transcripts")}}))
    study = tmp_path / "study.yaml"
    study.write_text(yaml.safe_dump({
        "name": "kill-test", "design": "within",
        "conditions": {"planner": {"config": "base.yaml"},
                       "quiet": {"config": "base.yaml", "overrides": {"turn": {"thinking_line": False}}},
                       "short": {"config": "base.yaml", "overrides": {"chat_history": 2}}}}, sort_keys=False))
    return study


async def start_agent(study: Path, port: int, cwd: Path) -> asyncio.subprocess.Process:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent", "--study", str(study), "--host", "127.0.0.1", "--port", str(port),
        cwd=cwd, env=env, stderr=asyncio.subprocess.PIPE)
    assert proc.stderr is not None
    while "listening on ws://" not in (line := (await asyncio.wait_for(proc.stderr.readline(), 60)).decode()):
        assert line, "the agent exited before listening"
    return proc


async def stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.kill()
        await proc.wait()


def session_start(path: str) -> dict[str, Any]:
    first = json.loads(Path(path).read_text().splitlines()[0])
    assert first["kind"] == "session_start"
    return first


async def play_rounds(game: GameClient, rounds: int) -> None:
    for _ in range(rounds):
        await game.human_turn()
        turn = await game.ai_turn(deadline=30)
        assert turn.finished, turn


@pytest.mark.timeout(180)
async def test_killing_the_agent_mid_game_continues_the_same_participant_and_condition(tmp_path: Path) -> None:
    study = write_study(tmp_path)
    db = tmp_path / "study.db"
    port = free_port()
    url = f"ws://127.0.0.1:{port}"
    proc = await start_agent(study, port, tmp_path)
    try:
        # Nobody is active yet: the game's turn is answered (a line and finish), nothing is recorded.
        waiting = GameClient(url, objective="A house", seed="w")
        async with waiting:
            await waiting.human_turn()
            turn = await waiting.ai_turn(deadline=10)
            assert turn.finished and turn.plays == []
            assert any("experimenter" in line for line in turn.chat)
            # Started from the command line while the agent serves: the same open game binds at its next turn.
            assert await asyncio.to_thread(study_main, ["next", "P01", "--study", str(study)]) == 0
            await play_rounds(waiting, 1)
            [first] = game_rows(db)
            assert (first["participant"], first["position"], first["attempt"]) == ("P01", 1, 1)
            assert first["ended_at"] is None
            proc.send_signal(signal.SIGKILL)  # mid-game: one AI turn of the two a finished game has
            await proc.wait()
        condition = first["condition"]
        assert condition in CONDITIONS
        assert game_rows(db)[0]["ended_at"] is None  # killed: nothing recorded its end

        proc = await start_agent(study, port, tmp_path)
        # The game re-dials (same board, new socket), as the Godot game does when its socket closes.
        again = GameClient(url, objective="A house", seed="w")
        again.game, again.human = waiting.game, waiting.human
        async with again:
            await play_rounds(again, 2)
        rows = await _until_ended(db, 2)
        old, new = rows
        assert (new["participant"], new["condition"], new["position"], new["attempt"]) == ("P01", condition, 1, 2)
        assert old["completed"] == 0 and old["end_reason"] == "replaced by attempt 2"
        assert new["completed"] == 1, new["end_reason"]
        # Nothing lost: both attempts' transcripts are there, beside the study's database (named relative
        # to its folder), each tagged with the same participant and condition.
        for row, attempt in ((old, 1), (new, 2)):
            assert row["transcript"].startswith("study-transcripts/")
            start = session_start(str(tmp_path / row["transcript"]))
            assert start["tags"] == {"participant": "P01", "condition": condition, "order": "1"}
            assert start["study"] == "kill-test" and start["attempt"] == attempt and start["plan_sha256"]
        # The participant moved on: the next game is their second condition.
        nxt = GameClient(url, objective="A house", seed="n")
        async with nxt:
            await play_rounds(nxt, 2)
        rows = await _until_ended(db, 3)
        assert rows[2]["position"] == 2 and rows[2]["condition"] != condition and rows[2]["completed"] == 1
    finally:
        await stop(proc)


async def _until_ended(db: Path, count: int) -> list[dict[str, Any]]:
    """The games once ``count`` of them are recorded and all ended (the agent records the end
    after the socket closed, concurrently with the client's return)."""
    async with asyncio.timeout(20):
        while True:
            rows = game_rows(db)
            if len(rows) >= count and all(r["ended_at"] is not None for r in rows):
                return rows
            await asyncio.sleep(0.05)


@pytest.mark.parametrize(("by_game", "running", "turns", "completed"), [
    (True, False, 2, True), (True, False, 5, True), (True, True, 5, False), (True, False, 1, False),
    (False, False, 5, False)])
def test_a_game_is_completed_when_the_game_closes_on_the_participants_turn_after_enough_ai_turns(
        by_game: bool, running: bool, turns: int, completed: bool) -> None:
    verdict = judge(Config(), closed_by_game=by_game, ai_turn_running=running, ai_turns_ended=turns)
    assert verdict.completed is completed and verdict.reason
    failed = judge(Config(), closed_by_game=by_game, ai_turn_running=running, ai_turns_ended=turns, failed=True)
    assert not failed.completed and "failed" in failed.reason


def test_conditions_that_listen_differently_cannot_share_the_server() -> None:
    a, b = Config(), Config.model_validate({"server": {"max_connections": 3}})
    assert server_mismatch({"a": a, "b": a}) is None
    line = server_mismatch({"a": a, "b": b})
    assert line is not None and "server.max_connections" in line and "'a'" in line and "'b'" in line
