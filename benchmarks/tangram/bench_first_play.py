"""Issue 3's acceptance measure: with an LLM that proposes arbitrary moves (any instance of the
output schema: any piece, position, rotation, relation), how often is the first `play` of a turn
already valid in the game, and how many turns does the game undo?

    .venv/bin/python -m benchmarks.tangram.bench_first_play [--games 10] [--turns 10] [--seed 1]

The fake LLM answers over real HTTP, the agent runs in-process, and the simulator applies the
game's rules; a random human moves pieces between turns.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.tangram.config import Config
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.geometry.relations import RELATIONS
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.sim.client import GameClient
from benchmarks.tangram.turn_tally import TurnTally


def random_move(rng: random.Random) -> dict:
    """Any instance of the move schema, weighted toward what models really send."""
    piece = rng.choice(PIECE_NAMES)
    common = [0, 45, 90, 135, 180, 225, 270, 315, -90, 405]
    rotation = rng.choice(common) if rng.random() < 0.8 else rng.uniform(-720, 720)
    if rng.random() < 0.3:
        return {"action": "place", "piece": piece, "rotation": rotation if rng.random() < 0.5 else None,
                "x": None, "y": None, "relation": rng.choice(RELATIONS), "anchor": rng.choice(PIECE_NAMES),
                "chat": "relation move", "reasoning": "random"}
    return {"action": "place", "piece": piece, "rotation": rotation, "x": rng.uniform(-20, 120),
            "y": rng.uniform(-20, 120), "relation": None, "anchor": None, "chat": "coordinate move",
            "reasoning": "random"}


async def measure(games: int, turns: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    tally = TurnTally()
    async with FakeOpenAI(responder=lambda req: FakeReply.ok_json(random_move(rng))) as fake:
        config = Config.model_validate({"player": "llm", "transcripts": {"enabled": False},
                                        "llm": {"base_url": fake.base_url, "api_key_required": False},
                                        "turn": {"deadline": 20}})
        async with serve_agent(config, host="127.0.0.1", port=0) as server:
            for g in range(games):
                async with GameClient(server.url, seed=f"{seed}:{g}", human="random") as game:
                    for _ in range(turns):
                        await game.human_turn()
                        tally.turn(await game.ai_turn(deadline=30))
                    tally.game(game)
    return {"turns": tally.turns, "turns_with_play": tally.with_play, "first_play_valid": tally.first_valid,
            "undone": tally.undone, "ended": tally.ended, "violations": tally.violations}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    start = time.perf_counter()
    s = asyncio.run(measure(args.games, args.turns, args.seed))
    share = s["first_play_valid"] / max(1, s["turns_with_play"])
    print(f"turns={s['turns']} ended={s['ended']} turns_with_play={s['turns_with_play']} "
          f"undone_by_game={s['undone']} protocol_violations={s['violations']}")
    print(f"first_play_valid={s['first_play_valid']}/{s['turns_with_play']} ({100 * share:.1f}%)")
    print(f"wall_s={time.perf_counter() - start:.1f}")


if __name__ == "__main__":
    main()
