"""The blockade of the enemy hive: where raiders stand and which cells they wall.

A bee cannot be pushed, knocked or broken: a raider standing in a cell next to the enemy hive
closes that cell for good, while a wall only holds until a guard breaks it (one try in two). The
cell just north and just south of a hive each touch four of the other ring cells, so two raiders
there are next to all six others: they wall them, and rebuild any one an enemy breaks on their
next turn, before the breaker (whose next turn is a full round away) can step in. A third raider
stands two steps out toward the field, where the carriers gather. Pure geometry.
"""

from __future__ import annotations

from itertools import permutations

from agent.games.hive.rules import COLS, ROWS, Cell
from agent.games.hive.strategy.paths import NEIGHBOURS


def ring(hive: int) -> list[int]:
    """The cells next to a hive, in the arena (a hive is never on the top or bottom edge)."""
    return list(NEIGHBOURS[hive])


def posts(hive: int) -> list[int]:
    """Cells for raiders to stand in, best first: north and south of the hive (each next to four
    other ring cells), then the *front*: two steps out toward the field, in the second ring, next to
    the three field-side ring cells; then the far side by the edge and the ring's corners.

    The front is a second-ring cell rather than the ring cell before it because the racers' carriers
    stood exactly there, breaking the field-side corners of the ring and stepping in: a raider in
    that cell closes the way, and the three ring cells it touches are walls two or three raiders can
    rebuild (the field-side ring cell touches all three raiders). Measured on the real arena against
    the 2022 racers, 120 matches each (docs/hive.md): 42 -> 83 % of matches won against
    ``epk_final``, 67 -> 84 % against ``epk_d4``, 58 -> 92 % against ``thinkemoji_d4``."""
    hr, hc = divmod(hive, COLS)
    toward_field = -1 if hc >= COLS // 2 else 1
    ordered = [(hr - 1, hc), (hr + 1, hc), (hr, hc + 2 * toward_field), (hr, hc - toward_field),
               (hr - 1, hc + toward_field), (hr + 1, hc + toward_field),
               (hr - 1, hc - toward_field), (hr + 1, hc - toward_field)]
    return [r * COLS + c for r, c in ordered if 0 <= r < ROWS and 0 <= c < COLS]


def front(hive: int) -> int:
    """The post two steps from the hive toward the field (see ``posts``)."""
    return posts(hive)[2]


def ring_posts(hive: int) -> list[int]:
    """Posts in the ring only (north, south, the field-side middle, the far side, the corners):
    the counter-bots' siege of our hive, with their bees standing in our ring cells."""
    hr, hc = divmod(hive, COLS)
    toward_field = -1 if hc >= COLS // 2 else 1
    front_cell = hr * COLS + hc + toward_field
    return [front_cell if p == front(hive) else p for p in posts(hive)]


def assign_posts(hive: int, raiders: dict[int, int], unusable: set[int],
                 candidates: list[int] | None = None) -> dict[int, int]:
    """Raider -> post, for raiders given as bee -> position. A raider standing on a post keeps
    it; the others share the remaining posts so that their walks are shortest in all. Only the
    best free posts (of ``candidates``, default ``posts``), one per raider, are used; posts in
    ``unusable`` (an enemy bee standing there) are skipped."""
    free = [p for p in (posts(hive) if candidates is None else candidates) if p not in unusable][:len(raiders)]
    assigned = {bee: position for bee, position in raiders.items() if position in free}
    open_posts = [p for p in free if p not in assigned.values()]
    waiting = [bee for bee in raiders if bee not in assigned]
    # At most five raiders: trying every order is cheap and beats taking posts one by one.
    best: tuple[tuple[int, int], tuple[int, ...]] | None = None
    for order in permutations(waiting, min(len(waiting), len(open_posts))):
        cost = (sum(chebyshev(raiders[b], p) for b, p in zip(order, open_posts, strict=False)),
                sum(manhattan(raiders[b], p) for b, p in zip(order, open_posts, strict=False)))
        if best is None or cost < best[0]:
            best = (cost, order)
    if best is not None:
        assigned.update(zip(best[1], open_posts, strict=False))
    return assigned


