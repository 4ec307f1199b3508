"""The rules engine against the arena's rules, case by case."""

from __future__ import annotations

import random

import pytest

from agent.games.hive.rules import (
    BEES,
    COLS,
    ROWS,
    TURNS_BEFORE_TIMEOUT,
    Action,
    ArenaState,
    Cell,
    Direction,
    apply_command,
    empty_arena,
    forfeit,
    hive_position,
    new_arena,
    start_positions,
    step,
    turn_player_bee,
    view,
)


class FixedRng(random.Random):
    """randrange answers from a script, to force each chance outcome."""

    def __init__(self, *values: int) -> None:
        super().__init__(0)
        self.values = list(values)
        self.calls: list[int] = []

    def randrange(self, n: int, *args: object, **kwargs: object) -> int:  # type: ignore[override]
        self.calls.append(n)
        value = self.values.pop(0)
        assert 0 <= value < n
        return value


def arena_with_flower_far() -> ArenaState:
    """Start position plus one far flower so the match does not end at once."""
    state = empty_arena()
    state.set(0, 15, Cell.FLOWER)
    return state


def place_bee(state: ArenaState, player: int, bee: int, row: int, col: int, carrying: bool = False) -> None:
    old = state.bees[player][bee]
    state.set(*old, Cell.EMPTY)
    state.set(row, col, (Cell.BEE_0_WITH_FLOWER if carrying else Cell.BEE_0) + player)
    state.bees[player][bee] = (row, col)


def test_start_position_matches_the_rules() -> None:
    state = empty_arena()
    assert hive_position(0) == (12, 1) and hive_position(1) == (12, 28)
    assert state.get(12, 1) == Cell.HIVE_0 and state.get(12, 28) == Cell.HIVE_1
    assert start_positions(0) == [(r, 2) for r in range(10, 15)]
    assert start_positions(1) == [(r, 27) for r in range(10, 15)]
    for r in range(10, 15):
        assert state.get(r, 2) == Cell.BEE_0 and state.get(r, 27) == Cell.BEE_1
    assert state.get(-1, 0) == Cell.OUTSIDE and state.get(0, COLS) == Cell.OUTSIDE


@pytest.mark.parametrize("seed", range(40))
def test_new_arena_places_30_to_39_flowers_on_empty_cells(seed: int) -> None:
    state = new_arena(random.Random(seed))
    flowers = state.cells.count(Cell.FLOWER)
    assert 30 <= flowers <= 39
    assert state.cells.count(Cell.BEE_0) == BEES and state.cells.count(Cell.BEE_1) == BEES
    assert state.cells.count(Cell.HIVE_0) == 1 and state.cells.count(Cell.HIVE_1) == 1


def test_turn_order_alternates_players_then_bees() -> None:
    order = [turn_player_bee(t) for t in range(12)]
    assert order[:10] == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (0, 3), (1, 3), (0, 4), (1, 4)]
    assert order[10:] == [(0, 0), (1, 0)]


def test_directions_follow_south_is_row_plus_one_east_is_col_plus_one() -> None:
    assert step(5, 5, Direction.N) == (4, 5)
    assert step(5, 5, Direction.NE) == (4, 6)
    assert step(5, 5, Direction.E) == (5, 6)
    assert step(5, 5, Direction.SE) == (6, 6)
    assert step(5, 5, Direction.S) == (6, 5)
    assert step(5, 5, Direction.SW) == (6, 4)
    assert step(5, 5, Direction.W) == (5, 4)
    assert step(5, 5, Direction.NW) == (4, 4)


def test_view_is_7x7_centred_with_outside_beyond_the_edge() -> None:
    state = arena_with_flower_far()
    place_bee(state, 0, 0, 0, 0)
    turn, player, bee, row, col, digits = view(state)
    assert (turn, player, bee, row, col) == (0, 0, 0, 0, 0)
    assert len(digits) == 49
    assert digits[24] == str(int(Cell.BEE_0))
    assert digits[:21] == "9" * 21  # three rows above row 0
    assert digits[21:24] == "999"  # three columns left of column 0
    assert digits[25:28] == "000"


def test_move_into_empty_cell() -> None:
    state = arena_with_flower_far()
    assert apply_command(state, Action.MOVE, Direction.E, FixedRng())
    assert state.bees[0][0] == (10, 3)
    assert state.get(10, 3) == Cell.BEE_0 and state.get(10, 2) == Cell.EMPTY
    assert state.turn == 1


