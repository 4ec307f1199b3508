"""The Hive Arena rules as pure functions over a plain arena state.

Everything the arena decides lives here: the start position, the four actions, the 7 x 7 view a
bee gets, the end conditions and the winner. Randomness (flower placement, the 1/3 failed move
of a carrier, the 1/2 guard) comes from a ``random.Random`` the caller passes in, so a seeded
match replays exactly. No I/O.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import IntEnum

ROWS = 25
COLS = 30
CELLS = ROWS * COLS
PLAYERS = 2
BEES = 5
VIEW_DISTANCE = 3
VIEW_SIDE = 2 * VIEW_DISTANCE + 1
VIEW_CELLS = VIEW_SIDE * VIEW_SIDE
TURNS_BEFORE_TIMEOUT = 1000
ROUND = PLAYERS * BEES
FLOWERS_MIN = 30
FLOWERS_RANGE = 10


class Cell(IntEnum):
    EMPTY = 0
    BEE_0 = 1
    BEE_1 = 2
    BEE_0_WITH_FLOWER = 3
    BEE_1_WITH_FLOWER = 4
    FLOWER = 5
    WALL = 6
    HIVE_0 = 7
    HIVE_1 = 8
    OUTSIDE = 9


class Action(IntEnum):
    MOVE = 0
    FORAGE = 1
    BUILD = 2
    GUARD = 3


class Direction(IntEnum):
    N = 0
    NE = 1
    E = 2
    SE = 3
    S = 4
    SW = 5
    W = 6
    NW = 7


OFFSETS: tuple[tuple[int, int], ...] = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))
"""(row, col) step of each Direction, in Direction order; S is row + 1, E is column + 1."""

HIVE_ROW = ROWS // 2
HIVE_COLS = (1, COLS - 2)
START_COLS = (2, COLS - 3)

BEE_CELLS = frozenset({Cell.BEE_0, Cell.BEE_1, Cell.BEE_0_WITH_FLOWER, Cell.BEE_1_WITH_FLOWER})
CARRIER_CELLS = frozenset({Cell.BEE_0_WITH_FLOWER, Cell.BEE_1_WITH_FLOWER})
HIVE_CELLS = frozenset({Cell.HIVE_0, Cell.HIVE_1})


def hive_position(player: int) -> tuple[int, int]:
    return HIVE_ROW, HIVE_COLS[player]


def hive_index(player: int) -> int:
    """The player's hive as a cell index (row * COLS + column), as maps and views number cells."""
    return HIVE_ROW * COLS + HIVE_COLS[player]


