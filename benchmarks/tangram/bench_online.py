"""Capacity of an online study: N participants at once through the public path, with a 1 s LLM.

The agent serves a two-condition study (both LLM conditions, each its own player factory) on the
participants' origin as ``--public`` does, in its own process; the engine and pack are stand-ins
(the participants here are protocol-level: no browser loads them). Each participant, in this
process: opens their invitation link, answers the consent page, takes a ticket for each game,
plays it over the ticketed socket (the game's frames with real-size pictures, 562 x 540 board and
210 x 210 drawer PNGs), reports the engine's exit, and reads the completion code. The fake LLM
(agent/core/testing/fake_openai.py) answers every call in ``--delay`` seconds.

    .venv/bin/python -m benchmarks.tangram.bench_online [--participants 200] [--turns 4] [--delay 1.0]
        [--arrive-over 30] [--think 5 20] [--seed 1]
    .venv/bin/python -m benchmarks.tangram.bench_online --burst     # the worst case: all at once, no thinking

Participants as a study sees them (the default): they open their links spread evenly over
``--arrive-over`` seconds, and each human turn takes a random ``--think`` time (uniform, seeded): a
person moving a tangram piece. So their turns interleave, as 200 people's do. ``--burst`` is the
adversarial case instead: every participant arrives in the same second and the simulated human
answers at once, so all 200 AI turns start within the same second, every turn.

Prints: turns ended by ``finish`` / all, turns over the deadline, the agent's own time per AI turn
(playRequest in to finish out, less the LLM calls and the waits for the game's feedback, from the
transcripts) p50/p95/max, the agent's memory idle, peak and per participant, participants completed
wall time, and how many participants were in a game at once (at most, and the median over the
run). Goal: 200 participants at once on 2 cores, every turn ended by finish, none over its
deadline, own time p95 <= 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import psutil
from websockets.asyncio.client import connect

from agent.core.studies.files import transcripts_dir
from agent.core.testing.fake_openai import FakeOpenAI
from agent.games.tangram.sim.client import GameClient
from agent.games.tangram.sim.simgame import SimGame
from benchmarks.tangram.bench_load import peak_rss, percentile, sample_rss

MOVE = {"action": "place", "piece": "Green", "rotation": 0, "x": 50, "y": 50, "relation": None, "anchor": None,
        "chat": "Green goes in the middle.", "reasoning": "benchmark"}
STUDY = """name: bench-online
design: within
conditions:
  explain: {{config: llm.yaml}}
  silent: {{config: llm.yaml, overrides: {{turn: {{thinking_line: false}}}}}}
online:
  consent: "Benchmark."
  completion_code: BENCH1
"""
READY = "served on http://"


def write_study(folder: Path, base_url: str, deadline: float, participants: int) -> Path:
    config = {"player": "llm", "turn": {"deadline": deadline},
              "llm": {"base_url": base_url, "api_key_required": False, "max_in_flight": max(32, participants)},
              "server": {"max_connections": max(1000, 2 * participants)}}
    (folder / "llm.yaml").write_text(json.dumps(config))
    path = folder / "study.yaml"
    path.write_text(STUDY.format())
    return path


def fake_build(folder: Path) -> Path:
    from tests.tangram.online.support import fake_build as build

    return build(folder)


async def serve(study: Path, built: Path) -> int:
    """The child process: the study's public origin on a free loopback port."""
    from agent.cli import setup_logging
    from agent.core.redact import Secrets
    from agent.core.studies.run import StudyRun
    from agent.games import read_study
    from agent.games.tangram.online.assets import prepare_assets
    from agent.games.tangram.online.public import serve_assets

    setup_logging("WARNING", Secrets())
    assets = prepare_assets(built, built.parent / "cache")
    async with await StudyRun.open(read_study(study)) as run:
        return await serve_assets(run, assets, "127.0.0.1", 0, "127.0.0.1")


def own_times_ms(transcript: Path) -> list[float]:
    """Per AI turn: playRequest in to finish out, less the LLM calls and the waits for the game's
    playFeedback after each play (the game's time, not the agent's)."""
    out = []
    turn: dict[str, Any] | None = None
    for line in transcript.read_text().splitlines():
        rec = json.loads(line)
        kind = rec["kind"]
        if kind == "frame_in" and rec.get("type") == "playRequest":
            turn = {"start": rec["t"], "llm": 0.0, "wait": 0.0, "play": None}
        elif turn is None:
            continue
        elif kind == "llm":
            turn["llm"] += rec.get("elapsed_s") or 0.0
        elif kind == "frame_out" and rec["frame"].get("type") == "play":
            turn["play"] = rec["t"]
        elif kind == "frame_in" and rec.get("type") == "playFeedback" and turn["play"] is not None:
            turn["wait"] += rec["t"] - turn["play"]
            turn["play"] = None
        elif kind == "frame_out" and rec["frame"].get("type") == "finish":
            out.append(1000 * (rec["t"] - turn["start"] - turn["llm"] - turn["wait"]))
            turn = None
    return out


