"""The console's server: loopback and tokens, Host and Origin checks, what it serves, its limits;
the --console flag; the board geometry the page relies on."""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from agent.core.config import ConfigError
from agent.core.transcript import Transcript
from agent.games.tangram.config import Config
from agent.games.tangram.console.address import parse_address
from agent.games.tangram.console.editor import VIEWBOX, check_pose
from agent.games.tangram.console.hub import Console
from agent.games.tangram.console.supervisor import GameSupervisor
from agent.games.tangram.console.web import COOKIE, ConsoleServer, ConsoleSetupError
from agent.games.tangram.game import GAME
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.protocol import GameFrame
from agent.games.tangram.replica.crops import BOARD_CROP, world_to_crop

TOKEN = "console-token-0123456789"
PROJECT = Path(__file__).resolve().parents[3]


@contextlib.asynccontextmanager
async def served(token: str | None = None, **console: Any) -> AsyncIterator[tuple[Console, ConsoleServer]]:
    config = Config.model_validate({"console": {"enabled": True, **console}})
    hub = Console(config)
    web = ConsoleServer(hub, "127.0.0.1", 0, token)
    await web.start()
    try:
        yield hub, web
    finally:
        await web.stop()


async def test_the_page_is_served_with_a_strict_policy_and_no_secret() -> None:
    # unsafe=True: keep cookies set by an IP address, as browsers do.
    async with served(TOKEN) as (_, web), aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        async with http.get(web.url, params={"token": TOKEN}) as resp:  # redirected, the cookie set
            assert resp.status == 200 and resp.url.query_string == ""
            page = await resp.text()
            assert TOKEN not in page and "<template id=\"game-template\">" in page
            assert "script-src 'self'" in resp.headers["Content-Security-Policy"]
            assert resp.headers["X-Content-Type-Options"] == "nosniff"
        assert resp.history and resp.history[0].status == 303
        cookie = resp.history[0].cookies[COOKIE]
        assert cookie.value == TOKEN and cookie["httponly"] and cookie["samesite"] == "Strict"
        for name in ("console.js", "console.css"):
            async with http.get(f"{web.url}static/{name}") as resp:
                assert resp.status == 200 and TOKEN not in await resp.text()
        async with http.get(f"{web.url}static/..%2Fweb.py") as resp:
            assert resp.status == 404
        async with http.ws_connect(web.url + "ws") as ws:  # the cookie carries the token
            assert (await ws.receive_json())["type"] == "snapshot"


async def test_a_token_is_required_and_checked() -> None:
    async with served(TOKEN) as (_, web), aiohttp.ClientSession() as http:
        async with http.get(web.url) as resp:
            assert resp.status == 401 and "token" in await resp.text()
        async with http.get(web.url, params={"token": "wrong-token-wrong-token"}) as resp:
            assert resp.status == 403
        for path in ("ws", "img/x/board", "static/console.js"):
            async with http.get(web.url + path) as resp:
                assert resp.status == 401, path
        async with http.get(web.url, cookies={COOKIE: "wrong"}) as resp:
            assert resp.status == 401


async def test_off_loopback_needs_a_token() -> None:
    hub = Console(Config())
    with pytest.raises(ConsoleSetupError, match="without a token"):
        ConsoleServer(hub, "0.0.0.0", 0, None)
    ConsoleServer(hub, "0.0.0.0", 0, TOKEN)  # accepted (not started: tests stay on loopback)


async def test_loopback_answers_only_to_loopback_names_and_its_own_origin() -> None:
    async with served() as (_, web), aiohttp.ClientSession() as http:
        async with http.get(web.url, headers={"Host": f"attacker.example:{web.port}"}) as resp:
            assert resp.status == 421  # DNS rebinding: a foreign name pointing at 127.0.0.1
        async with http.get(web.url, headers={"Host": f"localhost:{web.port}"}) as resp:
            assert resp.status == 200
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(web.url + "ws", origin="http://attacker.example")
        assert refused.value.status == 403
        async with http.ws_connect(web.url + "ws", origin=f"http://127.0.0.1:{web.port}") as ws:
            assert (await ws.receive_json())["type"] == "snapshot"


async def test_page_limits_hold() -> None:
    async with served(max_clients=2) as (hub, web), aiohttp.ClientSession() as http:
        first = await http.ws_connect(web.url + "ws")
        second = await http.ws_connect(web.url + "ws")
        with pytest.raises(aiohttp.WSServerHandshakeError) as full:
            await http.ws_connect(web.url + "ws")
        assert full.value.status == 503
        await first.receive_json()
        await first.send_str("x" * 20_000)  # over the 16 KiB message limit: the page is cut off
        closed = await first.receive()
        assert closed.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR)
        await second.send_bytes(b"\x00")
        await second.receive_json()  # snapshot
        assert "text messages only" in (await second.receive_json())["text"]
        await second.close()
        await first.close()
        for _ in range(100):
            if not hub.clients:
                break
            await asyncio.sleep(0.01)
        assert not hub.clients


async def test_a_page_that_falls_behind_is_dropped_not_buffered(monkeypatch: Any) -> None:
    from agent.games.tangram.console import hub as hub_module

    monkeypatch.setattr(hub_module, "MAX_QUEUED", 3)
    config = Config()
    hub = Console(config)
    client = hub.connect()
    for i in range(10):
        client.push(f"message {i}")
    assert client.dropped and client.queue.qsize() == 4 and client.queue.get_nowait() is not None


