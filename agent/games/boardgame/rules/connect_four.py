"""Connect four: seven columns of six, X (seat 0) drops first, four in a line wins, a full board draws.

A position is seven columns, each the tuple of its discs from the bottom up (1 X, 2 O). On the
wire a move is ``drop`` with ``{"column": 1-7}`` counted from the left.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent.games.boardgame.rules.base import GameRules, Outcome, RuleError, WireAction
from agent.games.boardgame.rules.tictactoe import _int_field

ROWS = 6
COLUMNS = 7
Position = tuple[tuple[int, ...], ...]

_SYMBOLS = (".", "X", "O")
_DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def _cell(position: Position, column: int, row: int) -> int:
    if 0 <= column < COLUMNS and 0 <= row < len(position[column]):
        return position[column][row]
    return 0


def _lines_of_four(position: Position) -> set[int]:
    """The marks (1, 2) that have four in a line."""
    found: set[int] = set()
    for column in range(COLUMNS):
        for row in range(len(position[column])):
            mark = position[column][row]
            for dc, dr in _DIRECTIONS:
                if all(_cell(position, column + dc * k, row + dr * k) == mark for k in range(1, 4)):
                    found.add(mark)
    return found


def _column(rows: list[str], c: int) -> tuple[int, ...]:
    """Column ``c`` of a wire board (top row first), bottom disc first; RuleError if a disc floats."""
    column = [_SYMBOLS.index(rows[ROWS - 1 - r][c]) for r in range(ROWS)]
    height = sum(1 for v in column if v)
    if any(column[height:]) or not all(column[:height]):
        raise RuleError(f"column {c + 1} has a disc floating above an empty cell")
    return tuple(column[:height])


class ConnectFour(GameRules[Position]):
    name = "connect_four"
    title = "Connect four"
    action_type = "drop"
    marks = ("X", "O")

    def initial(self) -> Position:
        return ((),) * COLUMNS

    def ply(self, position: Position) -> int:
        return sum(len(column) for column in position)

    def to_move(self, position: Position) -> int:
        return self.ply(position) % 2

    def outcome(self, position: Position) -> Outcome | None:
        lines = _lines_of_four(position)
        if lines:
            return Outcome(min(lines) - 1)
        if self.ply(position) == ROWS * COLUMNS:
            return Outcome(None)
        return None

    def legal_moves(self, position: Position) -> Sequence[int]:
        if self.outcome(position) is not None:
            return ()
        return tuple(c for c in range(COLUMNS) if len(position[c]) < ROWS)

    def play(self, position: Position, move: int) -> Position:
        if move not in self.legal_moves(position):
            raise RuleError(f"{self.describe_move(move)} is not a legal move")
        mark = self.to_move(position) + 1
        return tuple((*col, mark) if c == move else col for c, col in enumerate(position))

    # ---- the wire ---------------------------------------------------------------------------

    def move_to_action(self, move: int) -> WireAction:
        return WireAction(self.action_type, {"column": move + 1})

    def action_to_move(self, position: Position, action_type: str, data: Mapping[str, Any]) -> int:
        if action_type != self.action_type:
            raise RuleError(f"unknown action type {action_type!r}; connect four has one action, "
                            f"'drop' with data {{\"column\": 1-{COLUMNS}}}")
        move = _int_field(data, "column", 1, COLUMNS) - 1
        if len(position[move]) >= ROWS:
            free = ", ".join(str(m + 1) for m in self.legal_moves(position))
            raise RuleError(f"column {move + 1} is full; columns with room: {free}")
        return move

    def to_data(self, position: Position) -> dict[str, Any]:
        rows = ["".join(_SYMBOLS[_cell(position, c, r)] for c in range(COLUMNS)) for r in reversed(range(ROWS))]
        return {"board": rows, "to_move": self.marks[self.to_move(position)]}

    def from_data(self, data: Mapping[str, Any]) -> Position:
        rows = data.get("board")
        if (not isinstance(rows, list) or len(rows) != ROWS
                or not all(isinstance(r, str) and len(r) == COLUMNS and set(r) <= set("XO.") for r in rows)):
            raise RuleError(f"state.data.board must be {ROWS} strings (top row first) of {COLUMNS} "
                            "characters from 'X', 'O', '.'")
        position = tuple(_column(rows, c) for c in range(COLUMNS))
        xs = sum(col.count(1) for col in position)
        os_ = sum(col.count(2) for col in position)
        if xs - os_ not in (0, 1):
            raise RuleError(f"board has {xs} X and {os_} O; X moves first, so that cannot happen")
        return position

    # ---- for people and LLMs ----------------------------------------------------------------

    def render(self, position: Position) -> str:
        lines = [" ".join(str(c + 1) for c in range(COLUMNS))]
        lines += [" ".join(_SYMBOLS[_cell(position, c, r)] for c in range(COLUMNS)) for r in reversed(range(ROWS))]
        lines.append("-" * (2 * COLUMNS - 1))
        return "\n".join(lines)

    def describe_move(self, move: int) -> str:
        return f"column {move + 1}"

    @property
    def action_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"column": {"type": "integer", "description": f"1 (left) to {COLUMNS} (right)"}},
            "required": ["column"],
            "additionalProperties": False,
        }
