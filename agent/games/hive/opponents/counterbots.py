"""Counter-bots: opponents written to beat *our* strategy, one for each thing it relies on.

Our strategy wins with three raiders blockading the enemy hive and two foragers, carriers that
break walls in their way or pass their flower over them to a guard in our ring, and a guard that
holds a ring cell. Each bot here attacks one of those (issue 31); measured against ours in
docs/hive.md, worst case first.

- ``siege``: four raiders blockade our hive (our own blockade, turned on us), one forager.
- ``siege-ring``: three raiders standing *in* our ring (north, south, the field-side middle) and
  walling the rest, two foragers: the double siege an unseen 2022 agent won with.
- ``siege-twin``: ``siege-ring`` with our own choice of foragers by seat (two bees whose turns
  follow each other, strategy.DEFAULT_RAIDERS), so its guard and carrier walk in through our
  blockade on the same timing as ours: our strategy with its raiders in our ring, near self-play.
- ``siege-ring-ABC`` (each other choice of three raiders, e.g. ``siege-ring-134``): ``siege-ring``
  with raiders A, B and C. Which enemy bees act between two of ours is fixed by the bees' numbers
  (turns alternate bee by bee), so each choice is another timing of the same siege against our
  guard and carrier, and of their own carriers against our blockade.
- ``siege-late``: ``siege-ring`` from turn 1,500 on, everybody foraging before (timing).
- ``hunter``: three bees lie in wait two steps out from our hive and knock our carriers, two forage.
- ``breaker``: two bees break the walls of our blockade at their hive, three forage.
- ``denier``: three bees destroy the flowers on our half of the arena, two forage.
- ``rush``: five foragers at once (the ``forager`` bot is the same), then ``siege-ring`` from turn 600.
- ``mirror``: our strategy as it was before it learnt to adapt (``Strategy.adaptive`` off).

Pure decision logic on top of the strategy's pieces; no I/O.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations

from agent.games.hive.protocol import BeeView
from agent.games.hive.rules import BEES, COLS, Action, Cell
from agent.games.hive.strategy import blockade
from agent.games.hive.strategy.paths import NEIGHBOURS, distance_field
from agent.games.hive.strategy.plan import Role
from agent.games.hive.strategy.strategy import DEFAULT_RAIDERS, Decision, Strategy
from agent.games.hive.strategy.world import FRESH_BEE, new_world

Job = str
"""A counter-bot's job for one bee: a strategy role, or ``hunt`` / ``deny``."""


@dataclass
class CounterStrategy(Strategy):
    """Our strategy with other jobs per bee; before ``start`` every bee forages."""

    jobs: dict[int, Job] = field(default_factory=dict)
    start: int = 0
    ring_siege: bool = False
    """Raiders stand in the ring cells (blockade.ring_posts) instead of our posts."""

    def job_of(self, bee: int) -> Job:
        return self.jobs.get(bee, "forage") if self.world.turn >= self.start else "forage"

    def role_of(self, bee: int) -> Role:
        job = self.job_of(bee)
        return job if job in ("raid", "defend", "explore") else "forage"  # type: ignore[return-value]

    @property
    def aggression(self) -> float:
        return 0.5

    def post_order(self, hive: int) -> list[int]:
        return blockade.ring_posts(hive) if self.ring_siege else blockade.posts(hive)

    def _decide(self, view: BeeView, me: int) -> Decision:
        job = self.job_of(view.bee)
        if not view.carrying and job == "hunt":
            return self._hunt(view, me) or super()._decide(view, me)
        if not view.carrying and job == "deny":
            return self._deny(view, me) or super()._decide(view, me)
        return super()._decide(view, me)

    def _hunt(self, view: BeeView, me: int) -> Decision | None:
        """Knock the enemy's carriers: go for the nearest one seen, else lie in wait two steps out
        from their hive on the field side, where every carrier comes by."""
        world = self.world
        around = self._around(view)
        knock = self._knockable(around)
        if knock is not None:
            return Decision(Action.GUARD, knock, "knock a carrier")
        flower = self._adjacent(around, {int(Cell.FLOWER)})
        if flower is not None:
            return Decision(Action.FORAGE, flower, "pick up a knocked flower")
        carriers = world.enemy_carriers(FRESH_BEE)
        targets = [n for c in carriers for n in NEIGHBOURS[c] if world.cells[n] == Cell.EMPTY]
        if not targets:
            hc = world.enemy_hive % COLS
            targets = [i for i in blockade.outer(world.enemy_hive)
                       if abs(i % COLS - hc) == 2 and world.cells[i] in (Cell.EMPTY, Cell.BEE_0 + world.player)]
        if me in targets:
            return self._wait(view, around, "lie in wait")
        if not targets:
            return None
        dist = distance_field(self._costs(me), targets, until=self._settle(me))
        return self._step(view, around, dist, "hunt carriers", world.enemy_hive)

    def _deny(self, view: BeeView, me: int) -> Decision | None:
        """Destroy the flowers on the enemy's half (guarding one breaks it one try in two)."""
        world = self.world
        ec = world.enemy_hive % COLS

        def theirs(i: int) -> bool:
            return abs(i % COLS - ec) < COLS // 2

        around = self._around(view)
        for direction, (cell, index) in enumerate(around):
            if cell == Cell.FLOWER and theirs(index):
                return Decision(Action.GUARD, direction, "destroy a flower")
        flowers = [f for f in world.flowers() if theirs(f)]
        if not flowers:
            return None
        costs = self._costs(me)
        dist = distance_field(costs, [n for f in flowers for n in NEIGHBOURS[f]], until=self._settle(me))
        return self._step(view, around, dist, "go destroy flowers", world.enemy_hive)


