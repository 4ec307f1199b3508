"""Engine throughput: many agents at once, each playing random tic-tac-toe against the random bot.

    python -m benchmarks.boardgame.bench_engine [--agents 50] [--matches 4]

Every agent is a real client over WebSocket (our MatchClient with random moves) on one event loop
with the engine, so the numbers are an upper bound on latency for one process doing both sides.
Prints matches per second, frames the engine sent, and the agents' request round trips.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from typing import Any

from agent.games.boardgame.client import ClientSettings, MatchClient
from agent.games.boardgame.engine.server import Engine, EngineSettings
from agent.games.boardgame.players.offline import make_offline


async def agent(url: str, name: str, matches: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    decisions: list[float] = []

    def player(rules: Any) -> Any:
        return make_offline("random", rules, random.Random(rng.random()))

    for _ in range(matches):
        result = await MatchClient(ClientSettings(url=url, agent_id=name, poll_seconds=2.0), player, player).play()
        assert result.status == "ended", result.line()
        decisions.extend(d.seconds for d in result.decisions)
    return decisions


async def run(agents: int, matches: int) -> None:
    engine = Engine(EngineSettings(games=("tictactoe",), bot="random", seed=1))
    port = await engine.start("127.0.0.1", 0)
    url = f"ws://127.0.0.1:{port}"
    started = time.perf_counter()
    results = await asyncio.gather(*(agent(url, f"agent-{i}", matches, i) for i in range(agents)))
    elapsed = time.perf_counter() - started
    await engine.close()
    total = agents * matches
    times = sorted(t for r in results for t in r)
    print(f"{agents} agents x {matches} matches = {total} tic-tac-toe matches in {elapsed:.2f} s "
          f"({total / elapsed:.1f} matches/s); engine sent {engine.frames_sent} frames "
          f"({engine.frames_sent / elapsed:,.0f}/s)")
    print(f"agent turn (choose + perform_action round trip): median {1000 * statistics.median(times):.1f} ms, "
          f"p99 {1000 * times[int(0.99 * (len(times) - 1))]:.1f} ms, max {1000 * times[-1]:.1f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.boardgame.bench_engine")
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--matches", type=int, default=4)
    args = parser.parse_args(argv)
    asyncio.run(run(args.agents, args.matches))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
