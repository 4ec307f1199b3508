"""Games overlap: N whole games at once against one agent process, with an LLM that takes 1 s.

    .venv/bin/python -m benchmarks.forge.bench_concurrency [--games 20] [--turns 4] [--delay 1.0]

Each game is a fake-Forge game (its own gameId) sending one decision at a time, as Forge does.
If games waited for each other's LLM calls, the wall time would be about the sum of all games'
decisions x delay; overlapping, it is about the longest game's decisions x delay, and the fake LLM
sees up to N calls in flight at once.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter

from agent.core.testing.fake_openai import FakeOpenAI
from agent.games.forge.fake.client import FakeForge, Report
from agent.games.forge.fake.engine import Game
from agent.games.forge.fake.llm import sensible
from benchmarks.forge.agent_process import forge_agent, llm_section, percentile

DECKS = [("red-green", "white-blue"), ("black-red", "red-green"), ("white-blue", "black-red")]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--turns", type=int, default=4, help="turns per game (both players' turns count)")
    parser.add_argument("--delay", type=float, default=1.0)
    args = parser.parse_args()

    async with FakeOpenAI(responder=sensible(delay=args.delay)) as fake:
        config = {**llm_section(fake.base_url), "decision": {"deadline": 8}}
        async with forge_agent(config) as (url, _, _), FakeForge(url) as forge:
            games = [Game(seed, ("action", "possible_actions")[seed % 2], *DECKS[seed % 3],
                          game_id=f"bench-{seed}", max_turns=args.turns) for seed in range(args.games)]
            started = time.monotonic()
            reports: list[Report] = await asyncio.gather(*(forge.play(g) for g in games))
            wall = time.monotonic() - started
        in_flight = fake.max_in_flight
        calls = len(fake.chat_requests)
    per_game = [len(r.decisions) for r in reports]
    latencies = [e.latency_s * 1000 for r in reports for e in r.decisions]
    valid = sum(e.verdict.valid for r in reports for e in r.decisions)
    serial = sum(per_game) * args.delay
    print(f"{args.games} games, {sum(per_game)} decisions (per game {min(per_game)}..{max(per_game)}), "
          f"{calls} LLM calls of {args.delay:g} s")
    print(f"wall time {wall:.1f} s; one after another would take >= {serial:.0f} s; "
          f"longest game alone >= {max(per_game) * args.delay:.0f} s")
    print(f"LLM calls in flight at once: up to {in_flight}")
    print(f"decision latency p50={percentile(latencies, 0.5):.0f} ms p99={percentile(latencies, 0.99):.0f} ms")
    print(f"valid answers: {valid}/{sum(per_game)}; results: {dict(Counter(w for r in reports for w in r.results))}")


if __name__ == "__main__":
    asyncio.run(main())