@pytest.mark.parametrize("blocker", [Cell.WALL, Cell.FLOWER, Cell.BEE_1, Cell.HIVE_0])
def test_move_into_occupied_cell_does_nothing(blocker: Cell) -> None:
    state = arena_with_flower_far()
    state.set(10, 3, blocker)
    assert not apply_command(state, Action.MOVE, Direction.E, FixedRng())
    assert state.bees[0][0] == (10, 2) and state.get(10, 3) == blocker
    assert state.turn == 1


def test_move_off_the_edge_does_nothing() -> None:
    state = arena_with_flower_far()
    place_bee(state, 0, 0, 0, 0)
    assert not apply_command(state, Action.MOVE, Direction.N, FixedRng())
    assert state.bees[0][0] == (0, 0)


def test_carrier_move_fails_one_time_in_three() -> None:
    state = arena_with_flower_far()
    place_bee(state, 0, 0, 5, 5, carrying=True)
    rng = FixedRng(0)
    assert not apply_command(state, Action.MOVE, Direction.E, rng)
    assert rng.calls == [3]
    assert state.bees[0][0] == (5, 5)
    state.turn = 0
    assert apply_command(state, Action.MOVE, Direction.E, FixedRng(1))
    assert state.get(5, 6) == Cell.BEE_0_WITH_FLOWER


def test_carrier_blocked_move_draws_no_chance() -> None:
    state = arena_with_flower_far()
    place_bee(state, 0, 0, 5, 5, carrying=True)
    state.set(5, 6, Cell.WALL)
    rng = FixedRng()
    assert not apply_command(state, Action.MOVE, Direction.E, rng)
    assert rng.calls == []


def test_forage_picks_up_a_flower() -> None:
    state = arena_with_flower_far()
    state.set(10, 3, Cell.FLOWER)
    assert apply_command(state, Action.FORAGE, Direction.E, FixedRng())
    assert state.get(10, 3) == Cell.EMPTY and state.get(10, 2) == Cell.BEE_0_WITH_FLOWER


def test_forage_without_flower_there_does_nothing() -> None:
    state = arena_with_flower_far()
    assert not apply_command(state, Action.FORAGE, Direction.E, FixedRng())
    assert state.get(10, 2) == Cell.BEE_0


def test_forage_drops_a_flower_on_an_empty_cell() -> None:
    state = arena_with_flower_far()
    place_bee(state, 0, 0, 5, 5, carrying=True)
    assert apply_command(state, Action.FORAGE, Direction.S, FixedRng())
    assert state.get(6, 5) == Cell.FLOWER and state.get(5, 5) == Cell.BEE_0


def test_carrier_cannot_pick_a_second_flower() -> None:
    state = arena_with_flower_far()
    place_bee(state, 0, 0, 5, 5, carrying=True)
    state.set(6, 5, Cell.FLOWER)
    assert not apply_command(state, Action.FORAGE, Direction.S, FixedRng())
    assert state.get(5, 5) == Cell.BEE_0_WITH_FLOWER


def test_delivery_into_own_hive_scores_and_resets_the_timeout() -> None:
    state = arena_with_flower_far()
    place_bee(state, 0, 0, 11, 1, carrying=True)
    assert apply_command(state, Action.FORAGE, Direction.S, FixedRng())
    assert state.scores == [1, 0]
    assert state.last_point_turn == 0
    assert state.get(11, 1) == Cell.BEE_0


def test_delivery_into_the_enemy_hive_scores_for_the_enemy() -> None:
    state = arena_with_flower_far()
    place_bee(state, 0, 0, 11, 28, carrying=True)
    place_bee(state, 1, 0, 0, 0)
    assert apply_command(state, Action.FORAGE, Direction.S, FixedRng())
    assert state.scores == [0, 1]


def test_build_a_wall_only_on_empty() -> None:
    state = arena_with_flower_far()
    assert apply_command(state, Action.BUILD, Direction.E, FixedRng())
    assert state.get(10, 3) == Cell.WALL
    state.turn = 0
    assert not apply_command(state, Action.BUILD, Direction.S, FixedRng())  # a bee is there
    assert state.get(11, 2) == Cell.BEE_0


@pytest.mark.parametrize("target", [Cell.WALL, Cell.FLOWER])
def test_guard_destroys_wall_or_flower_half_the_time(target: Cell) -> None:
    state = arena_with_flower_far()
    state.set(10, 3, target)
    assert not apply_command(state, Action.GUARD, Direction.E, FixedRng(1))
    assert state.get(10, 3) == target
    state.turn = 0
    assert apply_command(state, Action.GUARD, Direction.E, FixedRng(0))
    assert state.get(10, 3) == Cell.EMPTY


