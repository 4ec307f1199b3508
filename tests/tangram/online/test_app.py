"""The participants' origin: two participants play their conditions at once in counterbalanced order
through the page's calls and the ticketed socket; credentials are checked; nothing outside the
game's files is served; the engine goes out compressed and cached."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from websockets.exceptions import InvalidStatus

from agent.games.tangram.sim.client import GameClient
from tests.tangram.online.support import Served, served_study


async def call(http: aiohttp.ClientSession, served: Served, path: str, code: str, **body: Any) -> Any:
    async with http.post(f"{served.url}/api/{path}", json={"code": code, **body}) as response:
        assert response.status == 200, await response.text()
        return await response.json()


async def play_game(served: Served, ticket: str) -> list[str]:
    """One game over the socket, as the engine plays it: two AI turns (what a played game has,
    study.completed_after_turns), each ended with finish."""
    async with GameClient(f"{served.ws_url}?ticket={ticket}", seed=1) as game:
        for _ in range(2):
            turn = await game.ai_turn(deadline=20)
            assert turn.finished, turn
        return [f.type or "" for f in game.frames]


async def test_two_participants_play_their_sequences_at_once_and_see_the_completion(tmp_path: Path) -> None:
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        invites = await served.online.invite(2)
        for invite in invites:
            async with http.get(f"{served.url}/p/{invite.code}") as page:
                assert page.status == 200 and "participant.js" in await page.text()
                assert invite.code not in await page.text()
            visit = await call(http, served, "visit", invite.code)
            assert visit["stage"] == "consent" and "voluntary" in visit["consent"]["text"]
            assert (await call(http, served, "consent", invite.code, given=True))["stage"] == "play"

        async def participant(code: str) -> list[str]:
            conditions = []
            while (game := await call(http, served, "game", code))["ticket"] is not None:
                await play_game(served, game["ticket"])
                await call(http, served, "finished", code, ticket=game["ticket"], exit=0)
                conditions.append((await served.run.store.games())[-1].condition)
            assert game["visit"]["stage"] == "done"
            assert game["visit"]["completion_code"] == "C0DE42"
            return conditions

        await asyncio.gather(*(participant(i.code) for i in invites))
        games = await served.run.store.games()
        by_participant: dict[str, list[str]] = {}
        for g in games:
            assert g.completed and g.transcript is not None
            by_participant.setdefault(g.participant, []).append(g.condition)
        assert by_participant == {"L0001": ["planner", "quiet"], "L0002": ["quiet", "planner"]}
        # Each transcript is beside the study's database (named relative to its folder, whatever the
        # conditions' transcripts.dir) and says whose game it was and which condition.
        for g in games:
            assert g.transcript is not None and g.transcript.startswith("study-transcripts/")
            text = await asyncio.to_thread((tmp_path / g.transcript).read_text)
            start = json.loads(text.splitlines()[0])
            assert start["tags"]["participant"] == g.participant and start["tags"]["condition"] == g.condition
            assert start["study"] == "web-pilot"
        status = await served.run.status()
        assert status.counts["completed"] == 2


async def test_a_socket_without_a_valid_ticket_is_refused(tmp_path: Path) -> None:
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        one, two = await served.online.invite(2)
        for invite in (one, two):
            await served.online.start(invite.code)
            await call(http, served, "consent", invite.code, given=True)
        first = (await call(http, served, "game", one.code))["ticket"]
        refused = ["", "?ticket=", "?ticket=" + "A" * 24, f"?ticket={one.code}"]
        for query in refused:
            with pytest.raises(InvalidStatus) as caught:
                async with GameClient(served.ws_url + query):
                    pass
            assert caught.value.response.status_code == 403
        # A reload takes a new ticket: the old one is refused from then on.
        second = (await call(http, served, "game", one.code))["ticket"]
        with pytest.raises(InvalidStatus):
            async with GameClient(f"{served.ws_url}?ticket={first}"):
                pass
        # Used: once its game is completed, a ticket lets nothing in.
        await play_game(served, second)
        await call(http, served, "finished", one.code, ticket=second, exit=0)
        with pytest.raises(InvalidStatus):
            async with GameClient(f"{served.ws_url}?ticket={second}"):
                pass
        # Another participant's ticket plays that participant's game, never this one's.
        theirs = (await call(http, served, "game", two.code))["ticket"]
        await play_game(served, theirs)
        assert {g.participant for g in await served.run.store.games()} == {"L0001", "L0002"}
        # Reporting the end with another participant's ticket completes nothing.
        await call(http, served, "finished", one.code, ticket=theirs, exit=0)
        assert [g.completed for g in await served.run.store.games() if g.participant == "L0002"] == [None]


async def test_a_second_page_takes_the_game_over_and_the_first_is_told(tmp_path: Path) -> None:
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        (one,) = await served.online.invite(1)
        await served.online.start(one.code)
        await call(http, served, "consent", one.code, given=True)
        first = (await call(http, served, "game", one.code))["ticket"]
        async with GameClient(f"{served.ws_url}?ticket={first}", seed=1) as game:
            await game.ai_turn(deadline=20)
            second = (await call(http, served, "game", one.code))["ticket"]  # another browser on the link
            await asyncio.wait_for(game._closed.wait(), 5)
            assert game._ws is not None and game._ws.close_code == 4001
        assert (await served.run.store.games())[-1].position == 1
        await play_game(served, second)  # the newer page plays the same game (same slot, same condition)
        games = await served.run.store.games()
        assert [(g.position, g.condition) for g in games] == [(1, "planner"), (1, "planner")]
        assert games[0].end_reason == "replaced by attempt 2" and games[1].ended_at is None


async def test_an_engine_that_stops_with_an_error_plays_the_same_condition_again(tmp_path: Path) -> None:
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        (one,) = await served.online.invite(1)
        await served.online.start(one.code)
        await call(http, served, "consent", one.code, given=True)
        ticket = (await call(http, served, "game", one.code))["ticket"]
        await play_game(served, ticket)
        visit = await call(http, served, "finished", one.code, ticket=ticket, exit=1)
        assert visit["stage"] == "play" and visit["game"] == 1
        again = await call(http, served, "game", one.code)
        assert again["game"] == 1


async def test_open_recruitment_sends_a_prolific_participant_to_their_own_page(tmp_path: Path) -> None:
    async with served_study(tmp_path, recruitment="open") as served, aiohttp.ClientSession() as http:
        query = "PROLIFIC_PID=5f0c5f0c5f0c5f0c5f0c5f0c&STUDY_ID=st1&SESSION_ID=se1"
        async with http.get(f"{served.url}/join?{query}", allow_redirects=False) as response:
            assert response.status == 303
            page = response.headers["Location"]
        assert page.startswith("/p/")
        async with http.get(served.url + page) as response:
            assert response.status == 200
        await call(http, served, "consent", page.rsplit("/", 1)[1], given=True)  # starts the participant
        row = (await served.run.store.participants())[0]
        assert (row.prolific_pid, row.prolific_study, row.prolific_session) == (
            "5f0c5f0c5f0c5f0c5f0c5f0c", "st1", "se1")
        async with http.get(f"{served.url}/join?PROLIFIC_PID=<x>") as response:
            assert response.status == 400


async def test_nothing_but_the_game_files_is_served_and_bodies_are_bounded(tmp_path: Path) -> None:
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        key = served.assets.key
        for path in ("/", "/console", "/api/status", f"/g/{key}/.complete", f"/g/{key}/../../study.yaml",
                     f"/g/{key}/index.wasm.gz", "/g/0000/index.wasm", "/s/participant.html", "/s/../app.py",
                     "/p/short", f"/p/{'x' * 24}", "/static/console.js", "/ws/x"):
            async with http.get(served.url + path) as response:
                assert response.status in (404, 405), path
        async with http.post(f"{served.url}/api/visit", data=b"{" + b" " * 20_000 + b"}") as response:
            assert response.status == 413
        async with http.post(f"{served.url}/api/visit", data=b"not json") as response:
            assert response.status == 400
        async with http.post(f"{served.url}/api/visit", json={"code": "A" * 24}) as response:
            assert response.status == 403


async def test_engine_and_pack_go_out_compressed_immutable_and_revalidated_pages_cost_nothing(tmp_path: Path) -> None:
    async with served_study(tmp_path) as served, aiohttp.ClientSession(auto_decompress=False) as http:
        async with http.get(f"{served.url}/play") as response:
            page = await response.text()
            etag = response.headers["ETag"]
        assert f"/g/{served.assets.key}/index" in page
        async with http.get(f"{served.url}/play", headers={"If-None-Match": etag}) as response:
            assert response.status == 304 and not await response.read()
        wasm = f"{served.url}/g/{served.assets.key}/index.wasm"
        async with http.get(wasm, headers={"Accept-Encoding": "gzip"}) as response:
            body = await response.read()
            assert response.headers["Content-Encoding"] == "gzip"
            assert "immutable" in response.headers["Cache-Control"]
            assert response.headers["Cross-Origin-Embedder-Policy"] == "require-corp"
            assert response.headers["Content-Type"] == "application/wasm"
            assert len(body) < 200_000 // 50
        async with http.get(wasm, headers={"Accept-Encoding": "identity"}) as response:
            assert len(await response.read()) == 200_008


async def test_continue_ends_a_game_only_after_the_agent_has_ended_a_turn(tmp_path: Path) -> None:
    # A game build whose closing form cannot be submitted never quits its engine: the page's Continue
    # ends the game instead, once the agent has ended at least one turn of it.
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        (one,) = await served.online.invite(1)
        await served.online.start(one.code)
        await call(http, served, "consent", one.code, given=True)
        ticket = (await call(http, served, "game", one.code))["ticket"]
        async with http.post(f"{served.url}/api/finished",
                             json={"code": one.code, "ticket": ticket, "exit": 0, "how": "continue"}) as response:
            assert response.status == 409
        await play_game(served, ticket)  # the socket is closed by now: the count outlives it
        visit = await call(http, served, "finished", one.code, ticket=ticket, exit=0, how="continue")
        assert visit["game"] == 2
        game = (await served.run.store.games())[0]
        assert game.completed and game.end_reason == "the participant's Continue after the game's Finish, 2 AI turns"


async def test_no_code_or_ticket_reaches_a_log_or_another_page(tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        one, two = await served.online.invite(2)
        secrets = [one.code, two.code]
        for invite in (one, two):
            await served.online.start(invite.code)
            await call(http, served, "consent", invite.code, given=True)
        ticket = (await call(http, served, "game", one.code))["ticket"]
        secrets.append(ticket)
        await play_game(served, ticket)
        await call(http, served, "finished", one.code, ticket=ticket, exit=0)
        with pytest.raises(InvalidStatus):
            async with GameClient(f"{served.ws_url}?ticket={'B' * 24}"):
                pass
        for path in ("/play", "/s/participant.js", "/s/play.js", f"/p/{two.code}"):
            async with http.get(served.url + path) as response:
                text = await response.text()
                assert not any(secret in text for secret in secrets)
    # What the agent's side logs (the test's own websockets client logs the address it dials).
    logged = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("websockets.client"))
    for secret in secrets:
        assert secret not in logged
    assert "participant L0001" in logged  # participants are named by id
