"""Spend caps: a game's LLM calls are priced from the condition's token prices and recorded; beyond
a participant's (or the study's) cap the offline planner plays their next game, and says why."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp

from agent.core.testing.fake_openai import FakeOpenAI
from agent.games.tangram.online.spend import MeteredTranscript, missing_prices
from agent.games.tangram.sim.client import GameClient
from tests.tangram.online.support import Served, served_study, write_study
from tests.tangram.support import MOVE


async def call(served: Served, path: str, code: str, **body: Any) -> Any:
    async with aiohttp.ClientSession() as http, \
            http.post(f"{served.url}/api/{path}", json={"code": code, **body}) as response:
        assert response.status == 200, await response.text()
        return await response.json()


def llm_config(base_url: str) -> str:
    return (f"player: llm\nllm: {{base_url: '{base_url}', api_key_required: false, usd_per_million_input: 2.5, "
            "usd_per_million_output: 10, probe_dialect: false}\nturn: {deadline: 20}\n")


async def test_over_the_participants_cap_the_planner_plays_their_next_game(tmp_path: Path) -> None:
    with FakeOpenAI(default_content=json.dumps(MOVE)) as fake:
        async with served_study(tmp_path, config=llm_config(fake.base_url),
                                online="  spend_cap_participant_usd: 0.000001\n") as served:
            (one,) = await served.online.invite(1)
            await served.online.enter_invite(one.code)
            await call(served, "consent", one.code, given=True)
            for _ in range(2):
                game = await call(served, "game", one.code)
                async with GameClient(f"{served.ws_url}?ticket={game['ticket']}", seed=4) as client:
                    assert (await client.ai_turn(deadline=20)).finished
                await call(served, "finished", one.code, ticket=game["ticket"], exit=0)
                if _ == 0:
                    calls_after_first = len(fake.chat_requests)
            games = await served.run.store.games()
            rows = await served.run.store._rows("SELECT spend_usd, player FROM games ORDER BY id")
            assert rows[0]["player"] == "llm" and rows[0]["spend_usd"] > 0
            assert rows[1]["player"] == "planner" and rows[1]["spend_usd"] == 0
            assert len(fake.chat_requests) == calls_after_first  # no LLM call in the capped game
            text = await asyncio.to_thread(Path(games[1].transcript or "").read_text)
            capped = [json.loads(line) for line in text.splitlines() if '"spend_cap"' in line]
            assert capped and "reached the cap" in capped[0]["reason"] and capped[0]["player"] == "planner"
            assert await served.run.store.spend("L0001") == rows[0]["spend_usd"]


def test_a_game_is_priced_from_its_recorded_calls() -> None:
    transcript = MeteredTranscript(None, prices=(2.5, 10.0))
    transcript.record("llm", prompt_tokens=1_000_000, completion_tokens=100_000)
    transcript.record("llm", prompt_tokens=None, completion_tokens="many")  # a malformed record costs nothing
    transcript.record("frame_in", prompt_tokens=5)
    assert transcript.usd == 3.5


def test_caps_without_prices_are_refused_in_one_line(tmp_path: Path) -> None:
    from agent.games import read_study

    path = write_study(tmp_path, config="player: llm\nllm: {api_key_required: false}\n",
                       online="  spend_cap_study_usd: 50\n")
    line = missing_prices(read_study(path))
    assert line is not None and "usd_per_million_input" in line and "'planner'" in line
