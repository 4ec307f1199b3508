"""One player's map of the arena, merged from the 7 x 7 views of its five bees.

Each cell keeps the last value seen and the turn it was seen, so the strategy can trust fresh
cells, doubt old ones (bees move, enemies pick flowers) and explore what was never seen. The
hives are known from the rules before anything is seen. Our own bees are tracked exactly: each
one's position and load arrive with its own turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.games.hive.protocol import BeeView
from agent.games.hive.rules import (
    CELLS,
    COLS,
    ROUND,
    ROWS,
    VIEW_DISTANCE,
    VIEW_SIDE,
    Cell,
    hive_cell,
    hive_index,
    is_bee,
    is_carrier,
    owner,
    start_positions,
)

NEVER = -1_000_000
"""The 'seen at' turn of a cell nobody has seen."""
FRESH_BEE = 2 * ROUND
"""A bee seen this many turns ago or less is probably still there."""


@dataclass
class OwnBee:
    index: int
    position: int
    carrying: bool = False
    last_turn: int = NEVER


@dataclass
class WorldModel:
    player: int
    cells: bytearray = field(default_factory=lambda: bytearray(CELLS))
    seen: list[int] = field(default_factory=lambda: [NEVER] * CELLS)
    bees: list[OwnBee] = field(default_factory=list)
    turn: int = 0
    views: int = 0

    def __post_init__(self) -> None:
        for p in (0, 1):
            self.cells[hive_index(p)] = hive_cell(p)
            self.seen[hive_index(p)] = 0
        if not self.bees:
            self.bees = [OwnBee(i, r * COLS + c) for i, (r, c) in enumerate(start_positions(self.player))]

    @property
    def opponent(self) -> int:
        return 1 - self.player

    @property
    def hive(self) -> int:
        return hive_index(self.player)

    @property
    def enemy_hive(self) -> int:
        return hive_index(self.opponent)

    def update(self, view: BeeView) -> None:
        """Merge one view: its 49 cells become the freshest knowledge of their places."""
        self.turn = view.turn
        self.views += 1
        bee = self.bees[view.bee]
        here = view.row * COLS + view.col
        if bee.position != here:
            old = bee.position
            # The bee's old place in the map still shows it unless a view covered it since.
            if self.cells[old] in (Cell.BEE_0, Cell.BEE_1, Cell.BEE_0_WITH_FLOWER, Cell.BEE_1_WITH_FLOWER) \
                    and owner(self.cells[old]) == self.player and not self._own_bee_at(old, view.bee):
                self.cells[old] = Cell.EMPTY
        bee.position = here
        bee.carrying = view.carrying
        bee.last_turn = view.turn
        cells = view.cells
        turn = view.turn
        for vr in range(VIEW_SIDE):
            r = view.row + vr - VIEW_DISTANCE
            if not 0 <= r < ROWS:
                continue
            base = r * COLS
            for vc in range(VIEW_SIDE):
                c = view.col + vc - VIEW_DISTANCE
                if 0 <= c < COLS:
                    self.cells[base + c] = cells[vr * VIEW_SIDE + vc]
                    self.seen[base + c] = turn

    def _own_bee_at(self, index: int, except_bee: int) -> bool:
        return any(b.position == index for b in self.bees if b.index != except_bee)

    def note_move(self, bee: int, target: int) -> None:
        """Record where a bee we just moved probably went (its next view confirms)."""
        own = self.bees[bee]
        if self.cells[target] == Cell.EMPTY:
            self.cells[target] = self.cells[own.position]
            self.cells[own.position] = Cell.EMPTY
            own.position = target

    def age(self, index: int) -> int:
        return self.turn - self.seen[index]

    def known(self, index: int) -> bool:
        return self.seen[index] != NEVER

    def flowers(self) -> list[int]:
        """Cells believed to hold a flower on the ground."""
        return [i for i, c in enumerate(self.cells) if c == Cell.FLOWER]

    def enemy_bees(self, max_age: int) -> set[int]:
        """Cells of enemy bees, carrying or not, seen at most ``max_age`` turns ago."""
        enemy = self.opponent
        return {i for i, c in enumerate(self.cells) if is_bee(c) and owner(c) == enemy and self.age(i) <= max_age}

    def enemy_carriers(self, max_age: int) -> list[int]:
        enemy = self.opponent
        return [i for i, c in enumerate(self.cells)
                if is_carrier(c) and owner(c) == enemy and self.age(i) <= max_age]

    def explored_fraction(self) -> float:
        return sum(1 for s in self.seen if s != NEVER) / CELLS

    def render(self, marks: dict[int, str] | None = None) -> str:
        """The map as text, one row per line, for the coach and transcripts.

        ``.`` empty, ``F`` flower, ``#`` wall, ``H``/``h`` our/enemy hive, ``B``/``b`` our/enemy bee
        (``C``/``c`` carrying), ``?`` never seen; ``marks`` overrides single cells.
        """
        symbols = {Cell.EMPTY: ".", Cell.FLOWER: "F", Cell.WALL: "#"}
        rows = []
        for r in range(ROWS):
            line = []
            for c in range(COLS):
                i = r * COLS + c
                if marks and i in marks:
                    line.append(marks[i])
                    continue
                cell = self.cells[i]
                if not self.known(i):
                    line.append("?")
                elif cell in symbols:
                    line.append(symbols[Cell(cell)])
                elif cell in (Cell.HIVE_0, Cell.HIVE_1):
                    line.append("H" if owner(cell) == self.player else "h")
                elif is_bee(cell):
                    mine = owner(cell) == self.player
                    carrying = is_carrier(cell)
                    line.append(("C" if carrying else "B") if mine else ("c" if carrying else "b"))
                else:
                    line.append("?")
            rows.append("".join(line))
        return "\n".join(rows)


def new_world(player: int) -> WorldModel:
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, got {player}")
    return WorldModel(player=player)


__all__ = ["NEVER", "OwnBee", "WorldModel", "new_world"]
