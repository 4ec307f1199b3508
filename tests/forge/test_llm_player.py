"""The LLM player through the real openai SDK against the fake server: prompt, structured output,
deadline, repair or replacement of invalid answers, memory per game, overlap of games."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.forge.fake.catalogue import catalogue
from agent.games.forge.fake.client import FakeForge, Report
from agent.games.forge.fake.engine import Game
from agent.games.forge.fake.llm import chaotic, sensible

from .conftest import Running

LAND = dict(catalogue())["turn 3: land before spells"]
BOLT = dict(catalogue())["target: Bolt kills what it can"]


def transcript_records(tmp_path: Path) -> list[dict]:
    out = []
    for path in sorted((tmp_path / "transcripts").glob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text().splitlines()]
    return out


async def test_prompt_shows_the_state_and_numbered_options(agent_at: Running, fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.ok_json({"index": 2, "reason": "curve out"}))
    async with agent_at(fake_openai) as (_, url), FakeForge(url) as forge:
        exchange = await forge.send(LAND)
    assert json.loads(exchange.body) == {"decision": {"type": "action", "index": 2}}
    request = fake_openai.chat_requests[0]
    assert request.response_format_type == "json_schema"
    assert request.json["response_format"]["json_schema"]["name"] == "forge_action"
    prompt = request.messages[1]["content"]
    for expected in ("life 20", "Hand: Forest, Grizzly Bears, Centaur Courser, Giant Growth",
                     "Target creature gets +3/+3 until end of turn.", "0: play land: Forest",
                     "1: cast spell: Grizzly Bears (cost {1}{G})", "3: pass priority",
                     'Reply {"reasoning": "<one line>", "index"'):
        assert expected in prompt, expected
    # The schema names the offered options only, with the reasoning written first.
    schema = request.json["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["reasoning", "index"]
    assert schema["properties"]["index"]["enum"] == [0, 1, 2, 3]


async def test_a_valid_llm_answer_is_sent_and_logged(agent_at: Running, fake_openai: FakeOpenAI,
                                                     tmp_path: Path) -> None:
    fake_openai.enqueue(FakeReply.ok_json({"indices": [3], "reason": "kill the angel? no, the lions"}))
    async with agent_at(fake_openai) as (_, url), FakeForge(url) as forge:
        exchange = await forge.send(BOLT)
    assert exchange.verdict.valid and exchange.verdict.decision == {"indices": [3]}
    records = transcript_records(tmp_path)
    decision = next(r for r in records if r["kind"] == "decision")
    call = next(r for r in records if r["kind"] == "llm")
    assert decision["source"] == "llm" and decision["llm_outcome"] == "ok"
    assert call["outcome"] == "ok" and call["prompt_tokens"] > 0 and call["turn"] == decision["turn"]


async def test_invalid_answers_are_repaired_or_replaced(agent_at: Running, fake_openai: FakeOpenAI,
                                                        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    fake_openai.enqueue(FakeReply.ok_json({"indices": [3, 3, 77], "reason": "twice for luck"}),  # repaired to [3]
                        FakeReply.ok_json({"index": 99, "reason": "no such option"}),  # replaced
                        FakeReply.ok("attack!"))  # not JSON: replaced
    async with agent_at(fake_openai) as (_, url), FakeForge(url) as forge:
        repaired = await forge.send({**BOLT, "gameId": "a"})
        replaced = await forge.send({**LAND, "gameId": "b"})
        prose = await forge.send({**LAND, "gameId": "c"})
    assert repaired.verdict.valid and repaired.verdict.decision == {"indices": [3]}
    assert replaced.verdict.valid and json.loads(replaced.body)["decision"]["index"] == 0  # the heuristic's land
    assert prose.verdict.valid
    sources = [r["source"] for r in transcript_records(tmp_path) if r["kind"] == "decision"]
    assert sorted(sources) == ["heuristic-after-llm", "heuristic-after-llm", "llm-repaired"]
    assert "invalid LLM answer" in caplog.text and "the heuristic answers" in caplog.text


async def test_the_deadline_bounds_every_decision(agent_at: Running, fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.stall(10, content=json.dumps({"index": 1, "reason": "slow"})))
    async with agent_at(fake_openai, decision={"deadline": 0.3}) as (_, url), FakeForge(url, "early") as forge:
        started = time.monotonic()
        exchange = await forge.send(LAND)
        took = time.monotonic() - started
    assert exchange.verdict.valid and json.loads(exchange.body)["decision"]["index"] == 0
    assert took < 2.0


async def test_memory_carries_across_a_games_decisions(agent_at: Running, fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.ok_json({"index": 0, "reason": "land first"}),
                        FakeReply.ok_json({"indices": [3], "reason": "x"}),
                        FakeReply.ok_json({"index": 0, "reason": "x"}))
    async with agent_at(fake_openai) as (_, url), FakeForge(url) as forge:
        await forge.send({**LAND, "gameId": "mem"})
        await forge.send({**BOLT, "gameId": "mem"})
        await forge.send({**LAND, "gameId": "other"})
    second = fake_openai.chat_requests[1].messages[1]["content"]
    third = fake_openai.chat_requests[2].messages[1]["content"]
    assert "Your earlier decisions this game:" in second and "play land Forest (land first)" in second
    assert "earlier decisions" not in third


@pytest.mark.parametrize("dialect", ["action", "possible_actions"])
async def test_chaotic_llm_still_gives_only_valid_answers(agent_at: Running, dialect: str) -> None:
    async with (FakeOpenAI(responder=chaotic(seed=len(dialect), stall_s=1.0)) as fake,
                agent_at(fake, decision={"deadline": 0.4}) as (_, url),
                FakeForge(url, "early") as forge):
        report = await forge.replay([body for _, body in catalogue(dialect)])
        await forge.play(Game(3, dialect, max_turns=8), report)
    assert len(report.decisions) > 40
    assert report.invalid() == [], [(e.kind, e.verdict.reason, e.body) for e in report.invalid()][:3]
    assert max(report.latencies()) < 0.4 + 1.0


async def test_games_overlap_while_the_llm_thinks(agent_at: Running) -> None:
    async with FakeOpenAI(responder=sensible(delay=0.5)) as fake:
        async with agent_at(fake, decision={"deadline": 5}) as (_, url), FakeForge(url) as forge:
            started = time.monotonic()
            exchanges = await asyncio.gather(*(forge.send({**LAND, "gameId": f"g{i}"}) for i in range(10)))
            took = time.monotonic() - started
        assert fake.max_in_flight >= 10  # the ten decisions at once (the start-up priming may be in flight too)
    assert all(e.verdict.valid for e in exchanges)
    assert took < 2.5  # ten 0.5 s decisions, side by side


async def test_a_game_never_waits_for_anothers_llm_call(agent_at: Running) -> None:
    async def respond(body: dict) -> FakeReply:
        slow = "Centaur Courser" in json.dumps(body)
        return FakeReply(content=json.dumps({"index": 0, "indices": [2], "reason": "x"}), delay=3.0 if slow else 0.0)

    async with (FakeOpenAI(responder=respond) as fake, agent_at(fake, decision={"deadline": 5}) as (_, url),
                FakeForge(url) as forge):
        slow = asyncio.create_task(forge.send({**LAND, "gameId": "slow"}))
        await fake.wait_for_requests(1)
        started = time.monotonic()
        fast = await forge.send({**BOLT, "gameId": "fast"})
        assert time.monotonic() - started < 1.0 and fast.verdict.valid
        assert not slow.done()
        assert (await slow).verdict.valid


async def test_llm_player_plays_whole_games_in_both_dialects(agent_at: Running) -> None:
    report = Report()
    async with FakeOpenAI(responder=sensible(seed=1)) as fake, agent_at(fake) as (_, url), FakeForge(url) as forge:
        for dialect in ("action", "possible_actions"):
            await forge.play(Game(5, dialect, max_turns=10), report)
    assert report.invalid() == [] and len(report.decisions) > 20


async def test_transcript_has_study_metadata_and_the_system_prompt_once(agent_at: Running, fake_openai: FakeOpenAI,
                                                                       tmp_path: Path) -> None:
    fake_openai.enqueue(FakeReply.ok_json({"index": 0, "reason": "a"}),
                        FakeReply.ok_json({"indices": [3], "reason": "b"}))
    async with agent_at(fake_openai, tags={"condition": "llm"}) as (_, url), FakeForge(url) as forge:
        await forge.send({**LAND, "gameId": "study"})
        await forge.send({**BOLT, "gameId": "study"})
        await forge.send({"gameId": "study", "requestType": "reflect"})
    records = transcript_records(tmp_path)
    start = records[0]
    assert start["kind"] == "session_start" and start["tags"] == {"condition": "llm"}
    assert start["config_sha256"] and start["templates_sha256"] and start["model"] == "fake-model"
    prompts = [r for r in records if r["kind"] == "system_prompt"]
    assert len(prompts) == 1 and "expert Magic: The Gathering player" in prompts[0]["text"]
    decisions = [r for r in records if r["kind"] == "decision"]
    assert [d["turn"] for d in decisions] == [1, 2]
    calls = [r for r in records if r["kind"] == "llm"]
    assert [c["turn"] for c in calls] == [1, 2]
    assert all(c["system_sha256"] == prompts[0]["sha256"] for c in calls)
    assert "condition=llm" in next((tmp_path / "transcripts").glob("*.jsonl")).name


async def test_a_decision_in_progress_is_answered_at_shutdown(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    from .conftest import forge_config, running

    fake_openai.enqueue(FakeReply.stall(0.5, content=json.dumps({"index": 1, "reason": "slow but in time"})))
    async with running(forge_config(tmp_path, fake_openai, decision={"deadline": 3})) as (server, url), \
            FakeForge(url) as forge:
        pending = asyncio.create_task(forge.send({**LAND, "gameId": "late"}))
        await fake_openai.wait_for_requests(1)
        await server.shutdown()
        exchange = await pending
    assert exchange.verdict.valid and json.loads(exchange.body)["decision"]["index"] == 1
    kinds = [r["kind"] for r in transcript_records(tmp_path)]
    assert kinds[-3:] == ["decision", "turn_end", "session_end"]


async def test_requests_beyond_the_concurrency_limit_get_503(agent_at: Running, fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.stall(0.5, content=json.dumps({"index": 0, "reason": "x"})))
    async with agent_at(fake_openai, server={"max_concurrent": 1}) as (_, url), FakeForge(url, "early") as forge:
        first = asyncio.create_task(forge.send({**LAND, "gameId": "one"}))
        await fake_openai.wait_for_requests(1)
        second = await forge.send({**LAND, "gameId": "two"})
        assert second.status == 503
        assert (await first).verdict.valid


async def test_idle_games_are_closed(agent_at: Running, tmp_path: Path) -> None:
    async with agent_at(server={"game_idle_s": 0.05}) as (server, url), FakeForge(url) as forge:
        await forge.send({**LAND, "gameId": "old"})
        await asyncio.sleep(0.1)
        await forge.send({**LAND, "gameId": "new"})
        assert list(server.sessions) == ["new"]
    ends = [r for r in transcript_records(tmp_path) if r["kind"] == "session_end"]
    assert "idle" in [r["reason"] for r in ends]


async def test_the_llm_cannot_loop_on_an_action_that_came_back(agent_at: Running, fake_openai: FakeOpenAI,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    for _ in range(3):
        fake_openai.enqueue(FakeReply.ok_json({"index": 1, "reason": "bears again"}))
    body = {**LAND, "gameId": "stubborn"}
    async with agent_at(fake_openai) as (_, url), FakeForge(url) as forge:
        answers = [json.loads((await forge.send(body)).body)["decision"]["index"] for _ in range(3)]
    assert answers[:2] == [1, 1] and answers[2] != 1
    assert "already came back" in caplog.text
