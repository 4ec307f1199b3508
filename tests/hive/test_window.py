"""Which of our raiders first sees the walls of their ring opened, and the front post for it."""

from __future__ import annotations

from agent.games.hive import window
from agent.games.hive.blockade import front
from agent.games.hive.protocol import parse_state
from agent.games.hive.rules import CELLS, COLS, ArenaState, Cell, empty_arena, hive_index, step, view
from agent.games.hive.strategy import new_strategy


def at(row: int, col: int) -> int:
    return row * COLS + col


def test_the_front_walls_are_the_field_side_of_each_ring() -> None:
    assert window.front_walls(hive_index(1)) == {at(11, 27), at(12, 27), at(13, 27)}
    assert window.front_walls(hive_index(0)) == {at(11, 2), at(12, 2), at(13, 2)}


def test_an_opening_counts_for_the_first_raider_to_see_it_only() -> None:
    hive = hive_index(1)
    cells = bytearray(CELLS)
    for cell in (at(11, 27), at(13, 27), at(11, 29)):  # (11, 29) is on the far side
        cells[cell] = Cell.WALL
    sight = window.FirstSight()
    walls = sight.walls_before(cells, hive)
    assert walls == {at(11, 27), at(13, 27)}
    cells[at(11, 27)] = Cell.EMPTY  # broken since our last look
    cells[at(13, 27)] = Cell.BEE_1_WITH_FLOWER  # broken, and their carrier walked in
    cells[at(11, 29)] = Cell.EMPTY  # not beside the front post: not counted
    assert sight.merged(3, walls, cells) == 2
    # The next raider finds the map already showing them open.
    assert sight.merged(4, sight.walls_before(cells, hive), cells) == 0
    assert sight.counts == {3: 2}


def test_a_raider_is_moved_only_once_it_clearly_sees_the_most_openings() -> None:
    sight = window.FirstSight()
    assert sight.front_raider({0, 3, 4}) is None
    sight.counts = {4: window.MIN_OPENINGS - 1}
    assert sight.front_raider({0, 3, 4}) is None  # too few to tell
    sight.counts = {4: window.MIN_OPENINGS, 0: window.MIN_OPENINGS // window.LEAD + 1}
    assert sight.front_raider({0, 3, 4}) is None  # no clear lead
    sight.counts = {4: 2 * window.MIN_OPENINGS, 0: window.MIN_OPENINGS // window.LEAD, 1: 50}
    assert sight.front_raider({0, 3, 4}) == 4  # bee 1 is no raider (a forager's count is ignored)
    assert sight.front_raider({0, 3}) is None  # bee 0 alone saw too few


def test_the_front_is_swapped_to_that_raider() -> None:
    hive = hive_index(1)
    posts = {0: at(11, 28), 3: front(hive), 4: at(13, 28)}
    assert window.with_front(posts, hive, 4) == {0: at(11, 28), 3: at(13, 28), 4: front(hive)}
    assert posts == {0: at(11, 28), 3: front(hive), 4: at(13, 28)}  # not changed in place
    assert window.with_front(posts, hive, 3) is posts  # already there
    assert window.with_front(posts, hive, None) is posts
    assert window.with_front(posts, hive, 2) is posts  # not one of these raiders
    no_front = {0: at(11, 28), 4: at(13, 28)}
    assert window.with_front(no_front, hive, 4) is no_front  # nobody to swap with


def put(state: ArenaState, player: int, bee: int, row: int, col: int) -> None:
    state.set(*state.bees[player][bee], Cell.EMPTY)
    state.set(row, col, Cell.BEE_0 + player)
    state.bees[player][bee] = (row, col)


def blockade_state() -> ArenaState:
    """Player 0's raiders 0, 3 and 4 at the north post, the front and the south post of player 1's
    hive, every other cell of its ring walled; every other bee parked along the top row."""
    state = empty_arena()
    for player in (0, 1):
        for bee in range(5):
            put(state, player, bee, 0, 2 + 3 * bee + 15 * player)
    state.set(24, 20, Cell.FLOWER)
    put(state, 0, 0, 11, 28)
    put(state, 0, 3, 12, 26)
    put(state, 0, 4, 13, 28)
    for d in range(8):
        r, c = step(12, 28, d)
        if state.get(r, c) == Cell.EMPTY:
            state.set(r, c, Cell.WALL)
    return state


def test_our_raiders_learn_who_sees_openings_first_and_that_one_takes_the_front() -> None:
    state = blockade_state()
    strategy = new_strategy(0, 0)  # default roles as player 0: bees 0, 3 and 4 raid
    for bee, (row, col) in enumerate(state.bees[0]):
        strategy.world.bees[bee].position = row * COLS + col

    def turn_of(bee: int, turn: int) -> str:
        state.turn = turn
        return strategy.decide(parse_state(",".join(map(str, view(state))))).reason

    turn_of(0, 0)  # the north raider sees the ring walled
    assert strategy.first_sight.counts == {}
    # Their bee 0 breaks a wall beside the front, then our bee 1 (a forager far away) moves.
    state.set(12, 27, Cell.EMPTY)
    turn_of(1, 2)
    assert strategy.first_sight.counts == {}  # a forager's view shows nothing of their hive
    state.set(12, 27, Cell.WALL)  # rebuilt before any raider of ours looked: nothing seen
    for rnd in range(window.MIN_OPENINGS):
        assert turn_of(3, 10 * rnd + 6) != "go blockade the enemy hive"  # bee 3 keeps the front
        state.set(11, 27, Cell.EMPTY)  # their bee 3 breaks it, on the turn after ours...
        reason = turn_of(4, 10 * rnd + 8)  # ...and our bee 4 is the first to see it
        state.set(11, 27, Cell.WALL)
    assert strategy.first_sight.counts == {4: window.MIN_OPENINGS}
    assert strategy.first_sight.front_raider({0, 3, 4}) == 4
    assert reason == "go blockade the enemy hive"  # bee 4 leaves the south post for the front
    assert turn_of(3, 10 * window.MIN_OPENINGS + 6) == "go blockade the enemy hive"  # and bee 3 for the south
