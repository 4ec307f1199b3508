"""The game's server: isolation headers, MIME types (wasm!), loopback only, a port in use."""

from __future__ import annotations

import socket

import aiohttp
import pytest

from agent.games.tangram.webgame.serve import GameServer, ServeError

FILES = {"index.html": b"<html></html>", "index.js": b"//", "index.wasm": b"\0asm", "index.pck": b"GDPC",
         "webgame.css": b"", "webgame.json": b"{}", ".hidden": b"secret"}


@pytest.fixture
def game_folder(tmp_path):
    for name, data in FILES.items():
        (tmp_path / name).write_bytes(data)
    return tmp_path


async def fetch(url: str, host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    headers = {"Host": host} if host else {}
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers) as response:
        return response.status, dict(response.headers), await response.read()


@pytest.mark.parametrize(("name", "kind"), [("index.wasm", "application/wasm"), ("index.js", "text/javascript"),
                                            ("index.pck", "application/octet-stream"), ("", "text/html"),
                                            ("webgame.css", "text/css"), ("webgame.json", "application/json")])
async def test_every_file_goes_out_isolated_and_with_its_type(game_folder, name, kind):
    server = GameServer(game_folder, port=0)
    await server.start()
    try:
        status, headers, body = await fetch(f"http://127.0.0.1:{server.port}/{name}")
    finally:
        await server.stop()
    assert status == 200 and body == FILES[name or "index.html"]
    assert headers["Content-Type"].split(";")[0] == kind
    assert headers["Cross-Origin-Opener-Policy"] == "same-origin"
    assert headers["Cross-Origin-Embedder-Policy"] == "require-corp"
    assert headers["X-Content-Type-Options"] == "nosniff"


async def test_only_the_folders_own_files_to_loopback_names(game_folder):
    server = GameServer(game_folder, port=0)
    await server.start()
    base = f"http://127.0.0.1:{server.port}"
    try:
        assert server.url == f"http://localhost:{server.port}/"
        assert (await fetch(f"{base}/.hidden"))[0] == 404
        assert (await fetch(f"{base}/..%2Fetc%2Fpasswd"))[0] == 404
        assert (await fetch(f"{base}/nope.js"))[0] == 404
        assert (await fetch(f"{base}/index.js", host=f"localhost:{server.port}"))[0] == 200
        status, headers, _ = await fetch(f"{base}/index.js", host="attacker.example")
        assert status == 421 and headers["Cross-Origin-Opener-Policy"] == "same-origin"
    finally:
        await server.stop()


async def test_a_port_in_use_is_one_line(game_folder):
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        server = GameServer(game_folder, port=port)
        with pytest.raises(ServeError, match=f"port {port} is already in use on 127.0.0.1: pick another with "
                                             "--browser-port PORT"):
            await server.start()


def test_refuses_a_folder_that_is_no_built_game_and_other_interfaces(tmp_path):
    with pytest.raises(ServeError, match="loopback only"):
        GameServer(tmp_path, host="0.0.0.0")
    from agent.games.tangram.webgame.serve import make_app

    with pytest.raises(ServeError, match=r"no index\.html"):
        make_app(tmp_path)
