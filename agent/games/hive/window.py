"""Which of our raiders acts right after their bees open the walls of their ring (issue 31).

Turns alternate bee by bee, so between their guard opening a wall of their sealed ring and their
carrier walking in through it, a fixed few of our bees act, set by the bees' numbers. Of our
raiders, the one acting first after their guard's turn can rebuild that wall in time, but only
if it stands beside it. The walls their guard opens are those beside its cell in their ring,
and the front post (blockade.front) touches all three ring cells on the field side, where their
guard usually stands: so the raider acting first after their guard belongs at the front.

The views do not say which enemy bee is which, but they show which of our raiders is that bee:
a wall of their ring that our map held as a wall and our raider's view now shows open was
opened since our last look, and the raider that keeps being the first to see such openings is the
one whose turn follows theirs. Against the ring sieges whose guard our raiders can answer (their
bee acting in that window is a raider of ours), that raider at the front won 30 of 48 matches
against `siege-ring-012` and 30 of 48 against `-014` where the shortest walks won 22 and 22
(an oracle with their numbers; docs/hive.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.games.hive import blockade
from agent.games.hive.paths import NEIGHBOURS
from agent.games.hive.rules import Cell

MIN_OPENINGS = 4
"""Openings a raider must have seen first before it is moved: a break succeeds one try in two,
and a swap of posts opens the two posts for a few turns."""
LEAD = 2
"""...and at least this many times as many as any other raider."""


def front_walls(hive: int) -> frozenset[int]:
    """The ring cells beside the front post: the walls a raider there rebuilds."""
    front = blockade.front(hive)
    return frozenset(c for c in blockade.ring(hive) if c in NEIGHBOURS[front])


@dataclass
class FirstSight:
    """Per raider of ours, how many walls beside the front post of their hive it was the first of
    our bees to see opened."""

    counts: dict[int, int] = field(default_factory=dict)

    def walls_before(self, cells: bytearray, hive: int) -> frozenset[int]:
        """The walls our map shows there before a view is merged."""
        return frozenset(c for c in front_walls(hive) if cells[c] == Cell.WALL)

    def merged(self, bee: int, walls: frozenset[int], cells: bytearray) -> int:
        """After ``bee``'s view is merged into the map: count the walls it shows open (empty, or a
        bee of either side standing there) and return how many."""
        opened = sum(1 for c in walls if cells[c] != Cell.WALL)
        if opened:
            self.counts[bee] = self.counts.get(bee, 0) + opened
        return opened

    def front_raider(self, raiders: set[int]) -> int | None:
        """The raider to stand at the front: the one that saw at least ``MIN_OPENINGS`` openings
        first and ``LEAD`` times as many as any other raider; None while none stands out."""
        seen = sorted(((self.counts.get(b, 0), b) for b in raiders), reverse=True)
        if not seen or seen[0][0] < MIN_OPENINGS:
            return None
        if len(seen) > 1 and seen[0][0] < LEAD * seen[1][0]:
            return None
        return seen[0][1]


def with_front(posts: dict[int, int], hive: int, bee: int | None) -> dict[int, int]:
    """``posts`` (raider -> post) with ``bee`` at the front post, swapped with the raider it had;
    unchanged when ``bee`` is None, no raider of these posts, or nobody has the front."""
    front = blockade.front(hive)
    if bee is None or bee not in posts or posts[bee] == front:
        return posts
    holder = next((b for b, p in posts.items() if p == front), None)
    if holder is None:
        return posts
    swapped = dict(posts)
    swapped[holder], swapped[bee] = posts[bee], front
    return swapped


__all__ = ["LEAD", "MIN_OPENINGS", "FirstSight", "front_walls", "with_front"]
