"""The client's address believes a proxy's forwarded headers only from the proxy; the rate limits
hold per address and for everybody, and refill with time."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import make_mocked_request

from agent.games.tangram.online.guard import Limits, Rate, RateLimiter, client_of, proxy_address
from agent.games.tangram.sim.client import GameClient
from tests.tangram.online.support import served_study


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
        await served.online.enter_invite(invite.code)
        await served.online.answer_consent(invite.code, True)
        got = await served.online.ticket(invite.code)
        assert got is not None
        async with GameClient(f"{served.ws_url}?ticket={got[0]}", seed=5) as game:
            replies = [await game.chat(f"line {i}", timeout=5) for i in range(2)]
            assert all(r.reply for r in replies)
            dropped = await game.chat("line 3", timeout=2)
            assert dropped.reply is None
        assert served.limiter.refused["chat"] == 1
