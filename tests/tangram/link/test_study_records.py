"""Records an analyst can join (issue 11, items 1 and 2): turn ids on everything a turn records,
chat replies tied to their requests, LLM calls recorded however they end, the system prompt once,
and the study metadata and tags of every session."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from agent.core.studies.metadata import config_hash
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.tangram.config import Config
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.sim.client import GameClient

MOVE = {"action": "place", "piece": "Red", "rotation": 180, "x": 50, "y": 55, "relation": None, "anchor": None,
        "chat": "I put Red on top as the roof.", "reasoning": "roof first"}


def _config(base_url: str, tmp_path: Path, **extra: Any) -> Config:
    return Config.model_validate({
        "player": "llm", "tags": {"participant": "P07", "condition": "explain"},
        "llm": {"base_url": base_url, "api_key_required": False, "request_timeout": 5,
                "retry": {"max_attempts": 1}},
        "turn": {"deadline": 8}, "transcripts": {"dir": str(tmp_path / "t")}, **extra})


def _is_chat(req: dict[str, Any]) -> bool:
    fmt = req.get("response_format") or {}
    return fmt.get("type") == "json_schema" and fmt["json_schema"]["name"] == "chat_reply"


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_turn_ids_chat_requests_system_prompt_and_metadata(tmp_path: Path) -> None:
    def responder(req: dict[str, Any]) -> FakeReply:
        return FakeReply.ok_json({"reply": "Happy to help!"}) if _is_chat(req) else FakeReply.ok_json(MOVE)

    async with FakeOpenAI(responder=responder) as fake:
        config = _config(fake.base_url, tmp_path)
        async with serve_agent(config, host="127.0.0.1", port=0) as server, \
                GameClient(server.url, objective="A house") as game:
            for _ in range(2):
                turn = await game.ai_turn(deadline=10)
                assert turn.finished
                await game.human_turn()
            await game.chat("What are we building?", timeout=10)
    path = server.transcript_paths()[0]
    assert "condition=explain_participant=P07" in path.name
    recs = _records(path)

    start = recs[0]
    assert start["kind"] == "session_start"
    assert start["game"] == "tangram" and start["player_kind"] == "llm" and start["model"] == "gpt-4o"
    assert start["tags"] == {"participant": "P07", "condition": "explain"}
    assert start["config_sha256"] == config_hash(server.config) and len(start["templates_sha256"]) == 16
    assert start["agent_version"]

    # Everything a turn records, from its playRequest to its finish, names the turn.
    in_turns = {"decision", "repair", "llm", "turn_start", "turn_end"}
    turn_of_kind = [(r["kind"], r.get("turn")) for r in recs if r["kind"] in in_turns and r.get("purpose") != "chat"]
    assert turn_of_kind and all(t in (1, 2) for _, t in turn_of_kind)
    plays = [r for r in recs if r["kind"] == "frame_out" and r["frame"]["type"] in ("play", "finish")]
    assert [r["turn"] for r in plays if r["frame"]["type"] == "finish"] == [1, 2]
    assert all(r.get("turn") in (1, 2) for r in plays)
    requests = [r for r in recs if r["kind"] == "frame_in" and r["type"] == "playRequest"]
    assert [r["turn"] for r in requests] == [1, 2]
    ends = [r for r in recs if r["kind"] == "turn_end"]
    assert all(isinstance(r["pieces_on_board"], int) for r in ends)

    # The chat request and its reply share an id; the chat's LLM call and the line sent carry it.
    asked = next(r for r in recs if r["kind"] == "frame_in" and r["type"] == "chatRequest")
    reply = next(r for r in recs if r["kind"] == "chat_reply")
    assert asked["request"] == reply["request"] == 1
    assert reply["reply"] == "Happy to help!" and reply["outcome"] == "answered"
    chat_llm = next(r for r in recs if r["kind"] == "llm" and r["purpose"] == "chat")
    assert chat_llm["request"] == 1 and chat_llm.get("turn") is None
    said = [r for r in recs if r["kind"] == "frame_out" and r["frame"]["type"] == "chat" and r.get("request") == 1]
    assert [r["frame"]["message"] for r in said] == ["Happy to help!"]

    # The system prompt is written once per distinct text, the calls name it by hash.
    llm = [r for r in recs if r["kind"] == "llm"]
    assert all(r["outcome"] == "ok" and r["elapsed_s"] >= 0 for r in llm)
    systems = [r for r in recs if r["kind"] == "system_prompt"]
    assert {r["system_sha256"] for r in llm} == {r["sha256"] for r in systems}
    assert len(systems) == len({r["sha256"] for r in systems})
    assert all(m["role"] != "system" for r in llm for m in r["messages"]) and all(r["messages"] for r in llm)


async def test_an_llm_call_cut_by_the_deadline_or_a_disconnect_is_still_recorded(tmp_path: Path) -> None:
    async with FakeOpenAI(responder=lambda req: FakeReply.ok_json(MOVE, delay=30)) as fake:
        config = _config(fake.base_url, tmp_path, turn={"deadline": 4})
        async with serve_agent(config, host="127.0.0.1", port=0) as server:
            async with GameClient(server.url) as game:
                turn = await game.ai_turn(deadline=10)  # the model stalls: the turn's deadline ends the call
                assert turn.finished
                await game.human_turn()
                await game.send_frame(game.game.start_ai_turn())
                await fake.wait_for_requests(2, timeout=5)
            # the game left mid-call
            for _ in range(100):
                if not server.sessions:
                    break
                await asyncio.sleep(0.05)
    recs = _records(server.transcript_paths()[0])
    llm = [r for r in recs if r["kind"] == "llm"]
    assert [(r["turn"], r["outcome"]) for r in llm] == [(1, "timeout"), (2, "cancelled")]
    assert llm[0]["elapsed_s"] > 0.5 and llm[1]["error"] == "cancelled before an answer"
    assert all(r["system_sha256"] for r in llm)
