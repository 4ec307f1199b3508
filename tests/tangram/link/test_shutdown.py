"""Shutdown (issue 6, item 7): SIGINT/SIGTERM to the real command during a turn end the turn with
``finish``, cancel the LLM call, and leave a complete transcript."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import stat
import sys

import pytest
import yaml

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.tangram.sim.client import GameClient
from tests.tangram.support import MOVE, assert_agent_frames_valid, wait_until


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_signal_during_a_turn_ends_it_politely_and_flushes_the_transcript(tmp_path, sig):
    async with FakeOpenAI(responder=lambda req: FakeReply.stall(60, json.dumps(MOVE))) as fake:
        config = tmp_path / "agent.yaml"
        config.write_text(yaml.safe_dump({
            "player": "llm", "transcripts": {"dir": str(tmp_path / "transcripts")},
            "llm": {"base_url": fake.base_url, "api_key_required": False, "request_timeout": 60}}))
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agent", "--config", str(config), "--host", "127.0.0.1", "--port", str(port),
            cwd=tmp_path, env=env, stderr=asyncio.subprocess.PIPE)
        try:
            assert proc.stderr is not None
            while "listening on ws://" not in (line := (await asyncio.wait_for(proc.stderr.readline(), 30)).decode()):
                assert line, "the agent exited before listening"
            async with GameClient(f"ws://127.0.0.1:{port}") as game:
                turn_task = asyncio.create_task(game.ai_turn(deadline=20))
                await wait_until(lambda: fake.in_flight == 1, timeout=10, what="the LLM call")
                proc.send_signal(sig)
                turn = await turn_task
                assert turn.finished and turn.plays == []
                assert any("shutting down" in line for line in turn.chat)
                await wait_until(lambda: not game.connected, timeout=10, what="the agent to close the socket")
                assert game._ws is not None and game._ws.close_code == 1001
                assert [v.kind for v in game.violations] == ["connection_closed"]  # only the close itself
                game.game.violations.clear()
                assert_agent_frames_valid(game)
            assert await asyncio.wait_for(proc.wait(), 20) == 0
            await wait_until(lambda: fake.in_flight == 0, timeout=5, what="the LLM call to be cancelled")
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    [path] = (tmp_path / "transcripts").glob("*.jsonl")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[-1]["kind"] == "session_end" and records[-1]["reason"] == "server shutdown"
    assert records[-1]["turns_ended"] == 1
    out = [r["frame"]["type"] for r in records if r["kind"] == "frame_out"]
    assert out[-1] == "finish"


@pytest.mark.timeout(20)
async def test_sockets_still_in_their_handshake_do_not_hold_up_the_shutdown(tmp_path):
    """A socket that connected and sent nothing (or half an HTTP request) is hung up on at shutdown.

    websockets closes only connections past their handshake and then waits for every socket; a
    stopping agent waited out the 10 s handshake time-out of each silent one."""
    from agent.games.tangram.link.server import serve_agent
    from tests.tangram.support import planner_config

    loop = asyncio.get_running_loop()
    async with asyncio.timeout(8):
        async with serve_agent(planner_config(tmp_path), host="127.0.0.1", port=0) as server:
            _, silent = await asyncio.open_connection("127.0.0.1", server.port)
            _, halfway = await asyncio.open_connection("127.0.0.1", server.port)
            halfway.write(b"GET / HTTP/1.1\r\nHost: localhost\r\n")
            async with GameClient(server.url) as game:  # and a real game, which gets its goodbye
                assert (await game.ai_turn(deadline=10)).finished
                await wait_until(lambda: server._sockets == 3, what="three sockets")
                started = loop.time()
    assert loop.time() - started < 3
    silent.close()
    halfway.close()
