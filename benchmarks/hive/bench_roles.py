"""Which of our bees forage, against the ring siege at each timing: a bound on choosing roles.

    python -m benchmarks.hive.bench_roles [--matches 12] [--jobs 2] [--seed 31000]

Our strategy with each choice of two foragers whose turns follow each other (0 and 1, 1 and 2, 2 and
3, 3 and 4, 4 and 0; the other three raid) against ``siege-ring-ABC`` for every choice of three
raiders of theirs (``siege-ring`` is 024), in both seats (forced), on the same seeds
(socket-free, agent.games.hive.opponents.sim). Turns alternate bee by bee, so which bee of theirs acts
between two of ours is set by the bees' numbers (docs/hive.md, "Sixth attempt").

It prints wins of ours per cell, then each choice's total per seat, then the **oracle**: per
opponent, the best choice in each seat, as if we knew their raiders from the first turn and could
pick ours for it. The oracle is a maximum over five samples, so it overstates what that knowledge
is worth; where even it stays under the issue's 75 %, choosing roles alone cannot reach the goal.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from itertools import combinations

from agent.games.hive.opponents.counterbots import CounterBot, Recipe
from agent.games.hive.rules import BEES
from agent.games.hive.strategy.strategy import DEFAULT_RAIDERS

GOAL = 0.75

FORAGER_PAIRS = [(f, (f + 1) % BEES) for f in range(BEES)]
SIEGES = ["".join(map(str, c)) for c in combinations(range(BEES), 3)]
OUR_DEFAULT = {seat: next((pair for pair in FORAGER_PAIRS if set(pair) == set(range(BEES)) - raiders), None)
               for seat, raiders in DEFAULT_RAIDERS.items()}
"""Our strategy's own foragers (strategy.DEFAULT_RAIDERS) as a pair, per seat: the "*" column."""


def ours(pair: tuple[int, int]) -> Recipe:
    return Recipe(dict.fromkeys((b for b in range(BEES) if b not in pair), "raid"))


def siege_bot(raiders: str) -> str:
    """The pool's bot for this choice of raiders (counterbots.RECIPES)."""
    return "siege-ring" if raiders == "024" else f"siege-ring-{raiders}"


def match(pair: tuple[int, int], raiders: str, seat: int, seed: int) -> int:
    """1 for a win of ours, 0 otherwise (draws and losses)."""
    from agent.games.hive.opponents.sim import play

    a = CounterBot(f"ours-{pair}", seed, ours(pair))
    b = CounterBot(siege_bot(raiders), seed + 7919)
    result = play((a, b), seed, swap=seat == 1)
    return int(result.scores[seat] > result.scores[1 - seat])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.hive.bench_roles", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", "--matches", type=int, default=12, help="seeds per cell and seat")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=31000)
    args = p.parse_args(argv)
    n = args.matches
    cells = [(pair, raiders, seat, seed) for raiders in SIEGES for pair in FORAGER_PAIRS for seat in (0, 1)
             for seed in range(args.seed, args.seed + n)]
    with ProcessPoolExecutor(args.jobs) as pool:
        won = list(pool.map(match, *zip(*cells, strict=True), chunksize=4))
    wins: dict[tuple[tuple[int, int], str, int], int] = {}
    for (pair, raiders, seat, _), w in zip(cells, won, strict=True):
        wins[pair, raiders, seat] = wins.get((pair, raiders, seat), 0) + w

    label = [f"{a}{b}" for a, b in FORAGER_PAIRS]
    print(f"Wins of ours of {n} per cell; columns: our foragers; * our default")
    print("| their raiders | seat | " + " | ".join(label) + " | best |")
    print("|---" * (len(label) + 3) + "|")
    for raiders in SIEGES:
        for seat in (0, 1):
            row = [f"{wins[pair, raiders, seat]}{'*' if pair == OUR_DEFAULT[seat] else ''}" for pair in FORAGER_PAIRS]
            best = max(FORAGER_PAIRS, key=lambda pair: wins[pair, raiders, seat])
            print(f"| {raiders} | P{seat} | " + " | ".join(row) + f" | {best[0]}{best[1]} |")
    print()
    for seat in (0, 1):
        totals = ", ".join(f"{a}{b} {sum(wins[(a, b), r, seat] for r in SIEGES)}" for a, b in FORAGER_PAIRS)
        print(f"P{seat}, wins of {n * len(SIEGES)} per choice of foragers: {totals}")
    print()
    print(f"Oracle (best choice per seat, of {2 * n}), worst first:")
    bound = {r: sum(max(wins[pair, r, seat] for pair in FORAGER_PAIRS) for seat in (0, 1)) for r in SIEGES}
    played_default = [(seat, own) for seat, own in OUR_DEFAULT.items() if own is not None]
    for r in sorted(SIEGES, key=bound.__getitem__):
        rate = bound[r] / (2 * n)
        default = sum(wins[own, r, seat] for seat, own in played_default)
        under = "" if rate >= GOAL else f" < {100 * GOAL:.0f} %"
        print(f"  {siege_bot(r)}: oracle {bound[r]} ({100 * rate:.1f} %){under}, our default {default}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
