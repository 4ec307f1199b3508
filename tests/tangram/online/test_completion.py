"""Completion is the server's judgement: a game counts as played only when the agent itself ended
enough AI turns of it under the ticket the page names (``study.completed_after_turns``, 2 by
default, as in the lab). Every way a page can end a game (the engine's
exit, Continue, a closed socket, a reload) is tried with no, one and enough AI turns; the probe that
got the completion code in five calls and no play gets nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from agent.games.tangram.sim.client import GameClient
from tests.tangram.online.support import Served, served_study


async def post(http: aiohttp.ClientSession, served: Served, path: str, **body: Any) -> tuple[int, Any]:
    async with http.post(f"{served.url}/api/{path}", json=body) as response:
        data = await response.json() if response.content_type == "application/json" else await response.text()
        return response.status, data


async def started(http: aiohttp.ClientSession, served: Served) -> tuple[str, str]:
    """An invited participant who consented: their code and their first game's ticket."""
    (invite,) = await served.online.invite(1)
    status, _ = await post(http, served, "consent", code=invite.code, given=True)
    assert status == 200
    status, game = await post(http, served, "game", code=invite.code)
    assert status == 200 and game["ticket"]
    return invite.code, game["ticket"]


async def play(served: Served, ticket: str, turns: int) -> None:
    """``turns`` AI turns over the game's socket, each ended by the agent's finish; then the socket closes."""
    async with GameClient(f"{served.ws_url}?ticket={ticket}", seed=1) as game:
        for _ in range(turns):
            turn = await game.ai_turn(deadline=20)
            assert turn.finished, turn


CLAIMS = [pytest.param({"exit": 0}, id="exit-without-how"), pytest.param({"exit": 0, "how": "exit"}, id="engine-exit"),
          pytest.param({"exit": 0, "how": "continue"}, id="continue")]


@pytest.mark.parametrize("claim", CLAIMS)
@pytest.mark.parametrize(("turns", "completes"), [(0, False), (1, False), (2, True)])
async def test_a_claimed_end_completes_the_game_only_with_enough_ai_turns_seen(
        tmp_path: Path, claim: dict[str, Any], turns: int, completes: bool) -> None:
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        code, ticket = await started(http, served)
        await play(served, ticket, turns)
        status, answer = await post(http, served, "finished", code=code, ticket=ticket, **claim)
        games = await served.run.store.games()
        if completes:
            assert status == 200 and answer["game"] == 2
            assert games[0].completed and games[0].ai_turns == 2
            assert games[0].end_reason is not None and games[0].end_reason.endswith("2 AI turns")
        else:
            assert status == 409 and answer == {"error": "not played", "ai_turns": turns, "needed": 2,
                                                "message": answer["message"]}
            assert "not been played" in answer["message"]
            assert all(not g.completed for g in games) and await served.run.store.completed_games("L0001") == 0
            events = [e for e in await served.run.store.events() if e["action"] == "unbacked_end"]
            assert len(events) == 1 and f"after {turns} AI turn" in events[0]["detail"]
            # The same ticket goes on: the participant plays on and the end is then accepted.
            await play(served, ticket, 2 - turns)
            status, answer = await post(http, served, "finished", code=code, ticket=ticket, **claim)
            assert status == 200 and answer["game"] == 2


async def test_the_probe_gets_no_completion_code_without_playing(tmp_path: Path) -> None:
    # The probe: visit, consent, game, finished (exit 0, no how) for every game: five calls,
    # no AI turn. No game completes, the balance is untouched, and no code is given.
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        (invite,) = await served.online.invite(1)
        await post(http, served, "visit", code=invite.code)
        await post(http, served, "consent", code=invite.code, given=True)
        for _ in range(2):
            _, game = await post(http, served, "game", code=invite.code)
            assert game["ticket"] is not None
            status, answer = await post(http, served, "finished", code=invite.code, ticket=game["ticket"], exit=0)
            assert status == 409 and "completion_code" not in answer
        _, visit = await post(http, served, "visit", code=invite.code)
        assert visit["stage"] == "play" and "completion_code" not in visit
        status_now = await served.run.status()
        assert status_now.counts.get("completed", 0) == 0
        assert all(s.completed == 0 for s in status_now.sequences)


