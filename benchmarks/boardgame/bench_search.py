"""How deep and fast the connect-four searches go: our player by time budget, the engine's bot by depth.

    python -m benchmarks.boardgame.bench_search [--positions 12] [--budgets 0.1,0.3,1.0]

Positions are reached by seeded random play (4 to 16 plies, unfinished). Prints, per budget, the
depth completed (median, min) and the nodes per second; for the bot, the time per move.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from agent.games.boardgame.players.c4_search import Searcher, bot_move
from agent.games.boardgame.players.offline import BOT_DEPTH
from agent.games.boardgame.rules.connect_four import ConnectFour, Position


def positions(count: int, seed: int) -> list[Position]:
    rules = ConnectFour()
    rng = random.Random(seed)
    found: list[Position] = []
    while len(found) < count:
        position = rules.initial()
        for _ in range(rng.randrange(4, 17)):
            position = rules.play(position, rng.choice(list(rules.legal_moves(position))))
            if rules.outcome(position) is not None:
                break
        if rules.outcome(position) is None:
            found.append(position)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.boardgame.bench_search")
    parser.add_argument("--positions", type=int, default=12)
    parser.add_argument("--budgets", default="0.1,0.3,1.0")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    sample = positions(args.positions, args.seed)
    for budget in (float(b) for b in args.budgets.split(",")):
        depths, rates, times = [], [], []
        for position in sample:
            result = Searcher().search(position, seconds=budget)
            depths.append(result.depth)
            rates.append(result.nodes / max(result.seconds, 1e-9))
            times.append(result.seconds)
        print(f"search {budget:g} s: depth median {statistics.median(depths):g} (min {min(depths)}, "
              f"max {max(depths)}), {statistics.fmean(rates):,.0f} nodes/s, time max {max(times):.3f} s "
              f"over {len(sample)} positions")
    bot_times = []
    for position in sample:
        started = time.perf_counter()
        bot_move(position, BOT_DEPTH, random.Random(0))
        bot_times.append(time.perf_counter() - started)
    print(f"engine strong bot (depth {BOT_DEPTH}): time per move median {statistics.median(bot_times):.3f} s, "
          f"max {max(bot_times):.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
