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
import time
from typing import Any

from agent.core.testing.fake_openai import FakeOpenAI, first_enum_responder
from agent.games.tangram.config import Config
from agent.games.tangram.geometry.frames import normalize_rotation, rotation_distance
from agent.games.tangram.planner.candidates import propose_candidates
from agent.games.tangram.players.base import board_of
from agent.games.tangram.protocol import parse_frame
from agent.games.tangram.server import serve_agent
from agent.games.tangram.sim.client import GameClient
from agent.games.tangram.sim.runner import OBJECTIVES

EXACT_UNITS = 1e-3


def agent_config(base_url: str, candidates: int, annotate: list[str]) -> Config:
    return Config.model_validate({
        "player": "llm", "transcripts": {"enabled": False},
        "llm": {"base_url": base_url, "api_key_required": False, "candidates": candidates},
        "images": {"annotate": annotate}, "turn": {"deadline": 20}})


async def measure(games: int, turns: int, seed: int, human: str, candidates: int,
                  annotate: list[str]) -> dict[str, Any]:
    stats: dict[str, Any] = {"turns": 0, "ended": 0, "with_play": 0, "placed": 0, "first_valid": 0,
                             "offered": 0, "exact": 0, "undone": 0, "violations": 0}
    async with FakeOpenAI(responder=first_enum_responder) as fake:
        config = agent_config(fake.base_url, candidates, annotate)
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
                        stats["turns"] += 1
                        stats["ended"] += turn.ended
                        stats["undone"] += turn.undone
                        stats["offered"] += bool(offer.candidates)
                        stats["placed"] += bool(turn.piece) and not turn.undone
                        if not turn.plays:
                            continue
                        stats["with_play"] += 1
                        first = turn.plays[0]
                        stats["first_valid"] += not first.collisions
                        if offer.candidates:
                            pose = offer.candidates[0].pose
                            stats["exact"] += (first.shape == pose.piece and abs(first.x - pose.x) <= EXACT_UNITS
                                               and abs(first.y - pose.y) <= EXACT_UNITS
                                               and rotation_distance(normalize_rotation(first.rotation),
                                                                     pose.rotation) <= 0.01)
                    stats["violations"] += len(game.violations)
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
    ap.add_argument("--annotate", default="grid,labels,candidates", help="comma-separated layers; '' for none")
    args = ap.parse_args()
    start = time.perf_counter()
    layers = [layer for layer in args.annotate.split(",") if layer]
    s = asyncio.run(measure(args.games, args.turns, args.seed, args.human, args.candidates, layers))
    print(f"first-enum model, candidates={args.candidates}, annotate={layers}, human={args.human}, "
          f"{args.games} games x {args.turns} turns")
    print(f"turns={s['turns']} ended={s['ended']} with_play={s['with_play']} undone_by_game={s['undone']} "
          f"protocol_violations={s['violations']}")
    print(f"placed_a_piece={s['placed']}/{s['turns']} ({100 * s['placed'] / max(1, s['turns']):.1f}%)")
    valid = 100 * s["first_valid"] / max(1, s["with_play"])
    print(f"first_play_valid={s['first_valid']}/{s['with_play']} ({valid:.1f}%)")
    print(f"first_play_is_candidate_A_exactly={s['exact']}/{s['with_play']} "
          f"(turns with a candidate on offer: {s['offered']})")
    print(f"wall_s={time.perf_counter() - start:.1f}")


if __name__ == "__main__":
    main()
