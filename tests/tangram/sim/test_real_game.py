"""Issue 9's acceptance: the agent against the simulator as the real game behaves.

The simulator runs as the build users have (``build="shipped"``: an ``error`` frame is ignored and
would leave the AI's turn hanging), animates every play for 0.5 s and applies a ``finish`` or a
``play`` that arrives meanwhile to the half-moved piece, tweens rotations numerically and counts
spins, and can report collisions one physics step stale. For the offline planner and for an LLM
player fed by a chaotic fake model under a short deadline: every turn ends with ``finish``, nothing
is sent during an animation, no piece spins more than 180 degrees, and no turn is undone.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent.core.testing.fake_openai import FakeOpenAI
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.sim.client import GameClient, TurnResult
from agent.games.tangram.sim.simgame import GODOT_TWEEN_S, SPIN_TOLERANCE_DEG
from tests.tangram.support import Chaos, assert_agent_frames_valid, llm_config, planner_config, wait_until


def assert_plays_like_the_game_needs(game: GameClient, turns: list[TurnResult]) -> None:
    assert all(t.finished for t in turns), [t.ended_by for t in turns]
    assert not any(t.undone for t in turns), [(t.index, t.piece, t.collisions) for t in turns if t.undone]
    assert max(game.game.spins, default=0.0) <= 180.0 + SPIN_TOLERANCE_DEG
    assert not any(t.landed_unchecked for t in game.game.turns)
    # No violation at all: nothing during an animation, no spin, no error frame, nothing out of turn.
    assert_agent_frames_valid(game)


async def play_rounds(game: GameClient, rounds: int, deadline: float) -> list[TurnResult]:
    turns = []
    for _ in range(rounds):
        await game.human_turn()
        turns.append(await game.ai_turn(deadline=deadline))
    return turns


@pytest.mark.parametrize(("human", "objective", "stale"), [
    ("cooperative", "A house", False), ("random", "A cat", False), ("random", "A rocket", True),
])
async def test_the_planner_plays_like_the_game_needs(human: str, objective: str, stale: bool) -> None:
    async with serve_agent(planner_config(), host="127.0.0.1", port=0) as server, \
            GameClient(server.url, objective=objective, human=human, seed=5, tween=GODOT_TWEEN_S,
                       stale_collisions=stale) as game:
        turns = await play_rounds(game, 6, deadline=65)
        assert sum(bool(t.plays) for t in turns) >= 4
        assert_plays_like_the_game_needs(game, turns)


async def test_an_llm_player_under_chaos_and_a_short_deadline_plays_like_the_game_needs(tmp_path: Path) -> None:
    deadline, request_timeout = 4.0, 0.8
    chaos = Chaos(seed=9, request_timeout=request_timeout)
    async with FakeOpenAI(responder=chaos) as fake:
        configs = [llm_config(fake.base_url, tmp_path / str(i), deadline=deadline, request_timeout=request_timeout,
                              max_attempts=3, initial_backoff=0.05, max_backoff=0.2,
                              llm={"fallback_to_planner": i == 1}) for i in range(2)]

        async def one_game(i: int) -> tuple[GameClient, list[TurnResult]]:
            async with serve_agent(configs[i], host="127.0.0.1", port=0) as server, \
                    GameClient(server.url, objective=("A house", "A fish")[i], seed=i, human=("chatty", "random")[i],
                               tween=GODOT_TWEEN_S, chat_timeout=deadline + 2) as game:
                turns = await play_rounds(game, 4, deadline=deadline + 5)
                await game.settle_chats(deadline + 2)
                return game, turns

        results = await asyncio.gather(*(one_game(i) for i in range(2)))
    for game, turns in results:
        assert_plays_like_the_game_needs(game, turns)
        assert max(t.latency or 0.0 for t in turns) <= deadline
    assert any(t.plays for _, turns in results for t in turns)
    assert sum(chaos.counts.values()) >= 6


@pytest.mark.parametrize("raw", ['{"type": "playRequest", "state": 17}', '{"type": "playRequest", "objective": [',
                                 '{"board_img": "AAAA", "state": {"on_board": 5}, "type": "playRequest"}'])
async def test_an_unreadable_play_request_is_answered_by_finish(raw: str) -> None:
    async with serve_agent(planner_config(), host="127.0.0.1", port=0) as server, \
            GameClient(server.url, tween=GODOT_TWEEN_S) as game:
        game.game.start_ai_turn()  # in the game, this request is the start of the AI's turn
        await game.send_raw(raw)
        await wait_until(lambda: game.game.turn_owner == "human", 5, "the finish")
        assert game.game.turns[-1].ended_by == "finish"
        assert not any(f.type == "error" for f in game.frames)
        assert game.violations == []
        turn = await game.ai_turn(deadline=65)  # and the next turn plays normally
        assert turn.finished and turn.plays
