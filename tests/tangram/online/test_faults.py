"""Faults of an online study: a server restarted mid-game loses no assignment or game and the
game's re-dial continues the same game on the same condition; a dropped socket does the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp

from agent.games.tangram.sim.client import GameClient
from tests.tangram.online.support import Served, served_study


async def call(served: Served, path: str, code: str, **body: Any) -> Any:
    async with aiohttp.ClientSession() as http, \
            http.post(f"{served.url}/api/{path}", json={"code": code, **body}) as response:
        assert response.status == 200, await response.text()
        return await response.json()


async def test_a_restarted_server_continues_the_game_on_the_same_condition(tmp_path: Path) -> None:
    async with served_study(tmp_path) as served:
        one, two = await served.online.invite(2)
        for invite in (one, two):
            await served.online.start(invite.code)
            await call(served, "consent", invite.code, given=True)
        ticket = (await call(served, "game", one.code))["ticket"]
        async with GameClient(f"{served.ws_url}?ticket={ticket}", seed=3) as game:
            for _ in range(2):  # a played game (study.completed_after_turns)
                assert (await game.ai_turn(deadline=20)).finished
        await call(served, "finished", one.code, ticket=ticket, exit=0)
        second = await call(served, "game", one.code)
        assert second["game"] == 2
        async with GameClient(f"{served.ws_url}?ticket={second['ticket']}", seed=3) as game:
            assert (await game.ai_turn(deadline=20)).finished
        before = await served.run.store.participants()
    # The agent is stopped mid-game (the game's socket closed with it) and started again on the same database.
    async with served_study(tmp_path) as served:
        assert await served.run.store.participants() == before
        async with GameClient(f"{served.ws_url}?ticket={second['ticket']}", seed=3) as game:  # the engine re-dials
            assert (await game.ai_turn(deadline=20)).finished
        games = await served.run.store.games("L0001")
        assert [(g.position, g.condition, g.attempt) for g in games] == [(1, "planner", 1), (2, "quiet", 1),
                                                                        (2, "quiet", 2)]
        assert games[1].end_reason == "replaced by attempt 2"
        visit = await call(served, "finished", one.code, ticket=second["ticket"], exit=0)
        assert visit["stage"] == "done" and visit["completion_code"] == "C0DE42"
        # The other participant, who had not started a game, starts where the plan put them.
        other = await call(served, "game", two.code)
        theirs = await served.online.admit(other["ticket"])
        assert theirs is not None and (theirs.participant, theirs.condition) == ("L0002", "quiet")


async def test_a_closed_tab_marks_the_participant_until_they_are_back(tmp_path: Path) -> None:
    async with served_study(tmp_path) as served:
        (one,) = await served.online.invite(1)
        await served.online.start(one.code)
        await call(served, "consent", one.code, given=True)
        async with aiohttp.ClientSession() as http, \
                http.post(f"{served.url}/api/leave", json={"code": one.code}) as response:  # the page's beacon
            assert response.status == 204
        assert (await served.run.store.participants())[0].left_at is not None
        await call(served, "visit", one.code)  # back: the page loads again
        assert (await served.run.store.participants())[0].left_at is None
        await call(served, "visit", one.code)  # another load of a participant who never left records nothing
        events = [e["action"] for e in await served.run.store.events()]
        assert events[-2:] == ["left", "back"]
