"""The Caddy configuration of docs/online-study.md, run for real: Caddy (Debian's package, its own
local CA with ``tls internal``) in front of the agent on loopback; the page, the calls and a game's
socket go through it over TLS, and the agent believes Caddy's forwarded headers."""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import socket
import ssl
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from websockets.exceptions import InvalidStatus

from agent.games.tangram.sim.client import GameClient
from tests.tangram.online.support import Served, served_study

ROOT = Path(__file__).resolve().parents[3]
CADDY = shutil.which("caddy")
START_S = 30.0

pytestmark = pytest.mark.skipif(CADDY is None, reason="caddy is not installed (apt-get install caddy; .ci/run does)")


def documented_caddyfile() -> str:
    text = (ROOT / "docs" / "online-study.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- caddyfile:.*?-->\s*```caddyfile\n(.*?)```", text, re.S)
    assert found, "docs/online-study.md lost its Caddyfile block"
    return "\n".join(line.removeprefix("   ") for line in found.group(1).splitlines())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def caddy_in_front(served: Served, tmp_path: Path) -> AsyncIterator[tuple[str, ssl.SSLContext]]:
    agent_port = served.url.rsplit(":", 1)[1]
    https_port, http_port = free_port(), free_port()
    site = documented_caddyfile().replace("study.example.org", f"localhost:{https_port}")
    site = site.replace("127.0.0.1:8471", f"127.0.0.1:{agent_port}")
    site = site.replace("{\n", "{\n\ttls internal\n", 1)
    data = tmp_path / "caddy"
    config = tmp_path / "Caddyfile"
    config.write_text(f"{{\n\tadmin off\n\tskip_install_trust\n\tstorage file_system {data}\n"
                      f"\thttp_port {http_port}\n\thttps_port {https_port}\n}}\n\n{site}\n")
    log = (tmp_path / "caddy.log").open("w")
    proc = await asyncio.create_subprocess_exec(CADDY or "caddy", "run", "--config", str(config), "--adapter",
                                                "caddyfile", stdout=log, stderr=subprocess.STDOUT,
                                                env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    root = data / "pki" / "authorities" / "local" / "root.crt"
    try:
        loop = asyncio.get_running_loop()
        end = loop.time() + START_S
        while True:  # until Caddy has made its CA and listens (bounded)
            assert proc.returncode is None, (tmp_path / "caddy.log").read_text()
            if root.exists():
                with contextlib.suppress(OSError):
                    _, writer = await asyncio.open_connection("127.0.0.1", https_port)
                    writer.close()
                    break
            assert loop.time() < end, "Caddy did not start: " + (tmp_path / "caddy.log").read_text()
            await asyncio.sleep(0.1)
        context = ssl.create_default_context(cafile=str(root))
        yield f"https://localhost:{https_port}", context
    finally:
        proc.terminate()
        await proc.wait()
        log.close()


async def test_page_calls_and_game_socket_work_through_caddy_with_tls(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    async with served_study(tmp_path, trusted_proxy="127.0.0.1") as served, \
            caddy_in_front(served, tmp_path) as (base, context):
        # websockets makes a default TLS context per connection: it trusts Caddy's local CA this way.
        monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "caddy" / "pki" / "authorities" / "local" / "root.crt"))
        (invite,) = await served.online.invite(1)
        connector = aiohttp.TCPConnector(ssl=context)
        async with aiohttp.ClientSession(connector=connector) as http:
            async with http.get(f"{base}/p/{invite.code}") as page:
                assert page.status == 200 and page.headers["Cross-Origin-Embedder-Policy"] == "require-corp"
            async with http.post(f"{base}/api/consent", json={"code": invite.code, "given": True}) as response:
                assert (await response.json())["stage"] == "play"
            async with http.post(f"{base}/api/game", json={"code": invite.code}) as response:
                ticket = (await response.json())["ticket"]
            async with http.post(f"{base}/api/visit", data=b"x" * 100_000) as response:
                # The proxy bounds bodies too: Caddy 2.6 (Debian 12) answers 502 for a body over max_size, later
                # ones 413 (and the agent caps bodies at 16 KB itself).
                assert response.status in (413, 502)
        wss = base.replace("https://", "wss://") + "/ws"
        with pytest.raises(InvalidStatus) as refused:
            async with GameClient(f"{wss}?ticket={'A' * 24}"):
                pass
        assert refused.value.response.status_code == 403
        async with GameClient(f"{wss}?ticket={ticket}", seed=2) as game:
            turn = await game.ai_turn(deadline=20)
            assert turn.finished
            # The agent counted the game on the client's address from Caddy's X-Forwarded-For.
            assert [s.peer for s in served.sockets.sessions] == ["127.0.0.1"]
        games = await served.run.store.games()
        assert [(g.participant, g.condition) for g in games] == [("L0001", "planner")]
