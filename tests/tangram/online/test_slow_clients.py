"""Slow clients cannot hold the origin's connections: a connection whose request headers take longer
than the header deadline (one byte at a time, or nothing at all) is closed; a call's body slower than
the body deadline is answered 408 and its connection closed. Normal clients, and a kept-alive
connection idle for longer than the header deadline between its requests, are unaffected. The
deadlines are set small here; the server's are ``Limits.header_s`` and ``Limits.body_s``."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

import aiohttp
import pytest

from agent.games.tangram.online.guard import Limits
from tests.tangram.online.support import Served, served_study

LIMITS = Limits(header_s=0.5, body_s=0.5)
SLACK = 2.0
"""How late past a deadline the server may close (timers fire on time; this is for a busy machine)."""
EARLY = 0.1
"""How early a close may seem, measured from the client's side of the connection."""


async def connect(served: Served) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = served.url.removeprefix("http://").rsplit(":", 1)
    return await asyncio.open_connection(host, int(port))


async def until_closed(reader: asyncio.StreamReader) -> bytes:
    """Whatever the server sends until it closes the connection."""
    got = b""
    try:
        while chunk := await reader.read(65536):
            got += chunk
    except ConnectionResetError:
        pass
    return got


async def drip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, data: bytes, every: float) -> None:
    """``data`` a byte at a time, ``every`` seconds apart, until it is sent or the server closes."""
    for byte in data:
        if reader.at_eof() or writer.is_closing():
            return
        writer.write(bytes([byte]))
        try:
            await writer.drain()
        except ConnectionError:
            return
        await asyncio.sleep(every)


async def response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One response on a kept-alive connection: its status and body."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    length = next(int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:"))
    return int(lines[0].split()[1]), await reader.readexactly(length)


async def test_slow_or_missing_request_headers_close_the_connection_and_others_are_served(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with served_study(tmp_path, limits=LIMITS) as served, aiohttp.ClientSession() as http:
        kept_reader, kept = await connect(served)
        kept.write(b"GET /play HTTP/1.1\r\nHost: study\r\n\r\n")
        assert (await response(kept_reader))[0] == 200
        served_at = time.monotonic()

        slow_reader, slow = await connect(served)  # 48 bytes of headers over 4.8 s
        silent_reader, silent = await connect(served)  # not a byte
        opened = time.monotonic()
        dripping = asyncio.create_task(drip(slow_reader, slow, b"GET /play HTTP/1.1\r\nHost: study\r\n"
                                                                 b"User-Agent: slow\r\n\r\n", every=0.1))
        async with http.get(f"{served.url}/play") as page:  # meanwhile, a normal client
            assert page.status == 200
        async with asyncio.timeout(LIMITS.header_s + SLACK):
            answers = await asyncio.gather(until_closed(slow_reader), until_closed(silent_reader))
        elapsed = time.monotonic() - opened
        await dripping
        assert list(answers) == [b"", b""]  # closed, nothing answered
        assert elapsed >= LIMITS.header_s - EARLY

        # The kept-alive connection, idle for longer than the header deadline, serves its next
        # request (its headers in two pieces, within the deadline).
        await asyncio.sleep(max(0.0, 2 * LIMITS.header_s - (time.monotonic() - served_at)))
        kept.write(b"GET /play HTTP/1.1\r\n")
        await asyncio.sleep(LIMITS.header_s / 5)
        kept.write(b"Host: study\r\n\r\n")
        status, body = await response(kept_reader)
        assert status == 200 and b"/s/play.js" in body
        for writer in (kept, slow, silent):
            writer.close()
    # Said once for both (at most a line per 10 s, with a count of the others).
    cut = [r.getMessage() for r in caplog.records if r.name == "agent.games.tangram.online.deadlines"]
    assert cut == ["closed a connection that sent no complete request headers within 0.5 s"]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]


async def test_a_body_slower_than_the_deadline_is_answered_408_and_the_connection_closed(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with served_study(tmp_path, limits=LIMITS) as served, aiohttp.ClientSession() as http:
        (invite,) = await served.online.invite(1)
        body = json.dumps({"code": invite.code}).encode()
        reader, writer = await connect(served)
        writer.write(b"POST /api/visit HTTP/1.1\r\nHost: study\r\nContent-Type: application/json\r\n"
                     + f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:5])
        sent = time.monotonic()
        dripping = asyncio.create_task(drip(reader, writer, body[5:], every=0.2))  # 7 s for the rest
        async with asyncio.timeout(LIMITS.body_s + SLACK):
            answer = await until_closed(reader)
        elapsed = time.monotonic() - sent
        await dripping
        writer.close()
        assert answer.startswith(b"HTTP/1.1 408 ")
        assert b"\r\nConnection: close\r\n" in answer
        assert answer.endswith(b"\r\n\r\nthe request's body did not arrive within 0.5 s\n")
        assert elapsed >= LIMITS.body_s - EARLY
        # The same call, sent at once, is answered.
        async with http.get(f"{served.url}/p/{invite.code}") as page:
            assert page.status == 200
        async with http.post(f"{served.url}/api/visit", data=body) as reply:
            assert reply.status == 200
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
