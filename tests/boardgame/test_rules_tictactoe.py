"""Tic-tac-toe rules, checked over every reachable position."""

from __future__ import annotations

import pytest

from agent.games.boardgame.rules.base import Outcome, RuleError
from agent.games.boardgame.rules.tictactoe import LINES, Position, TicTacToe

RULES = TicTacToe()


def reachable() -> dict[Position, None]:
    seen: dict[Position, None] = {}
    stack = [RULES.initial()]
    while stack:
        position = stack.pop()
        if position in seen:
            continue
        seen[position] = None
        stack.extend(RULES.play(position, m) for m in RULES.legal_moves(position))
    return seen


ALL = list(reachable())


def test_the_game_has_its_known_number_of_positions_and_endings() -> None:
    assert len(ALL) == 5478
    outcomes = [RULES.outcome(p) for p in ALL]
    assert sum(1 for o in outcomes if o is not None) == 958
    assert sum(1 for o in outcomes if o == Outcome(None)) == 16


def test_every_position_survives_the_wire_and_knows_whose_turn() -> None:
    for position in ALL:
        assert RULES.from_data(RULES.to_data(position)) == position
        assert RULES.to_move(position) == RULES.ply(position) % 2
        if RULES.outcome(position) is None:
            assert RULES.legal_moves(position) == tuple(i for i in range(9) if not position[i])
        else:
            assert RULES.legal_moves(position) == ()


@pytest.mark.parametrize("line", LINES)
def test_every_line_wins_for_either_mark(line: tuple[int, int, int]) -> None:
    for mark in (1, 2):
        cells = [0] * 9
        for i in line:
            cells[i] = mark
        assert RULES.outcome(tuple(cells)) == Outcome(mark - 1)


def test_actions_map_to_cells_and_back() -> None:
    position = RULES.initial()
    for move in range(9):
        action = RULES.move_to_action(move)
        assert action.type == "place"
        assert RULES.action_to_move(position, action.type, action.data) == move
    assert RULES.action_to_move(position, "place", {"row": "2", "column": 2.0}) == 4


@pytest.mark.parametrize("action_type, data, words", [
    ("drop", {"column": 1}, "unknown action type 'drop'"),
    ("place", {"row": 0, "column": 1}, "data.row must be from 1 to 3, got 0"),
    ("place", {"row": 1}, "data.column must be a whole number"),
    ("place", {"row": True, "column": 1}, "data.row must be a whole number"),
    ("place", {"row": 1, "column": "left"}, "data.column must be a whole number"),
    ("place", {"row": 1, "column": 1}, "already taken by X; free cells: row 1 column 2"),
])
def test_bad_actions_are_explained(action_type: str, data: dict[str, object], words: str) -> None:
    position = RULES.play(RULES.initial(), 0)
    with pytest.raises(RuleError, match=words):
        RULES.check_action(position, 1, action_type, data)


def test_turn_and_game_over_are_enforced() -> None:
    position = RULES.initial()
    with pytest.raises(RuleError, match="not your turn"):
        RULES.check_action(position, 1, "place", {"row": 1, "column": 1})
    for move in (0, 3, 1, 4, 2):
        position = RULES.play(position, move)
    assert RULES.outcome(position) == Outcome(0)
    with pytest.raises(RuleError, match="game is over"):
        RULES.check_action(position, 1, "place", {"row": 3, "column": 3})
    with pytest.raises(RuleError, match="not a legal move"):
        RULES.play(position, 8)


@pytest.mark.parametrize("board, words", [
    (["XXX", "...", "..."], "3 X and 0 O"),
    (["XXX", "OOO", "X.."], "could not have been completed"),
    (["XX", "...", "..."], "three strings"),
    (["XQX", "...", "..."], "three strings"),
    ("XXX......", "three strings"),
])
def test_impossible_states_are_refused(board: object, words: str) -> None:
    with pytest.raises(RuleError, match=words):
        RULES.from_data({"board": board})


def test_render_shows_coordinates_and_marks() -> None:
    text = RULES.render(RULES.play(RULES.initial(), 4))
    assert "1   2   3" in text and "2   . | X | ." in text
