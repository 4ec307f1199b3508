"""No call's body makes the origin fail: JSON nested thousands deep, fields of the wrong type, bodies
that are no JSON object or no UTF-8 are answered 400 with one line at every call, and nothing is
logged as an error; a code no link can have is 403 as before. A real bug in a handler is a plain 500,
logged once."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from agent.games.tangram.online.calls import MAX_JSON_DEPTH
from tests.tangram.online.support import served_study

CALLS = ("visit", "consent", "game", "finished", "leave")


def bad_bodies(code: str) -> dict[str, bytes]:
    """What a broken or hostile page might send, each under 16 KB (bigger is 413, tested elsewhere)."""

    def of(data: Any) -> bytes:
        return json.dumps(data).encode()

    deepest = json.loads("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)  # in a field: one level more

    return {
        "7,000 nested arrays": b"[" * 7000 + b"]" * 7000,
        "2,500 nested objects": b'{"a":' * 2500 + b"1" + b"}" * 2500,
        "a code nested 5,000 deep": b'{"code":' + b"[" * 5000 + b"]" * 5000 + b"}",
        "nesting just over the limit": of({"code": code, "how": deepest}),
        "a code that is a list": of({"code": ["a"]}),
        "a code that is a number": of({"code": 5}),
        "no code": of({}),
        "consent given as a word": of({"code": code, "given": "x"}),
        "a ticket that is an object": of({"code": code, "ticket": {}}),
        "an exit code that is a word": of({"code": code, "exit": "zero"}),
        "an exit code that is true": of({"code": code, "exit": True}),
        "an exit code past 32 bits": of({"code": code, "exit": 2**40}),
        "an integer of 5,000 digits": b'{"code": "' + code.encode() + b'", "exit": 1' + b"0" * 5000 + b"}",
        "an unknown field with a newline in its name": of({"code": code, "sneaky\nfield": 1}),
        "an array": b"[1, 2]",
        "a string": of(code),
        "null": b"null",
        "a number": b"5",
        "nothing": b"",
        "not JSON": b"{code: 1}",
        "Latin-1": '{"code": "é"}'.encode("latin-1"),
        "bytes": b"\xff\xfe\x00\x81garbage",
    }


async def test_every_call_answers_bad_bodies_with_400_and_one_line_and_logs_no_traceback(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        (invite,) = await served.online.invite(1)
        answers = {}
        for call in CALLS:
            for what, body in bad_bodies(invite.code).items():
                async with http.post(f"{served.url}/api/{call}", data=body,
                                     headers={"Content-Type": "application/json"}) as response:
                    answers[call, what] = (response.status, await response.text())
        for (call, what), (status, text) in answers.items():
            assert status == 400, (call, what, status, text)
            assert text.endswith("\n") and text.count("\n") == 1 and len(text) < 200, (call, what, text)
        # A string that cannot be a link's code, or one that is no link's: 403, as before.
        for code in ("short", "A" * 24):
            async with http.post(f"{served.url}/api/visit", json={"code": code}) as response:
                assert response.status == 403
                assert await response.text() == "this link is not part of the study\n"
        # The link itself still works.
        async with http.get(f"{served.url}/p/{invite.code}") as page:
            assert page.status == 200
        async with http.post(f"{served.url}/api/visit", json={"code": invite.code}) as response:
            assert response.status == 200
    assert "Traceback" not in caplog.text
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING]


async def test_what_is_wrong_with_a_body_is_said_in_one_line(tmp_path: Path) -> None:
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        (invite,) = await served.online.invite(1)
        said = {}
        for name, body in {"code": {"code": 5}, "given": {"code": invite.code, "given": "x"},
                           "extra": {"code": invite.code, "x\ny": 1}}.items():
            async with http.post(f"{served.url}/api/consent", json=body) as response:
                said[name] = await response.text()
        async with http.post(f"{served.url}/api/visit", data=b"[" * 7000) as response:
            said["deep"] = await response.text()
    assert said == {"code": "code: Input should be a valid string\n",
                    "given": "given: Input should be a valid boolean\n",
                    "extra": "x?y: Extra inputs are not permitted\n",
                    "deep": f"the body nests deeper than {MAX_JSON_DEPTH} levels\n"}


async def test_a_bug_in_a_handler_is_a_plain_500_logged_once(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    caplog.set_level(logging.DEBUG)
    async with served_study(tmp_path) as served, aiohttp.ClientSession() as http:
        (invite,) = await served.online.invite(1)

        async def broken(code: str) -> None:
            raise RuntimeError("a bug of ours")

        monkeypatch.setattr(served.online, "visit", broken)
        async with http.post(f"{served.url}/api/visit", json={"code": invite.code}) as response:
            assert response.status == 500
            assert await response.text() == "internal error\n"
            assert response.headers["X-Content-Type-Options"] == "nosniff"
    logged = [r for r in caplog.records if r.exc_info]
    assert len(logged) == 1 and logged[0].name == "agent.games.tangram.online.app"
    assert logged[0].getMessage() == "internal error answering POST /api/visit"
    assert invite.code not in caplog.text


async def test_a_broken_compressed_body_is_one_line_wherever_it_is_sent(tmp_path: Path,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with served_study(tmp_path) as served:
        host, port = served.url.removeprefix("http://").rsplit(":", 1)
        answers = []
        for request in (b"POST /api/visit", b"GET /play"):  # read by a call; by aiohttp after a page
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(request + b" HTTP/1.1\r\nHost: study\r\nContent-Encoding: gzip\r\nContent-Length: 10\r\n\r\n"
                         b"0123456789")
            async with asyncio.timeout(10):  # the server closes the connection either way
                answers.append(await reader.read(65536) + await reader.read())
            writer.close()
    assert answers[0].startswith(b"HTTP/1.1 400 ")
    assert answers[0].endswith(b"\r\n\r\nthe body could not be read (its encoding is broken)\n")
    assert answers[1].startswith(b"HTTP/1.1 200 ")
    assert "Traceback" not in caplog.text and not [r for r in caplog.records if r.exc_info]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        "malformed HTTP request body: 400, message: Can not decode content-encoding: gzip"]
