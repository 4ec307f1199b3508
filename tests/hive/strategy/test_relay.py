"""The timed relay (relay.py): scoring through our guard while the enemy holds our hive sealed."""

from __future__ import annotations

import random

from agent.games.hive.rules import (
    COLS,
    Action,
    ArenaState,
    Cell,
    Direction,
    apply_command,
    empty_arena,
    step,
)
from agent.games.hive.strategy import relay
from agent.games.hive.strategy.paths import NEIGHBOURS
from agent.games.hive.strategy.strategy import Strategy, new_strategy
from agent.games.hive.strategy.world import FRESH_BEE, WorldModel, new_world
from tests.hive.strategy.test_strategy import clear_other_bees, put, state_view, wall_our_ring

HIVE_0 = 12 * COLS + 1


def at(row: int, col: int) -> int:
    return row * COLS + col


def sealed_state() -> ArenaState:
    """Player 0's hive sealed as the counter-bot ``siege-ring`` leaves it: their bees north and
    south of it in the ring and one in front of our guard (bee 1, in the field-side ring cell),
    walls in every other ring cell and in the two cells beside our guard outside the ring."""
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    put(state, 0, 1, 12, 2)
    put(state, 1, 0, 11, 1)
    put(state, 1, 2, 13, 1)
    put(state, 1, 4, 12, 3)
    wall_our_ring(state, keep=set())
    state.set(11, 3, Cell.WALL)
    state.set(13, 3, Cell.WALL)
    return state


def strategy_for(state: ArenaState, turn: int) -> Strategy:
    """Player 0's strategy at ``turn``, its world told where its bees are and what they carry,
    and what our guard saw around our hive a round before."""
    strategy = new_strategy(0, 0)
    state.turn = 2
    strategy.world.update(state_view(state))
    state.turn = turn + 10
    for bee, (row, col) in enumerate(state.bees[0]):
        strategy.world.bees[bee].position = at(row, col)
        strategy.world.bees[bee].carrying = state.get(row, col) == Cell.BEE_0_WITH_FLOWER
    return strategy


def world_of(state: ArenaState) -> WorldModel:
    world = new_world(0)
    for bee, (row, col) in enumerate(state.bees[0]):
        world.bees[bee].position = at(row, col)
        world.bees[bee].carrying = state.get(row, col) == Cell.BEE_0_WITH_FLOWER
    world.update(state_view(state))
    return world


def test_sealed_needs_a_bee_of_theirs_in_our_ring_and_no_free_cell_in_it() -> None:
    state = sealed_state()
    state.turn = 2  # our guard's view: it sees the whole ring
    assert relay.sealed(world_of(state))
    state.set(11, 0, Cell.EMPTY)
    assert not relay.sealed(world_of(state))
    state = sealed_state()
    state.turn = 2
    put(state, 1, 0, 0, 15)  # north of the hive a wall instead of their bee: walls only
    state.set(11, 1, Cell.WALL)
    put(state, 1, 2, 0, 18)
    state.set(13, 1, Cell.WALL)
    assert not relay.sealed(world_of(state))


def test_the_world_knows_enemy_bees_carrying_or_not_while_they_are_fresh() -> None:
    state = sealed_state()
    put(state, 1, 2, 13, 1, carrying=True)
    state.turn = 2
    world = world_of(state)
    assert world.enemy_bees(FRESH_BEE) == {at(11, 1), at(13, 1), at(12, 3)}
    world.turn += FRESH_BEE + 1
    assert world.enemy_bees(FRESH_BEE) == set()


def test_waiting_spots_are_beside_a_wall_next_to_our_guard_outside_the_ring_and_their_reach() -> None:
    state = sealed_state()
    put(state, 0, 0, 9, 6, carrying=True)
    state.turn = 2
    world = world_of(state)
    guard_cell = at(12, 2)
    spots = relay.waiting_spots(world, [guard_cell], at(9, 6), world.enemy_bees(FRESH_BEE))
    enemies = {at(11, 1), at(13, 1), at(12, 3)}
    ring = set(NEIGHBOURS[HIVE_0])
    assert spots
    for spot in spots:
        assert spot not in ring
        assert not any(n in enemies for n in NEIGHBOURS[spot])
        assert any(world.cells[w] == Cell.WALL and w in NEIGHBOURS[guard_cell] for w in NEIGHBOURS[spot])
    assert at(10, 4) in spots and at(14, 4) in spots
    assert at(12, 4) not in spots  # beside their bee in front of our guard: it would knock us
    avoid = frozenset({at(11, 3)})
    assert at(10, 4) not in relay.waiting_spots(world, [guard_cell], at(9, 6), world.enemy_bees(FRESH_BEE), avoid)


