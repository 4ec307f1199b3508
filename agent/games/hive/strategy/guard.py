"""Our hive against wall builders: what the map says about its surroundings. Pure functions of
the world model; the strategy's hive guard and relay act on them (strategy.py).

The fortress agents park bees next to our hive and wall in what is left of its ring. A wall stops
bees, not flowers: a carrier may drop its flower on any free cell, and a bee of ours next to the
hive picks it up and delivers it over the walls (the relay).
"""

from __future__ import annotations

from agent.games.hive.rules import CELLS, COLS, ROWS, Cell, is_bee, owner
from agent.games.hive.strategy.paths import BLOCKED, COST_FREE, COST_WALL, INF, NEIGHBOURS, distance_field
from agent.games.hive.strategy.world import FRESH_BEE, WorldModel

GUARD_RADIUS = 3
"""An enemy bee this close to our hive (Chebyshev) is taken for a wall builder. Only one in
its ring (radius 1) was as good on seeds 3000-3011 but clearly worse on 4000-4011 (the guard
came too late), and no better against the agents that only scout near our hive."""


INCOMING_RADIUS = 6
INCOMING_BEES = 2
"""Two empty-handed enemy bees seen lately this close to our hive (Chebyshev) are a siege on its
way: a forager passes alone, a blockade comes as a group. Against the counter-bot ``siege-ring``
the guard triggered at three cells arrived after their raiders had sealed our ring."""


def incoming(world: WorldModel) -> bool:
    """At least INCOMING_BEES empty-handed enemy bees seen lately within INCOMING_RADIUS of our hive."""
    hr, hc = divmod(world.hive, COLS)
    enemy = int(Cell.BEE_0 + world.opponent)
    cells = world.cells
    count = 0
    for r in range(max(0, hr - INCOMING_RADIUS), min(ROWS, hr + INCOMING_RADIUS + 1)):
        for c in range(max(0, hc - INCOMING_RADIUS), min(COLS, hc + INCOMING_RADIUS + 1)):
            i = r * COLS + c
            if cells[i] == enemy and world.age(i) <= FRESH_BEE:
                count += 1
                if count >= INCOMING_BEES:
                    return True
    return False


def holders(world: WorldModel) -> list[int]:
    """Cells of our hive's ring where an enemy bee was seen lately: it holds the cell for a siege
    and does not step aside, so a carrier's way in through it is no way in."""
    enemy = (int(Cell.BEE_0 + world.opponent), int(Cell.BEE_0_WITH_FLOWER + world.opponent))
    return [i for i in NEIGHBOURS[world.hive] if world.cells[i] in enemy and world.age(i) <= FRESH_BEE]


def threat(world: WorldModel, early: bool = False) -> bool:
    """Enemy bees seen lately near our hive, or walls already in its ring; with ``early``, also
    a siege on its way (``incoming``)."""
    if early and incoming(world):
        return True
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


def _near_hive(world: WorldModel) -> list[int]:
    """The cells within two steps of our hive (in the arena)."""
    hr, hc = divmod(world.hive, COLS)
    return [r * COLS + c for r in range(max(0, hr - 2), min(ROWS, hr + 3))
            for c in range(max(0, hc - 2), min(COLS, hc + 3))]


def walls_near(world: WorldModel) -> bool:
    """A wall within two cells of our hive: a wall builder is at work (our bees never build
    there). Cheap: asked on every carrier's turn."""
    cells = world.cells
    return any(cells[i] == Cell.WALL for i in _near_hive(world))


def lane_walls(world: WorldModel) -> dict[int, int]:
    """Walls within two cells of our hive, ranked: those on the cheapest way in first."""
    costs = bytearray(CELLS)
    cells = world.cells
    for i in range(CELLS):
        cell = cells[i]
        costs[i] = BLOCKED if cell >= Cell.HIVE_0 else (COST_WALL if cell == Cell.WALL else COST_FREE)
    home = distance_field(costs, [world.hive])
    return {i: home[i] for i in _near_hive(world) if cells[i] == Cell.WALL}


def receivers(world: WorldModel, bee: int) -> list[int]:
    """Cells of our empty-handed bees (other than ``bee``) next to our hive: a carrier kept out
    by walls drops its flower beside one of them, which picks it up and delivers it."""
    ring = set(NEIGHBOURS[world.hive])
    mine = int(Cell.BEE_0 + world.player)
    # The map must agree: a bee we last saw there, not one that has left since.
    return [b.position for b in world.bees
            if b.index != bee and not b.carrying and b.position in ring and world.cells[b.position] == mine]


def walled_out(world: WorldModel, me: int, early: bool = False) -> bool:
    """Our hive is threatened and no free cell beside it can be reached over free cells and our
    own bees (without walls near our hive a bee of ours in its ring is only passing through).
    With walls near it the carrier relays anyway (``walls_near``; strategy.py): our bees in the
    ring then hold their cells and are no way in."""
    if not threat(world, early):
        return False
    cells = world.cells
    mine = (int(Cell.BEE_0 + world.player), int(Cell.BEE_0_WITH_FLOWER + world.player))
    costs = bytearray(CELLS)
    for i in range(CELLS):
        if cells[i] == Cell.EMPTY or cells[i] in mine:
            costs[i] = COST_FREE
    costs[me] = COST_FREE
    entries = [i for i in NEIGHBOURS[world.hive] if cells[i] == Cell.EMPTY and world.known(i)]
    return not entries or distance_field(costs, entries, until={me})[me] >= INF


__all__ = ["GUARD_RADIUS", "INCOMING_BEES", "INCOMING_RADIUS", "holders", "incoming", "lane_walls", "receivers",
           "threat", "walled_out", "walls_near"]
