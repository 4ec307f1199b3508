"""Decided positions with a chaotic LLM: is lethal taken and the survival block made, every time?

    .venv/bin/python -m benchmarks.forge.bench_guard [--repeats 6] [--deadline 1.0] [--version early]
        [--llm chaotic|random-schema]

The agent runs as its own process with the LLM player (``llm.guard: decided``, then ``off``); the
fake LLM is the chaotic one (a sensible reply sometimes, otherwise every way a model or provider
fails, stalls past the deadline included), or with ``--llm random-schema`` the fake server's
random-schema mode (every reply a random instance of the request's schema: legal options only,
chosen at random). The fake Forge sends positions whose answer the
heuristic proves, in both dialects, each ``--repeats`` times as a new game: lethal burn (our turn
and their end step), the burn's target, lethal attacks (through a blocker, in the air) and blocks
needed to survive. Each answer is read as Forge reads it and checked: the lethal spell cast, the
opponent targeted, an attack whose sure damage is at least their life, blocks that keep us alive.
Goal with the guard on: every answer keeps the decided position.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter

from agent.core.testing.fake_openai import FakeOpenAI
from agent.core.testing.random_schema import RandomSchemaOptions
from agent.games.forge.fake.client import FakeForge
from agent.games.forge.fake.decided import kept, positions
from agent.games.forge.fake.llm import chaotic
from benchmarks.forge.agent_process import deciders, forge_agent, llm_section


async def run(guard: str, args: argparse.Namespace) -> None:
    results: Counter[str] = Counter()
    lost: Counter[str] = Counter()
    fake_llm = (FakeOpenAI(random_schema=RandomSchemaOptions(), seed=args.seed) if args.llm == "random-schema"
                else FakeOpenAI(responder=chaotic(args.seed, stall_s=args.deadline * 3)))
    async with fake_llm as fake:
        config = {**llm_section(fake.base_url), "decision": {"deadline": args.deadline}}
        config["llm"]["guard"] = guard
        async with forge_agent(config) as (url, transcripts, _), FakeForge(url, args.version) as forge:
            games: list[str] = []
            for dialect in ("action", "possible_actions"):
                for repeat in range(args.repeats):
                    for name, body in positions(dialect):
                        game = f"{dialect}-{repeat}-{len(games)}"
                        games.append(game)
                        exchange = await forge.send({**body, "gameId": game})
                        ok = exchange.verdict.valid and kept(body, exchange.verdict.decision)
                        results[f"{name} ({dialect})" if "burn," in name else name] += 1
                        if not ok:
                            lost[f"{name} ({dialect})" if "burn," in name else name] += 1
            for game in games:
                await forge.send({"gameId": game, "requestType": "reflect", "context": {"result": "bench"}})
            await asyncio.sleep(0.5)
            sources, rules = deciders(transcripts)
    total = sum(results.values())
    thrown = sum(lost.values())
    print(f"llm.guard {guard} ({args.llm} LLM, {args.version} client, deadline {args.deadline:g} s): "
          f"{total - thrown} of {total} "
          f"decided positions kept, {thrown} thrown away")
    for name in sorted(results):
        print(f"  {name}: {results[name] - lost[name]}/{results[name]}")
    decided = sum(sources.values())
    fallback = sources["heuristic-after-llm"]
    print(f"  who decided: {dict(sources)}; heuristic after a failed LLM call {fallback}/{decided} "
          f"({100 * fallback / max(1, decided):.0f} %)")
    print(f"  guard overrides: {sum(rules.values())} {dict(rules)}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=6, help="times each position is sent per dialect")
    parser.add_argument("--deadline", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--version", choices=["early", "later"], default="early")
    parser.add_argument("--llm", choices=["chaotic", "random-schema"], default="chaotic")
    args = parser.parse_args()
    for guard in ("decided", "off"):
        await run(guard, args)


if __name__ == "__main__":
    asyncio.run(main())
