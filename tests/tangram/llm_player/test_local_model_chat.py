"""Issue 69's chat goal on the local model's server (one request at a time, as ``--local-model`` runs
it: answers streamed): a chat line the model can answer in time is answered by the model, not the
planner, when the model is idle, also right after a turn whose request the agent gave up (the stream
closed, the server stopped, so the chat does not wait behind the abandoned answer)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.tangram.config import Config
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.sim.client import GameClient

MOVE = {"action": "place", "piece": "Red", "rotation": 180, "x": 50, "y": 55, "relation": None, "anchor": None,
        "chat": "Red goes on top.", "reasoning": "roof first"}
REPLIES = ["Sure, the yellow one next.", "The blue one goes left."]
DEADLINE = 10.0
CHAT_WAIT = 3.0


def is_chat(body: dict[str, Any]) -> bool:
    return "Your partner wrote in the chat" in json.dumps(body.get("messages", []))


def local_config(base_url: str, tmp_path: Path) -> Config:
    return Config.model_validate({
        "player": "llm",
        "llm": {"base_url": base_url, "api_key_required": False, "request_timeout": 120, "prime": False,
                "server_status": str(tmp_path / "server.status.json"),  # what --local-model sets: answers streamed
                "fallback_to_planner": True, "chat_wait": CHAT_WAIT, "retry": {"max_attempts": 1}},
        "turn": {"deadline": DEADLINE},
        "transcripts": {"dir": str(tmp_path / "transcripts")},
    })


async def test_a_chat_the_idle_model_can_answer_in_time_is_answered_by_the_model(tmp_path: Path) -> None:
    plays = chats = 0

    def model(body: dict[str, Any]) -> FakeReply:
        nonlocal plays, chats
        if is_chat(body):
            chats += 1
            return FakeReply.ok_json({"reply": REPLIES[(chats - 1) % len(REPLIES)]}, delay=0.2)
        plays += 1
        if plays == 2:  # the second turn: an answer far longer than the turn (0.1 s a piece, about 60 s)
            return FakeReply.ok(json.dumps({**MOVE, "reasoning": "x" * 2400}), piece_delay=0.1)
        return FakeReply.ok_json(MOVE, delay=0.2)

    async with FakeOpenAI(llama_cpp_python=True, responder=model) as fake, \
            serve_agent(local_config(fake.base_url, tmp_path), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url, objective="A house") as game:
            first = await game.ai_turn(deadline=30)
            assert first.finished and [p.shape for p in first.plays][:1] == ["Red"], "the model's move"
            await game.human_turn()
            idle = await game.chat("Which piece next?", timeout=10)
            assert idle.reply == REPLIES[0], idle.reply
            missed = await game.ai_turn(deadline=30)
            assert missed.finished and missed.plays, "the planner played the turn the model missed"
            # Right after the miss: the abandoned answer was stopped at the server, the model is idle.
            after = await game.chat("And now?", timeout=10)
            assert after.reply == REPLIES[1], after.reply
            assert after.latency is not None and after.latency < CHAT_WAIT
    records = [json.loads(line) for path in server.transcript_paths() for line in path.read_text().splitlines()]
    assert not [r for r in records if r["kind"] == "chat_replaced"]
    abandoned = [r for r in fake.chat_requests if not is_chat(r.json or {}) and r.disconnected]
    assert len(abandoned) == 1 and abandoned[0].streamed_events < 100, "the missed turn's answer was stopped"
