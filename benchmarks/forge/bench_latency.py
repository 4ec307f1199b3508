"""Decision latency: the heuristic in-process and over HTTP, and the LLM player with a 1 s fake LLM.

    .venv/bin/python -m benchmarks.forge.bench_latency [--games 6] [--llm-decisions 40] [--delay 1.0]

1. Heuristic, in-process: parse + decide + encode for every request of the catalogue (both
   dialects) and of ``--games`` whole fake-Forge games; goal p99 <= 20 ms.
2. Heuristic over HTTP: the same requests posted by the fake Forge to the agent running as its
   own process (`python -m agent --game forge`).
3. LLM player over HTTP with a fake LLM that takes ``--delay`` seconds per call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from agent.core.testing.fake_openai import FakeOpenAI
from agent.games.forge.decisions import encode
from agent.games.forge.fake.catalogue import catalogue
from agent.games.forge.fake.checks import read_answer
from agent.games.forge.fake.client import FakeForge
from agent.games.forge.fake.engine import Game
from agent.games.forge.fake.llm import sensible
from agent.games.forge.heuristic import decide
from agent.games.forge.models import parse_request
from benchmarks.forge.agent_process import forge_agent, llm_section, percentile

DECKS = [("red-green", "white-blue"), ("black-red", "red-green"), ("white-blue", "black-red")]


async def collect_requests(games: int) -> list[dict[str, Any]]:
    """Every request of the catalogue and of whole games, the heuristic answering (in-process)."""
    requests = [body for d in ("action", "possible_actions") for _, body in catalogue(d)]
    for seed in range(games):
        dialect = ("action", "possible_actions")[seed % 2]
        game = Game(seed, dialect, *DECKS[seed % 3])

        async def ask(request: dict[str, Any]) -> dict[str, Any] | None:
            wire = json.loads(json.dumps(request))
            requests.append(wire)
            parsed = parse_request(wire)
            verdict = read_answer(request, 200, json.dumps(encode(parsed, decide(parsed).decision)).encode())
            return verdict.decision if verdict.valid else None

        await game.play(ask)
    return requests


def line(name: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return (f"{name:<38} n={len(ms):<5} p50={percentile(ms, 0.5):8.2f} ms  p99={percentile(ms, 0.99):8.2f} ms  "
            f"max={max(ms):8.2f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--llm-decisions", type=int, default=40)
    parser.add_argument("--delay", type=float, default=1.0)
    args = parser.parse_args()

    requests = await collect_requests(args.games)
    raw = [json.dumps(r, indent=2).encode() for r in requests]
    inproc = []
    for body in raw:
        started = time.perf_counter()
        parsed = parse_request(json.loads(body))
        json.dumps(encode(parsed, decide(parsed).decision))
        inproc.append(time.perf_counter() - started)
    print(line("heuristic, in-process (parse+decide)", inproc))

    async with forge_agent({"player": "heuristic"}) as (url, _, _), FakeForge(url) as forge:
        exchanges = [await forge.send(r) for r in requests]
    print(line("heuristic, over HTTP (agent process)", [e.latency_s for e in exchanges]))
    print(f"{'':<38} valid answers: {sum(e.verdict.valid for e in exchanges)}/{len(exchanges)}")

    config = {"decision": {"deadline": 8}}
    async with FakeOpenAI(responder=sensible(delay=args.delay)) as fake, \
            forge_agent({**llm_section(fake.base_url), **config}) as (url, _, _), FakeForge(url) as forge:
        exchanges = [await forge.send(r) for r in requests[: args.llm_decisions]]
    print(line(f"LLM ({args.delay:g} s fake), over HTTP", [e.latency_s for e in exchanges]))
    print(f"{'':<38} valid answers: {sum(e.verdict.valid for e in exchanges)}/{len(exchanges)}")


if __name__ == "__main__":
    asyncio.run(main())
