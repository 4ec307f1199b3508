"""The race to the seal: when each hive's ring closes, and how often the score then decides the match.

    python -m benchmarks.hive.bench_race [--matches 24] [--jobs 2] [--seed 31000] [--bots siege-ring-012,...]

Our strategy against each bot in both seats (forced, the same seeds in each), socket-free
(agent.games.hive.opponents.sim). A hive's ring is *closed* from the first turn on which none of its cells
is empty: walls and bees only, nobody can step in. Per bot and seat it prints our wins / draws /
losses, the median turn on which our ring and theirs closed, the mean score when the later of the
two closed (the *seal*), the mean points each side scored after it (passed or walked in past the
other's raiders), and in how many matches the result was already the seal's: the leader then won,
or a tie stayed a draw (docs/hive.md, "The race to the seal").

The default bots are the pool's sieges that stand in our ring (counterbots.RECIPES with
``ring_siege``).
"""

from __future__ import annotations

import argparse
import statistics
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from agent.games.hive.rules import ArenaState, Cell, hive_index
from agent.games.hive.strategy.blockade import ring


def ring_closed(cells: bytes | bytearray, hive: int) -> bool:
    """No cell next to the hive is empty (what fills it, wall or bee of either side, is not asked)."""
    return all(cells[n] != Cell.EMPTY for n in ring(hive))


@dataclass
class RaceProbe:
    """Watches a match (sim.play's ``observe``): the first turn each player's ring was closed, the
    scores at the later of the two closings, and the last turn a point was scored."""

    closed: list[int | None] = field(default_factory=lambda: [None, None])
    at_seal: tuple[int, int] | None = None
    last_point: int = 0
    _scores: tuple[int, int] = (0, 0)

    def __call__(self, state: ArenaState) -> None:
        scores = (state.scores[0], state.scores[1])
        if scores != self._scores:
            self.last_point, self._scores = state.turn, scores
        for player in (0, 1):
            if self.closed[player] is None and ring_closed(state.cells, hive_index(player)):
                self.closed[player] = state.turn
                if self.closed[1 - player] is not None:
                    self.at_seal = scores


@dataclass(frozen=True)
class Race:
    """One match seen from our side (``ours`` is our player number)."""

    ours: int
    closed: tuple[int | None, int | None]
    """Turn our ring closed, turn theirs closed (None: never)."""
    at_seal: tuple[int, int] | None
    """Our score and theirs when the later ring closed."""
    final: tuple[int, int]
    last_point: int
    turns: int

    @property
    def result(self) -> int:
        """1 won, 0 drawn, -1 lost."""
        return (self.final[0] > self.final[1]) - (self.final[0] < self.final[1])

    @property
    def decided_at_seal(self) -> bool | None:
        """Did the match end as the score stood at the seal? None without a seal."""
        if self.at_seal is None:
            return None
        ours, theirs = self.at_seal
        return self.result == (ours > theirs) - (ours < theirs)


def from_probe(probe: RaceProbe, ours: int, scores: list[int], turns: int) -> Race:
    theirs = 1 - ours
    at_seal = None if probe.at_seal is None else (probe.at_seal[ours], probe.at_seal[theirs])
    return Race(ours=ours, closed=(probe.closed[ours], probe.closed[theirs]), at_seal=at_seal,
                final=(scores[ours], scores[theirs]), last_point=probe.last_point, turns=turns)


def summary(races: list[Race]) -> dict[str, object]:
    """The numbers of one row: results, median closing turns, mean score at the seal, decided share."""
    seals = [(r.at_seal, r.final) for r in races if r.at_seal is not None]

    def median(values: list[int]) -> float | None:
        return statistics.median(values) if values else None

    def mean_pair(pairs: list[tuple[int, int]]) -> tuple[float, float] | None:
        return (sum(a for a, _ in pairs) / len(pairs), sum(b for _, b in pairs) / len(pairs)) if pairs else None

    return {
        "matches": len(races),
        "wins": sum(r.result == 1 for r in races),
        "draws": sum(r.result == 0 for r in races),
        "losses": sum(r.result == -1 for r in races),
        "closed_ours": median([r.closed[0] for r in races if r.closed[0] is not None]),
        "closed_theirs": median([r.closed[1] for r in races if r.closed[1] is not None]),
        "sealed": len(seals),
        "seal_score": mean_pair([seal for seal, _ in seals]),
        "decided": sum(bool(r.decided_at_seal) for r in races),
        "after_seal": mean_pair([(final[0] - seal[0], final[1] - seal[1]) for seal, final in seals]),
    }


def match(bot: str, seat: int, seed: int) -> Race:
    from agent.games.hive.opponents.bots import make_bot
    from agent.games.hive.opponents.sim import play

    probe = RaceProbe()
    result = play((make_bot("ours", seed), make_bot(bot, seed + 7919)), seed, swap=seat == 1, observe=probe)
    return from_probe(probe, seat, result.scores, result.turns)


def row(bot: str, seat: int, s: dict[str, object]) -> str:
    def turn(value: object) -> str:
        return "-" if value is None else f"{value:.0f}"

    def pair(value: object) -> str:
        return f"{value[0]:.1f} - {value[1]:.1f}" if isinstance(value, tuple) else "-"

    return (f"| `{bot}` | P{seat} | {s['wins']} / {s['draws']} / {s['losses']} | {turn(s['closed_ours'])} / "
            f"{turn(s['closed_theirs'])} | {pair(s['seal_score'])} | {pair(s['after_seal'])} | "
            f"{s['decided']} of {s['sealed']} |")


def main(argv: list[str] | None = None) -> int:
    from agent.games.hive.opponents.counterbots import RECIPES

    p = argparse.ArgumentParser(prog="python -m benchmarks.hive.bench_race", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", "--matches", type=int, default=24, help="seeds per bot and seat")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=31000)
    p.add_argument("--bots", default=",".join(name for name, r in RECIPES.items() if r.ring_siege))
    args = p.parse_args(argv)
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    tasks = [(bot, seat, seed) for bot in bots for seat in (0, 1)
             for seed in range(args.seed, args.seed + args.matches)]
    with ProcessPoolExecutor(args.jobs) as pool:
        races = list(pool.map(match, *zip(*tasks, strict=True), chunksize=2))
    by_cell: dict[tuple[str, int], list[Race]] = {}
    for (bot, seat, _), race in zip(tasks, races, strict=True):
        by_cell.setdefault((bot, seat), []).append(race)

    print(f"Ours against each bot, {args.matches} seeds per seat from {args.seed}; turns are the arena's "
          "(a round is 10)")
    print("| B | our seat | wins / draws / losses | ring closed, median turn: ours / theirs "
          "| score at the seal, ours - theirs | points after it, ours - theirs | ended as at the seal |")
    print("|---|---|---|---|---|---|---|")
    for bot in bots:
        for seat in (0, 1):
            print(row(bot, seat, summary(by_cell[bot, seat])))
    total = summary(races)
    print(f"All {total['matches']} matches: {total['wins']} / {total['draws']} / {total['losses']}; "
          f"sealed {total['sealed']}, of them ended as at the seal {total['decided']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
