"""The issue's win-rate goals, measured through a real engine with the evaluation command's code.

    python -m benchmarks.boardgame.bench_winrate [--matches 20] [--search-seconds 0.3]

Goals: tic-tac-toe (perfect play) never loses, against the engine's strong bot and random, first
or second; connect four (our search, moving first) wins >= 95 % against random and >= 70 % against
the engine's strong bot. Each block is the evaluation's own summary, then the goal's verdict.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter

from agent.core import proportion
from agent.games.boardgame.eval import evaluate, parse_args

GOALS = (
    # (game, opponent, who moves first, what is checked, threshold)
    ("tictactoe", "strong", "alternate", "losses", 0.0),
    ("tictactoe", "random", "alternate", "losses", 0.0),
    ("connect_four", "random", "a", "wins", 0.95),
    ("connect_four", "strong", "a", "wins", 0.70),
)


async def run(matches: int, seconds: float, seed: int) -> int:
    failed = 0
    for game, opponent, first, measure, threshold in GOALS:
        n = matches * (3 if game == "tictactoe" else 1)  # tic-tac-toe matches take milliseconds
        args = parse_args(["--game", game, "--a", "best", "--b", opponent, "--first", first, "--matches", str(n),
                           "--search-seconds", str(seconds), "--seed", str(seed)])
        evaluation = await evaluate(args)
        for line in evaluation.lines():
            print(line)
        outcomes = Counter(r.outcome for r in evaluation.a.results)
        if measure == "losses":
            ok = outcomes["loss"] == 0
            verdict = f"goal: no losses -> {outcomes['loss']} losses"
        else:
            rate = outcomes["win"] / n
            ok = rate >= threshold
            verdict = (f"goal: >= {threshold:.0%} wins -> {proportion.describe(outcomes['win'], n)}, "
                       f"the sample shows it {proportion.verdict(outcomes['win'], n, threshold)}")
        print(f"{verdict} {'PASS' if ok else 'FAIL'}\n", flush=True)
        failed += not ok
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.boardgame.bench_winrate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=20, help="connect-four matches per goal (tic-tac-toe: 3x)")
    parser.add_argument("--search-seconds", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    return asyncio.run(run(args.matches, args.search_seconds, args.seed))


if __name__ == "__main__":
    raise SystemExit(main())
