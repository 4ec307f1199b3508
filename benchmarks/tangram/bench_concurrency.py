"""Games overlap: N simultaneous games against one agent process, with an LLM that takes 1 s.

The agent runs as its own process (`python -m agent`), as it does against the real game; the
simulated games and the fake LLM run in this process.

    .venv/bin/python -m benchmarks.tangram.bench_concurrency [--games 8] [--turns 3] [--delay 1.0]

Prints the wall time and the largest number of LLM calls in flight at once. A server that blocked
the event loop on each LLM call would need games x turns x delay seconds; ours should need about
turns x delay.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from agent.core.testing.fake_openai import FakeOpenAI
from agent.games.tangram.sim.client import GameClient
from benchmarks.tangram.agent_process import agent_process

MOVE = {"action": "place", "piece": "Green", "rotation": 0, "x": 50, "y": 50, "relation": None, "anchor": None,
        "chat": "Green goes in the middle.", "reasoning": "benchmark"}


async def one_game(url: str, turns: int, seed: int) -> list[float]:
    latencies = []
    async with GameClient(url, objective="A house", seed=seed, human="passive") as game:
        for _ in range(turns):
            turn = await game.ai_turn(deadline=60)
            if not turn.finished:
                raise SystemExit(f"turn did not finish: {turn.ended_by}")
            latencies.append(turn.latency or 0.0)
            await game.human_turn()
    return latencies


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=8)
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--delay", type=float, default=1.0)
    ap.add_argument("--no-images", action="store_true", help="do not send images to the LLM")
    args = ap.parse_args()
    llm_config: dict[str, Any] = {"player": "llm", "llm": {"base_url": "", "api_key_required": False}}
    if args.no_images:
        llm_config["images"] = {"send_board": False, "send_drawer": False}
    with FakeOpenAI(default_content=json.dumps(MOVE), default_delay=args.delay) as fake:
        llm_config["llm"]["base_url"] = fake.base_url
        async with agent_process(llm_config) as (url, _):
            start = time.perf_counter()
            results = await asyncio.gather(*(one_game(url, args.turns, i) for i in range(args.games)))
            wall = time.perf_counter() - start
        lat = sorted(x for r in results for x in r)
        print(f"games={args.games} turns={args.turns} llm_delay={args.delay:g}s")
        print(f"wall_time_s={wall:.2f}")
        print(f"max_llm_calls_in_flight={fake.max_in_flight}")
        print(f"llm_calls={len(fake.chat_requests)}")
        print(f"turn_latency_p50_s={lat[len(lat) // 2]:.2f} turn_latency_max_s={lat[-1]:.2f}")
        print(f"serial_lower_bound_s={args.games * args.turns * args.delay:.0f}")


if __name__ == "__main__":
    asyncio.run(main())