def manhattan(a: int, b: int) -> int:
    ar, ac = divmod(a, COLS)
    br, bc = divmod(b, COLS)
    return abs(ar - br) + abs(ac - bc)


def chebyshev(a: int, b: int) -> int:
    ar, ac = divmod(a, COLS)
    br, bc = divmod(b, COLS)
    return max(abs(ar - br), abs(ac - bc))


def to_wall(hive: int, me: int, held: set[int], raiders: set[int], enemies: set[int]) -> list[int]:
    """Ring cells this raider (at ``me``) should wall, most urgent first: those beside it that no
    raider holds or is heading for (``held``); first those with the most enemy bees (positions in
    ``enemies``) next to them, then those no other raider (positions in ``raiders``) can rebuild."""
    beside = set(NEIGHBOURS[me])
    cells = [cell for cell in ring(hive) if cell in beside and cell not in held and cell != me]

    def urgency(cell: int) -> tuple[int, int]:
        around = NEIGHBOURS[cell]
        return (-sum(1 for n in around if n in enemies), sum(1 for n in around if n in raiders and n != me))

    return sorted(cells, key=urgency)


def relay_drops(hive: int, me: int, cells: bytearray, holder: int) -> list[int]:
    """Flowers beside this raider (at ``me``) that lie beside a bee of theirs (cell value
    ``holder``) standing in their hive's ring: passed over our walls to a bee that delivers them
    on its next turn (their relay; our own carriers do the same). A raider breaks them first."""
    held = {i for i in ring(hive) if cells[i] == holder}
    return [n for n in NEIGHBOURS[me] if cells[n] == Cell.FLOWER and any(x in held for x in NEIGHBOURS[n])]


def drop_cells(hive: int, holder: int) -> list[int]:
    """Cells outside the ring beside ``holder`` (a bee of theirs that holds a cell of their own
    hive's ring): where their carriers drop flowers for it to deliver, over every ring wall."""
    ring_cells = set(ring(hive))
    return [n for n in NEIGHBOURS[holder] if n not in ring_cells and n != hive]


def enclosure(hive: int, holder: int) -> int | None:
    """The drop cell from which a raider, with the raiders at the north and south posts, can
    close or wall the most drop cells of ``holder``: so no flower can be passed to the holder.
    (The middle one alone left the cell in front of the hive to their carriers.) None for a
    holder by the edge, which nothing can be passed to."""
    drops = set(drop_cells(hive, holder))
    if not drops:
        return None
    by_posts = {n for p in posts(hive)[:2] for n in NEIGHBOURS[p]}

    def covered(cell: int) -> tuple[int, int]:
        return len(drops & ({cell} | set(NEIGHBOURS[cell]) | by_posts)), -manhattan(cell, hive)

    return max(sorted(drops), key=covered)


def outer(hive: int) -> list[int]:
    """The cells two steps from a hive (in the arena): where a carrier stands to break a ring wall."""
    hr, hc = divmod(hive, COLS)
    return [r * COLS + c for r in range(hr - 2, hr + 3) for c in range(hc - 2, hc + 3)
            if 0 <= r < ROWS and 0 <= c < COLS and max(abs(r - hr), abs(c - hc)) == 2]


def outer_to_wall(hive: int, me: int, enemies: set[int]) -> list[int]:
    """Cells of the second ring beside this raider, to wall once the ring itself is closed: a
    carrier must then break two walls to get in, and each break gives a raider a turn to
    rebuild. Those with the most enemy bees beside them first."""
    beside = set(NEIGHBOURS[me])
    cells = [cell for cell in outer(hive) if cell in beside]
    return sorted(cells, key=lambda cell: -sum(1 for n in NEIGHBOURS[cell] if n in enemies))


__all__ = ["assign_posts", "chebyshev", "drop_cells", "enclosure", "front", "manhattan", "outer", "outer_to_wall",
           "posts", "relay_drops", "ring", "ring_posts", "to_wall"]