def test_a_sealed_out_carrier_goes_to_wait_beside_a_wall_of_our_ring_and_then_waits() -> None:
    state = sealed_state()
    put(state, 0, 0, 9, 7, carrying=True)
    d = strategy_for(state, 0).decide(state_view(state))
    assert d.action == Action.MOVE and d.reason == "go wait beside our guard"
    assert state.get(*step(9, 7, d.direction)) == Cell.EMPTY
    # Beside (11, 3), a wall outside the ring: it moves on to (10, 3), beside the ring wall (11, 2).
    put(state, 0, 0, 10, 4, carrying=True)
    d = strategy_for(state, 0).decide(state_view(state))
    assert (d.action, d.direction, d.reason) == (Action.MOVE, Direction.W, "go wait beside our guard")
    put(state, 0, 0, 10, 3, carrying=True)
    d = strategy_for(state, 0).decide(state_view(state))
    assert d.reason == "wait beside a wall of our ring"
    assert d.action == Action.MOVE and state.get(*step(10, 3, d.direction)) != Cell.EMPTY


def test_walk_in_spots_are_beside_a_ring_wall_when_there_are_any() -> None:
    state = sealed_state()
    put(state, 0, 0, 9, 6, carrying=True)
    state.turn = 2
    world = world_of(state)
    guard_cell, enemies = at(12, 2), world.enemy_bees(FRESH_BEE)
    assert relay.ring_walls(world, [guard_cell]) == {at(11, 2), at(13, 2)}
    spots = relay.walk_in_spots(world, [guard_cell], at(9, 6), enemies)
    assert spots == {at(10, 3), at(14, 3)}
    walls = relay.ring_walls(world, [guard_cell])
    assert relay.beside_ring_wall(world, at(10, 3), walls)
    assert not relay.beside_ring_wall(world, at(10, 4), walls)
    # Both ring walls left alone: the spots beside the walls outside the ring.
    avoid = frozenset({at(11, 2), at(13, 2)})
    assert relay.walk_in_spots(world, [guard_cell], at(9, 6), enemies, avoid) == relay.waiting_spots(
        world, [guard_cell], at(9, 6), enemies, avoid)


def test_a_carrier_beside_a_ring_wall_and_one_of_their_bees_goes_to_wait_out_of_its_reach() -> None:
    state = sealed_state()
    put(state, 0, 0, 14, 3, carrying=True)  # beside the ring wall (13, 2)
    put(state, 1, 3, 15, 3)  # and beside their bee: it would knock the flower off every round
    d = strategy_for(state, 0).decide(state_view(state))
    assert (d.action, d.reason) == (Action.MOVE, "go wait beside our guard")
    assert state.get(*step(14, 3, d.direction)) == Cell.EMPTY
    # No spot beside a wall of our guard out of their reach: it waits where it is.
    state.set(10, 3, Cell.WALL)
    put(state, 1, 1, 9, 4)
    d = strategy_for(state, 0).decide(state_view(state))
    assert d.reason == "wait beside a wall of our ring"


def test_a_carrier_counts_a_ring_wall_found_rebuilt_and_leaves_it_once_shunned() -> None:
    state = sealed_state()
    put(state, 0, 0, 10, 3, carrying=True)  # beside the ring wall (11, 2)
    strategy = strategy_for(state, 0)
    strategy.openings.tried(at(11, 2), state.turn - 2)  # our guard broke it; it is back
    d = strategy.decide(state_view(state))
    assert d.reason == "wait beside a wall of our ring"
    assert strategy.openings.misses == {at(11, 2): 1}
    strategy.openings.shunned[at(11, 2)] = state.turn + relay.SHUN_TURNS
    d = strategy.decide(state_view(state))
    # Off to the other ring wall beside our guard, (13, 2), from its far side at (14, 3).
    assert (d.action, d.reason) == (Action.MOVE, "go wait beside our guard")


