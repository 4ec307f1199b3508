"""The fake Forge: how it reads answers, both client versions' time-outs and retries, and whole games
against the heuristic agent in both dialects."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from aiohttp import web

from agent.games.forge.fake.catalogue import catalogue
from agent.games.forge.fake.checks import read_answer
from agent.games.forge.fake.client import FakeForge, Report
from agent.games.forge.fake.engine import Game

from .conftest import Running

ACTION = dict(catalogue("action"))["turn 3: land before spells"]
SPEC = dict(catalogue("possible_actions"))["turn 3: land before spells"]
TARGETS = dict(catalogue())["target: Forked Bolt, up to two"]


def verdict(request: dict, answer: object, status: int = 200, version: str = "later") -> tuple[str, str]:
    body = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
    v = read_answer(request, status, body, version)
    return v.outcome, v.reason


def test_forge_reads_answers_as_the_facts_say() -> None:
    assert verdict(ACTION, {"decision": {"type": "action", "index": 0}})[0] == "ok"
    assert verdict(ACTION, {"decision": {"type": "pass"}})[0] == "ok"
    assert verdict(SPEC, {"decision": {"type": "possible_actions", "index": 0}})[0] == "ok"
    assert verdict(SPEC, {"decision": {"type": "action", "index": 0}})[0] == "error"  # PlayerControllerRemote
    assert verdict(SPEC, {"decision": {"type": "pass"}})[0] == "error"
    assert verdict(ACTION, {"decision": {"type": "action", "index": "0"}}) == ("error", "action index -1 out of range")
    assert verdict(ACTION, {"decision": {"type": "action", "index": 99}})[0] == "error"
    assert verdict(ACTION, {"choice": 1})[0] == "error"
    assert verdict(ACTION, b"<html>", version="later")[0] == "fatal"
    assert verdict(ACTION, b"<html>", version="early")[0] == "error"
    assert verdict(ACTION, {"decision": {"type": "action", "index": 0}}, status=500)[0] == "error"
    assert verdict(TARGETS, {"decision": {"type": "target", "indices": [2, 2]}})[0] == "changed"
    assert verdict(TARGETS, {"decision": {"type": "target", "indices": [2, 3, 0]}})[0] == "changed"
    assert verdict(TARGETS, {"decision": {"type": "target", "indices": [42]}})[0] == "error"
    assert verdict(TARGETS, {"decision": {"type": "target", "index": 2}})[0] == "ok"


@asynccontextmanager
async def flaky_agent(failures: int, stall: float = 0.0) -> AsyncIterator[tuple[str, list[int]]]:
    """An agent that answers 500 ``failures`` times (or stalls), then a valid land drop."""
    calls = [0]

    async def handle(request: web.Request) -> web.Response:
        calls[0] += 1
        if stall:
            await asyncio.sleep(stall)
        if calls[0] <= failures:
            return web.json_response({"error": "boom"}, status=500)
        return web.json_response({"decision": {"type": "action", "index": 0}})

    runner = web.AppRunner(web.Application())
    runner.app.router.add_post("/", handle)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/", calls
    finally:
        await runner.cleanup()


async def test_the_later_client_retries_io_errors_the_early_one_does_not() -> None:
    async with flaky_agent(2) as (url, calls):
        async with FakeForge(url, "later", retry_interval=0.01) as later:
            exchange = await later.send(ACTION)
        assert exchange.attempts == 3 and exchange.verdict.outcome == "ok" and calls[0] == 3
    async with flaky_agent(2) as (url, calls):
        async with FakeForge(url, "early") as early:
            exchange = await early.send(ACTION)
        assert exchange.attempts == 1 and exchange.verdict.outcome == "error" and calls[0] == 1
    async with flaky_agent(100) as (url, calls):
        async with FakeForge(url, "later", retry_interval=0.01, max_retries=4) as later:
            exchange = await later.send(ACTION)
        assert exchange.attempts == 5 and "retry for ever" in exchange.verdict.reason


async def test_time_outs_per_version() -> None:
    async with flaky_agent(0, stall=0.5) as (url, _):
        async with FakeForge(url, "early", timeout=0.1) as early:
            exchange = await early.send(ACTION)
        assert exchange.verdict.outcome == "error" and "timed out" in exchange.verdict.reason
        async with FakeForge(url, "later", timeout=0.1, retry_interval=0.01, max_retries=2) as later:
            exchange = await later.send(ACTION)
        assert exchange.attempts == 3 and exchange.verdict.outcome == "error"


async def test_refused_connection_is_an_io_error() -> None:
    async with FakeForge("http://127.0.0.1:9/", "later", retry_interval=0.01, max_retries=1) as forge:
        exchange = await forge.send(ACTION)
    assert exchange.status is None and exchange.attempts == 2


@pytest.mark.parametrize("version", ["early", "later"])
@pytest.mark.parametrize("dialect", ["action", "possible_actions"])
async def test_heuristic_answers_the_whole_catalogue_validly(agent_at: Running, dialect: str, version: str) -> None:
    async with agent_at() as (_, url), FakeForge(url + "/decide", version) as forge:
        report = await forge.replay([body for _, body in catalogue(dialect)])
    assert report.invalid() == [] and report.valid_share == 1.0
    assert report.outcomes()["ok"] == len(catalogue(dialect))


@pytest.mark.parametrize("dialect", ["action", "possible_actions"])
async def test_whole_games_in_both_dialects(agent_at: Running, dialect: str) -> None:
    report = Report()
    async with agent_at() as (server, url):
        async with FakeForge(url, "later") as forge:
            for seed, decks in enumerate([("red-green", "white-blue"), ("black-red", "red-green"),
                                          ("white-blue", "black-red")]):
                game = Game(seed, dialect, *decks)
                await forge.play(game, report)
                assert game.stats.loop_caps == 0
        assert server.sessions == {}  # reflect closed every game
    kinds = {e.kind for e in report.decisions}
    assert {"target", "declare_attackers", "declare_blockers", dialect} <= kinds
    assert report.invalid() == []
    assert all(r in ("Agent", "Opponent", "draw") for r in report.results)


async def test_games_at_once_stay_apart(agent_at: Running) -> None:
    async with agent_at() as (_, url), FakeForge(url) as forge:
        reports = await asyncio.gather(*(forge.play(Game(s, "action", game_id=f"par-{s}")) for s in range(4)))
    assert all(r.invalid() == [] for r in reports)
    assert all({e.request["gameId"] for e in r.exchanges} == {f"par-{i}"} for i, r in enumerate(reports))


async def test_the_headless_caller_hangs_on_an_error_and_the_agent_never_causes_one(agent_at: Running) -> None:
    async with flaky_agent(1) as (url, _), FakeForge(url, "early", caller="headless") as forge:
        report = await forge.play(Game(1, "action", max_turns=4))
    assert report.results == ["hung"]
    async with agent_at() as (_, url), FakeForge(url, "later", caller="headless") as forge:
        report = await forge.play(Game(1, "action", max_turns=10))
    assert report.results[0] in ("Agent", "Opponent", "draw") and report.invalid() == []