@dataclass(frozen=True)
class Recipe:
    jobs: dict[int, Job]
    start: int = 0
    ring_siege: bool = False
    adaptive: bool = True
    seat_raiders: bool = False
    """Raiders by seat as ours (DEFAULT_RAIDERS) instead of ``jobs``."""

    def jobs_for(self, player: int) -> dict[int, Job]:
        if self.seat_raiders:
            return dict.fromkeys(DEFAULT_RAIDERS[player], "raid")
        return dict(self.jobs)


RECIPES: dict[str, Recipe] = {
    "siege": Recipe({0: "raid", 1: "raid", 3: "raid", 4: "raid"}),
    "siege-ring": Recipe({0: "raid", 2: "raid", 4: "raid"}, ring_siege=True),
    "siege-twin": Recipe({}, ring_siege=True, seat_raiders=True),
    **{f"siege-ring-{a}{b}{c}": Recipe({a: "raid", b: "raid", c: "raid"}, ring_siege=True)
       for a, b, c in combinations(range(BEES), 3) if (a, b, c) != (0, 2, 4)},
    "siege-late": Recipe({0: "raid", 2: "raid", 4: "raid"}, start=1500, ring_siege=True),
    "hunter": Recipe({0: "hunt", 2: "hunt", 4: "hunt"}),
    "breaker": Recipe({1: "defend", 3: "defend"}),
    "denier": Recipe({0: "deny", 2: "deny", 4: "deny"}),
    "rush": Recipe({0: "raid", 2: "raid", 4: "raid"}, start=600, ring_siege=True),
    "mirror": Recipe({0: "raid", 2: "raid", 4: "raid"}, adaptive=False),
}


class CounterBot:
    """One counter-bot as a player (bots.Player); the strategy starts with the first view's seat.
    ``recipe`` plays one that is not in the pool (benchmarks.hive.bench_roles: our own roles varied)."""

    def __init__(self, name: str, seed: int | None = None, recipe: Recipe | None = None) -> None:
        self.name = name
        self.recipe = recipe or RECIPES[name]
        self.seed = seed
        self.strategy: CounterStrategy | None = None

    def decide(self, view: BeeView) -> tuple[int, int]:
        if self.strategy is None or self.strategy.world.player != view.player:
            r = self.recipe
            self.strategy = CounterStrategy(world=new_world(view.player), rng=random.Random(self.seed),
                                            jobs=r.jobs_for(view.player), start=r.start,
                                            ring_siege=r.ring_siege)
            self.strategy.adaptive = r.adaptive
        decision = self.strategy.decide(view)
        return decision.action, decision.direction

    def bad_line(self, line: str, error: str) -> None:
        """Ignored, as by every bot (the client already answered safely)."""


def _factory(name: str) -> Callable[[int | None], CounterBot]:
    def make(seed: int | None = None) -> CounterBot:
        return CounterBot(name, seed)

    return make


COUNTER_BOTS: dict[str, Callable[[int | None], CounterBot]] = {name: _factory(name) for name in RECIPES}

__all__ = ["COUNTER_BOTS", "RECIPES", "CounterBot", "CounterStrategy", "Recipe"]
