"""Games overlap: N simultaneous games against one agent process, with an LLM that takes 1 s.

The agent runs as its own process (`python -m agent`), as it does against the real game; the
simulated games and the fake LLM run in this process.

    .venv/bin/python benchmarks/bench_concurrency.py [--games 8] [--turns 3] [--delay 1.0]

Prints the wall time and the largest number of LLM calls in flight at once. A server that blocked
the event loop on each LLM call would need games x turns x delay seconds; ours should need about
turns x delay.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import socket
import sys
import time
from pathlib import Path

import yaml

from agent.sim.client import GameClient
from agent.testing.fake_openai import FakeOpenAI

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
    with tempfile.TemporaryDirectory() as tmp, \
            FakeOpenAI(default_content=json.dumps(MOVE), default_delay=args.delay) as fake:
        config = Path(tmp) / "bench.yaml"
        config.write_text(yaml.safe_dump({"player": "llm", "transcripts": {"dir": tmp},
                                          "llm": {"base_url": fake.base_url, "api_key_required": False},
                                          **({"images": {"send_board": False, "send_drawer": False}} if args.no_images else {})}))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        agent = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agent", "--config", str(config), "--host", "127.0.0.1", "--port", str(port),
            "--log-level", "WARNING", stderr=asyncio.subprocess.PIPE)
        try:
            assert agent.stderr is not None
            await asyncio.wait_for(agent.stderr.readline(), 30)  # the "listening" line
            url = f"ws://127.0.0.1:{port}"
            start = time.perf_counter()
            results = await asyncio.gather(*(one_game(url, args.turns, i) for i in range(args.games)))
            wall = time.perf_counter() - start
        finally:
            agent.terminate()
            await agent.wait()
        lat = sorted(x for r in results for x in r)
        print(f"games={args.games} turns={args.turns} llm_delay={args.delay:g}s")
        print(f"wall_time_s={wall:.2f}")
        print(f"max_llm_calls_in_flight={fake.max_in_flight}")
        print(f"llm_calls={len(fake.chat_requests)}")
        print(f"turn_latency_p50_s={lat[len(lat) // 2]:.2f} turn_latency_max_s={lat[-1]:.2f}")
        print(f"serial_lower_bound_s={args.games * args.turns * args.delay:.0f}")


if __name__ == "__main__":
    asyncio.run(main())
