"""Mangled requests: every one gets either a 400 with a reason or an answer Forge accepts as sent."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import aiohttp

from agent.games.forge.decisions import encode
from agent.games.forge.fake.catalogue import catalogue
from agent.games.forge.fake.checks import read_answer
from agent.games.forge.heuristic import decide
from agent.games.forge.models import RequestError, parse_request

from .conftest import Running

ODD_VALUES: list[Any] = [None, True, -1, 0, 10**12, 2.5, "", "x" * 5000, "3", [], {}, [None], {"a": 1}, "Unknown"]


def mangle(value: Any, rng: random.Random, depth: int = 0) -> Any:
    """A copy of ``value`` with a few keys dropped, values replaced, lists cut or repeated."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            roll = rng.random()
            if roll < 0.04:
                continue
            out[key] = rng.choice(ODD_VALUES) if roll < 0.08 else mangle(item, rng, depth + 1)
        return out
    if isinstance(value, list):
        items = [mangle(v, rng, depth + 1) for v in value]
        roll = rng.random()
        if roll < 0.05:
            return items[: len(items) // 2]
        if roll < 0.08:
            return items + items
        return items
    return value


def outcome(body: Any) -> str:
    try:
        request = parse_request(body)
    except RequestError:
        return "400"
    if request.options is None:
        return "reflect"
    answer = encode(request, decide(request).decision)
    verdict = read_answer(body, 200, json.dumps(answer).encode())
    assert verdict.valid, (verdict.reason, answer, json.dumps(body)[:300])
    return "valid"


def test_mangled_catalogue_requests_in_process() -> None:
    rng = random.Random(1234)
    seen: dict[str, int] = {}
    bases = catalogue("action") + catalogue("possible_actions")
    for _ in range(1500):
        _, base = rng.choice(bases)
        result = outcome(mangle(copy.deepcopy(base), rng))
        seen[result] = seen.get(result, 0) + 1
    assert seen.get("valid", 0) > 300 and seen.get("400", 0) > 50, seen


async def test_mangled_requests_over_http_never_500(agent_at: Running) -> None:
    rng = random.Random(99)
    bases = catalogue("action") + catalogue("possible_actions")
    statuses: dict[int, int] = {}
    async with agent_at() as (_, url), aiohttp.ClientSession() as http:
        for _ in range(150):
            _, base = rng.choice(bases)
            body = mangle(copy.deepcopy(base), rng)
            async with http.post(url, json=body) as r:
                statuses[r.status] = statuses.get(r.status, 0) + 1
                payload = await r.json()
                if r.status == 200:
                    assert read_answer(body, 200, json.dumps(payload).encode()).valid
                else:
                    assert r.status == 400 and payload["error"]
    assert set(statuses) <= {200, 400}
