"""The LLM player under a spend guard (an online study's caps): it asks before every call, and once
refused the offline planner plays and answers the rest of the session, said once in the transcript,
with no line to the partner about it, every turn ending with finish."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.tangram.link.factory import make_player_factory
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.sim.client import GameClient
from tests.tangram.support import MOVE, is_chat_request, llm_config


class Tab:
    """A guard that refuses once the model has answered ``limit`` calls."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.calls = 0
        self.asked = 0

    def refusal(self) -> str | None:
        self.asked += 1
        return f"{self.calls} calls reached the cap of {self.limit}" if self.calls >= self.limit else None


def transcript_records(tmp_path: Path) -> list[dict[str, Any]]:
    (path,) = (tmp_path / "transcripts").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_past_the_cap_the_planner_plays_and_answers_the_rest_of_the_session(tmp_path: Path) -> None:
    tab = Tab(limit=1)

    def answer(request: dict[str, Any]) -> FakeReply:
        tab.calls += 1
        return FakeReply.ok_json({"reply": "Sure!"} if is_chat_request(request) else MOVE)

    async with FakeOpenAI(responder=answer) as fake:
        config = llm_config(fake.base_url, tmp_path, deadline=10)
        factory = make_player_factory(config)
        try:
            async with serve_agent(config, host="127.0.0.1", port=0, player_factory=factory.capped(tab)) as server, \
                    GameClient(server.url, objective="A house", seed=3) as game:
                first = await game.ai_turn(deadline=15)
                assert first.finished and len(fake.chat_requests) == 1  # under the cap: the model's move
                later = [await game.ai_turn(deadline=15) for _ in range(2)]
                reply = await game.chat("what are we making?")
        finally:
            await factory.aclose()
    assert all(turn.finished and turn.plays for turn in later)
    assert reply.reply and reply.reply != "Sure!"  # the planner's answer, not the model's
    assert len(fake.chat_requests) == 1
    lines = [line for turn in later for line in turn.chat]
    assert not any(word in line.lower() for line in lines for word in ("cap", "spend", "trouble", "sorry"))
    records = transcript_records(tmp_path)
    assert [r["reason"] for r in records if r["kind"] == "spend_cap"] == ["1 calls reached the cap of 1"]
    sources = [r["source"] for r in records if r["kind"] == "decision"]
    assert sources[0].startswith("llm") and set(sources[1:]) == {"planner-spend-cap"}


async def test_a_cap_crossed_by_a_turns_first_call_leaves_its_reask_to_the_planner(tmp_path: Path) -> None:
    """The model's first answer is unusable, and that call crossed the cap: no re-ask is sent, and the
    planner plays the turn, although the config does not fall back to it (no apology to the partner)."""
    tab = Tab(limit=1)

    def answer(request: dict[str, Any]) -> FakeReply:
        tab.calls += 1
        return FakeReply.ok_json({"action": "place"})

    async with FakeOpenAI(responder=answer) as fake:
        config = llm_config(fake.base_url, tmp_path, deadline=10)
        assert config.llm.max_reasks > 0 and not config.llm.fallback_to_planner
        factory = make_player_factory(config)
        try:
            async with serve_agent(config, host="127.0.0.1", port=0, player_factory=factory.capped(tab)) as server, \
                    GameClient(server.url, objective="A house", seed=3) as game:
                turn = await game.ai_turn(deadline=15)
        finally:
            await factory.aclose()
    assert turn.finished and len(turn.plays) == 1
    assert not any("trouble" in line.lower() for line in turn.chat)
    assert len(fake.chat_requests) == 1  # the re-ask was not sent
    records = transcript_records(tmp_path)
    assert len([r for r in records if r["kind"] == "spend_cap"]) == 1
    assert [r["source"] for r in records if r["kind"] == "decision"] == ["planner-spend-cap"]
