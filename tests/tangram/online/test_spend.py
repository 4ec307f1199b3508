"""Spend caps: a game's LLM calls are priced from the condition's token prices and recorded; beyond
a participant's (or the study's) cap the offline planner plays their next game, and says why; a
game that crosses a cap while it runs goes on with the planner from its next call."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent.core.studies.pricing import Price, missing_prices
from agent.core.studies.spend import GameSpend
from agent.core.testing.fake_openai import FakeOpenAI
from agent.core.transcript import Transcript
from agent.games.tangram.sim.client import GameClient
from tests.tangram.online.support import (
    CALL_USD,
    call,
    joined,
    llm_config,
    priced_study,
    records,
    served_study,
    write_study,
)
from tests.tangram.support import MOVE


async def test_over_the_participants_cap_the_planner_plays_their_next_game(tmp_path: Path) -> None:
    with FakeOpenAI(default_content=json.dumps(MOVE)) as fake:
        async with served_study(tmp_path, config=llm_config(fake.base_url),
                                online="  spend_cap_participant_usd: 0.000001\n") as served:
            (one,) = await served.online.invite(1)
            await served.online.start(one.code)
            await call(served, "consent", one.code, given=True)
            for _ in range(2):
                game = await call(served, "game", one.code)
                async with GameClient(f"{served.ws_url}?ticket={game['ticket']}", seed=4) as client:
                    for _turn in range(2):  # a played game (study.completed_after_turns)
                        assert (await client.ai_turn(deadline=20)).finished
                await call(served, "finished", one.code, ticket=game["ticket"], exit=0)
                if _ == 0:
                    calls_after_first = len(fake.chat_requests)
            games = await served.run.store.games()
            rows = await served.run.store._rows("SELECT spend_usd, player FROM games ORDER BY id")
            # The first game's first call crosses the cap: its second turn is the planner's.
            assert rows[0]["player"] == "llm+planner" and rows[0]["spend_usd"] > 0
            assert rows[1]["player"] == "planner" and rows[1]["spend_usd"] == 0
            assert len(fake.chat_requests) == calls_after_first  # no LLM call in the capped game
            text = await asyncio.to_thread((tmp_path / (games[1].transcript or "")).read_text)
            capped = [json.loads(line) for line in text.splitlines() if '"spend_cap"' in line]
            assert capped and "reached the cap" in capped[0]["reason"] and capped[0]["player"] == "planner"
            assert await served.run.store.spend("L0001") == rows[0]["spend_usd"]


def test_a_game_is_priced_from_its_recorded_calls() -> None:
    spend = GameSpend(Price(2.5, 10.0))
    transcript = Transcript(None)
    spend.watch(transcript)
    transcript.record("llm", prompt_tokens=1_000_000, completion_tokens=100_000)
    transcript.record("llm", prompt_tokens=None, completion_tokens="many")  # a malformed record costs nothing
    transcript.record("frame_in", prompt_tokens=5)
    assert spend.usd == 3.5


def test_caps_without_prices_are_refused_in_one_line(tmp_path: Path) -> None:
    from agent.games import read_study

    path = write_study(tmp_path, config="player: llm\nllm: {api_key_required: false}\n",
                       online="  spend_cap_study_usd: 50\n")
    line = missing_prices(read_study(path))
    assert line is not None and "usd_per_million_input" in line and "'planner'" in line


async def test_a_game_that_crosses_the_participants_cap_goes_on_with_the_planner(tmp_path: Path) -> None:
    async with priced_study(tmp_path, online="  spend_cap_participant_usd: 0.005\n") as (fake, served, told):
        code, ticket = await joined(served)
        async with GameClient(f"{served.ws_url}?ticket={ticket}", seed=4) as client:
            assert (await client.ai_turn(deadline=20)).finished
            assert len(fake.chat_requests) == 1 and told == []  # $0.0035: under the cap
            answered = await client.chat("what are we building?")
            assert answered.reply == "We could build the house together."
            assert len(fake.chat_requests) == 2  # $0.007: over the cap from now on
            later = [await client.ai_turn(deadline=20) for _ in range(2)]
            asked = await client.chat("and what now?")
        assert all(turn.finished for turn in later) and all(turn.plays for turn in later)
        assert asked.reply and asked.reply.strip()  # the planner's answer
        assert len(fake.chat_requests) == 2  # no LLM call after the cap
        said = [line for turn in later for line in turn.chat] + [asked.reply]
        assert not any("cap" in line.lower() or "spend" in line.lower() for line in said)
        await call(served, "finished", code, ticket=ticket, exit=0)

        capped = await records(served, "L0001", "spend_cap")
        assert [r["reason"] for r in capped] == ["participant L0001's LLM spend $0.007 reached the cap $0.005"]
        assert capped[0]["player"] == "planner"
        sources = [r["source"] for r in await records(served, "L0001", "decision")]
        assert sources[0].startswith("llm") and sources[1:] and set(sources[1:]) == {"planner-spend-cap"}
        assert told == ["participant L0001's LLM spend $0.007 reached the cap $0.005: the offline planner plays "
                        "the rest of their games"]
        (row,) = await served.run.store._rows("SELECT spend_usd, player FROM games")
        assert row["player"] == "llm+planner" and row["spend_usd"] == pytest.approx(2 * CALL_USD)
        assert served.online.spend.spent("L0001") == pytest.approx(await served.run.store.spend("L0001"))


async def test_the_studys_cap_switches_every_running_game_at_its_next_call(tmp_path: Path) -> None:
    async with priced_study(tmp_path, online="  spend_cap_study_usd: 0.006\n") as (fake, served, told):
        _, first_ticket = await joined(served)
        _, second_ticket = await joined(served)
        async with GameClient(f"{served.ws_url}?ticket={first_ticket}", seed=4) as first, \
                GameClient(f"{served.ws_url}?ticket={second_ticket}", seed=5) as second:
            assert (await first.ai_turn(deadline=20)).finished
            assert (await second.ai_turn(deadline=20)).finished  # $0.007 for the study: its cap is crossed
            assert len(fake.chat_requests) == 2
            assert await served.run.store.spend() == 0  # nothing recorded yet: the games still run
            for client in (first, second):
                turn = await client.ai_turn(deadline=20)
                assert turn.finished and turn.plays
        assert len(fake.chat_requests) == 2
        for participant in ("L0001", "L0002"):
            (capped,) = await records(served, participant, "spend_cap")
            assert capped["reason"] == "the study's LLM spend $0.007 reached its cap $0.006"
        assert len(told) == 1 and told[0].startswith("the study's LLM spend $0.007 reached its cap $0.006")
