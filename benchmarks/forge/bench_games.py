"""How well the heuristic plays: whole fake-Forge games against the built-in opponent, next to a
player that picks uniformly among the valid choices (the floor any valid agent reaches).

    .venv/bin/python -m benchmarks.forge.bench_games [--games 60] [--turns 30]

In-process (no HTTP), both dialects, three deck pairings, seeds 0..games-1. Prints wins, losses
and draws (turn cap) for each player, and the heuristic's decision time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from agent.core import proportion
from agent.games.forge.decisions import (
    ActionDecision,
    AttackDecision,
    BlockDecision,
    Decision,
    TargetDecision,
    encode,
)
from agent.games.forge.fake.checks import read_answer
from agent.games.forge.fake.engine import Game
from agent.games.forge.heuristic import decide
from agent.games.forge.models import ActionState, AttackState, BlockState, ForgeRequest, TargetState, parse_request
from benchmarks.forge.agent_process import percentile

DECKS = [("red-green", "white-blue"), ("black-red", "red-green"), ("white-blue", "black-red")]


def random_player(rng: random.Random) -> Callable[[ForgeRequest], Decision]:
    def play(request: ForgeRequest) -> Decision:
        opts = request.options
        if isinstance(opts, ActionState):
            return ActionDecision(rng.choice(opts.options).index if opts.options else None)
        if isinstance(opts, TargetState):
            n = rng.randint(opts.min, min(opts.max, len(opts.targets)))
            return TargetDecision(tuple(t.index for t in rng.sample(opts.targets, n) if t.index is not None))
        if isinstance(opts, AttackState):
            d = opts.defenders[0].index if opts.defenders and opts.defenders[0].index is not None else 0
            return AttackDecision(tuple((a.index, d) for a in opts.attackers
                                        if a.index is not None and rng.random() < 0.5))
        assert isinstance(opts, BlockState)
        pairs = [(b.index, rng.choice(opts.attackers).index) for b in opts.blockers
                 if opts.attackers and rng.random() < 0.5]
        return BlockDecision(tuple((b, a) for b, a in pairs if b is not None and a is not None))
    return play


async def play_games(games: int, turns: int, player: Callable[[ForgeRequest], Decision],
                     times: list[float]) -> Counter[str]:
    results: Counter[str] = Counter()
    for seed in range(games):
        game = Game(seed, ("action", "possible_actions")[seed % 2], *DECKS[seed % 3], max_turns=turns)

        async def ask(request: dict[str, Any]) -> dict[str, Any] | None:
            started = time.perf_counter()
            parsed = parse_request(json.loads(json.dumps(request)))
            answer = encode(parsed, player(parsed))
            times.append(time.perf_counter() - started)
            verdict = read_answer(request, 200, json.dumps(answer).encode())
            return verdict.decision if verdict.outcome in ("ok", "changed") else None

        results[await game.play(ask)] += 1
    return results


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--turns", type=int, default=30)
    args = parser.parse_args()
    times: list[float] = []
    heuristic = await play_games(args.games, args.turns, lambda r: decide(r).decision, times)
    rnd = await play_games(args.games, args.turns, random_player(random.Random(0)), [])
    for name, res in (("heuristic", heuristic), ("random valid", rnd)):
        print(f"{name:<13} wins {res['Agent']:>3}  losses {res['Opponent']:>3}  draws {res['draw']:>3}  "
              f"(of {args.games}; win rate {proportion.describe(res['Agent'], args.games)})")
    ms = [t * 1000 for t in times]
    print(f"heuristic decisions: {len(ms)}, p50={percentile(ms, 0.5):.2f} ms p99={percentile(ms, 0.99):.2f} ms")


if __name__ == "__main__":
    asyncio.run(main())
