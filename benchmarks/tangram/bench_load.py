"""Load: many simultaneous games against one agent process, with an LLM that takes 1 s a call.

The agent runs as its own process (``python -m agent``), as it does against the real game, so
its memory can be read on its own; the simulated games and the fake LLM (on a thread) run here.

    .venv/bin/python -m benchmarks.tangram.bench_load [--games 50] [--turns 3] [--delay 1.0]

Prints the wall time, turn latency p50/p95/max (playRequest sent -> finish received, as the game
sees it), turns ended / total, the agent's resident memory (idle, peak, at the end) and the
largest number of LLM calls in flight at once. Every game gets the same pre-rendered images
(real size: 562x540 board, 210x210 drawer), so the agent decodes and shrinks real PNGs on every
turn while this process does not spend its own time rendering 50 boards.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

import psutil

from agent.core.testing.fake_openai import FakeOpenAI
from agent.games.tangram.sim.client import GameClient
from agent.games.tangram.sim.simgame import SimGame
from benchmarks.tangram.agent_process import agent_process

MOVE = {"action": "place", "piece": "Green", "rotation": 0, "x": 50, "y": 50, "relation": None, "anchor": None,
        "chat": "Green goes in the middle.", "reasoning": "benchmark"}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def peak_rss(pid: int) -> int | None:
    """The kernel's high-water mark of the process's resident memory (Linux), in bytes."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


async def sample_rss(proc: psutil.Process, peak: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            peak[0] = max(peak[0], proc.memory_info().rss)
        except psutil.Error:
            return
        try:
            await asyncio.wait_for(stop.wait(), 0.05)
        except TimeoutError:
            pass


async def one_game(url: str, turns: int, seed: int, images: tuple[str, str],
                   deadline: float) -> list[tuple[bool, float]]:
    out = []
    async with GameClient(url, objective="A house", seed=seed, human="random", chat_timeout=deadline) as game:
        def fixed_images(lit: str | None = None, tinted: tuple[str, ...] = ()) -> tuple[str, str]:
            return images  # the same pictures every frame: the benchmark measures the agent, not the renderer

        game.game.images = fixed_images  # type: ignore[method-assign]
        for _ in range(turns):
            turn = await game.ai_turn(deadline=deadline)
            out.append((turn.finished, turn.latency if turn.latency is not None else deadline))
            await game.human_turn()
        if game.violations:
            print(f"game {seed}: violations {game.violations[:3]}", file=sys.stderr)
    return out


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=50)
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--delay", type=float, default=1.0, help="seconds the fake LLM takes per call")
    ap.add_argument("--deadline", type=float, default=60.0, help="the agent's turn deadline")
    args = ap.parse_args()
    images = SimGame("A house").images()
    with FakeOpenAI(default_content=json.dumps(MOVE), default_delay=args.delay) as fake:
        config = {"player": "llm", "turn": {"deadline": args.deadline},
                  "llm": {"base_url": fake.base_url, "api_key_required": False}}
        stop = asyncio.Event()
        peak = [0]
        async with agent_process(config) as (url, agent):
            try:
                proc = psutil.Process(agent.pid)
                idle_rss = proc.memory_info().rss
                sampler = asyncio.create_task(sample_rss(proc, peak, stop))
                start = time.perf_counter()
                results = await asyncio.gather(*(one_game(url, args.turns, i, images, args.deadline + 10)
                                                 for i in range(args.games)))
                wall = time.perf_counter() - start
                end_rss = proc.memory_info().rss
                agent_cpu = sum(proc.cpu_times()[:2])
                own_cpu = sum(psutil.Process().cpu_times()[:2])
                stop.set()
                await sampler
                hwm = peak_rss(agent.pid)
            finally:
                stop.set()
        turns = [t for game in results for t in game]
        latencies = [lat for _, lat in turns]
        mib = 2**20
        print(f"games={args.games} turns_per_game={args.turns} llm_delay_s={args.delay:g} deadline_s={args.deadline:g}")
        print(f"wall_time_s={wall:.2f}")
        print(f"turns_ended={sum(ok for ok, _ in turns)}/{len(turns)}")
        print(f"turn_latency_p50_s={percentile(latencies, 0.5):.2f} "
              f"turn_latency_p95_s={percentile(latencies, 0.95):.2f} "
              f"turn_latency_max_s={max(latencies):.2f}")
        print(f"agent_rss_idle_mib={idle_rss / mib:.1f} agent_rss_peak_mib={max(peak[0], hwm or 0) / mib:.1f} "
              f"agent_rss_end_mib={end_rss / mib:.1f}")
        print(f"max_llm_calls_in_flight={fake.max_in_flight} llm_calls={len(fake.chat_requests)}")
        print(f"cpu_s agent={agent_cpu:.1f} games_and_fake_llm={own_cpu:.1f} (cores: {psutil.cpu_count()})")
        print(f"serial_lower_bound_s={args.games * args.turns * args.delay:.0f}")


if __name__ == "__main__":
    asyncio.run(main())
