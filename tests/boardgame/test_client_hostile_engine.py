"""The client against a hostile engine (issue 22): refusals back off and end, deep frames are
refused with a reason, impossible boards are the engine's fault; each followed by a normal match.
Over real sockets: the reference engine behind a misbehaving proxy (tests/boardgame/hostile.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from agent.games.boardgame.client import ClientError, MatchClient
from tests.boardgame.hostile import WON_BOARD, Misbehaviour, hostile_engine
from tests.boardgame.test_client import best, settings

ENGINE = {"games": ("tictactoe",), "bot": "random", "seed": 3}


def fast(url: str, **kw: Any) -> Any:
    return settings(url, refusal_delay=0.05, refusal_max_delay=0.4, **kw)


async def test_an_engine_refusing_everything_is_given_up_after_bounded_tries_without_a_busy_loop() -> None:
    plan = Misbehaviour(refuse=-1)
    async with hostile_engine(plan, **ENGINE) as url:
        started = time.monotonic()
        with pytest.raises(ClientError) as failed:
            async with asyncio.timeout(20):  # before: 1,000 frames a second until the turn limit
                await MatchClient(fast(url, max_refusals=8), best(), best()).play()
        seconds = time.monotonic() - started
    assert "accepted none of our last 8 actions" in str(failed.value), failed.value
    assert plan.refused == 8, plan.log
    assert plan.frames_in < 40, plan.frames_in  # get_state + perform_action per try, nothing more
    # 7 waits after refusals: 0.05, 0.1, 0.2, 0.4, 0.4, 0.4, 0.4 s
    assert seconds >= 1.9, seconds


async def test_refusals_back_off_then_the_match_is_played_normally() -> None:
    plan = Misbehaviour(refuse=5)
    async with hostile_engine(plan, **ENGINE) as url:
        started = time.monotonic()
        result = await MatchClient(fast(url), best(), best()).play()
        seconds = time.monotonic() - started
    assert result.status == "ended" and result.moves >= 3, result.line()
    assert plan.refused == 5
    assert result.fallbacks >= 1  # the offline player took over within the first turn's bound
    assert seconds >= 0.05 + 0.1 + 0.2 + 0.4 + 0.4, seconds  # each refusal waited, doubling


async def test_a_deeply_nested_frame_is_refused_with_a_reason_and_the_match_goes_on(caplog) -> None:
    caplog.set_level(logging.WARNING, logger="agent.games.boardgame")
    plan = Misbehaviour(deep_frames=2)
    async with hostile_engine(plan, **ENGINE) as url:
        client = MatchClient(settings(url), best(), best())
        result = await asyncio.wait_for(client.play(), 30)
    assert result.status == "ended" and plan.deep_frames == 0, result.line()
    assert result.protocol_errors == 2 and result.reconnects == 0, result.line()
    reasons = [r.getMessage() for r in caplog.records if "ignoring a frame" in r.getMessage()]
    assert len(reasons) in (1, 2) and "nested more than 32 levels deep" in reasons[0], reasons  # 1 per 10 s
    assert not [r for r in caplog.records if r.exc_info], "no traceback"


async def test_a_flood_of_unreadable_frames_costs_a_few_log_lines_and_the_match_goes_on(caplog) -> None:
    caplog.set_level(logging.WARNING, logger="agent.games.boardgame")
    plan = Misbehaviour(junk_frames=5_000)
    async with hostile_engine(plan, **ENGINE) as url:
        result = await asyncio.wait_for(MatchClient(settings(url), best(), best()).play(), 60)
    assert result.status == "ended" and result.protocol_errors == 5_000, result.line()
    reasons = [r.getMessage() for r in caplog.records if "ignoring a frame" in r.getMessage()]
    assert 1 <= len(reasons) <= 3 and "frame is not valid JSON" in reasons[0], len(reasons)


@pytest.mark.parametrize("board", ["full", "won"])
async def test_an_impossible_board_on_our_turn_is_the_engines_fault_then_the_match_goes_on(board, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="agent.games.boardgame")
    plan = Misbehaviour(impossible=2)
    if board == "won":
        plan.board = list(WON_BOARD)
    events: list[tuple[str, dict[str, Any]]] = []
    async with hostile_engine(plan, **ENGINE) as url:
        client = MatchClient(settings(url, poll_seconds=0.2), best(), best(),
                             on_event=lambda kind, data: events.append((kind, data)))
        result = await asyncio.wait_for(client.play(), 30)  # before: IndexError from the fallback
    assert result.status == "ended", result.line()
    faults = [data for kind, data in events if kind == "engine_fault"]
    assert len(faults) == 2, events
    expected = "finished draw" if board == "full" else "already won by X"
    assert expected in faults[0]["reason"], faults
    assert any("the engine's fault" in r.getMessage() for r in caplog.records)


async def test_an_engine_that_keeps_an_impossible_board_is_one_clear_error() -> None:
    plan = Misbehaviour(impossible=1000)
    async with hostile_engine(plan, **ENGINE) as url:
        with pytest.raises(ClientError) as failed:
            await asyncio.wait_for(MatchClient(settings(url, poll_seconds=0.05), best(), best()).play(), 20)
    assert "is impossible" in str(failed.value) and "the engine's fault" in str(failed.value), failed.value
    assert plan.frames_in < 20, plan.frames_in


async def test_the_command_survives_a_deep_frame_with_one_warning_and_no_traceback(tmp_path) -> None:
    from tests.boardgame.test_cli import agent_process, finish

    config = tmp_path / "bg.yaml"
    config.write_text(f"game: boardgame\ntranscripts:\n  dir: {tmp_path / 't'}\n", encoding="utf-8")
    plan = Misbehaviour(deep_frames=1)
    async with hostile_engine(plan, **ENGINE) as url:
        process = await agent_process("--config", str(config), "--connect", url, "--agent-id", "A",
                                      "--opponent", "random", cwd=tmp_path)
        status, out, err = await finish(process)  # before: RecursionError traceback, exit 1
    assert status == 0 and "tictactoe match" in out, err
    assert "Traceback" not in err and "nested more than 32 levels deep" in err, err


async def test_an_unexpected_failure_ends_the_run_with_one_line(tmp_path, monkeypatch, capsys) -> None:
    from agent.games.boardgame import client as client_module
    from agent.games.boardgame.config import BoardgameConfig
    from agent.games.boardgame.runner import run

    async def broken(self: MatchClient) -> Any:
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(client_module.MatchClient, "_loop", broken)
    async with hostile_engine(Misbehaviour(), **ENGINE) as url:
        config = BoardgameConfig.model_validate({"engine": {"url": url, "agent_id": "A"},
                                                 "transcripts": {"dir": str(tmp_path / "t")}})
        assert await run(config) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "RuntimeError: a bug of ours" in err[-1] and "Traceback" not in "".join(err), err
    records = [line for f in (tmp_path / "t").glob("*.jsonl") for line in f.open()]
    assert any('"traceback"' in line for line in records)  # kept for whoever debugs it
