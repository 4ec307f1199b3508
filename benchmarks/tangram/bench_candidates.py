"""Issue 24's acceptance measure: a model that always names the first option of every enum (so
always candidate A) against the simulator. How many turns place a piece, how many first plays the
game accepts, and is each first play exactly the candidate offered?

    .venv/bin/python -m benchmarks.tangram.bench_candidates [--games 8] [--turns 6] [--human random]

The fake OpenAI server answers over real HTTP in its ``first-enum`` mode, the agent runs in-process
with the shipped candidate settings (3 candidates, all three image layers), and the simulator
applies the game's rules; a scripted human moves between turns. The candidate a play should match
is recomputed here, independently, from the state the simulator sent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply, first_enum_responder
from agent.games.tangram.config import Config
from agent.games.tangram.contract import board_of
from agent.games.tangram.geometry.frames import normalize_rotation, rotation_distance
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.planner.candidates import propose_candidates
from agent.games.tangram.protocol import parse_frame
from agent.games.tangram.sim.client import GameClient
from agent.games.tangram.sim.runner import OBJECTIVES
from benchmarks.tangram.turn_tally import TurnTally

EXACT_UNITS = 1e-3


def agent_config(base_url: str, candidates: int, annotate: list[str], transcripts: Path) -> Config:
    return Config.model_validate({
        "player": "llm", "transcripts": {"dir": str(transcripts)},
        "llm": {"base_url": base_url, "api_key_required": False, "candidates": candidates},
        "images": {"annotate": annotate}, "turn": {"deadline": 20}})


def own_time_ms(transcript: Path) -> list[float]:
    """Per turn, the agent's own time before its first play: from the playRequest's arrival to the
    play frame going out, minus the LLM call's own time (the transcript's clock, 1 ms steps)."""
    turns: dict[Any, dict[str, float]] = {}
    for line in transcript.read_text().splitlines():
        rec = json.loads(line)
        turn = turns.setdefault(rec.get("turn"), {})
        if rec["kind"] == "frame_in" and rec.get("type") == "playRequest":
            turn["start"] = rec["t"]
        elif rec["kind"] == "llm" and rec.get("purpose") == "play":
            turn["llm"] = rec.get("elapsed_s") or 0.0
        elif rec["kind"] == "frame_out" and rec["frame"].get("type") == "play" and "play" not in turn:
            turn["play"] = rec["t"]
    return [1000 * (t["play"] - t["start"] - t["llm"]) for t in turns.values() if {"start", "play", "llm"} <= set(t)]


async def measure(games: int, turns: int, seed: int, human: str, candidates: int,
                  annotate: list[str], delay: float) -> dict[str, Any]:
    stats: dict[str, Any] = {"placed": 0, "offered": 0, "exact": 0, "own_ms": []}
    tally = TurnTally()
    folder = Path(tempfile.mkdtemp(prefix="bench-candidates-"))

    async def answer(body: dict[str, Any]) -> FakeReply | None:
        reply = first_enum_responder(body)
        if reply is not None:
            reply.delay = delay
        return reply

    async with FakeOpenAI(responder=answer) as fake:
        config = agent_config(fake.base_url, candidates, annotate, folder)
        async with serve_agent(config, host="127.0.0.1", port=0) as server:
            for g in range(games):
                objective = random.Random(f"objective:{seed}:{g}").choice(OBJECTIVES)
                async with GameClient(server.url, objective=objective, seed=f"{seed}:{g}", human=human) as game:
                    for _ in range(turns):
                        await game.human_turn()
                        sent = parse_frame(json.dumps({"type": "playRequest", "objective": objective,
                                                       "state": game.game.state()}))
                        offer = propose_candidates(objective, board_of(sent.state), max(1, candidates))
                        turn = await game.ai_turn(deadline=30)
                        tally.turn(turn)
                        stats["offered"] += bool(offer.candidates)
                        stats["placed"] += bool(turn.piece) and not turn.undone
                        if not turn.plays:
                            continue
                        first = turn.plays[0]
                        if offer.candidates:
                            pose = offer.candidates[0].pose
                            stats["exact"] += (first.shape == pose.piece and abs(first.x - pose.x) <= EXACT_UNITS
                                               and abs(first.y - pose.y) <= EXACT_UNITS
                                               and rotation_distance(normalize_rotation(first.rotation),
                                                                     pose.rotation) <= 0.01)
                    tally.game(game)
            paths = list(server.transcript_paths())
    for path in paths:
        stats["own_ms"] += own_time_ms(path)
    shutil.rmtree(folder, ignore_errors=True)
    stats.update(turns=tally.turns, ended=tally.ended, undone=tally.undone, with_play=tally.with_play,
                 first_valid=tally.first_valid, violations=tally.violations)
    return stats


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=8)
    ap.add_argument("--turns", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--human", default="random", help=(
        "random (default), passive, chatty or cooperative (which completes the figure by turn 4 or 5, "
        "after which there is nothing left to place)"))
    ap.add_argument("--candidates", type=int, default=3)
    ap.add_argument("--delay", type=float, default=0.0, help="seconds the fake LLM takes per answer")
    ap.add_argument("--annotate", default="grid,labels,candidates", help="comma-separated layers; '' for none")
    args = ap.parse_args()
    start = time.perf_counter()
    layers = [layer for layer in args.annotate.split(",") if layer]
    s = asyncio.run(measure(args.games, args.turns, args.seed, args.human, args.candidates, layers, args.delay))
    print(f"first-enum model, candidates={args.candidates}, annotate={layers}, human={args.human}, "
          f"{args.games} games x {args.turns} turns")
    print(f"turns={s['turns']} ended={s['ended']} with_play={s['with_play']} undone_by_game={s['undone']} "
          f"protocol_violations={s['violations']}")
    print(f"placed_a_piece={s['placed']}/{s['turns']} ({100 * s['placed'] / max(1, s['turns']):.1f}%)")
    valid = 100 * s["first_valid"] / max(1, s["with_play"])
    print(f"first_play_valid={s['first_valid']}/{s['with_play']} ({valid:.1f}%)")
    print(f"first_play_is_candidate_A_exactly={s['exact']}/{s['with_play']} "
          f"(turns where the planner had a candidate: {s['offered']})")
    own = sorted(s["own_ms"])
    if own:
        print(f"agent's own time before the first play, beyond the LLM call (fake LLM {args.delay:g} s): "
              f"median {statistics.median(own):.1f} ms, p95 {own[round(0.95 * (len(own) - 1))]:.1f} ms, n={len(own)}")
    print(f"wall_s={time.perf_counter() - start:.1f}")


if __name__ == "__main__":
    main()