class ForwardedGameClient(GameClient):
    """The game as it reaches the agent through a proxy: with the participant's own address in
    X-Forwarded-For (the agent trusts this process's address as its proxy)."""

    def __init__(self, url: str, address: str, **kwargs: Any) -> None:
        super().__init__(url, **kwargs)
        self.address = address

    async def connect(self) -> None:
        self._ws = await connect(self.url, max_size=self._max_size, compression=None, ping_interval=None,
                                 open_timeout=self._open_timeout, close_timeout=2,
                                 additional_headers={"X-Forwarded-For": self.address})
        self._reader = asyncio.create_task(self._read_loop(), name="sim-reader")
        self._worker = asyncio.create_task(self._process_loop(), name="sim-worker")


class Pacing:
    """When participants arrive and how long their human turns take; counts who is in a game."""

    def __init__(self, participants: int, arrive_over: float, think: tuple[float, float], seed: int) -> None:
        self.rng = random.Random(seed)
        self.arrivals = [arrive_over * n / max(1, participants) for n in range(participants)]
        self.think = think
        self.playing = 0
        self.samples: list[int] = []

    def thinking_s(self) -> float:
        return self.rng.uniform(*self.think)

    async def sample(self, stop: asyncio.Event, every: float = 0.25) -> None:
        while not stop.is_set():
            self.samples.append(self.playing)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)


