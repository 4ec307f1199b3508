"""The client's address believes a proxy's forwarded headers only from the proxy; the rate limits
hold per address and for everybody, and refill with time; our files and the engine count too, and
engine downloads at once are capped per address and overall."""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import make_mocked_request

from agent.games.tangram.online.guard import Limits, Rate, RateLimiter, client_of, proxy_address
from agent.games.tangram.sim.client import GameClient
from tests.tangram.online.support import Served, served_study


def request(peer: str, **headers: str) -> object:
    req = make_mocked_request("GET", "/p/x", headers=headers)
    req._transport_peername = (peer, 4242)  # type: ignore[attr-defined]
    return req


@pytest.mark.parametrize(("peer", "trusted", "expected"), [
    ("127.0.0.1", "127.0.0.1", ("203.0.113.9", "https")),      # from the proxy: believed (its own last entry)
    ("198.51.100.7", "127.0.0.1", ("198.51.100.7", "http")),   # from anyone else: ignored
    ("127.0.0.1", None, ("127.0.0.1", "http")),                # no proxy configured: ignored
])
def test_forwarded_headers_are_believed_only_from_the_proxy(peer: str, trusted: str | None,
                                                             expected: tuple[str, str]) -> None:
    req = request(peer, **{"X-Forwarded-For": "10.9.9.9, 203.0.113.9", "X-Forwarded-Proto": "https"})
    client = client_of(req, trusted)  # type: ignore[arg-type]
    assert (client.address, client.scheme) == expected


def test_a_forged_or_garbled_forwarded_address_is_not_taken() -> None:
    req = request("127.0.0.1", **{"X-Forwarded-For": "not-an-address", "X-Forwarded-Proto": "gopher"})
    client = client_of(req, "127.0.0.1")  # type: ignore[arg-type]
    assert (client.address, client.scheme) == ("127.0.0.1", "http")
    assert proxy_address("::1") == "::1"
    with pytest.raises(ValueError, match="not an IP address"):
        proxy_address("proxy.example.org")


def test_limits_hold_per_address_and_overall_and_refill() -> None:
    limits = Limits(per_address={"page": Rate(3, 60)}, overall={"page": Rate(5, 60)})
    limiter = RateLimiter(limits)
    assert [limiter.allow("page", "a", now=0.0) for _ in range(4)] == [True, True, True, False]
    assert [limiter.allow("page", "b", now=0.0) for _ in range(3)] == [True, True, False]  # overall: 5
    assert limiter.allow("page", "a", now=1.0)  # one a second comes back
    assert limiter.refused["page"] == 2


async def test_the_origin_answers_a_flood_of_page_loads_with_429(tmp_path: Path) -> None:
    limits = Limits(per_address={"page": Rate(5, 1), "api": Rate(5, 1), "socket": Rate(2, 1), "chat": Rate(1, 1)})
    async with served_study(tmp_path, limits=limits) as served, aiohttp.ClientSession() as http:
        (invite,) = await served.online.invite(1)
        statuses = []
        for _ in range(8):
            async with http.get(f"{served.url}/p/{invite.code}") as response:
                statuses.append(response.status)
        assert statuses[:5] == [200] * 5 and set(statuses[5:]) == {429}
        for _ in range(3):
            async with http.get(f"{served.url}/ws?ticket={'A' * 24}") as response:
                last = response.status
        assert last == 429


async def test_chat_lines_over_the_limit_are_dropped_before_the_agent(tmp_path: Path) -> None:
    limits = Limits(per_address={"page": Rate(50, 60), "api": Rate(50, 60), "socket": Rate(50, 60),
                                 "chat": Rate(2, 0.001)})
    async with served_study(tmp_path, limits=limits) as served:
        (invite,) = await served.online.invite(1)
        await served.online.start(invite.code)
        await served.online.answer_consent(invite.code, True)
        got = await served.online.ticket(invite.code)
        assert got is not None
        async with GameClient(f"{served.ws_url}?ticket={got[0]}", seed=5) as game:
            replies = [await game.chat(f"line {i}", timeout=5) for i in range(2)]
            assert all(r.reply for r in replies)
            dropped = await game.chat("line 3", timeout=2)
            assert dropped.reply is None
        assert served.limiter.refused["chat"] == 1


