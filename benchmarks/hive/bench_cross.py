"""Every bot against every other: does any fixed choice of roles clear the goal against all the others?

    python -m benchmarks.hive.bench_cross [--matches 24] [--jobs 2] [--seed 31000] [--bots ours,siege-twin,...]
        [--save run.json]
    python -m benchmarks.hive.bench_cross --load run1.json run2.json [--bots ...]

Socket-free matches (agent.games.hive.opponents.sim), seats drawn from the seed, one sample per unordered
pair (A against B is B against A, seen from the other side). Prints one row per bot: its win rate
against each other bot over the matches played out, and its worst; rows sorted by the worst, best
first, with the worst rate's 95 % interval and whether it shows the goal (issue 31: 75 %) met,
missed or undecided. Then the value of the game: the best *mixture* of the rows (each match, play
row i with probability p_i) against the worst column, by linear programming: what choosing among
these bots at random, with the best odds, gets against the one that answers it best.

``--save`` keeps the match records of a run; ``--load`` plays nothing and pools saved runs (other
seeds of the same pairs) into one table.

The default bots are the ring sieges of the counter-pool (every timing of three raiders standing in
our ring, and the one with our own choice of foragers) and our strategy: they all run our code, and
differ only in which bees raid and where they stand. If no row clears the goal, no fixed choice
among them beats all the others (docs/hive.md, "Every timing against every other").
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path
from typing import Any

from scipy.optimize import linprog

from agent.core import proportion
from agent.games.hive.opponents.counterbots import RECIPES
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


SELF_RATE = 0.5
"""A bot against itself, never played here, in the value of the game: the two sides of such a match
are the same strategy, so it wins at most half of them (draws lower it)."""


def value_of_game(bots: list[str], results: dict[tuple[str, str], dict[str, Any]],
                  self_rate: float = SELF_RATE) -> tuple[float, dict[str, float]]:
    """The best mixture of the rows against the worst column: max over p of min over j of
    sum_i p_i rate(i, j), with the mixture's odds (those above 0.1 %).

    Each pair's two rates add up to at most one (a match one side wins the other loses), so a
    field that holds every bot of the mixture is answered by at least one of them: the value is at
    most the self rate whatever the measurements. Below it, it says by how much."""
    n = len(bots)
    # variables p_1..p_n, v; minimise -v subject to v - sum_i p_i rate(i, j) <= 0 for every j
    upper = [[-(self_rate if i == j else results[bots[i], bots[j]]["rate"]) for i in range(n)] + [1.0]
             for j in range(n)]
    solution = linprog(c=[0.0] * n + [-1.0], A_ub=upper, b_ub=[0.0] * n, A_eq=[[1.0] * n + [0.0]], b_eq=[1.0],
                       bounds=[(0.0, 1.0)] * n + [(None, None)], method="highs")
    if not solution.success:  # a bounded, feasible problem: this is a bug, not bad input
        raise RuntimeError(f"the game's value was not found: {solution.message}")
    odds = {bot: float(p) for bot, p in zip(bots, solution.x[:n], strict=True) if p > 1e-3}
    return float(solution.x[n]), odds


def describe_value(bots: list[str], results: dict[tuple[str, str], dict[str, Any]]) -> str:
    value, odds = value_of_game(bots, results)
    mixture = ", ".join(f"`{bot}` {100 * p:.1f} %" for bot, p in sorted(odds.items(), key=lambda item: -item[1]))
    return (f"Value of the game: {100 * value:.1f} % against the worst column, with the best mixture of the rows "
            f"({mixture}; a bot against itself counted as {100 * SELF_RATE:.0f} %)")


def save(path: Path, bots: list[str], seeds: range, runs: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    pairs = [{"a": a, "b": b, "records": records} for (a, b), records in runs.items()]
    path.write_text(json.dumps({"bots": bots, "seeds": [seeds.start, len(seeds)], "pairs": pairs}), encoding="utf-8")


def load(paths: list[Path]) -> tuple[list[str], dict[tuple[str, str], list[dict[str, Any]]]]:
    """The bots of the first run, and every pair's records of all the runs (saved with ``--save``)."""
    bots: list[str] = []
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    seen: dict[Path, range] = {}
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        start, count = data["seeds"]
        seeds = range(start, start + count)
        for other, earlier in seen.items():
            shared = range(max(seeds.start, earlier.start), min(seeds.stop, earlier.stop))
            if shared:  # the same seeds are the same matches: pooled, they would count twice
                raise ValueError(f"{other} and {path} both hold seeds {shared.start}-{shared.stop - 1}")
        seen[path] = seeds
        bots = bots or list(data["bots"])
        for pair in data["pairs"]:
            a, b = pair["a"], pair["b"]
            if (b, a) in runs:  # the same pair saved the other way round
                runs[b, a] += from_b(pair["records"])
            else:
                runs.setdefault((a, b), []).extend(pair["records"])
    return bots, runs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.hive.bench_cross", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", "--matches", type=int, default=24)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=31000)
    p.add_argument("--bots", help=f"comma-separated (default: {','.join(DEFAULT_BOTS)}; with --load, the first run's)")
    p.add_argument("--save", type=Path, help="write the match records of this run to this JSON file")
    p.add_argument("--load", type=Path, nargs="+", metavar="RUN",
                   help="play nothing: pool the runs saved with --save into one table")
    args = p.parse_args(argv)
    if args.load and args.save:
        p.error("--load plays nothing, so there is nothing to --save")
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    if args.load:
        try:
            saved_bots, runs = load(args.load)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            p.error(f"cannot pool the saved runs: {exc}")
        bots = args.bots.split(",") if args.bots else saved_bots
    else:
        bots = (args.bots or ",".join(DEFAULT_BOTS)).split(",")
    if len(set(bots)) != len(bots) or len(bots) < 2:
        p.error("--bots needs at least two different bots")
    if args.load:
        missing = [f"{a} vs {b}" for a, b in itertools.combinations(bots, 2)
                   if (a, b) not in runs and (b, a) not in runs]
        if missing:
            p.error(f"the saved runs have no matches of {', '.join(missing)}")
    else:
        refuse_unknown_bots(p, bots)
        seeds = range(args.seed, args.seed + args.matches)
        for a, b in itertools.combinations(bots, 2):
            runs[a, b] = sim_records(a, b, seeds, args.jobs)
            t = tally(runs[a, b])
            print(f"== {a} vs {b}: {t['wins']} / {t['draws']} / {t['losses']} of {t['played']}, "
                  f"{t['score_a']:.1f} - {t['score_b']:.1f}", flush=True)
        if args.save:
            save(args.save, bots, seeds, runs)
    results: dict[tuple[str, str], dict[str, Any]] = {}
    for (a, b), records in runs.items():
        results[a, b] = tally(records)
        results[b, a] = tally(from_b(records))
    print(matrix(bots, results))
    print(describe_value(bots, results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
