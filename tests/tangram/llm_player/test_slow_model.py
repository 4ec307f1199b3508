"""A model too slow for the machine costs the partner neither the answer nor the wait: a chat request gets
the offline planner's answer (and its promise is kept), and once the model has missed its time on two turns
in a row, a turn no longer waits out its deadline for it. The stand-in model answers nothing in time."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.tangram.config import Config
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.sim.client import GameClient

DEADLINE = 10.0
"""The model's share of it is what is left after the time kept for a play to land and the fallback."""
SLOW = 60.0


def slow_config(base_url: str, tmp_path: Any) -> Config:
    return Config.model_validate({
        "player": "llm",
        "llm": {"base_url": base_url, "api_key_required": False, "request_timeout": 120, "probe_dialect": False,
                "prime": False, "fallback_to_planner": True, "chat_wait": 1.5, "retry": {"max_attempts": 1}},
        "turn": {"deadline": DEADLINE},
        "transcripts": {"dir": str(tmp_path / "transcripts")},
    })


def always_too_slow(req: dict[str, Any]) -> FakeReply:
    return FakeReply.ok_json({"reply": "too late"}, delay=SLOW)


async def test_a_model_that_is_always_too_slow(tmp_path: Any) -> None:
    async with FakeOpenAI(responder=always_too_slow) as fake, \
            serve_agent(slow_config(fake.base_url, tmp_path), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url, objective="A house") as game:
            loop = asyncio.get_running_loop()
            # A chat request: the model cannot answer within chat_wait, so the planner answers and promises.
            started = loop.time()
            asked = await game.chat("Please use the yellow one", timeout=10)
            assert asked.reply is not None and "Yellow" in asked.reply, asked.reply
            assert loop.time() - started < 4.0
            first = await game.ai_turn(deadline=30)
            assert first.finished and [p.shape for p in first.plays][:1] == ["Yellow"], "the planner's promise is kept"
            await game.human_turn()
            # Two turns in which the model is asked and misses its time (each waits for its deadline) ...
            waited = []
            for _ in range(2):
                turn = await game.ai_turn(deadline=30)
                assert turn.finished and turn.latency is not None
                waited.append(turn.latency)
                await game.human_turn()
            assert min(waited) > 1.0, waited
            # ... and from then on no turn waits for it.
            for _ in range(2):
                turn = await game.ai_turn(deadline=30)
                assert turn.finished and turn.plays, "the planner plays at once"
                assert turn.latency is not None and turn.latency < min(waited) / 2, (turn.latency, waited)
                await game.human_turn()
            later = await game.chat("what's next?", timeout=10)
            assert later.reply and later.latency is not None
            assert later.latency < 1.0, "the benched model is not waited on"
    records = [json.loads(line) for path in server.transcript_paths() for line in path.read_text().splitlines()]
    replaced = [r for r in records if r["kind"] == "chat_replaced"]
    assert replaced and all(r["by"] == "planner" for r in replaced)
    skipped = [r for r in records if r["kind"] == "llm" and r.get("outcome") == "skipped"]
    assert any("missed its time" in (r.get("error") or "") for r in skipped)


async def test_a_server_that_stops_answering_is_one_transcript_line_and_the_planner_plays(tmp_path: Any) -> None:
    fake = FakeOpenAI(responder=lambda req: FakeReply.ok_json({"reply": "Hello!"}))
    await fake.__aenter__()
    async with serve_agent(slow_config(fake.base_url, tmp_path), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url, objective="A house") as game:
            await fake.__aexit__(None, None, None)  # the LLM server goes away mid-session
            for _ in range(3):
                turn = await game.ai_turn(deadline=30)
                assert turn.finished and turn.plays
                await game.human_turn()
            answered = await game.chat("what are we building?", timeout=10)
            assert answered.reply and "house" in answered.reply.lower()
    records = [json.loads(line) for path in server.transcript_paths() for line in path.read_text().splitlines()]
    outages = [r for r in records if r["kind"] == "llm_server"]
    assert [r["state"] for r in outages] == ["down"], outages
    assert "stopped answering" in outages[0]["line"]
    not_sent = [r for r in records if r["kind"] == "llm" and r.get("outcome") == "skipped"]
    assert len(not_sent) >= 2 and all("stopped answering" in r["error"] for r in not_sent)
