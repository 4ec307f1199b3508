"""Connection floods, shutdown records and abandoned turns, over real sockets (issue 10, findings 3
and 8, and the second playRequest).

The file-descriptor test runs the real command (``python -m agent``) with a low open-files limit;
the others run the server in-process on port 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import resource
import socket
import sys

import psutil
import pytest
import yaml
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from agent.core.limits import ResourceErrorFilter
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.tangram.link import server as server_module
from agent.games.tangram.link.server import serve_agent
from tests.tangram.link.socket_support import feedback, frames_until, play_one_turn, play_request, records
from tests.tangram.support import MOVE, good_replies, llm_config, planner_config, wait_until

FD_LIMIT = 256
IDLE_SOCKETS = 300
"""More idle WebSocket connections than the agent has file descriptors: before the fix, ~500 of
them at a 1024 limit locked the game out and wrote 257 MB of EMFILE tracebacks in 150 s."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def open_idle(url: str, n: int) -> tuple[list[object], int]:
    """Open ``n`` WebSocket connections that never send a frame; returns them and how many failed."""
    opened: list[object] = []
    failed = 0

    async def one() -> None:
        nonlocal failed
        try:
            opened.append(await connect(url, ping_interval=None, open_timeout=5, compression=None))
        except (OSError, TimeoutError, InvalidStatus, Exception):
            failed += 1

    for start in range(0, n, 50):
        await asyncio.gather(*(one() for _ in range(min(50, n - start))))
    return opened, failed


@pytest.mark.skipif(sys.platform == "win32", reason="open-files limits are a Unix matter")
async def test_idle_sockets_beyond_the_fd_limit_do_not_lock_the_game_out(tmp_path):
    config = tmp_path / "agent.yaml"
    config.write_text(yaml.safe_dump({"transcripts": {"dir": str(tmp_path / "transcripts")}}))
    port = free_port()
    stderr = (tmp_path / "stderr.log").open("wb")

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))

    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent", "--config", str(config), "--host", "127.0.0.1", "--port", str(port),
        cwd=tmp_path, env=env, stderr=stderr, preexec_fn=low_limit)
    idle: list[object] = []
    try:
        log = tmp_path / "stderr.log"
        await wait_until(lambda: "listening on ws://" in log.read_text(errors="replace"), timeout=30,
                         what="the agent to listen")
        url = f"ws://127.0.0.1:{port}"
        idle, _ = await open_idle(url, IDLE_SOCKETS)
        await asyncio.sleep(server_module.IDLE_GRACE_S)  # idle ones give way once past their grace
        agent = psutil.Process(proc.pid)
        assert agent.num_fds() < FD_LIMIT // 2, agent.num_fds()
        async with connect(url, open_timeout=10) as game:  # the real game arrives last
            frames = await play_one_turn(game, play_request(), timeout=15)
        assert frames[-1]["type"] == "finish"
        assert [p.name for p in (tmp_path / "transcripts").iterdir()], "the game's transcript"
        assert len(list((tmp_path / "transcripts").iterdir())) == 1  # idle sockets wrote none
        assert log.stat().st_size < 20_000, log.read_text(errors="replace")[-2000:]
        assert "Too many open files" not in log.read_text(errors="replace")
    finally:
        for ws in idle:
            with contextlib.suppress(Exception):
                await ws.close()  # type: ignore[attr-defined]
        if proc.returncode is None:
            proc.terminate()
        await asyncio.wait_for(proc.wait(), 20)
        stderr.close()


async def test_when_full_an_idle_connection_gives_way_and_speaking_games_get_503(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="agent.games.tangram.link.server")
    config = planner_config(tmp_path, server={"max_connections": 4})
    async with serve_agent(config, host="127.0.0.1", port=0) as server:
        idle, _ = await open_idle(server.url, 10)  # the first 4 are let in, the others get 503
        assert len(server._admitted) <= 4
        await asyncio.sleep(server_module.IDLE_GRACE_S)  # idle ones give way once past their grace
        async with connect(server.url) as game:  # the game still gets in, and plays
            assert (await play_one_turn(game, play_request()))[-1]["type"] == "finish"
        games = [await connect(server.url) for _ in range(4)]
        for ws in games:  # every place is now a game that has spoken
            await ws.send(json.dumps({"type": "chatRequest", "message": "hi", "objective": "A house"}))
            await frames_until(ws, "chat")
        with pytest.raises(InvalidStatus) as refused:
            await connect(server.url, open_timeout=5)
        assert refused.value.response.status_code == 503
        for ws in [*games, *idle]:
            with contextlib.suppress(Exception):
                await ws.close()  # type: ignore[attr-defined]
    full_lines = [r for r in caplog.records if "server full" in r.getMessage()]
    assert 1 <= len(full_lines) <= 2, [r.getMessage() for r in full_lines]  # once per interval, not per event
    assert len(server.transcript_paths()) == 5  # the 5 games that spoke; the idle sockets wrote nothing


