"""How a bee gets somewhere: the eight cells around it, entry costs of the map, the best step
along a distance field, and a command that changes nothing. The strategy (strategy.py) decides
where to go; this is the part every role shares. Pure, no I/O.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from agent.games.hive.protocol import BeeView
from agent.games.hive.rules import CELLS, COLS, OFFSETS, Action, Cell, owner
from agent.games.hive.strategy.paths import BLOCKED, COST_BEE, COST_FLOWER, COST_FREE, COST_WALL, INF, NEIGHBOURS
from agent.games.hive.strategy.world import FRESH_BEE, WorldModel


@dataclass(frozen=True, slots=True)
class Decision:
    action: int
    direction: int
    reason: str
    target: int | None = None


@dataclass
class Mover:
    """One player's bees on the move; the strategy builds on it. Keep one per match."""

    world: WorldModel
    rng: random.Random = field(default_factory=random.Random)
    stuck: dict[int, int] = field(default_factory=dict)
    """bee -> how many of its turns in a row it has not moved."""

    @staticmethod
    def _around(view: BeeView) -> list[tuple[int, int]]:
        """(cell value, cell index or -1 outside) of the eight neighbours, in Direction order."""
        result = []
        for dr, dc in OFFSETS:
            r, c = view.row + dr, view.col + dc
            index = r * COLS + c if 0 <= r < 25 and 0 <= c < COLS else -1
            result.append((view.at(dr, dc), index))
        return result

    @staticmethod
    def _settle(me: int) -> set[int]:
        """The cells a step decision reads from a field: the bee's own and its neighbours'."""
        return {me, *NEIGHBOURS[me]}

    @staticmethod
    def _adjacent(around: list[tuple[int, int]], wanted: set[int]) -> int | None:
        for direction, (cell, _) in enumerate(around):
            if cell in wanted:
                return direction
        return None

    def _knockable(self, around: list[tuple[int, int]]) -> int | None:
        """The direction of an enemy carrier beside us whose flower can fall somewhere: a knock
        drops it on an empty cell beside the carrier, and with none it does nothing (a guard of
        ours knocked a carrier walled in our ring, in vain, for hundreds of turns)."""
        world = self.world
        carrier = int(Cell.BEE_0_WITH_FLOWER + world.opponent)
        for direction, (cell, index) in enumerate(around):
            if cell == carrier and any(world.cells[n] == Cell.EMPTY for n in NEIGHBOURS[index]):
                return direction
        return None

    def _costs(self, me: int, wall_cost: int = COST_WALL) -> bytearray:
        """Entry cost of every cell as this bee sees the map now."""
        world = self.world
        costs = bytearray(CELLS)
        cells = world.cells
        seen = world.seen
        turn = world.turn
        own_positions = {b.position for b in world.bees}
        player = world.player
        for i in range(CELLS):
            cell = cells[i]
            if cell == Cell.EMPTY:
                costs[i] = COST_FREE
            elif cell == Cell.FLOWER:
                costs[i] = COST_FLOWER
            elif cell == Cell.WALL:
                costs[i] = wall_cost
            elif cell >= Cell.HIVE_0:
                costs[i] = BLOCKED
            elif owner(cell) == player:
                costs[i] = COST_BEE if i in own_positions else COST_FREE
            else:
                costs[i] = COST_BEE if turn - seen[i] <= FRESH_BEE else COST_FREE
        for i in own_positions:
            if i != me and costs[i] == COST_FREE:
                costs[i] = COST_BEE
        costs[me] = COST_FREE
        return costs

    def _step(self, view: BeeView, around: list[tuple[int, int]], dist: list[int], why: str,
              target: int) -> Decision:
        """The best first step along a distance field; breaks walls in the way, never flowers."""
        here = dist[view.row * COLS + view.col]
        best_dir, best_value = None, INF
        wall_dir, wall_value = None, INF
        ties: list[int] = []
        for direction, (cell, index) in enumerate(around):
            if index < 0:
                continue
            value = dist[index]
            if cell == Cell.EMPTY:
                if value < best_value:
                    best_dir, best_value, ties = direction, value, [direction]
                elif value == best_value:
                    ties.append(direction)
            elif cell == Cell.WALL and value < wall_value:
                wall_dir, wall_value = direction, value
        if wall_dir is not None and wall_value < best_value and wall_value < here:
            return Decision(Action.GUARD, wall_dir, f"{why}: break a wall in the way", target)
        if best_dir is None:
            return self._wait(view, around, f"{why}: boxed in")
        if best_value > here and self.stuck.get(view.bee, 0) < 2:
            return self._wait(view, around, f"{why}: waiting for the way to clear")
        direction = self.rng.choice(ties) if len(ties) > 1 else best_dir
        return Decision(Action.MOVE, direction, why, target)

    def _wait(self, view: BeeView, around: list[tuple[int, int]], why: str) -> Decision:
        """A command that changes nothing: a move into an occupied cell or off the edge."""
        for direction, (cell, _) in enumerate(around):
            if cell != Cell.EMPTY:
                return Decision(Action.MOVE, direction, why)
        # Every neighbour is empty (cannot happen when boxed in); a step is harmless then.
        return Decision(Action.MOVE, self.rng.randrange(8), why)


__all__ = ["Decision", "Mover"]
