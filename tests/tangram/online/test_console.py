"""The experimenter console of an online study: on its own port, never on the participants' origin;
it shows the study and every participant's game as it runs, says when a spend cap switches a game
or a participant to the offline planner, and takes Wizard-of-Oz conditions' turns."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from agent.games.tangram.online.public import OnlineError, start_console
from agent.games.tangram.sim.client import GameClient
from tests.tangram.online.support import STUDY, Served, bare_sockets, call, joined, priced_study, served_study

CONSOLE = "console: {enabled: true, port: 0}\n"
CONSOLE_PATHS = ("/", "/?token=0123456789abcdef0123", "/static/console.js", "/static/console.css",
                 "/img/some-game/board")


class Page:
    """A console page's WebSocket: every message it got, and a wait for the one a test needs."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.messages: list[dict[str, Any]] = []
        self._arrived = asyncio.Event()

    async def read(self) -> None:
        async for message in self.ws:
            self.messages.append(json.loads(message.data))
            self._arrived.set()

    async def wait(self, found: Callable[[dict[str, Any]], bool], timeout: float = 60.0) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while True:
                for message in self.messages:
                    if found(message):
                        return message
                self._arrived.clear()
                await self._arrived.wait()


@contextlib.asynccontextmanager
async def console_page(served: Served) -> AsyncIterator[Page]:
    assert served.console is not None
    async with aiohttp.ClientSession() as http, http.ws_connect(f"{served.console.url}ws") as ws:
        page = Page(ws)
        reader = asyncio.create_task(page.read())
        try:
            yield page
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader


def game_of(participant: str) -> Callable[[dict[str, Any]], bool]:
    return lambda m: m["type"] == "game" and (m["game"]["study"] or {}).get("participant") == participant


async def test_the_console_has_its_own_port_and_the_participants_origin_answers_404_for_its_paths(
        tmp_path: Path) -> None:
    async with served_study(tmp_path, config=f"player: planner\n{CONSOLE}") as served:
        assert served.console is not None
        assert served.console.port != int(served.url.rsplit(":", 1)[1])
        async with aiohttp.ClientSession() as http:
            for path in CONSOLE_PATHS:
                async with http.get(f"{served.url}{path}") as response:
                    assert response.status == 404, path
            async with http.get(f"{served.url}/ws") as response:
                assert response.status == 403  # the participants' game socket, never the console's
            async with http.get(served.console.url) as response:
                assert response.status == 200 and "text/html" in response.headers["Content-Type"]


async def test_the_console_shows_the_study_and_each_participants_game_as_it_runs(tmp_path: Path) -> None:
    async with served_study(tmp_path, config=f"player: planner\n{CONSOLE}") as served, \
            console_page(served) as page:
        snapshot = await page.wait(lambda m: m["type"] == "snapshot")
        assert snapshot["study"]["study"] == "web-pilot" and snapshot["games"] == []
        code, ticket = await joined(served)
        async with GameClient(f"{served.ws_url}?ticket={ticket}", seed=4) as client:
            assert (await client.ai_turn(deadline=20)).finished
            assert (await client.ai_turn(deadline=20)).finished  # a played game (study.completed_after_turns)
            shown = await page.wait(lambda m: game_of("L0001")(m) and m["game"]["history"])
            assert shown["game"]["player"] == "planner" and shown["game"]["history"][0]["outcome"] == "played"
            assert shown["game"]["study"]["condition"] in ("planner", "quiet")
        await call(served, "finished", code, ticket=ticket, exit=0)
        await page.wait(lambda m: m["type"] == "study" and any(
            p["id"] == "L0001" and p["completed"] == 1 for p in m["study"]["participants"]))
        await page.ws.send_str(json.dumps({"type": "study", "action": "next", "participant": "P99"}))
        refused = await page.wait(lambda m: m["type"] == "notice" and "links" in m["text"])
        assert refused["text"].startswith("refused: in an online study participants start from their links")
        assert [p.id for p in await served.run.store.participants()] == ["L0001"]