def start_positions(player: int) -> list[tuple[int, int]]:
    col = START_COLS[player]
    return [(row, col) for row in range(HIVE_ROW - BEES // 2, HIVE_ROW + BEES // 2 + 1)]


def is_bee(cell: int) -> bool:
    return cell in BEE_CELLS


def is_carrier(cell: int) -> bool:
    return cell in CARRIER_CELLS


def is_hive(cell: int) -> bool:
    return cell in HIVE_CELLS


def owner(cell: int) -> int:
    """The player a bee or hive cell belongs to, -1 for anything else."""
    if cell in (Cell.BEE_0, Cell.BEE_0_WITH_FLOWER, Cell.HIVE_0):
        return 0
    if cell in (Cell.BEE_1, Cell.BEE_1_WITH_FLOWER, Cell.HIVE_1):
        return 1
    return -1


def bee_cell(player: int, carrying: bool) -> Cell:
    if player == 0:
        return Cell.BEE_0_WITH_FLOWER if carrying else Cell.BEE_0
    return Cell.BEE_1_WITH_FLOWER if carrying else Cell.BEE_1


def hive_cell(player: int) -> Cell:
    return Cell.HIVE_0 if player == 0 else Cell.HIVE_1


def turn_player_bee(turn: int) -> tuple[int, int]:
    """Who acts on a global turn: players alternate, each moving its bees in order."""
    return turn % PLAYERS, (turn // PLAYERS) % BEES


def step(row: int, col: int, direction: int) -> tuple[int, int]:
    dr, dc = OFFSETS[direction]
    return row + dr, col + dc


def inside(row: int, col: int) -> bool:
    return 0 <= row < ROWS and 0 <= col < COLS


@dataclass
class ArenaState:
    """The whole arena: cells row by row, bee positions, turn, scores and the end."""

    cells: bytearray
    bees: list[list[tuple[int, int]]]
    turn: int = 0
    scores: list[int] = field(default_factory=lambda: [0, 0])
    last_point_turn: int = -1
    game_over: bool = False
    winner: int | None = None
    """0 or 1 once over with a winner; None while playing or on a draw."""

    def get(self, row: int, col: int) -> int:
        if not inside(row, col):
            return Cell.OUTSIDE
        return self.cells[row * COLS + col]

    def set(self, row: int, col: int, cell: int) -> None:
        if not inside(row, col):
            raise IndexError(f"cell ({row}, {col}) is outside the arena")
        self.cells[row * COLS + col] = cell

    def grid_digits(self) -> str:
        """The 750 cells as one digit string, row by row (the log's format)."""
        return self.cells.translate(_DIGITS).decode("ascii")

    def flowers_left(self) -> int:
        """Flowers on the ground plus flowers being carried."""
        cells = self.cells
        return (cells.count(Cell.FLOWER) + cells.count(Cell.BEE_0_WITH_FLOWER)
                + cells.count(Cell.BEE_1_WITH_FLOWER))


_DIGITS = bytes((48 + i) if i < 10 else 63 for i in range(256))
"""Byte translation from cell values to their ASCII digits ('?' for impossible values)."""


def empty_arena() -> ArenaState:
    """Hives and bees in their start places and no flowers (tests place their own)."""
    state = ArenaState(cells=bytearray(CELLS), bees=[[], []])
    for player in range(PLAYERS):
        state.set(*hive_position(player), hive_cell(player))
        for row, col in start_positions(player):
            state.set(row, col, bee_cell(player, False))
            state.bees[player].append((row, col))
    return state


def new_arena(rng: random.Random) -> ArenaState:
    """A fresh arena: the start position plus 30-39 flowers on random empty cells."""
    state = empty_arena()
    wanted = FLOWERS_MIN + rng.randrange(FLOWERS_RANGE)
    placed = 0
    while placed < wanted:
        row, col = rng.randrange(ROWS), rng.randrange(COLS)
        if state.get(row, col) == Cell.EMPTY:
            state.set(row, col, Cell.FLOWER)
            placed += 1
    return state


def from_grid(digits: str, turn: int = 0, scores: tuple[int, int] = (0, 0)) -> ArenaState:
    """An arena from a 750-digit grid (as in the log); bees are numbered in row-major order.

    The bee numbering is only right for the start position or for tests that place one bee per
    player; a replay takes its bees from the cells alone and never needs numbers.
    """
    if len(digits) != CELLS or not digits.isdigit():
        raise ValueError(f"a grid has {CELLS} digits, got {len(digits)} characters")
    state = ArenaState(cells=bytearray(int(ch) for ch in digits), bees=[[], []], turn=turn,
                       scores=list(scores))
    for index, cell in enumerate(state.cells):
        if cell in BEE_CELLS:
            state.bees[owner(cell)].append(divmod(index, COLS))
    return state


def view(state: ArenaState) -> tuple[int, int, int, int, int, str]:
    """What the active bee sees: (turn, player, bee, row, col, 49 digits row by row)."""
    player, bee = turn_player_bee(state.turn)
    row, col = state.bees[player][bee]
    digits = [chr(48 + state.get(r, c))
              for r in range(row - VIEW_DISTANCE, row + VIEW_DISTANCE + 1)
              for c in range(col - VIEW_DISTANCE, col + VIEW_DISTANCE + 1)]
    return state.turn, player, bee, row, col, "".join(digits)


def _empty_neighbours(state: ArenaState, row: int, col: int) -> list[tuple[int, int]]:
    result = []
    for direction in range(8):
        r, c = step(row, col, direction)
        if state.get(r, c) == Cell.EMPTY:
            result.append((r, c))
    return result


def apply_command(state: ArenaState, action: int, direction: int, rng: random.Random) -> bool:
    """Play the active bee's command, check the end, advance the turn; True if it took effect.

    The random draws happen in the same places as in the arena (a carrier's move, a guard on a
    wall/flower, a guard on a carrier with somewhere to drop), so seeded matches are comparable.
    """
    if state.game_over:
        raise ValueError("the match is over")
    if not (0 <= action <= 3 and 0 <= direction <= 7):
        raise ValueError(f"no such command {action},{direction}")
    player, bee = turn_player_bee(state.turn)
    row, col = state.bees[player][bee]
    me = state.get(row, col)
    if not is_bee(me) or owner(me) != player:
        raise ValueError(f"bee {bee} of player {player} is not at ({row}, {col})")
    tr, tc = step(row, col, direction)
    target = state.get(tr, tc)
    carrying = is_carrier(me)
    done = False

    if action == Action.MOVE:
        if target == Cell.EMPTY and not (carrying and rng.randrange(3) == 0):
            state.set(tr, tc, me)
            state.set(row, col, Cell.EMPTY)
            state.bees[player][bee] = (tr, tc)
            done = True
    elif action == Action.FORAGE:
        if not carrying and target == Cell.FLOWER:
            state.set(tr, tc, Cell.EMPTY)
            state.set(row, col, bee_cell(player, True))
            done = True
        elif carrying and target == Cell.EMPTY:
            state.set(tr, tc, Cell.FLOWER)
            state.set(row, col, bee_cell(player, False))
            done = True
        elif carrying and is_hive(target):
            state.scores[owner(target)] += 1
            state.last_point_turn = state.turn
            state.set(row, col, bee_cell(player, False))
            done = True
    elif action == Action.BUILD:
        if target == Cell.EMPTY:
            state.set(tr, tc, Cell.WALL)
            done = True
    else:  # GUARD
        if target in (Cell.WALL, Cell.FLOWER):
            if rng.randrange(2) == 0:
                state.set(tr, tc, Cell.EMPTY)
                done = True
        elif is_carrier(target):
            empties = _empty_neighbours(state, tr, tc)
            if empties and rng.randrange(2) == 0:
                dr, dc = empties[rng.randrange(len(empties))]
                state.set(dr, dc, Cell.FLOWER)
                state.set(tr, tc, bee_cell(owner(target), False))
                done = True

    _check_end(state)
    state.turn += 1
    return done


def _check_end(state: ArenaState) -> None:
    timed_out = (state.turn >= state.last_point_turn + TURNS_BEFORE_TIMEOUT
                 and (state.turn + 1) % ROUND == 0)
    if timed_out or state.flowers_left() == 0:
        state.game_over = True
        s0, s1 = state.scores
        state.winner = 0 if s0 > s1 else 1 if s1 > s0 else None


def forfeit(state: ArenaState, loser: int) -> None:
    """End the match because a player failed to answer in time or answered badly."""
    state.game_over = True
    state.winner = 1 - loser