def test_the_sealed_guard_breaks_only_a_wall_a_carrier_waits_beside() -> None:
    state = sealed_state()
    put(state, 0, 0, 10, 4, carrying=True)
    d = strategy_for(state, 2).decide(state_view(state))  # turn 2: our bee 1, the guard
    assert (d.action, d.direction, d.reason) == (Action.GUARD, Direction.NE, "open a cell for a waiting carrier")
    put(state, 0, 0, 10, 3, carrying=True)  # beside the ring wall (11, 2) and (11, 3): the ring's first
    d = strategy_for(state, 2).decide(state_view(state))
    assert (d.action, d.direction, d.reason) == (Action.GUARD, Direction.N, "open a cell for a waiting carrier")
    put(state, 0, 0, 20, 20, carrying=True)  # no carrier beside any wall: it holds its cell
    d = strategy_for(state, 2).decide(state_view(state))
    assert d.reason == "hold a cell at our hive" and d.action == Action.MOVE


def test_the_waiting_carrier_walks_into_an_opened_ring_cell() -> None:
    state = sealed_state()
    put(state, 0, 0, 10, 3, carrying=True)
    state.set(11, 2, Cell.EMPTY)  # our guard broke it and their bee has not rebuilt it yet
    d = strategy_for(state, 0).decide(state_view(state))
    assert (d.action, d.direction, d.reason) == (Action.MOVE, Direction.SW, "walk into our hive's ring")


def test_an_opened_cell_beside_a_ring_wall_is_stepped_into_not_dropped_on() -> None:
    state = sealed_state()
    put(state, 0, 0, 10, 4, carrying=True)
    state.set(11, 3, Cell.EMPTY)  # opened, and beside the ring wall (11, 2)
    d = strategy_for(state, 0).decide(state_view(state))
    assert (d.action, d.direction, d.reason) == (Action.MOVE, Direction.SW, "step beside a wall of our ring")


def without_ring_walls(state: ArenaState) -> ArenaState:
    """The sealed hive with their bees, not walls, in the ring cells beside our guard: no ring
    wall to walk in through, so the flower is passed."""
    put(state, 1, 1, 11, 2)
    put(state, 1, 3, 13, 2)
    return state


def test_the_waiting_carrier_drops_its_flower_in_an_opened_cell_with_no_ring_wall_beside_it() -> None:
    state = without_ring_walls(sealed_state())
    put(state, 0, 0, 10, 4, carrying=True)
    state.set(11, 3, Cell.EMPTY)  # our guard broke it and their bee has not rebuilt it yet
    d = strategy_for(state, 0).decide(state_view(state))
    assert (d.action, d.direction) == (Action.FORAGE, Direction.SW) and "pass" in d.reason