def test_downloads_at_once_are_capped_per_address_and_overall() -> None:
    limiter = RateLimiter(Limits(max_downloads_per_address=2, max_downloads=3))
    assert [limiter.begin_download("a") for _ in range(3)] == [True, True, False]
    assert limiter.begin_download("b") and not limiter.begin_download("c")  # overall: 3
    limiter.end_download("a")
    assert limiter.begin_download("c") and not limiter.begin_download("a")
    for address in ("a", "b", "c"):
        limiter.end_download(address)
    assert limiter.downloads() == 0 and limiter.downloads("a") == 0
    assert limiter.refused["download"] == 3


async def test_our_files_and_the_engine_count_against_the_asset_limit(tmp_path: Path) -> None:
    limits = Limits(per_address={"asset": Rate(4, 1)})
    async with served_study(tmp_path, limits=limits) as served, aiohttp.ClientSession() as http:
        statuses = []
        for path in ("/s/play.js", "/s/play.css", f"/g/{served.assets.key}/index.js", "/s/participant.js",
                     f"/g/{served.assets.key}/index.wasm", "/s/play.js"):
            async with http.get(served.url + path) as response:
                statuses.append(response.status)
                if response.status == 429:
                    assert response.headers["Retry-After"]
        assert statuses == [200] * 4 + [429] * 2


ENGINE_BYTES = 24 << 20
"""Bigger than the kernel's socket buffers (4 MB to send, 4 KB to receive here): a download that is
not read stays running."""


async def stalled_download(served: Served, address: str) -> tuple[asyncio.StreamWriter, bytes]:
    """The engine's wasm asked for from ``address`` (through the trusted proxy) and not read beyond
    its status line: the download runs until the connection closes."""
    host, port = served.url.removeprefix("http://").rsplit(":", 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
    reader, writer = await asyncio.open_connection(sock=sock, limit=4096)
    writer.write(f"GET /g/{served.assets.key}/index.wasm HTTP/1.1\r\nHost: study\r\nAccept-Encoding: identity\r\n"
                 f"X-Forwarded-For: {address}\r\n\r\n".encode())
    return writer, await reader.readline()


async def test_engine_downloads_over_the_cap_for_one_address_get_429_and_other_addresses_are_served(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    limits = Limits(max_downloads_per_address=3)
    async with served_study(tmp_path, limits=limits, trusted_proxy="127.0.0.1", wasm_bytes=ENGINE_BYTES) as served, \
            aiohttp.ClientSession(auto_decompress=False) as http:
        wasm = f"{served.url}/g/{served.assets.key}/index.wasm"

        async def get(address: str) -> tuple[int, int, str | None]:
            async with http.get(wasm, headers={"X-Forwarded-For": address, "Accept-Encoding": "identity"}) as answer:
                return answer.status, len(await answer.read()), answer.headers.get("Retry-After")

        running = [await stalled_download(served, "203.0.113.5") for _ in range(3)]
        assert [status for _, status in running] == [b"HTTP/1.1 200 OK\r\n"] * 3
        assert served.limiter.downloads("203.0.113.5") == 3
        status, _, retry = await get("203.0.113.5")  # the fourth at once from that address
        assert status == 429 and retry is not None
        assert await get("198.51.100.9") == (200, ENGINE_BYTES + 8, None)  # another address: served in full
        for writer, _ in running:
            writer.close()
        async with asyncio.timeout(10):  # the server sees the hang-ups and counts the downloads as ended
            while served.limiter.downloads("203.0.113.5"):
                await asyncio.sleep(0.02)
        assert (await get("203.0.113.5"))[0] == 200
        async with http.get(wasm, headers={"If-Modified-Since": "Sat, 01 Jan 2080 00:00:00 GMT"}) as answer:
            assert answer.status == 304
        async with http.head(wasm) as answer:
            assert answer.status == 200 and answer.headers["Content-Encoding"] == "gzip"
        assert served.limiter.downloads() == 0
    # The hang-ups are one line each; nothing is logged as an error.
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
