"""The LLM agent end to end: real socket, the simulator's game client, the real openai SDK against the
fake OpenAI-compatible server. Each test scripts what the "model" answers."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from typing import Any

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.tangram.config import PROJECT_DIR, Config, load_config
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.sim.client import GameClient

MOVE = {"action": "place", "piece": "Red", "rotation": 180, "x": 50, "y": 55, "relation": None, "anchor": None,
        "chat": "I put Red on top as the roof.", "reasoning": "roof first"}


def llm_config(base_url: str, tmp_path, deadline: float = 8, **llm: Any) -> Config:
    return Config.model_validate({
        "player": "llm",
        "llm": {"base_url": base_url, "api_key_required": False, "request_timeout": 5,
                "retry": {"max_attempts": 3, "initial_backoff": 0.05, "max_backoff": 0.2}, **llm},
        "turn": {"deadline": deadline},
        "transcripts": {"dir": str(tmp_path / "transcripts")},
    })


def is_chat(req: dict[str, Any]) -> bool:
    fmt = req.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["name"] == "chat_reply"
    return "Your partner wrote in the chat" in json.dumps(req.get("messages", []))


def replies(move: dict[str, Any] = MOVE, chat: str = "Sure, happy to help!", move_delay: float = 0.0):
    def responder(req: dict[str, Any]) -> FakeReply:
        if is_chat(req):
            return FakeReply.ok_json({"reply": chat})
        return FakeReply.ok_json(move, delay=move_delay)
    return responder


async def test_full_turn_images_reach_the_llm_and_frames_are_valid(tmp_path):
    async with FakeOpenAI(responder=replies()) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url, objective="A house") as game:
            turn = await game.ai_turn(deadline=10)
            assert turn.finished and not turn.undone
            assert [p.shape for p in turn.plays][:1] == ["Red"]
            assert "I put Red on top as the roof." in turn.chat
            assert game.violations == []
        request = fake.chat_requests[0]
        urls = request.image_urls()
        assert len(urls) == 2 and all(u.startswith("data:image/png;base64,") for u in urls)
        assert "A house" in json.dumps(request.messages)
        assert request.response_format_type == "json_schema"
    transcript = server.transcript_paths()[0].read_text()
    kinds = [json.loads(line)["kind"] for line in transcript.splitlines()]
    assert {"frame_in", "frame_out", "llm", "turn_start", "turn_end"} <= set(kinds)
    assert "iVBORw0KGgo" not in transcript  # no PNG payload (base64 of the PNG signature) leaks in


async def test_llm_garbage_still_ends_the_turn_with_an_apology(tmp_path):
    async with FakeOpenAI(responder=lambda req: FakeReply.garbage()) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url) as game:
            turn = await game.ai_turn(deadline=10)
            assert turn.finished and turn.plays == []
            assert any("trouble" in line for line in turn.chat)


async def test_nonsense_values_are_salvaged_or_refused(tmp_path):
    bad_moves = iter([
        {**MOVE, "piece": "Pink"},  # no piece left: nothing to play (re-asks off here)
        {**MOVE, "x": 1e9, "y": -1e9},  # clamped onto the board, then repaired
        {**MOVE, "rotation": "sideways"},  # the bad field left out
        {**MOVE, "x": 99, "y": 99},  # sticks out of the board: repaired, not refused
    ])
    async with FakeOpenAI(responder=lambda req: FakeReply.ok_json(next(bad_moves))) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, max_reasks=0), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url) as game:
            turn = await game.ai_turn(deadline=10)
            assert turn.finished and turn.plays == []
            assert any("trouble" in line for line in turn.chat)
            for _ in range(3):
                await game.human_turn()
                turn = await game.ai_turn(deadline=10)
                assert turn.finished and len(turn.plays) == 1 and not turn.undone
            assert game.violations == []
    records = [json.loads(line) for line in server.transcript_paths()[0].read_text().splitlines()]
    salvages = [r for r in records if r["kind"] == "salvage"]
    assert [(r["turn"], r["salvage"]) for r in salvages] == [(2, "clamped"), (3, "field_dropped")]
    assert salvages[0]["played"] == "Red at (100, 0)" and "board runs from 0 to 100" in salvages[0]["why"]


async def test_server_error_then_success(tmp_path):
    async with FakeOpenAI(responder=replies()) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path), host="127.0.0.1", port=0) as server:
        fake.enqueue(FakeReply.http_error(500, "overloaded"))
        async with GameClient(server.url) as game:
            turn = await game.ai_turn(deadline=10)
            assert turn.finished and len(turn.plays) >= 1
        assert len(fake.chat_requests) >= 2


async def test_chat_during_a_slow_play_is_answered_before_the_play(tmp_path):
    # A first turn keeps the slow real game's landing time (6 s) in reserve: 12 s leave the 2 s
    # model, the chat and the game's textured pictures room enough on a loaded machine.
    async with FakeOpenAI(responder=replies(move_delay=2.0)) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, deadline=12), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url) as game:
            turn_task = asyncio.create_task(game.ai_turn(deadline=14))
            await fake.wait_for_requests(1)
            chat = await game.chat("How is it going?", timeout=5)
            assert chat.reply == "Sure, happy to help!"
            turn = await turn_task
            assert turn.finished
            assert turn.plays and chat.latency is not None
            assert chat.sent_at + chat.latency < turn.plays[0].at


async def test_two_connections_are_isolated(tmp_path):
    async with FakeOpenAI(responder=replies()) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url, objective="A house") as a, GameClient(server.url, objective="A fish") as b:
            await a.chat("please use the Purple square for the door")
            ta, tb = await asyncio.gather(a.ai_turn(deadline=10), b.ai_turn(deadline=10))
            assert ta.finished and tb.finished
        for req in fake.chat_requests:
            text = json.dumps(req.messages)
            if "A fish" in text:
                assert "Purple square for the door" not in text and "A house" not in text
        assert len(server.transcript_paths()) == 2


async def test_the_game_reconnecting_gets_a_fresh_working_session(tmp_path):
    async with FakeOpenAI(responder=replies()) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url) as game:
            await game.ai_turn(deadline=10)
        async with GameClient(server.url) as game:
            turn = await game.ai_turn(deadline=10)
            assert turn.finished


async def test_list_layout_of_the_state_is_understood(tmp_path):
    async with FakeOpenAI(responder=replies()) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url, state_layout="list") as game:
            turn = await game.ai_turn(deadline=10)
            assert turn.finished and turn.plays


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_cli_with_gpt4o_config_plays_through_openai_base_url(tmp_path):
    """The issue's 'done when': the shipped command, OPENAI_BASE_URL on loopback, real game frames."""
    assert load_config(PROJECT_DIR / "configs" / "gpt4o.yaml").llm.base_url is None
    async with FakeOpenAI(responder=replies(), api_key="sk-test-e2e-key") as fake:
        port = _free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        env.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="sk-test-e2e-key")
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agent", "--config", str(PROJECT_DIR / "configs" / "gpt4o.yaml"),
            "--port", str(port), cwd=tmp_path, env=env, stderr=subprocess.PIPE)
        try:
            assert proc.stderr is not None
            line = (await asyncio.wait_for(proc.stderr.readline(), 20)).decode()
            assert "listening" in line
            async with GameClient(f"ws://localhost:{port}", objective="A rocket") as game:
                for _ in range(3):
                    turn = await game.ai_turn(deadline=15)
                    assert turn.finished
                    await game.human_turn()
                chat = await game.chat("hi there", timeout=10)
                assert chat.reply
                assert game.violations == []
            assert len(fake.chat_requests) >= 4
            assert all(r.authorization == "Bearer sk-test-e2e-key" for r in fake.chat_requests)
            assert all(len(r.image_urls()) >= 1 for r in fake.chat_requests)
        finally:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), 15)
        transcripts = list((tmp_path / "transcripts").glob("*.jsonl"))
        assert transcripts and "sk-test-e2e-key" not in transcripts[0].read_text()


