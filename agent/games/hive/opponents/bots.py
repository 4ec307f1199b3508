"""Players for the arena: our strategy and the opponents it is measured against.

Each player turns one view into one command and keeps whatever memory it needs; none does I/O.
- ``ours``: the offline strategy (agent.games.hive.strategy.strategy).
- ``forager``: the same strategy with aggression 0.1: five foragers, no raider (a strong greedy bot).
- ``random``: any of the 32 commands, uniformly.
- ``mover``: random moves only (a bee that never forages).
- ``example``: plays like the arena's example agents: forage an adjacent flower, deliver when
  next to its own hive, otherwise a random move.
- the counter-bots of agent.games.hive.opponents.counterbots (``siege``, ``hunter``, ``mirror``, ...): built
  to beat ours.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from agent.games.hive.opponents.counterbots import COUNTER_BOTS
from agent.games.hive.protocol import BeeView
from agent.games.hive.rules import OFFSETS, Action, Cell
from agent.games.hive.strategy.plan import Plan
from agent.games.hive.strategy.strategy import Strategy, new_strategy


class Player(Protocol):
    name: str

    def decide(self, view: BeeView) -> tuple[int, int]: ...

    def bad_line(self, line: str, error: str) -> None: ...


class _Quiet:
    def bad_line(self, line: str, error: str) -> None:
        """Bots ignore lines they could not read (the client already answered safely)."""


class RandomBot(_Quiet):
    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def decide(self, view: BeeView) -> tuple[int, int]:
        return self.rng.randrange(4), self.rng.randrange(8)


class MoverBot(_Quiet):
    name = "mover"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def decide(self, view: BeeView) -> tuple[int, int]:
        return Action.MOVE, self.rng.randrange(8)


class ExampleBot(_Quiet):
    """The example agents' rule: first matching neighbour in N, NE, ... order, else a random move."""

    name = "example"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def decide(self, view: BeeView) -> tuple[int, int]:
        wanted = Cell.HIVE_0 + view.player if view.carrying else Cell.FLOWER
        for direction, (dr, dc) in enumerate(OFFSETS):
            if view.at(dr, dc) == wanted:
                return Action.FORAGE, direction
        return Action.MOVE, self.rng.randrange(8)


class OurBot(_Quiet):
    """The offline strategy as a player; the world model starts with the first view's seat."""

    name = "ours"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.strategy: Strategy | None = None  # created on the first view, when the seat is known

    def decide(self, view: BeeView) -> tuple[int, int]:
        if self.strategy is None or self.strategy.world.player != view.player:
            self.strategy = new_strategy(view.player, self.seed)
        decision = self.strategy.decide(view)
        return decision.action, decision.direction


class ForagerBot(OurBot):
    """Our strategy told to be peaceful: no bee raids, all five forage."""

    name = "forager"

    def decide(self, view: BeeView) -> tuple[int, int]:
        if self.strategy is None or self.strategy.world.player != view.player:
            self.strategy = new_strategy(view.player, self.seed, Plan(bees=[], aggression=0.1))
        return super().decide(view)


BOTS: dict[str, Callable[[int | None], Player]] = {
    "ours": OurBot,
    "forager": ForagerBot,
    "random": RandomBot,
    "mover": MoverBot,
    "example": ExampleBot,
    **COUNTER_BOTS,
}


def make_bot(name: str, seed: int | None = None) -> Player:
    try:
        factory = BOTS[name]
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; choose from {', '.join(BOTS)}") from None
    return factory(seed)