def test_guard_knocks_the_flower_off_a_carrier_into_a_random_empty_neighbour() -> None:
    state = arena_with_flower_far()
    place_bee(state, 0, 0, 5, 5)
    place_bee(state, 1, 0, 5, 6, carrying=True)
    rng = FixedRng(0, 2)  # succeed, then the third empty neighbour of the carrier
    assert apply_command(state, Action.GUARD, Direction.E, rng)
    assert rng.calls[0] == 2
    assert state.get(5, 6) == Cell.BEE_1
    empties_in_order = [(4, 6), (4, 7), (5, 7)]  # N, NE, E of the carrier
    assert state.get(*empties_in_order[2]) == Cell.FLOWER


def test_guard_on_a_boxed_in_carrier_does_nothing_and_draws_nothing() -> None:
    state = arena_with_flower_far()
    place_bee(state, 0, 0, 5, 5)
    place_bee(state, 1, 0, 5, 6, carrying=True)
    for d in range(8):
        r, c = step(5, 6, d)
        if (r, c) != (5, 5):
            state.set(r, c, Cell.WALL)
    rng = FixedRng()
    assert not apply_command(state, Action.GUARD, Direction.E, rng)
    assert rng.calls == [] and state.get(5, 6) == Cell.BEE_1_WITH_FLOWER


@pytest.mark.parametrize("target", [Cell.EMPTY, Cell.BEE_1, Cell.HIVE_0])
def test_guard_on_anything_else_does_nothing(target: Cell) -> None:
    state = arena_with_flower_far()
    place_bee(state, 0, 0, 11, 2)
    state.set(11, 3, target)
    assert not apply_command(state, Action.GUARD, Direction.E, FixedRng())


def test_match_ends_when_the_last_flower_is_delivered() -> None:
    state = empty_arena()
    place_bee(state, 0, 0, 11, 1, carrying=True)
    apply_command(state, Action.FORAGE, Direction.S, FixedRng())
    assert state.game_over and state.winner == 0 and state.scores == [1, 0]


def test_a_carried_flower_keeps_the_match_going() -> None:
    state = empty_arena()
    place_bee(state, 0, 0, 5, 5, carrying=True)
    apply_command(state, Action.MOVE, Direction.E, FixedRng(1))
    assert not state.game_over


def test_last_flower_destroyed_ends_in_a_draw() -> None:
    state = empty_arena()
    state.set(10, 3, Cell.FLOWER)
    apply_command(state, Action.GUARD, Direction.E, FixedRng(0))
    assert state.game_over and state.winner is None


def test_timeout_waits_for_the_end_of_the_round() -> None:
    state = arena_with_flower_far()
    rng = random.Random(1)
    # No point is ever scored: last_point_turn is -1, so the timeout is due from turn 999 on,
    # and turn 999 is the last of its round.
    while not state.game_over:
        apply_command(state, Action.MOVE, Direction.N if state.turn % 4 < 2 else Direction.S, rng)
    assert state.turn == TURNS_BEFORE_TIMEOUT
    assert state.winner is None


def test_timeout_counts_from_the_last_point() -> None:
    state = arena_with_flower_far()
    state.set(0, 16, Cell.FLOWER)
    place_bee(state, 0, 0, 11, 1, carrying=True)
    rng = random.Random(2)
    apply_command(state, Action.FORAGE, Direction.S, rng)  # point at turn 0
    assert not state.game_over
    while not state.game_over:
        apply_command(state, Action.BUILD, Direction.N, rng)  # walls pile up; no point is ever scored
    # Due at turn >= 1000 and ending a round: turn 1009 is the first such, so 1010 turns played.
    assert state.turn == 1010 and state.winner == 0


def test_commands_out_of_range_and_after_the_end_are_refused() -> None:
    state = arena_with_flower_far()
    with pytest.raises(ValueError):
        apply_command(state, 4, 0, FixedRng())
    with pytest.raises(ValueError):
        apply_command(state, 0, 8, FixedRng())
    forfeit(state, 0)
    assert state.game_over and state.winner == 1
    with pytest.raises(ValueError):
        apply_command(state, 0, 0, FixedRng())


def test_grid_digits_round_trip() -> None:
    state = new_arena(random.Random(3))
    digits = state.grid_digits()
    assert len(digits) == ROWS * COLS and digits.isdigit()
    assert bytes(int(c) for c in digits) == bytes(state.cells)
