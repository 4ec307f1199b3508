"""Every bot against every other: does any fixed choice of roles clear the goal against all the others?

    python -m benchmarks.hive.bench_cross [--matches 24] [--jobs 2] [--seed 31000] [--bots ours,siege-twin,...]

Socket-free matches (agent.games.hive.sim), seats drawn from the seed, one sample per unordered
pair (A against B is B against A, seen from the other side). Prints one row per bot: its win rate
against each other bot over the matches played out, and its worst; rows sorted by the worst, best
first, with the worst rate's 95 % interval and whether it shows the goal (issue 31: 75 %) met,
missed or undecided.

The default bots are the ring sieges of the counter-pool (every timing of three raiders standing in
our ring, and the one with our own choice of foragers) and our strategy: they all run our code, and
differ only in which bees raid and where they stand. If no row clears the goal, no fixed choice
among them beats all the others (docs/hive.md, "Every timing against every other").
"""

from __future__ import annotations

import argparse
import itertools
from typing import Any

from agent.core import proportion
from agent.games.hive.counterbots import RECIPES
from benchmarks.hive.bench_pool import GOAL, refuse_unknown_bots, sim_records, tally

DEFAULT_BOTS = ["ours", *(name for name, recipe in RECIPES.items() if recipe.ring_siege and not recipe.start)]


SIDES = {"a": "b", "b": "a"}


def from_b(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same match records seen from B's side (to tally them as B's)."""
    return [{**r, "winner": SIDES.get(r["winner"], r["winner"]), "forfeit": SIDES.get(r["forfeit"], r["forfeit"]),
             "scores": (r["scores"][1], r["scores"][0])} for r in records]


def matrix(bots: list[str], results: dict[tuple[str, str], dict[str, Any]], goal: float = GOAL) -> str:
    """Rows sorted by their worst rate, best first; a cell is the row's wins of the played matches."""
    def worst(bot: str) -> tuple[str, dict[str, Any]]:
        return min(((b, results[bot, b]) for b in bots if b != bot), key=lambda item: item[1]["rate"])

    short = {b: b.removeprefix("siege-ring-") for b in bots}
    lines = ["| A \\ B | " + " | ".join(f"`{short[b]}`" for b in bots)
             + f" | worst (95 % interval) | >= {100 * goal:.0f} % |",
             "|---|" + "---|" * (len(bots) + 2)]
    for bot in sorted(bots, key=lambda b: -worst(b)[1]["rate"]):
        cells = []
        for b in bots:
            t = results.get((bot, b))
            cells.append("-" if t is None else f"{t['wins']}/{t['played']}")
        name, t = worst(bot)
        lines.append(f"| `{bot}` | " + " | ".join(cells)
                     + f" | `{short[name]}` {proportion.describe(t['wins'], t['played'])}"
                     f" | {proportion.verdict(t['wins'], t['played'], goal)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.hive.bench_cross", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", "--matches", type=int, default=24)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=31000)
    p.add_argument("--bots", default=",".join(DEFAULT_BOTS))
    args = p.parse_args(argv)
    bots = args.bots.split(",")
    if len(set(bots)) != len(bots) or len(bots) < 2:
        p.error("--bots needs at least two different bots")
    refuse_unknown_bots(p, bots)
    seeds = range(args.seed, args.seed + args.matches)
    results: dict[tuple[str, str], dict[str, Any]] = {}
    for a, b in itertools.combinations(bots, 2):
        records = sim_records(a, b, seeds, args.jobs)
        t = results[a, b] = tally(records)
        results[b, a] = tally(from_b(records))
        print(f"== {a} vs {b}: {t['wins']} / {t['draws']} / {t['losses']} of {t['played']}, "
              f"{t['score_a']:.1f} - {t['score_b']:.1f}", flush=True)
    print(matrix(bots, results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