async def test_only_real_pictures_are_served(tmp_path: Path) -> None:
    async with served() as (hub, web), aiohttp.ClientSession() as http:
        transcript = Transcript(None, "g1")
        game = GameSupervisor(hub.config, transcript, lambda g: None)
        hub.games[game.id] = game
        png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 20).decode()
        html = base64.b64encode(b"<script>alert(1)</script>").decode()
        game.frame_in(GameFrame(type="playRequest", objective="A cat", board_img=png, drawer_img=html))
        async with http.get(f"{web.url}img/g1/board") as resp:
            assert resp.status == 200 and resp.content_type == "image/png"
        async with http.get(f"{web.url}img/g1/drawer") as resp:
            assert resp.status == 404
        async with http.get(f"{web.url}img/g1/secrets") as resp:
            assert resp.status == 404
        async with http.get(f"{web.url}img/other/board") as resp:
            assert resp.status == 404


@pytest.mark.parametrize("text,expected", [
    ("", ("127.0.0.1", 8080)), ("9000", ("127.0.0.1", 9000)), (":9001", ("127.0.0.1", 9001)),
    ("0.0.0.0:80", ("0.0.0.0", 80)), ("[::1]:8081", ("::1", 8081)), ("::1", ("::1", 8080)),
    ("lab-pc", ("lab-pc", 8080)),
])
def test_console_addresses(text: str, expected: tuple[str, int]) -> None:
    assert parse_address(text, "127.0.0.1", 8080) == expected


@pytest.mark.parametrize("text", ["host:99999", "host:http", "[::1", "a b:80", "x/y:1", "1:2:zz"])
def test_bad_console_addresses_say_why(text: str) -> None:
    with pytest.raises(ConfigError, match="--console"):
        parse_address(text, "127.0.0.1", 8080)


def _flags(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    GAME.add_arguments(parser.add_argument_group("tangram"))
    return parser.parse_args(list(argv))


def test_the_console_flag() -> None:
    assert not GAME.apply_arguments(Config(), _flags()).console.enabled
    on = GAME.apply_arguments(Config(), _flags("--console")).console
    assert (on.enabled, on.host, on.port, on.token) == (True, "127.0.0.1", 8080, None)
    remote = GAME.apply_arguments(Config(), _flags("--console", "0.0.0.0:9000")).console
    assert (remote.host, remote.port) == ("0.0.0.0", 9000) and remote.token and len(remote.token) >= 16
    config = GAME.apply_arguments(Config(), _flags("--console", "0.0.0.0:9000", "--console-token", TOKEN))
    assert config.console.token == TOKEN and TOKEN in config.secret_values()
    with pytest.raises(ConfigError, match="16 characters"):
        GAME.apply_arguments(Config(), _flags("--console", "--console-token", "short"))


async def test_the_agent_serves_the_console_with_the_flag(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent", "--game", "tangram", "--port", "0", "--host", "127.0.0.1",
        "--console", "127.0.0.1:0", cwd=tmp_path, env=env, stderr=asyncio.subprocess.PIPE)
    try:
        assert proc.stderr is not None
        url = None
        async with asyncio.timeout(20):
            while url is None:
                line = (await proc.stderr.readline()).decode()
                assert line, "the agent exited"
                if found := re.search(r"Experimenter console: (http://127\.0\.0\.1:\d+/)", line):
                    url = found.group(1)
        async with aiohttp.ClientSession() as http, http.get(url) as resp:
            assert resp.status == 200 and "Tangram experimenter console" in await resp.text()
        async with asyncio.timeout(20):
            while b"Ctrl-C stops" not in await proc.stderr.readline():
                pass
        proc.send_signal(signal.SIGINT)
        async with asyncio.timeout(15):
            assert await proc.wait() == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def test_the_overlay_lies_exactly_over_the_board_picture() -> None:
    x, y, w, h = VIEWBOX
    for corner, expected in (((x, y), (0, 0)), ((x + w, y + h), (BOARD_CROP[2], BOARD_CROP[3]))):
        crop = world_to_crop(corner, BOARD_CROP)
        assert crop == pytest.approx(expected, abs=0.05)


def test_the_editor_check_reports_the_games_view_and_the_repair() -> None:
    board = {"Red": Pose("Red", 50, 50, 0)}
    hit = check_pose(Pose("Green", 50, 50, 0), board)
    assert hit.collisions == ("Red",) and hit.repaired is not None and hit.repaired != hit.pose
    edge = check_pose(Pose("Green", 0, 50, 0), {})
    assert edge.collisions == ("BOUNDARY",)
    clear = check_pose(Pose("Green", 20, 20, 0), board)
    assert clear.collisions == () and not clear.too_close and clear.repaired == clear.pose
    data = hit.to_json()
    assert len(data["outline"]) == 3 and data["repaired_outline"] is not None


async def test_malformed_http_to_the_console_is_one_line_not_a_traceback_each(caplog: Any) -> None:
    """Issue 22: aiohttp logged a full traceback at ERROR for every malformed request."""
    import logging

    caplog.set_level(logging.DEBUG, logger="aiohttp")
    async with served() as (_, web):
        port = int(web.url.rsplit(":", 1)[1].strip("/"))
        for _ in range(30):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            with contextlib.suppress(ConnectionError):
                await writer.drain()
            answer = await asyncio.wait_for(reader.read(), 10)
            writer.close()
            assert answer.split(b" ")[1] == b"400", answer[:60]
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(loud) == 1 and "malformed HTTP" in loud[0].getMessage() and not loud[0].exc_info, \
        [r.getMessage()[:100] for r in loud]
