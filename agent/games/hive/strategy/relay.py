"""The timed relay: scoring while the enemy holds our hive sealed (issue 31). Pure geometry and
bookkeeping over the world model; the strategy's carrier and guard act on it (strategy.py).

In a double siege both hives are sealed by turn 300-400: their bees stand in our ring, walls
close the rest of it, and a wall next to our guard (our bee holding a ring cell) is rebuilt by a
bee of theirs beside it as soon as we break it. Then nothing is scored for the 1,000 turns the
rules wait for a point. But a broken wall is an empty cell until their rebuilder's turn, and
turns alternate bee by bee: our guard breaks a wall next to it, a carrier of ours waiting beside
that wall drops its flower there on its own turn, and the flower cannot be walled over; the
guard picks it up on its next turn and delivers it on the one after. It works when no bee of
theirs beside that wall moves between the guard's turn and the carrier's: which bees those are
the views do not tell, so the carrier keeps count (``Openings``) and a wall it keeps finding
rebuilt is left alone for a while in favour of another.

A flower dropped there still lies beside their bees until our guard's next turn, and every bee of
theirs moves in between: a sealer that picks such flowers up (our own raiders do, blockade.py)
takes them all. A carrier that *walks in* cannot be taken, only knocked (one try in two, and only
onto an empty cell beside it). So the walls of the ring itself come first: the carrier waits
beside one (``walk_in_spots``), steps into the cell our guard opens and delivers from there. When
no ring wall has a free cell beside it, the carrier first steps into an opened cell outside the
ring that lies beside a ring wall (``beside_ring_wall``), and waits there for that wall to be
opened. Which ring cell our guard holds decides whether it has ring walls beside it at all
(``ring_cell_worth``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.games.hive.rules import ROUND, Cell
from agent.games.hive.strategy import guard
from agent.games.hive.strategy.paths import NEIGHBOURS
from agent.games.hive.strategy.world import FRESH_BEE, WorldModel

MISSES = 6
"""Tries after which a wall found rebuilt every time is left alone: a break succeeds one try in
two, so a wall nobody rebuilds in time is found walled six times running once in 64."""
SHUN_TURNS = 300
"""How long such a wall is left alone (their bees may have moved on by then)."""


def sealed(world: WorldModel) -> bool:
    """An enemy bee holds a cell of our ring and not one of its cells is free: a carrier can
    score only through a bee of ours in the ring."""
    if not guard.holders(world):
        return False
    return all(world.cells[i] != Cell.EMPTY for i in NEIGHBOURS[world.hive])


def drop_cells(world: WorldModel, receivers: list[int]) -> set[int]:
    """Cells beside our receivers where a flower can be dropped for them (the hive aside)."""
    return {n for r in receivers for n in NEIGHBOURS[r]} - {world.hive}


def waiting_spots(world: WorldModel, receivers: list[int], me: int, enemies: set[int],
                  avoid: frozenset[int] = frozenset()) -> set[int]:
    """Where a carrier waits for a wall beside a receiver to be broken: next to such a wall (not
    one to ``avoid``), outside our ring, and out of the reach of ``enemies`` (their bees' cells:
    they knock carriers)."""
    ring = set(NEIGHBOURS[world.hive])
    danger = {n for e in enemies for n in NEIGHBOURS[e]}
    cells = world.cells
    spots = set()
    for w in drop_cells(world, receivers):
        if cells[w] != Cell.WALL or w in avoid:
            continue
        for n in NEIGHBOURS[w]:
            if (cells[n] == Cell.EMPTY or n == me) and n not in danger and n not in ring:
                spots.add(n)
    return spots


def ring_walls(world: WorldModel, receivers: list[int]) -> set[int]:
    """Walls of our ring beside our receivers: opened, a carrier steps in and delivers."""
    ring = set(NEIGHBOURS[world.hive])
    return {w for w in drop_cells(world, receivers) if w in ring and world.cells[w] == Cell.WALL}


def walk_in_spots(world: WorldModel, receivers: list[int], me: int, enemies: set[int],
                  avoid: frozenset[int] = frozenset()) -> set[int]:
    """Waiting spots (``waiting_spots``) beside a wall of our ring, from which a carrier walks in;
    the other spots only when there are none of these."""
    walls = ring_walls(world, receivers)
    outside = frozenset(w for w in drop_cells(world, receivers) if w not in walls)
    return (waiting_spots(world, receivers, me, enemies, avoid | outside)
            or waiting_spots(world, receivers, me, enemies, avoid))


def beside_ring_wall(world: WorldModel, cell: int, walls: set[int]) -> bool:
    """``cell`` (outside our ring) touches one of ``walls`` (``ring_walls``: ring walls beside a
    receiver): a carrier standing there walks in when our guard opens that wall."""
    return cell not in NEIGHBOURS[world.hive] and any(w in walls for w in NEIGHBOURS[cell])


def wall_to_open(world: WorldModel, me: int, bee: int, avoid: frozenset[int] = frozenset()) -> int | None:
    """For our guard ``bee`` at ``me``: the wall beside it (not one to ``avoid``) that a carrier
    of ours waits next to; walls of the ring first (the carrier walks in), then the fewest enemy
    bees beside it (each may take or break a flower); None if there is none."""
    carriers = {b.position for b in world.bees if b.carrying and b.index != bee}
    if not carriers:
        return None
    enemies = world.enemy_bees(FRESH_BEE)
    ring = set(NEIGHBOURS[world.hive])
    best: tuple[tuple[bool, int], int] | None = None
    for w in NEIGHBOURS[me]:
        if world.cells[w] != Cell.WALL or w in avoid:
            continue
        if not any(n in carriers for n in NEIGHBOURS[w]):
            continue
        rank = (w not in ring, sum(n in enemies for n in NEIGHBOURS[w]))
        if best is None or rank < best[0]:
            best = (rank, w)
    return None if best is None else best[1]


def ring_cell_worth(world: WorldModel, cell: int, enemies: set[int]) -> int:
    """How good a cell of our ring is for our guard to hold: how many other ring cells beside it
    are no bee of theirs (``enemies``); walled, each is a wall the guard can open for a carrier to
    walk in through. A middle cell of a side touches four, a corner two: a guard in a corner
    between two of their bees has no ring wall beside it, and a sealer takes every flower passed
    to it."""
    ring = NEIGHBOURS[world.hive]
    return sum(1 for n in NEIGHBOURS[cell] if n in ring and n not in enemies)


@dataclass
class Openings:
    """Which walls our guard broke for a carrier, and which ones the carrier kept finding rebuilt
    (a bee of theirs beside it moves between our guard's turn and the carrier's)."""

    tries: dict[int, int] = field(default_factory=dict)
    """wall -> turn of our guard's last try at it."""
    misses: dict[int, int] = field(default_factory=dict)
    shunned: dict[int, int] = field(default_factory=dict)
    """wall -> turn until which it is left alone."""

    def tried(self, wall: int, turn: int) -> None:
        self.tries[wall] = turn

    def seen_by_carrier(self, world: WorldModel, me: int) -> None:
        """A carrier's turn: each wall beside it that our guard tried within the last round is
        either open (the timing works there) or walled again (a miss)."""
        turn = world.turn
        for wall in NEIGHBOURS[me]:
            tried = self.tries.get(wall)
            if tried is None or turn - tried >= ROUND:
                continue
            del self.tries[wall]
            if world.cells[wall] != Cell.WALL:
                self.misses.pop(wall, None)
                continue
            self.misses[wall] = self.misses.get(wall, 0) + 1
            if self.misses[wall] >= MISSES:
                self.shunned[wall] = turn + SHUN_TURNS
                del self.misses[wall]

    def avoided(self, turn: int) -> frozenset[int]:
        """The walls left alone now."""
        return frozenset(w for w, until in self.shunned.items() if until > turn)


__all__ = ["MISSES", "SHUN_TURNS", "Openings", "beside_ring_wall", "drop_cells", "ring_cell_worth", "ring_walls",
           "sealed", "waiting_spots", "walk_in_spots", "wall_to_open"]