async def test_the_console_says_when_a_spend_cap_switches_a_game_to_the_planner(tmp_path: Path) -> None:
    async with priced_study(tmp_path, online="  spend_cap_participant_usd: 0.003\n", config=CONSOLE) \
            as (fake, served, _), console_page(served) as page:
        code, ticket = await joined(served)
        async with GameClient(f"{served.ws_url}?ticket={ticket}", seed=4) as client:
            assert (await client.ai_turn(deadline=20)).finished  # one call, $0.0035: over the cap
            participant = await page.wait(lambda m: m["type"] == "notice" and m["game"] is None)
            assert participant["text"] == ("participant L0001's LLM spend $0.0035 reached the cap $0.003: the offline "
                                           "planner plays the rest of their games")
            assert (await client.ai_turn(deadline=20)).finished
            game = await page.wait(lambda m: m["type"] == "notice" and m["game"] is not None)
            assert game["text"].startswith("L0001's game (") and game["text"].endswith(
                "participant L0001's LLM spend $0.0035 reached the cap $0.003; the offline planner plays the rest "
                "of this game")
            shown = await page.wait(lambda m: game_of("L0001")(m) and m["game"]["spend_cap"] is not None)
            assert shown["game"]["id"] == game["game"]
        notices = [m for m in page.messages if m["type"] == "notice" and "reached the cap" in m["text"]]
        assert len(notices) == 2  # each said once (a loaded machine may add an LLM outage notice)
        await call(served, "finished", code, ticket=ticket, exit=0)
        second = await call(served, "game", code)  # over the cap when it starts
        async with GameClient(f"{served.ws_url}?ticket={second['ticket']}", seed=4) as client:
            assert (await client.ai_turn(deadline=20)).finished
            started = await page.wait(lambda m: m["type"] == "notice" and "instead of the LLM" in m["text"])
        assert started["text"].startswith("L0001's game (") and started["game"] != game["game"]
        assert len(fake.chat_requests) == 1


WIZARD_STUDY = STUDY.replace("planner: {config: planner.yaml}", "planner: {config: planner.yaml, console: wizard}")


async def test_a_wizard_of_oz_condition_starts_the_console_and_its_games_open_in_wizard_mode(
        tmp_path: Path) -> None:
    config = "player: planner\nturn: {deadline: 4}\nconsole: {port: 0}\n"  # no --console
    async with served_study(tmp_path, config=config, study_text=WIZARD_STUDY) as served, \
            console_page(served) as page:
        _, ticket = await joined(served)
        async with GameClient(f"{served.ws_url}?ticket={ticket}", seed=4) as client:
            review = page.wait(lambda m: game_of("L0001")(m) and m["game"]["reviews"])
            turn, shown = await asyncio.gather(client.ai_turn(deadline=20), review)
        game = shown["game"]
        assert game["mode"] == ("wizard" if game["study"]["condition"] == "planner" else "autonomous")
        assert game["reviews"][0]["mode"] == game["mode"]
        assert turn.finished  # nobody acted: the planner's suggestion played by the deadline


async def test_off_loopback_the_console_wants_its_own_token(tmp_path: Path) -> None:
    token = "online-console-token-0123"
    config = f"player: planner\nconsole: {{enabled: true, host: 0.0.0.0, port: 0, token: {token}}}\n"
    async with served_study(tmp_path, config=config) as served, aiohttp.ClientSession() as http:
        assert served.console is not None
        url = f"http://127.0.0.1:{served.console.port}/"
        async with http.get(url, allow_redirects=False) as response:
            assert response.status == 401
        async with http.get(f"{url}?token=wrong-token-wrong-token", allow_redirects=False) as response:
            assert response.status == 403
        async with http.get(f"{url}?token={token}", allow_redirects=False) as response:
            assert response.status == 303 and token not in response.headers["Location"]
        async with http.get(f"{served.url}/?token={token}") as response:
            assert response.status == 404  # the participants' origin knows no console, token or not
    async with bare_sockets(tmp_path, "player: planner\nconsole: {enabled: true, host: 0.0.0.0}\n") \
            as (run, online, sockets):
        with pytest.raises(OnlineError, match=r"^refusing to serve the console on 0\.0\.0\.0 without a token$"):
            await start_console(run, online, sockets, [], sockets.secrets, 0)


async def test_the_console_on_the_participants_port_is_refused_in_one_line(tmp_path: Path) -> None:
    async with bare_sockets(tmp_path, "player: planner\nconsole: {enabled: true, port: 8471}\n") \
            as (run, online, sockets):
        with pytest.raises(OnlineError, match=r"the console needs its own port: --console 127.0.0.1:8471"):
            await start_console(run, online, sockets, [], sockets.secrets, 8471)
        assert sockets.supervise is None
