"""State lines, command lines and the match log, strictly."""

from __future__ import annotations

import random

import pytest

from agent.games.hive.protocol import (
    MAX_LINE,
    ProtocolError,
    format_command,
    format_state,
    log_turn_line,
    parse_command,
    parse_log,
    parse_state,
)
from agent.games.hive.rules import Cell, new_arena, view

SEED_EXAMPLE = "0,0,0,10,2,9000050900000090000009001000900100090710009001000"
"""The seed's example of a first state (player 0, bee 0 at row 10, column 2)."""


def test_the_documented_example_parses() -> None:
    v = parse_state(SEED_EXAMPLE)
    assert (v.turn, v.player, v.bee, v.row, v.col) == (0, 0, 0, 10, 2)
    assert v.me == Cell.BEE_0 and not v.carrying
    assert v.at(0, 0) == Cell.BEE_0
    assert v.at(2, -1) == Cell.HIVE_0  # row 12, column 1
    assert v.at(0, -3) == Cell.OUTSIDE  # column -1


@pytest.mark.parametrize("seed", range(10))
def test_every_view_the_engine_makes_parses_back(seed: int) -> None:
    state = new_arena(random.Random(seed))
    for turn in range(10):
        state.turn = turn
        fields = view(state)
        line = format_state(*fields).decode()
        assert line.endswith("\n") and len(line) <= MAX_LINE
        v = parse_state(line[:-1])
        assert (v.turn, v.player, v.bee, v.row, v.col) == fields[:5]
        assert bytes(int(c) for c in fields[5]) == v.cells


@pytest.mark.parametrize("line, words", [
    ("", "6 comma-separated fields"),
    ("gameoverx", "6 comma-separated fields"),
    ("0,0,0,10,2", "6 comma-separated fields"),
    ("0,0,0,10,2,900005090000009000000900100090010009071000900100", "49 cells"),
    ("0,0,0,10,2,90000509000000900000090010009001000907100090010000", "49 cells"),
    ("0,0,0,10,2,900005090000009000000900100090010009071000900100a", "non-numeric"),
    ("-1,0,0,10,2,9000050900000090000009001000900100090710009001000", "non-numeric"),
    ("0,0,0,10,2,9000050900000090000009001000900100090710009001000,7", "6 comma-separated fields"),
    (" 0,0,0,10,2,9000050900000090000009001000900100090710009001000", "non-numeric"),
    ("1,0,0,10,2,9000050900000090000009001000900100090710009001000", "belongs to player 1"),
    ("0,0,1,10,2,9000050900000090000009001000900100090710009001000", "belongs to player 0 bee 0"),
    ("0,2,0,10,2,9000050900000090000009001000900100090710009001000", "out of range"),
    ("0,0,0,25,2,9000050900000090000009001000900100090710009001000", "outside"),
    ("0,0,0,10,2,9000050900000090000009000000900100090710009001000", "centre of the view"),
    ("0,0,0,10,2,9000050900000090000009002000900100090710009001000", "centre of the view"),
    ("0,0,0,10,2,0000050900000090000009001000900100090710009001000", "contradicts the arena's edge"),
    ("0,0,0,10,5,9000050900000090000009001000900100090710009001000", "contradicts the arena's edge"),
    ("0" * 250, "exceeds 200"),
])
def test_bad_state_lines_are_rejected_with_the_reason(line: str, words: str) -> None:
    with pytest.raises(ProtocolError, match=words):
        parse_state(line)


def test_commands_are_one_line() -> None:
    assert format_command(0, 7) == b"0,7\n"
    assert format_command(3, 0) == b"3,0\n"


@pytest.mark.parametrize("data, expected", [
    (b"0,7\n", (0, 7)),
    (b"3,0\n", (3, 0)),
    (b"1,2 trailing words\n", (1, 2)),  # the arena takes the two leading numbers, as sscanf does
    (b" 2, 4\n", (2, 4)),
])
def test_the_arena_accepts(data: bytes, expected: tuple[int, int]) -> None:
    assert parse_command(data) == expected


@pytest.mark.parametrize("data, words", [
    (b"", "connection closed"),
    (b"0,7", "newline"),
    (b"0,", "newline"),
    (b"0,7\n0,", "newline"),  # the newline must be the last byte of the single read
    (b"4,0\n", "out of range"),
    (b"0,8\n", "out of range"),
    (b"-1,0\n", "out of range"),
    (b"move,N\n", "does not start"),
    (b"0\n", "does not start"),
    (b"0" * 201 + b"\n", "exceeds"),
])
def test_the_arena_forfeits(data: bytes, words: str) -> None:
    with pytest.raises(ProtocolError, match=words):
        parse_command(data)


def test_log_round_trip() -> None:
    state = new_arena(random.Random(1))
    grid = state.grid_digits()
    text = ("# Player 0: alpha\n# Player 1: beta team\n"
            + log_turn_line(0, 0, 0, [0, 0], grid, 0, 7)
            + log_turn_line(1, 1, 0, [0, 1], grid, 1, 3)
            + log_turn_line(2, 0, 1, [2, 1], grid, -1, -1)
            + "# Winner: player 0 (alpha)\n")
    log = parse_log(text)
    assert log.names == ("alpha", "beta team")
    assert [t.turn for t in log.turns] == [0, 1, 2]
    assert log.turns[-1].action == -1 and log.turns[-1].score0 == 2
    assert log.winner == 0 and log.result_line == "Winner: player 0 (alpha)"


def test_log_with_forfeit_and_draw() -> None:
    text = "# Player 0: a\n# Player 1: b\n# Player 1 timeout/bad command\n# Winner: player 0 (a)\n"
    assert parse_log(text).forfeit == 1
    draw = parse_log("# Player 0: a\n# Player 1: b\n# Draw\n")
    assert draw.winner is None and draw.result_line == "Draw"


def test_a_foreign_log_line_is_reported() -> None:
    with pytest.raises(ProtocolError, match="line 2"):
        parse_log("# Player 0: a\nhello\n")
