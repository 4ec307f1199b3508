"""Connection limits under bursts and slowloris mixes (issue 22), over real sockets: beyond the
cap a client gets HTTP 503 with Retry-After, never a reset; a burst is served; silent and
half-open sockets give way to a newcomer; the open-files soft limit is raised to the hard one."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import socket
import sys
import time
from typing import Any

import psutil
import pytest
import yaml
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from agent.games.tangram.link import server as server_module
from agent.games.tangram.link.server import serve_agent
from tests.tangram.link.socket_support import play_one_turn, play_request
from tests.tangram.support import planner_config, wait_until

BURST = 40
CAP = 10


async def game_with_retries(url: str, outcome: dict[str, Any]) -> None:
    """A game that retries only when told to try again later (503 + Retry-After, or close 1013)."""
    for _ in range(60):
        try:
            async with connect(url, open_timeout=10, ping_interval=None) as ws:
                frames = await play_one_turn(ws, play_request(), timeout=15)
                assert frames[-1]["type"] == "finish"
                outcome["played"] += 1
                return
        except InvalidStatus as exc:
            response = exc.response
            if response.status_code != 503 or "Retry-After" not in response.headers:
                outcome["failures"].append(f"HTTP {response.status_code} without Retry-After")
                return
            outcome["retry_after"] += 1
            await asyncio.sleep(min(float(response.headers["Retry-After"]), 2.0))
        except ConnectionClosed as exc:
            if exc.rcvd is None or exc.rcvd.code != 1013:
                outcome["failures"].append(f"closed: {exc}")
                return
            outcome["replaced"] += 1
        except Exception as exc:  # a reset, "did not receive a valid HTTP response", a time-out
            outcome["failures"].append(f"{type(exc).__name__}: {exc}")
            return
    outcome["failures"].append("gave up after 60 tries")


async def test_a_burst_beyond_the_cap_gets_503_with_retry_after_never_a_reset_and_every_game_plays(tmp_path):
    outcome: dict[str, Any] = {"played": 0, "retry_after": 0, "replaced": 0, "failures": []}
    config = planner_config(tmp_path, server={"max_connections": CAP})
    async with serve_agent(config, host="127.0.0.1", port=0) as server:
        async with asyncio.timeout(90):
            await asyncio.gather(*(game_with_retries(server.url, outcome) for _ in range(BURST)))
    # Before: sockets beyond the cap and 16 handshake slots were reset with no HTTP answer at all.
    assert outcome["failures"] == [] and outcome["played"] == BURST, outcome
    assert outcome["retry_after"] > 0, outcome  # the cap was reached, and said so politely
    assert outcome["replaced"] == 0, outcome  # games just let in keep their places


async def test_a_burst_within_the_cap_is_served_without_a_single_refusal(tmp_path):
    config = planner_config(tmp_path, server={"max_connections": 64})
    async with serve_agent(config, host="127.0.0.1", port=0) as server:
        sockets = await asyncio.gather(*(connect(server.url, open_timeout=10, ping_interval=None)
                                         for _ in range(60)))
        try:
            finished = await asyncio.gather(*(play_one_turn(ws, play_request(), timeout=30) for ws in sockets))
        finally:
            await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    assert all(frames[-1]["type"] == "finish" for frames in finished)


def masked(opcode_byte: int, payload: bytes, length_field: bytes | None = None) -> bytes:
    """A client frame header (masked, as clients must) and as much payload as given."""
    mask = b"\x01\x02\x03\x04"
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    if length_field is None:
        return bytes([opcode_byte, 0x80 | len(payload)]) + mask + body
    return bytes([opcode_byte, 0x80 | 126]) + length_field + mask + body


async def slowloris(url: str, port: int, each: int) -> list[Any]:
    """Silent TCP sockets, half HTTP upgrades, half frames and open fragments, ``each`` of each."""
    held: list[Any] = []
    for _ in range(each):
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        held.append(writer)
    for _ in range(each):
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n")
        held.append(writer)
    for kind in ("half frame", "open fragment"):
        for _ in range(each):
            try:
                ws = await connect(url, open_timeout=5, ping_interval=None, close_timeout=0.1)
            except Exception:  # given way to a later one already: that is the point
                continue
            if kind == "half frame":
                ws.transport.write(masked(0x81, b"x" * 10, (4096).to_bytes(2, "big")))
            else:
                ws.transport.write(masked(0x01, b"hello"))  # FIN unset, and no continuation ever
            held.append(ws)
    return held


def release(held: list[Any]) -> None:
    """Drop every socket :func:`slowloris` holds, without a closing handshake."""
    for item in held:
        with contextlib.suppress(Exception):
            if hasattr(item, "transport"):
                item.transport.abort()
            else:
                item.close()


@pytest.mark.parametrize("files", [None, 300])
async def test_a_slowloris_mix_cannot_keep_the_game_out(tmp_path, monkeypatch, files):
    if files is not None:  # a low limit: the handshake room is small, so handshakes must give way
        monkeypatch.setattr(server_module, "open_files_limit", lambda: files)
    held: list[Any] = []
    async with serve_agent(planner_config(tmp_path), host="127.0.0.1", port=0) as server:
        try:
            held = await slowloris(server.url, server.port, 200)
            await asyncio.sleep(server_module.IDLE_GRACE_S)  # the game comes in once they are idle
            started = time.monotonic()
            # Before: refused (reset) until the silent sockets timed out, about 10 s later.
            async with connect(server.url, open_timeout=5) as game:
                frames = await play_one_turn(game, play_request(), timeout=10)
            assert frames[-1]["type"] == "finish"
            assert time.monotonic() - started < 4.0
            assert server._sockets <= server.max_sockets + 1
        finally:
            release(held)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.skipif(sys.platform == "win32", reason="open-files limits are a Unix matter")
async def test_the_open_files_soft_limit_is_raised_to_the_hard_one_before_the_cap_is_fitted(tmp_path):
    soft, hard = 128, min(4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    if hard <= soft:
        pytest.skip("the hard limit here is too low to show a raise")
    config = tmp_path / "agent.yaml"
    config.write_text(yaml.safe_dump({"transcripts": {"dir": str(tmp_path / "t")}}))
    port = free_port()
    log = tmp_path / "stderr.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    with log.open("wb") as stderr:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agent", "--config", str(config), "--host", "127.0.0.1", "--port", str(port),
            cwd=tmp_path, env=env, stderr=stderr,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard)))
        try:
            await wait_until(lambda: "listening on" in log.read_text(errors="replace"), timeout=30,
                             what="the agent to listen")
            assert psutil.Process(proc.pid).rlimit(psutil.RLIMIT_NOFILE) == (hard, hard)
        finally:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), 20)
    text = log.read_text(errors="replace")
    assert f"open-files limit raised from {soft} to {hard}" in text, text
    assert "lowered" not in text and "at most 64 connections" in text, text  # 128 alone fits only 8
