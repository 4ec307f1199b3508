"""Share of valid answers when the LLM misbehaves in every way a model or provider can.

    .venv/bin/python -m benchmarks.forge.bench_chaos [--games 4] [--deadline 1.0] [--seed 0]

The agent runs as its own process with the LLM player; the fake LLM answers each call with one
of: a sensible reply, numbers out of range, duplicates, wrong shapes, strings, prose, truncated
JSON, an empty reply, HTTP 500 or 400, garbage, negative numbers, too many picks, or a stall past
the decision deadline. The fake Forge sends the whole request catalogue in both dialects and
plays ``--games`` whole games per dialect, checking every answer as Forge does.
Goal: 100 % valid, every answer within the deadline plus a little.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter

from agent.core.testing.fake_openai import FakeOpenAI
from agent.games.forge.fake.catalogue import catalogue
from agent.games.forge.fake.client import FakeForge, Report
from agent.games.forge.fake.engine import Game
from agent.games.forge.fake.llm import chaotic
from benchmarks.forge.agent_process import deciders, forge_agent, llm_section, percentile

DECKS = [("red-green", "white-blue"), ("black-red", "red-green"), ("white-blue", "black-red")]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=4, help="whole games per dialect")
    parser.add_argument("--deadline", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--version", choices=["early", "later"], default="early")
    args = parser.parse_args()

    report = Report()
    async with FakeOpenAI(responder=chaotic(args.seed, stall_s=args.deadline * 3)) as fake:
        config = {**llm_section(fake.base_url), "decision": {"deadline": args.deadline}}
        async with forge_agent(config) as (url, transcripts, _), FakeForge(url, args.version) as forge:
            for dialect in ("action", "possible_actions"):
                await forge.replay([body for _, body in catalogue(dialect)], report)
                for seed in range(args.games):
                    await forge.play(Game(args.seed * 100 + seed, dialect, *DECKS[seed % 3], max_turns=12), report)
            await asyncio.sleep(0.5)  # the catalogue's session is closed at shutdown; the games' at reflect
            sources, guards = deciders(transcripts)
        llm_calls = len(fake.chat_requests)
    decisions = report.decisions
    valid = sum(e.verdict.valid for e in decisions)
    latencies = [e.latency_s * 1000 for e in decisions]
    print(f"decisions: {len(decisions)} ({dict(Counter(e.kind for e in decisions))}); LLM calls: {llm_calls}")
    print(f"valid answers (as Forge reads them, {args.version} client): {valid}/{len(decisions)} "
          f"= {100 * valid / len(decisions):.1f} %")
    print(f"Forge outcomes: {dict(report.outcomes())}")
    print(f"who decided: {dict(sources)}")
    fallback = sources["heuristic-after-llm"]
    print(f"heuristic after a failed LLM call: {fallback}/{len(decisions)} = {100 * fallback / len(decisions):.1f} %; "
          f"guard overrides (llm.guard decided): {sum(guards.values())} {dict(guards)}")
    print(f"latency: p50={percentile(latencies, 0.5):.0f} ms p99={percentile(latencies, 0.99):.0f} ms "
          f"max={max(latencies):.0f} ms (deadline {args.deadline * 1000:.0f} ms)")
    print(f"games (12-turn cap): {dict(Counter(report.results))}")
    for e in report.invalid()[:5]:
        print("INVALID:", e.kind, e.verdict.reason, e.body[:200])


if __name__ == "__main__":
    asyncio.run(main())