async def test_planner_hint_reaches_the_play_prompt(tmp_path):
    async with FakeOpenAI(responder=replies()) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, planner_hint=True), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url, objective="A house") as game:
            assert (await game.ai_turn(deadline=10)).finished
        prompt = json.dumps(fake.chat_requests[0].messages)
        assert "A planning assistant suggests" in prompt


async def test_fallback_to_planner_plays_when_the_llm_fails(tmp_path):
    async with FakeOpenAI(responder=lambda req: FakeReply.http_error(401, "bad key")) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, fallback_to_planner=True), host="127.0.0.1",
                        port=0) as server, GameClient(server.url, objective="A house") as game:
        turn = await game.ai_turn(deadline=10)
        assert turn.finished and len(turn.plays) == 1 and not turn.undone


async def test_without_fallback_a_failing_llm_passes_with_an_apology(tmp_path):
    async with FakeOpenAI(responder=lambda req: FakeReply.http_error(401, "bad key")) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url, objective="A house") as game:
            turn = await game.ai_turn(deadline=10)
            assert turn.finished and turn.plays == []
            assert any("trouble" in line for line in turn.chat)


async def test_a_stalled_llm_leaves_time_for_the_planner_fallback(tmp_path):
    # request_timeout x attempts is far beyond the deadline: the player must stop waiting in time.
    async with FakeOpenAI(responder=lambda req: FakeReply.stall(30)) as fake:
        config = Config.model_validate({
            "player": "llm", "transcripts": {"enabled": False}, "turn": {"deadline": 6},
            "llm": {"base_url": fake.base_url, "api_key_required": False, "request_timeout": 20,
                    "fallback_to_planner": True, "retry": {"max_attempts": 3}}})
        async with serve_agent(config, host="127.0.0.1", port=0) as server:
            async with GameClient(server.url, objective="A house") as game:
                turn = await game.ai_turn(deadline=10)
                assert turn.finished and len(turn.plays) == 1 and not turn.undone
                assert turn.latency is not None and turn.latency < 6
