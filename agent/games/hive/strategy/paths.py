"""Shortest paths on the 25 x 30 grid with eight-way steps and small integer entry costs.

Dial's bucket queue: costs are small integers, so buckets beat a binary heap by a wide margin
in Python, which keeps a whole decision (two or three fields) within a few milliseconds.
"""

from __future__ import annotations

from agent.games.hive.rules import CELLS, COLS, OFFSETS, ROWS

BLOCKED = 0
"""Entry cost of a cell no path may enter (hives, the edge)."""
COST_FREE = 1
COST_BEE = 3
COST_WALL = 4
"""A wall can be guarded away (one try in two), so it costs a few steps, not a detour."""
COST_FLOWER = 6
"""A flower must be walked around (guarding it would destroy it)."""
INF = 1 << 30


def _neighbour_table() -> tuple[tuple[int, ...], ...]:
    table = []
    for index in range(CELLS):
        row, col = divmod(index, COLS)
        around = []
        for dr, dc in OFFSETS:
            r, c = row + dr, col + dc
            if 0 <= r < ROWS and 0 <= c < COLS:
                around.append(r * COLS + c)
        table.append(tuple(around))
    return tuple(table)


NEIGHBOURS: tuple[tuple[int, ...], ...] = _neighbour_table()
"""For each cell index, the indexes of its in-arena neighbours."""


def distance_field(costs: list[int] | bytearray, sources: list[int], max_cost: int = 16,
                   until: set[int] | None = None) -> list[int]:
    """Least total entry cost from any source to every cell (sources themselves cost 0).

    ``costs[i]`` is what stepping into cell ``i`` costs (1..max_cost), or BLOCKED. Sources are
    expanded even when blocked, so a field can start at a hive or a flower. With ``until``, the
    search stops once all those cells are settled (other cells may then be left too high).
    """
    remaining = set(until) if until else None
    dist = [INF] * CELLS
    buckets: list[list[int]] = [[] for _ in range(max_cost + 1)]
    size = max_cost + 1
    for s in sources:
        dist[s] = 0
        buckets[0].append(s)
    pending = len(sources)
    current = 0
    neighbours = NEIGHBOURS
    while pending:
        bucket = buckets[current % size]
        while bucket:
            cell = bucket.pop()
            pending -= 1
            d = dist[cell]
            if d != current:
                continue  # a stale entry: the cell was reached more cheaply already
            if remaining is not None and cell in remaining:
                remaining.discard(cell)
                if not remaining:
                    return dist
            for n in neighbours[cell]:
                cost = costs[n]
                if cost == BLOCKED:
                    continue
                nd = d + cost
                if nd < dist[n]:
                    dist[n] = nd
                    buckets[nd % size].append(n)
                    pending += 1
        current += 1
    return dist