async def test_max_connections_is_lowered_to_fit_the_open_files_limit(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(server_module, "open_files_limit", lambda: 200)
    async with serve_agent(planner_config(tmp_path), host="127.0.0.1", port=0) as server:
        assert server.max_connections == (200 - 64 - 16 - 32) // 2
    assert any("lowered from 64" in r.getMessage() for r in caplog.records)


def test_resource_errors_are_logged_once_per_interval(caplog):
    logger = logging.getLogger("test.hardening2.accept")
    limiter = ResourceErrorFilter(interval=60)
    logger.addFilter(limiter)
    try:
        with caplog.at_level(logging.ERROR, logger="test.hardening2.accept"):
            for _ in range(10_000):
                try:
                    raise OSError(24, "Too many open files")
                except OSError:
                    logger.exception("socket.accept() out of system resource")
                logger.error("an ordinary error")
    finally:
        logger.removeFilter(limiter)
    messages = [r.getMessage() for r in caplog.records]
    assert messages.count("socket.accept() out of system resource") == 1
    assert messages.count("an ordinary error") == 10_000


async def test_a_turn_ended_by_shutdown_is_recorded_as_what_the_game_saw(tmp_path):
    async with FakeOpenAI(responder=lambda req: FakeReply.stall(60, json.dumps(MOVE))) as fake:
        async with serve_agent(llm_config(fake.base_url, tmp_path, deadline=20, request_timeout=60),
                               host="127.0.0.1", port=0) as server:
            game = await connect(server.url)
            await game.send(json.dumps(play_request()))
            await wait_until(lambda: fake.in_flight == 1, what="the LLM call")
        frames = []
        with contextlib.suppress(Exception):
            async for raw in game:
                frames.append(json.loads(raw))
    assert [f["type"] for f in frames][-1] == "finish"
    ends = records(server.transcript_paths(), "turn_end")
    # Before: outcome "cancelled", as if the game had been left waiting.
    assert [(e["outcome"], e.get("finish_sent")) for e in ends] == [("shutdown", True)], ends


async def test_a_second_play_request_abandons_the_old_turn_without_its_finish(tmp_path):
    """The game asks again only when it considers the last turn over; a late finish for the old
    turn would end the new one, so the old turn ends silently and only the new one finishes."""
    calls = {"n": 0}

    def responder(req):
        calls["n"] += 1
        if calls["n"] == 1:
            return FakeReply.stall(60, json.dumps(MOVE))
        return good_replies()(req)

    async with FakeOpenAI(responder=responder) as fake:
        async with serve_agent(llm_config(fake.base_url, tmp_path, deadline=8, request_timeout=60),
                               host="127.0.0.1", port=0) as server, connect(server.url) as ws:
            await ws.send(json.dumps(play_request()))
            await wait_until(lambda: fake.in_flight == 1, what="the first turn's LLM call")
            frames = await play_one_turn(ws, play_request(), timeout=10)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):  # nothing more may come: no late finish
                    frames.append(json.loads(await ws.recv()))
            await wait_until(lambda: fake.in_flight == 0, what="the abandoned call to be cancelled")
    kinds = [f["type"] for f in frames]
    assert kinds.count("finish") == 1 and kinds[-1] == "finish" and kinds.count("play") == 1, kinds
    ends = records(server.transcript_paths(), "turn_end")
    assert [e["outcome"] for e in ends] == ["cancelled", "played"], ends


async def test_feedback_helper_matches_the_protocol():
    # The raw frames these tests send are ones the agent's parser reads as the real game's.
    from agent.games.tangram.protocol import parse_frame
    frame = parse_frame(json.dumps(feedback("Red", 50, 50, 90, ["Blue"])))
    assert frame.state.on_board["Red"].collisions == ["Blue"] and frame.state.on_board["Red"].rotation == 90
    assert parse_frame(json.dumps(play_request())).type == "playRequest"