async def test_a_closed_socket_or_a_failed_engine_completes_nothing(tmp_path: Path) -> None:
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        code, ticket = await started(http, served)
        await play(served, ticket, 2)  # the socket closes after the turns: the game stays open
        games = await served.run.store.games()
        assert games[0].ended_at is None and games[0].ai_turns == 2
        status, visit = await post(http, served, "finished", code=code, ticket=ticket, exit=3)
        assert status == 200 and visit["game"] == 1  # the engine stopped: the same game is played again
        (game,) = await served.run.store.games()
        assert game.completed is False and game.end_reason == "the engine stopped (3)"


async def test_a_reload_plays_the_game_again_and_counts_only_its_own_turns(tmp_path: Path) -> None:
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        code, first = await started(http, served)
        await play(served, first, 2)
        _, game = await post(http, served, "game", code=code)  # a reload: a new ticket, a new game in the engine
        second = game["ticket"]
        # The old page's claim is no one's now, and the new game has no turn yet.
        status, answer = await post(http, served, "finished", code=code, ticket=first, exit=0, how="continue")
        assert status == 200 and answer["game"] == 1
        status, _ = await post(http, served, "finished", code=code, ticket=second, exit=0, how="continue")
        assert status == 409
        await play(served, second, 2)
        status, answer = await post(http, served, "finished", code=code, ticket=second, exit=0, how="continue")
        assert status == 200 and answer["game"] == 2


async def test_the_count_is_the_databases_and_survives_a_restart(tmp_path: Path) -> None:
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        code, ticket = await started(http, served)
        await play(served, ticket, 1)
    async with served_study(tmp_path) as served:
        await play(served, ticket, 1)  # the engine redials the restarted agent with the same ticket
    # A new server on the same database (the agent restarted): the turn it saw before still counts.
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        status, answer = await post(http, served, "finished", code=code, ticket=ticket, exit=0, how="continue")
        assert status == 200 and answer["game"] == 2


async def test_a_link_preview_takes_nothing(tmp_path: Path) -> None:
    # A mail scanner or a chat's link preview fetches the link without running the page's script:
    # no participant, no order sequence, the balance unchanged. The sequence is given at the consent.
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        one, two = await served.online.invite(2)
        for _ in range(3):
            async with http.get(f"{served.url}/p/{one.code}") as page:
                assert page.status == 200
        _, visit = await post(http, served, "visit", code=one.code)  # even the page's first call takes nothing
        assert visit["stage"] == "consent"
        assert await served.run.store.participants() == []
        await post(http, served, "consent", code=two.code, given=True)
        await post(http, served, "consent", code=one.code, given=True)
        rows = await served.run.store.participants()
        assert [(r.id, r.sequence) for r in rows] == [("L0002", 1), ("L0001", 2)]  # in the order they agreed


async def test_an_open_address_preview_takes_nothing(tmp_path: Path) -> None:
    async with served_study(tmp_path, recruitment="open") as served, aiohttp.ClientSession() as http:
        async with http.get(f"{served.url}/join?PROLIFIC_PID={'5f0c' * 6}&STUDY_ID=s&SESSION_ID=x",
                            allow_redirects=False) as response:
            assert response.status == 303
            where = response.headers["Location"]
        async with http.get(served.url + where) as page:
            assert page.status == 200
        assert await served.run.store.participants() == []
        code = where.rsplit("/", 1)[1]
        status, visit = await post(http, served, "consent", code=code, given=True)
        assert status == 200 and visit["stage"] == "play"
        (row,) = await served.run.store.participants()
        assert row.prolific_pid == "5f0c" * 6 and row.source == "open"
