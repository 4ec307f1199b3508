"""Our hive against wall builders: what the map says about its surroundings. Pure functions of
the world model; the strategy's hive guard and relay act on them (strategy.py).

The fortress agents park bees next to our hive and wall in what is left of its ring. A wall stops
bees, not flowers: a carrier may drop its flower on any free cell, and a bee of ours next to the
hive picks it up and delivers it over the walls (the relay).
"""

from __future__ import annotations

from agent.games.hive.paths import BLOCKED, COST_FREE, COST_WALL, INF, NEIGHBOURS, distance_field
from agent.games.hive.rules import CELLS, COLS, ROWS, Cell, is_bee, owner
from agent.games.hive.world import FRESH_BEE, WorldModel

GUARD_RADIUS = 3
"""An enemy bee this close to our hive (Chebyshev) is taken for a wall builder. Only one in
its ring (radius 1) was as good on seeds 3000-3011 but clearly worse on 4000-4011 (the guard
came too late), and no better against the agents that only scout near our hive."""


def threat(world: WorldModel) -> bool:
    """Enemy bees seen lately near our hive, or walls already in its ring."""
    hr, hc = divmod(world.hive, COLS)
    cells = world.cells
    for r in range(max(0, hr - GUARD_RADIUS), min(ROWS, hr + GUARD_RADIUS + 1)):
        for c in range(max(0, hc - GUARD_RADIUS), min(COLS, hc + GUARD_RADIUS + 1)):
            i = r * COLS + c
            cell = cells[i]
            if cell == Cell.WALL and max(abs(r - hr), abs(c - hc)) <= 1:
                return True
            if is_bee(cell) and owner(cell) == world.opponent and world.age(i) <= FRESH_BEE:
                return True
    return False


def lane_walls(world: WorldModel) -> dict[int, int]:
    """Walls within two cells of our hive, ranked: those on the cheapest way in first. Any at
    all means a wall builder is at work (our own bees never build there)."""
    hr, hc = divmod(world.hive, COLS)
    costs = bytearray(CELLS)
    cells = world.cells
    for i in range(CELLS):
        cell = cells[i]
        costs[i] = BLOCKED if cell >= Cell.HIVE_0 else (COST_WALL if cell == Cell.WALL else COST_FREE)
    home = distance_field(costs, [world.hive])
    ranks: dict[int, int] = {}
    for r in range(max(0, hr - 2), min(ROWS, hr + 3)):
        for c in range(max(0, hc - 2), min(COLS, hc + 3)):
            i = r * COLS + c
            if cells[i] == Cell.WALL:
                ranks[i] = home[i]
    return ranks


def receivers(world: WorldModel, bee: int) -> list[int]:
    """Cells of our empty-handed bees (other than ``bee``) next to our hive: a carrier kept out
    by walls drops its flower beside one of them, which picks it up and delivers it."""
    ring = set(NEIGHBOURS[world.hive])
    mine = int(Cell.BEE_0 + world.player)
    # The map must agree: a bee we last saw there, not one that has left since.
    return [b.position for b in world.bees
            if b.index != bee and not b.carrying and b.position in ring and world.cells[b.position] == mine]


def walled_out(world: WorldModel, me: int) -> bool:
    """Our hive is threatened and no free cell beside it can be reached over free cells.

    Against walls at our hive, our empty-handed bees in the ring are guards holding their cells:
    they do not step aside, so a way in through one of them is no way in. Without walls there
    (the racers build none) a bee of ours in the ring is only passing through."""
    if not threat(world):
        return False
    cells = world.cells
    mine = (int(Cell.BEE_0 + world.player), int(Cell.BEE_0_WITH_FLOWER + world.player))
    costs = bytearray(CELLS)
    for i in range(CELLS):
        if cells[i] == Cell.EMPTY or cells[i] in mine:
            costs[i] = COST_FREE
    if lane_walls(world):
        for guard in receivers(world, -1):
            costs[guard] = BLOCKED
    costs[me] = COST_FREE
    entries = [i for i in NEIGHBOURS[world.hive] if cells[i] == Cell.EMPTY and world.known(i)]
    return not entries or distance_field(costs, entries, until={me})[me] >= INF


__all__ = ["GUARD_RADIUS", "lane_walls", "receivers", "threat", "walled_out"]
