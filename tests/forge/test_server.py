"""The HTTP endpoint: routes, health, reflect, 400s with reasons, size limit, token, sessions."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import aiohttp
import pytest

from agent.games.forge.fake.catalogue import catalogue
from agent.games.forge.fake.client import FakeForge

from .conftest import Running


async def post(url: str, body: bytes | str | dict, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    data = json.dumps(body) if isinstance(body, dict) else body
    headers = {"Content-Type": "application/json", **(headers or {})}
    async with aiohttp.ClientSession() as http, http.post(url, data=data, headers=headers) as r:
        return r.status, await r.json(content_type=None)


async def test_both_paths_and_every_request_type_answer_200(agent_at: Running) -> None:
    async with agent_at() as (_, url):
        for path in ("/", "/decide"):
            for name, body in catalogue("action")[:4] + catalogue("possible_actions")[-4:]:
                status, answer = await post(url + path, body)
                assert status == 200, name
                assert isinstance(answer.get("decision"), dict), name


async def test_health_checks(agent_at: Running) -> None:
    async with agent_at() as (_, url):
        assert await post(url, {"healthCheck": True}) == (200, {"status": "ok"})
        async with aiohttp.ClientSession() as http:
            for path in ("/", "/health"):
                async with http.get(url + path) as r:
                    assert r.status == 200 and (await r.json())["status"] == "ok"


async def test_bad_bodies_get_400_with_a_reason_never_500(agent_at: Running) -> None:
    cases = [
        (b"not json", "body is not JSON"),
        (b"", "body is not JSON"),
        (b"[1,2]", "body must be a JSON object"),
        (b'{"requestType": "mulligan"}', "unknown requestType 'mulligan'"),
        (b'{"requestType": "action", "actionState": {}}', "neither 'actions' nor 'possible_actions'"),
        (b'{"requestType": "target", "actionState": {"min": 3, "max": 1, "targets": []}}', "greater than max"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        ('{"requestType": "action", "x": "\udcff"}'.encode("utf-8", "surrogatepass"), "has no 'actionState'"),
        (b'\xff\xfe{}', "body is not JSON"),
    ]
    async with agent_at() as (_, url):
        for body, reason in cases:
            status, answer = await post(url, body)
            assert status == 400, body[:40]
            assert reason in answer["error"], (body[:40], answer)
        status, answer = await post(url + "/nowhere", b"{}")
        assert status == 404 and "error" in answer


async def test_body_size_limit_gives_413(agent_at: Running) -> None:
    async with agent_at(server={"max_body_bytes": 65536}) as (_, url):
        status, answer = await post(url, b'{"pad": "' + b"x" * 70_000 + b'"}')
        assert status == 413 and "larger than 65536" in answer["error"]


async def test_bearer_token(agent_at: Running) -> None:
    body = catalogue()[0][1]
    async with agent_at(server={"token": "s3cret-token"}) as (_, url):
        assert (await post(url, body))[0] == 401
        assert (await post(url, body, {"Authorization": "Bearer wrong"}))[0] == 401
        status, answer = await post(url, body, {"Authorization": "Bearer s3cret-token"})
        assert status == 200 and "decision" in answer
        async with FakeForge(url, token="s3cret-token") as forge:
            assert await forge.health() == 200


async def test_reflect_ends_the_game_and_its_transcript(agent_at: Running, tmp_path: Path) -> None:
    async with agent_at() as (server, url):
        body = {**catalogue()[0][1], "gameId": "g-1"}
        assert (await post(url, body))[0] == 200
        assert "g-1" in server.sessions
        status, _ = await post(url, {"gameId": "g-1", "requestType": "reflect",
                                          "context": {"result": {"winner": "Agent"}}})
        assert status == 200 and "g-1" not in server.sessions
        assert (await post(url, {"gameId": "never-seen", "requestType": "reflect"}))[0] == 200
    files = list((tmp_path / "transcripts").glob("*forge-g-1*.jsonl"))
    assert len(files) == 1
    assert oct(os.stat(files[0]).st_mode & 0o777) == "0o600"
    kinds = [json.loads(line)["kind"] for line in files[0].read_text().splitlines()]
    assert kinds == ["session_start", "turn_start", "decision", "turn_end", "reflect", "session_end"]


async def test_a_repeated_request_gets_the_same_answer(agent_at: Running, tmp_path: Path) -> None:
    body = {**dict(catalogue())["turn 3: land before spells"], "gameId": "again"}
    async with agent_at() as (server, url):
        first = await post(url, body)
        second = await post(url, body)
        assert first == second
        assert server.sessions["again"].decisions == 1


async def test_games_are_isolated_and_bounded(agent_at: Running) -> None:
    async with agent_at(server={"max_games": 3}) as (server, url):
        body = catalogue()[0][1]
        await asyncio.gather(*(post(url, {**body, "gameId": f"g{i}"}) for i in range(5)))
        assert len(server.sessions) <= 3
        memories = {g: [e.text for e in s.memory.recent()] for g, s in server.sessions.items()}
        assert all(len(m) == 1 for m in memories.values())


async def test_loopback_only_unless_allowed(tmp_path: Path) -> None:
    from agent.games.forge.factory import make_decider
    from agent.games.forge.server import ForgeServer, ServerSetupError

    from .conftest import forge_config

    config = forge_config(tmp_path, server={"host": "0.0.0.0"})
    server = ForgeServer(config, make_decider(config))
    with pytest.raises(ServerSetupError, match="--allow-remote"):
        await server.start()


async def test_port_in_use_is_one_clear_line(agent_at: Running, tmp_path: Path) -> None:
    from agent.games.forge.factory import make_decider
    from agent.games.forge.server import ForgeServer, ServerSetupError

    from .conftest import forge_config

    async with agent_at() as (first, _):
        config = forge_config(tmp_path, server={"port": first.port})
        second = ForgeServer(config, make_decider(config))
        with pytest.raises(ServerSetupError, match=f"port {first.port} is already in use"):
            await second.start()


async def test_a_question_asked_again_and_again_does_not_loop(agent_at: Running) -> None:
    """Once: the same answer (a retry after a lost answer); again: the action is ruled out."""
    body = {**dict(catalogue())["main 1: cast the best creature"], "gameId": "loop"}
    async with agent_at() as (server, url):
        answers = [(await post(url, body))[1]["decision"]["index"] for _ in range(4)]
    assert answers[0] == answers[1]
    assert answers[2] != answers[0]
    assert len(set(answers)) >= 2