def stand_still(state: ArenaState) -> int:
    """A direction into a cell that is not free: the active bee's command changes nothing."""
    row, col = state.bees[state.turn % 2][(state.turn // 2) % 5]
    return next(d for d in range(8) if state.get(*step(row, col, d)) != Cell.EMPTY)


def relay_until_a_point(state: ArenaState, carrier: tuple[int, int]) -> list[str]:
    """Our strategy plays player 0 through the rules engine, their bees stand still; the reasons
    of our carrier (bee 0) and guard (bee 1) until we score."""
    put(state, 0, 0, *carrier, carrying=True)
    strategy = strategy_for(state, 0)
    state.turn = 10
    rng = random.Random(3)
    reasons = []
    for _ in range(30 * 10):
        if state.turn % 2 == 0:
            d = strategy.decide(state_view(state))
            if state.turn // 2 % 5 in (0, 1):
                reasons.append(d.reason)
            apply_command(state, d.action, d.direction, rng)
        else:
            apply_command(state, Action.MOVE, stand_still(state), rng)
        if state.scores[0]:
            break
    assert state.scores == [1, 0]
    return reasons


def test_a_walk_in_through_a_seal_scores_when_nobody_rebuilds_in_time() -> None:
    reasons = relay_until_a_point(sealed_state(), (10, 4))
    assert reasons[-1] == "deliver" and "walk into our hive's ring" in reasons
    assert reasons.index("open a cell for a waiting carrier") < reasons.index("walk into our hive's ring")
    assert "pass the flower to a guard at our hive" not in reasons


def test_a_relay_through_a_seal_scores_when_nobody_rebuilds_in_time() -> None:
    reasons = relay_until_a_point(without_ring_walls(sealed_state()), (10, 4))
    steps = ["open a cell for a waiting carrier", "pass the flower to a guard at our hive", "take a passed flower",
             "deliver"]
    assert [r for r in reasons if r in steps][-4:] == steps


def carrier_waiting() -> WorldModel:
    """The sealed hive as our carrier waiting beside the wall at (11, 3) knows it."""
    state = sealed_state()
    put(state, 0, 0, 10, 4, carrying=True)
    return world_of(state)


def test_openings_leave_alone_a_wall_found_rebuilt_every_time() -> None:
    world, openings, wall = carrier_waiting(), relay.Openings(), at(11, 3)
    for _ in range(relay.MISSES):
        assert wall not in openings.avoided(world.turn)
        openings.tried(wall, world.turn)
        world.turn += 2  # the carrier's turn, with the wall back
        openings.seen_by_carrier(world, at(10, 4))
        world.turn += 8
    assert wall in openings.avoided(world.turn)
    assert wall not in openings.avoided(world.turn + relay.SHUN_TURNS)


def test_openings_forget_the_misses_once_the_wall_was_found_open_and_ignore_old_tries() -> None:
    world, openings, wall = carrier_waiting(), relay.Openings(), at(11, 3)
    for _ in range(relay.MISSES - 1):
        openings.tried(wall, world.turn)
        openings.seen_by_carrier(world, at(10, 4))
    world.cells[wall] = Cell.EMPTY
    openings.tried(wall, world.turn)
    openings.seen_by_carrier(world, at(10, 4))
    world.cells[wall] = Cell.WALL
    for _ in range(relay.MISSES - 1):
        openings.tried(wall, world.turn)
        openings.seen_by_carrier(world, at(10, 4))
    assert wall not in openings.avoided(world.turn)
    openings.tried(wall, world.turn - 20)  # two rounds ago: not this round's try
    for _ in range(3):
        openings.seen_by_carrier(world, at(10, 4))
    assert wall not in openings.avoided(world.turn)


def test_wall_to_open_prefers_a_ring_wall_then_the_wall_with_fewer_of_their_bees_beside_it() -> None:
    state = sealed_state()
    put(state, 0, 0, 12, 5, carrying=True)  # beside neither wall
    state.turn = 2
    assert relay.wall_to_open(world_of(state), at(12, 2), 1) is None
    put(state, 0, 0, 10, 2, carrying=True)  # beside the ring wall (11, 2) and (11, 3) both
    world = world_of(state)
    # (11, 2) touches two of their bees, (11, 3) one, but through (11, 2) the carrier walks in.
    assert relay.wall_to_open(world, at(12, 2), 1) == at(11, 2)
    assert relay.wall_to_open(world, at(12, 2), 1, frozenset({at(11, 2)})) == at(11, 3)
    # Two walls outside the ring: the one with fewer of their bees beside it (a flower dropped
    # there is likelier to survive).
    put(state, 0, 0, 12, 4, carrying=True)  # beside (11, 3) and (13, 3)
    put(state, 1, 1, 14, 3)  # beside (13, 3): two of theirs there, one at (11, 3)
    assert relay.wall_to_open(world_of(state), at(12, 2), 1, frozenset({at(11, 2), at(13, 2)})) == at(11, 3)


def our_guard_at(row: int, col: int) -> ArenaState:
    """An arena with our guard (player 0's bee 1, the first of its two foragers) at (row, col)
    and every other bee far away."""
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    put(state, 0, 0, 20, 20)
    put(state, 0, 1, row, col)
    return state


def test_our_guard_takes_a_middle_cell_of_our_ring_not_a_corner() -> None:
    # A corner touches two other ring cells, a side's middle four: between two of their bees a
    # guard in a corner has no ring wall beside it to open for a carrier.
    state = our_guard_at(12, 3)  # outside the ring, beside (11, 2), (12, 2) and (13, 2)
    put(state, 1, 0, 11, 1)  # a bee of theirs north of our hive
    state.turn = 2
    world = world_of(state)
    enemies = world.enemy_bees(FRESH_BEE)
    assert relay.ring_cell_worth(world, at(12, 2), enemies) == 3  # (11, 2), (13, 1), (13, 2)
    assert relay.ring_cell_worth(world, at(13, 2), enemies) == 2
    assert relay.ring_cell_worth(world, at(11, 2), enemies) == 1
    d = strategy_for(state, 2).decide(state_view(state))
    assert (d.action, d.direction, d.reason) == (Action.MOVE, Direction.W, "step into our hive's ring")


def test_our_guard_in_a_corner_moves_over_to_a_free_middle_cell_and_then_stays() -> None:
    state = our_guard_at(13, 2)
    state.set(11, 0, Cell.WALL)  # a wall in our ring: our hive is threatened
    d = strategy_for(state, 2).decide(state_view(state))
    assert (d.action, d.direction, d.reason) == (Action.MOVE, Direction.N, "step into our hive's ring")
    put(state, 0, 1, 12, 2)
    d = strategy_for(state, 2).decide(state_view(state))
    assert d.reason == "hold a cell at our hive"
