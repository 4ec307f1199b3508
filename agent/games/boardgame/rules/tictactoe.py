"""Tic-tac-toe: a 3x3 board, X (seat 0) moves first, three in a row wins, a full board draws.

A position is a tuple of nine cells, row by row from the top left: 0 empty, 1 X, 2 O. On the wire a
move is ``place`` with ``{"row": 1-3, "column": 1-3}`` counted from the top left.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent.games.boardgame.rules.base import GameRules, Outcome, RuleError, WireAction

Position = tuple[int, ...]

LINES: tuple[tuple[int, int, int], ...] = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),
    (0, 3, 6), (1, 4, 7), (2, 5, 8),
    (0, 4, 8), (2, 4, 6),
)
_SYMBOLS = (".", "X", "O")


def _int_field(data: Mapping[str, Any], key: str, low: int, high: int) -> int:
    value = data.get(key)
    # bool is an int in Python; "true" is not a row.
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        elif isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        else:
            raise RuleError(f"data.{key} must be a whole number from {low} to {high}, got {value!r}")
    if not low <= value <= high:
        raise RuleError(f"data.{key} must be from {low} to {high}, got {value}")
    return value


class TicTacToe(GameRules[Position]):
    name = "tictactoe"
    title = "Tic-tac-toe"
    action_type = "place"
    marks = ("X", "O")

    def initial(self) -> Position:
        return (0,) * 9

    def ply(self, position: Position) -> int:
        return sum(1 for cell in position if cell)

    def to_move(self, position: Position) -> int:
        return self.ply(position) % 2

    def outcome(self, position: Position) -> Outcome | None:
        for a, b, c in LINES:
            if position[a] and position[a] == position[b] == position[c]:
                return Outcome(position[a] - 1)
        if all(position):
            return Outcome(None)
        return None

    def legal_moves(self, position: Position) -> Sequence[int]:
        if self.outcome(position) is not None:
            return ()
        return tuple(i for i, cell in enumerate(position) if not cell)

    def play(self, position: Position, move: int) -> Position:
        if move not in self.legal_moves(position):
            raise RuleError(f"{self.describe_move(move)} is not a legal move")
        cells = list(position)
        cells[move] = self.to_move(position) + 1
        return tuple(cells)

    # ---- the wire ---------------------------------------------------------------------------

    def move_to_action(self, move: int) -> WireAction:
        return WireAction(self.action_type, {"row": move // 3 + 1, "column": move % 3 + 1})

    def action_to_move(self, position: Position, action_type: str, data: Mapping[str, Any]) -> int:
        if action_type != self.action_type:
            raise RuleError(f"unknown action type {action_type!r}; tic-tac-toe has one action, "
                            f"'place' with data {{\"row\": 1-3, \"column\": 1-3}}")
        row = _int_field(data, "row", 1, 3)
        column = _int_field(data, "column", 1, 3)
        move = (row - 1) * 3 + column - 1
        if position[move]:
            taken = _SYMBOLS[position[move]]
            free = ", ".join(self.describe_move(m) for m in self.legal_moves(position))
            raise RuleError(f"{self.describe_move(move)} is already taken by {taken}; free cells: {free}")
        return move

    def to_data(self, position: Position) -> dict[str, Any]:
        rows = ["".join(_SYMBOLS[c] for c in position[r * 3:r * 3 + 3]) for r in range(3)]
        return {"board": rows, "to_move": self.marks[self.to_move(position)]}

    def from_data(self, data: Mapping[str, Any]) -> Position:
        rows = data.get("board")
        if (not isinstance(rows, list) or len(rows) != 3
                or not all(isinstance(r, str) and len(r) == 3 and set(r) <= set("XO.") for r in rows)):
            raise RuleError("state.data.board must be three strings of three characters from 'X', 'O', '.'")
        position = tuple(_SYMBOLS.index(ch) for row in rows for ch in row)
        xs, os_ = position.count(1), position.count(2)
        if xs - os_ not in (0, 1):
            raise RuleError(f"board has {xs} X and {os_} O; X moves first, so that cannot happen")
        winners = {position[a] for a, b, c in LINES if position[a] and position[a] == position[b] == position[c]}
        if len(winners) > 1 or (winners == {1} and xs == os_) or (winners == {2} and xs != os_):
            raise RuleError("board shows a line that could not have been completed in play")
        return position

    # ---- for people and LLMs ----------------------------------------------------------------

    def render(self, position: Position) -> str:
        lines = ["    1   2   3  (column)"]
        for r in range(3):
            cells = " | ".join(_SYMBOLS[c] for c in position[r * 3:r * 3 + 3])
            lines.append(f"{r + 1}   {cells}")
            if r < 2:
                lines.append("   ---+---+---")
        lines.append("(row)")
        return "\n".join(lines)

    def describe_move(self, move: int) -> str:
        return f"row {move // 3 + 1} column {move % 3 + 1}"

    @property
    def action_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "row": {"type": "integer", "description": "1 (top) to 3 (bottom)"},
                "column": {"type": "integer", "description": "1 (left) to 3 (right)"},
            },
            "required": ["row", "column"],
            "additionalProperties": False,
        }
