"""The client agent against the engine: plays to the end, retries refusals, falls back, reconnects, joins."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from agent.games.boardgame.client import ClientError, ClientSettings, MatchClient
from agent.games.boardgame.players.base import InvalidChoice, MovePlayer, Player, Turn
from agent.games.boardgame.players.offline import make_offline
from agent.games.boardgame.rules.base import GameRules, WireAction
from tests.boardgame.support import running_engine


def best(seconds: float = 0.05, seed: int = 0) -> Any:
    rng = random.Random(seed)

    def make(rules: GameRules[Any]) -> MovePlayer:
        return make_offline("best", rules, random.Random(rng.random()), seconds=seconds)
    return make


def settings(url: str, **kw: Any) -> ClientSettings:
    base: dict[str, Any] = {"url": url, "agent_id": "A", "poll_seconds": 1.0, "reconnect_delay": 0.05}
    base.update(kw)
    return ClientSettings(**base)


class Scripted(Player):
    """Returns the given actions in turn (then the last one forever); records what it was told."""

    label = "scripted"

    def __init__(self, actions: list[Any]) -> None:
        self.actions = actions
        self.turns: list[Turn] = []

    async def choose(self, turn: Turn) -> WireAction:
        self.turns.append(turn)
        action = self.actions[min(len(self.turns) - 1, len(self.actions) - 1)]
        if isinstance(action, Exception):
            raise action
        if action == "sleep":
            await asyncio.sleep(30)
        return action


async def test_perfect_tictactoe_never_loses_to_the_engine_bots() -> None:
    async with running_engine(games=("tictactoe",), bot="random", seed=4) as (_engine, url):
        outcomes = []
        for seat in (1, 2, 1, 2, 1, 2):
            client = MatchClient(settings(url, create_settings={"seat": seat}), best(), best())
            result = await client.play()
            outcomes.append(result.outcome)
            assert result.protocol_errors == 0 and result.illegal == 0
        assert "loss" not in outcomes and outcomes.count("win") >= 3
        strong = await MatchClient(settings(url, create_settings={"bot": "strong"}), best(), best()).play()
        assert strong.outcome == "draw" and strong.mark == "X"
        assert "DRAW for A (X)" in strong.line()


async def test_the_engines_game_is_found_when_none_is_asked_for() -> None:
    async with running_engine(games=("connect_four",), bot="random", seed=1) as (_engine, url):
        result = await MatchClient(settings(url), best(0.05), best()).play()
        assert result.game == "connect_four" and result.outcome == "win"


async def test_a_refused_action_is_retried_with_the_reason_then_the_offline_player_acts() -> None:
    taken = WireAction("place", {"row": 2, "column": 2})
    player = Scripted([taken])
    async with running_engine(games=("tictactoe",), bot="strong", seed=2) as (_engine, url):
        client = MatchClient(settings(url, create_settings={"seat": 2}, max_attempts=3), lambda r: player, best())
        result = await client.play()
    assert result.status == "ended"
    # Once the centre is taken (by either side) the script is refused on every later turn.
    refused = [t for t in player.turns if t.feedback]
    assert refused, "the scripted centre must have been refused at least once"
    assert all(len(t.feedback) < 3 for t in player.turns)
    assert any("row 2 column 2 is already taken by" in line for t in refused for line in t.feedback)
    assert result.fallbacks >= 1 and result.illegal >= 3


async def test_the_engines_refusal_reaches_the_player_when_local_checks_are_off() -> None:
    player = Scripted([WireAction("place", {"row": 7, "column": 1}), WireAction("place", {"row": 1, "column": 1}),
                       WireAction("place", {"row": 3, "column": 3})])
    async with running_engine(games=("tictactoe",), bot="random", seed=3) as (_engine, url):
        client = MatchClient(settings(url, check_locally=False), lambda r: player, best())
        result = await client.play()
    second = player.turns[1]
    assert second.feedback and "refused by the engine" in second.feedback[0]
    assert "data.row must be from 1 to 3, got 7" in second.feedback[0]
    assert result.status == "ended" and result.illegal >= 1


@pytest.mark.parametrize("behaviour", ["sleep", "crash", "invalid"])
async def test_a_slow_crashing_or_confused_player_still_gets_every_turn_played(behaviour: str) -> None:
    action: Any = {"sleep": "sleep", "crash": RuntimeError("bug"),
                   "invalid": InvalidChoice("the reply was not a JSON object")}[behaviour]
    player = Scripted([action])
    async with running_engine(games=("tictactoe",), bot="random", seed=5) as (_engine, url):
        client = MatchClient(settings(url, decision_seconds=0.1), lambda r: player, best())
        result = await client.play()
    assert result.status == "ended" and result.fallbacks == len(result.decisions) > 0
    if behaviour == "invalid":
        assert player.turns[1].feedback == ("your answer could not be used: the reply was not a JSON object",)


async def test_the_client_reconnects_when_the_engine_drops_and_resumes_the_match() -> None:
    async with running_engine(games=("connect_four",), bot="strong", seed=6) as (engine, url):
        drops = 0

        def on_event(kind: str, data: dict[str, Any]) -> None:
            nonlocal drops
            if kind == "push" and data.get("kind") == "action" and drops < 3:
                drops += 1
                engine.drop_connections()

        client = MatchClient(settings(url), best(0.02), best(), on_event=on_event)
        result = await client.play()
    assert result.status == "ended" and result.reconnects >= 3 and result.protocol_errors == 0


async def test_an_agent_joins_a_match_another_agent_created() -> None:
    async with running_engine(games=("tictactoe", "connect_four"), bot="none", seed=7) as (_engine, url):
        created: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def on_event(kind: str, data: dict[str, Any]) -> None:
            if kind == "match_created":
                created.set_result(data["match_id"])

        host = asyncio.create_task(MatchClient(settings(url, game="connect_four", create_settings={"bot": "none"}),
                                               best(0.02), best(), on_event=on_event).play())
        match_id = await asyncio.wait_for(created, 5)
        # The guest is not told the game: the engine's refusal of a wrong guess names it.
        guest = await MatchClient(settings(url, agent_id="B", match_id=match_id), best(0.02, 1), best()).play()
        hosted = await host
    assert guest.game == hosted.game == "connect_four" and guest.match_id == hosted.match_id
    assert {guest.outcome, hosted.outcome} in ({"win", "loss"}, {"draw"})
    assert guest.mark == "O" and hosted.mark == "X"


async def test_an_unreachable_engine_is_a_clear_error() -> None:
    client = MatchClient(settings("ws://127.0.0.1:9", reconnect_attempts=1), best(), best())
    with pytest.raises(ClientError, match="cannot reach the engine"):
        await client.play()


async def test_an_unknown_match_is_a_clear_error() -> None:
    async with running_engine(games=("tictactoe",), bot="none") as (_engine, url):
        with pytest.raises(ClientError, match="no match 'm-404'"):
            await MatchClient(settings(url, game="tictactoe", match_id="m-404"), best(), best()).play()


async def test_a_match_that_started_without_us_is_a_clear_error() -> None:
    async with running_engine(games=("tictactoe",), bot="strong") as (_engine, url):
        created: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def on_event(kind: str, data: dict[str, Any]) -> None:
            if kind == "match_created":
                created.set_result(data["match_id"])

        host = asyncio.create_task(MatchClient(settings(url, game="tictactoe"), best(), best(), on_event).play())
        match_id = await asyncio.wait_for(created, 5)
        with pytest.raises(ClientError, match="has started without us"):
            await MatchClient(settings(url, agent_id="C", match_id=match_id), best(), best()).play()
        assert (await host).status == "ended"
