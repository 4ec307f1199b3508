"""Connect-four rules: wins in every direction and place, gravity, the wire, refusals."""

from __future__ import annotations

import random

import pytest

from agent.games.boardgame.rules.base import Outcome, RuleError
from agent.games.boardgame.rules.connect_four import COLUMNS, ROWS, ConnectFour, Position

RULES = ConnectFour()


def grid_position(cells: dict[tuple[int, int], int]) -> Position:
    """A position from {(column, row): mark}, stacking each column from the bottom."""
    return tuple(tuple(cells[(c, r)] for r in range(ROWS) if (c, r) in cells) for c in range(COLUMNS))


def brute_winner(position: Position) -> set[int]:
    grid = {(c, r): m for c, col in enumerate(position) for r, m in enumerate(col)}
    found = set()
    for (c, r), m in grid.items():
        for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
            if all(grid.get((c + dc * k, r + dr * k)) == m for k in range(4)):
                found.add(m)
    return found


def random_games(count: int, seed: int = 3) -> list[list[Position]]:
    rng = random.Random(seed)
    games = []
    for _ in range(count):
        position = RULES.initial()
        seq = [position]
        while RULES.outcome(position) is None:
            position = RULES.play(position, rng.choice(list(RULES.legal_moves(position))))
            seq.append(position)
        games.append(seq)
    return games


GAMES = random_games(200)


def test_outcomes_agree_with_a_brute_force_scan() -> None:
    for seq in GAMES:
        for position in seq:
            wins = brute_winner(position)
            outcome = RULES.outcome(position)
            if wins:
                assert outcome == Outcome(min(wins) - 1)
            elif RULES.ply(position) == ROWS * COLUMNS:
                assert outcome == Outcome(None)
            else:
                assert outcome is None


def test_a_finished_random_game_is_won_by_its_last_mover() -> None:
    for seq in GAMES:
        final = seq[-1]
        outcome = RULES.outcome(final)
        assert outcome is not None
        if outcome.winner is not None:
            assert outcome.winner == (RULES.ply(final) - 1) % 2


@pytest.mark.parametrize("dc, dr", [(1, 0), (0, 1), (1, 1), (1, -1)])
def test_four_in_a_line_wins_everywhere_on_the_board(dc: int, dr: int) -> None:
    for c in range(COLUMNS):
        for r in range(ROWS):
            cells = [(c + dc * k, r + dr * k) for k in range(4)]
            if not all(0 <= x < COLUMNS and 0 <= y < ROWS for x, y in cells):
                continue
            # Fill what is below each cell with alternating filler that cannot form a line.
            grid: dict[tuple[int, int], int] = {}
            for x, y in cells:
                for below in range(y):
                    grid.setdefault((x, below), 3)
                grid[(x, y)] = 2
            position = grid_position(grid)
            assert 2 in {m - 0 for m in brute_winner(position)}
            assert _has_mark_line(position, 2)


def _has_mark_line(position: Position, mark: int) -> bool:
    from agent.games.boardgame.rules.connect_four import _lines_of_four

    return mark in _lines_of_four(position)


def test_positions_survive_the_wire() -> None:
    for seq in GAMES[:50]:
        for position in seq:
            assert RULES.from_data(RULES.to_data(position)) == position


def test_actions_are_columns_counted_from_one() -> None:
    position = RULES.initial()
    for move in range(COLUMNS):
        action = RULES.move_to_action(move)
        assert action.type == "drop" and action.data == {"column": move + 1}
        assert RULES.action_to_move(position, "drop", action.data) == move


def test_a_full_column_is_refused_with_the_columns_that_have_room() -> None:
    position = RULES.initial()
    for _ in range(ROWS):
        position = RULES.play(position, 0)
    with pytest.raises(RuleError, match="column 1 is full; columns with room: 2, 3, 4, 5, 6, 7"):
        RULES.check_action(position, 0, "drop", {"column": 1})
    assert 0 not in RULES.legal_moves(position)


@pytest.mark.parametrize("action_type, data, words", [
    ("place", {"row": 1}, "unknown action type 'place'"),
    ("drop", {"column": 8}, "from 1 to 7, got 8"),
    ("drop", {}, "data.column must be a whole number"),
    ("drop", {"column": 2.5}, "data.column must be a whole number"),
])
def test_bad_actions_are_explained(action_type: str, data: dict[str, object], words: str) -> None:
    with pytest.raises(RuleError, match=words):
        RULES.check_action(RULES.initial(), 0, action_type, data)


@pytest.mark.parametrize("rows, words", [
    (["......."] * 5, "6 strings"),
    (["X......"] + ["......."] * 5, "floating"),
    (["......."] * 4 + ["X......", "X......"], "2 X and 0 O"),
    (["......."] * 5 + ["...Z..."], "6 strings"),
])
def test_impossible_boards_are_refused(rows: list[str], words: str) -> None:
    with pytest.raises(RuleError, match=words):
        RULES.from_data({"board": rows})


def test_a_full_board_without_a_line_is_a_draw() -> None:
    # A drawn end of a random game (found once by playing random games with a seed).
    board = ["OOXOXXO", "OXOXOXO", "XXOXOOO", "OOXOXXX", "XXXOOOX", "OXXXOXO"]
    position = RULES.from_data({"board": board})
    assert not brute_winner(position)
    assert RULES.outcome(position) == Outcome(None)
    assert RULES.legal_moves(position) == ()


def test_render_has_column_numbers_on_top() -> None:
    text = RULES.render(RULES.play(RULES.initial(), 3))
    lines = text.splitlines()
    assert lines[0] == "1 2 3 4 5 6 7" and lines[-2] == ". . . X . . ."