async def participant(http: aiohttp.ClientSession, base: str, code: str, turns: int, seed: int,
                      images: tuple[str, str], deadline: float, pacing: Pacing) -> dict[str, Any]:
    await asyncio.sleep(pacing.arrivals[seed])  # the participant opens their link
    address = f"198.18.{seed // 250}.{seed % 250 + 1}"  # each participant from their own (benchmark) address
    headers = {"X-Forwarded-For": address}

    async def call(path: str, **body: Any) -> Any:
        async with http.post(f"{base}/api/{path}", json={"code": code, **body}, headers=headers) as response:
            if response.status != 200:
                raise RuntimeError(f"{path}: HTTP {response.status} {await response.text()}")
            return await response.json()

    async with http.get(f"{base}/p/{code}", headers=headers) as page:
        page.raise_for_status()
    await call("visit")
    await call("consent", given=True)
    results: list[tuple[bool, float]] = []
    while (game := await call("game"))["ticket"] is not None:
        url = base.replace("http://", "ws://") + f"/ws?ticket={game['ticket']}"
        async with ForwardedGameClient(url, address, objective="A house", seed=seed, human="random",
                                       chat_timeout=deadline) as client:
            def fixed_images(lit: str | None = None, tinted: tuple[str, ...] = ()) -> tuple[str, str]:
                return images

            client.game.images = fixed_images  # type: ignore[method-assign]
            pacing.playing += 1
            try:
                for _ in range(turns):
                    turn = await client.ai_turn(deadline=deadline + 10)
                    results.append((turn.finished, turn.latency if turn.latency is not None else deadline + 10))
                    await asyncio.sleep(pacing.thinking_s())  # the person looks and moves a piece
                    await client.human_turn()
            finally:
                pacing.playing -= 1
        await call("finished", ticket=game["ticket"], exit=0)
    return {"turns": results, "code": game["visit"].get("completion_code")}


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--participants", type=int, default=200)
    ap.add_argument("--turns", type=int, default=4, help="AI turns per game (each participant plays 2 games)")
    ap.add_argument("--delay", type=float, default=1.0, help="seconds the fake LLM takes per call")
    ap.add_argument("--deadline", type=float, default=60.0, help="the agent's turn deadline")
    ap.add_argument("--arrive-over", type=float, default=30.0,
                    help="participants open their links spread evenly over this many seconds")
    ap.add_argument("--think", type=float, nargs=2, default=(5.0, 20.0), metavar=("MIN", "MAX"),
                    help="seconds a human turn takes (uniform between MIN and MAX)")
    ap.add_argument("--burst", action="store_true",
                    help="the worst case: everyone arrives at once and answers at once (--arrive-over 0 --think 0 0)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--serve", nargs=2, metavar=("STUDY", "BUILT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        raise SystemExit(await serve(Path(args.serve[0]), Path(args.serve[1])))
    if args.burst:
        args.arrive_over, args.think = 0.0, (0.0, 0.0)
    pacing = Pacing(args.participants, args.arrive_over, tuple(args.think), args.seed)
    folder = Path(tempfile.mkdtemp(prefix="bench-online-"))
    images = SimGame("A house").images()
    with FakeOpenAI(default_content=json.dumps(MOVE), default_delay=args.delay) as fake:
        study = write_study(folder, fake.base_url, args.deadline, args.participants)
        built = fake_build(folder / "built")
        from agent.core.studies.online import OnlineRun
        from agent.core.studies.run import StudyRun
        from agent.games import read_study

        async with await StudyRun.open(read_study(study)) as run:
            invites = await OnlineRun(run).invite(args.participants)
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "benchmarks.tangram.bench_online", "--serve", str(study), str(built),
            stderr=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert child.stderr is not None
        line = b""
        async with asyncio.timeout(120):
            while READY.encode() not in line:
                line = await child.stderr.readline()
                if not line:
                    raise SystemExit("the agent did not start")
        base = "http://" + line.decode().split(READY, 1)[1].split("/", 1)[0]
        drain = asyncio.create_task(child.stderr.read())
        proc = psutil.Process(child.pid)
        idle = proc.memory_info().rss
        peak = [idle]
        stop = asyncio.Event()
        sampler = asyncio.create_task(sample_rss(proc, peak, stop))
        counter = asyncio.create_task(pacing.sample(stop))
        start = time.perf_counter()
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as http:
            results = await asyncio.gather(
                *(participant(http, base, i.code, args.turns, n, images, args.deadline, pacing)
                  for n, i in enumerate(invites)), return_exceptions=True)
        wall = time.perf_counter() - start
        hwm = peak_rss(child.pid)
        stop.set()
        await sampler
        await counter
        agent_cpu = sum(proc.cpu_times()[:2])
        child.send_signal(signal.SIGTERM)
        await child.wait()
        log = (await drain).decode(errors="replace")
    failed = [r for r in results if isinstance(r, BaseException)]
    done = [r for r in results if isinstance(r, dict)]
    turns = [t for r in done for t in r["turns"]]
    latencies = [lat for _, lat in turns]
    # A study's transcripts go beside its database (study.db: study-transcripts/), whatever the config says.
    own = [ms for path in sorted(transcripts_dir(folder / "study.db").glob("*.jsonl")) for ms in own_times_ms(path)]
    mib = 2**20
    peak_bytes = max(peak[0], hwm or 0)
    print(f"participants={args.participants} games_each=2 ai_turns_per_game={args.turns} llm_delay_s={args.delay:g} "
          f"deadline_s={args.deadline:g} cores={psutil.cpu_count()}")
    print(f"arrivals_over_s={args.arrive_over:g} human_turn_s={args.think[0]:g}-{args.think[1]:g} "
          f"in_a_game_at_once_max={max(pacing.samples, default=0)} "
          f"median={statistics.median(pacing.samples) if pacing.samples else 0:g}")
    print(f"participants_completed={sum(r['code'] == 'BENCH1' for r in done)}/{args.participants} "
          f"failed={len(failed)}{' first: ' + repr(failed[0])[:200] if failed else ''}")
    print(f"wall_time_s={wall:.1f}")
    print(f"turns_ended_by_finish={sum(ok for ok, _ in turns)}/{len(turns)} "
          f"turns_over_deadline={sum(lat > args.deadline for lat in latencies)}")
    if latencies:
        print(f"turn_latency_p50_s={percentile(latencies, 0.5):.2f} p95_s={percentile(latencies, 0.95):.2f} "
              f"max_s={max(latencies):.2f}")
    if own:
        print(f"own_time_per_turn_ms p50={percentile(own, 0.5):.1f} p95={percentile(own, 0.95):.1f} "
              f"max={max(own):.1f} (n={len(own)})")
    print(f"agent_rss_idle_mib={idle / mib:.1f} agent_rss_peak_mib={peak_bytes / mib:.1f} "
          f"per_participant_mib={(peak_bytes - idle) / mib / max(1, args.participants):.2f}")
    print(f"agent_cpu_s={agent_cpu:.1f} llm_calls={len(fake.chat_requests)} max_llm_in_flight={fake.max_in_flight}")
    errors = [line for line in log.splitlines() if " ERROR " in line]
    print(f"agent_error_lines={len(errors)}{' first: ' + errors[0][:200] if errors else ''}")


if __name__ == "__main__":
    asyncio.run(main())
