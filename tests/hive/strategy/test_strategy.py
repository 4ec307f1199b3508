"""World model and strategy: merging views, freshness, and each tactical rule."""

from __future__ import annotations

import random

import pytest

from agent.games.hive.opponents.bots import ExampleBot, OurBot, Player, make_bot
from agent.games.hive.opponents.sim import play
from agent.games.hive.protocol import BeeView, parse_state
from agent.games.hive.rules import (
    CELLS,
    COLS,
    Action,
    ArenaState,
    Cell,
    Direction,
    apply_command,
    empty_arena,
    new_arena,
    step,
    view,
)
from agent.games.hive.strategy import guard
from agent.games.hive.strategy.paths import BLOCKED, INF, distance_field
from agent.games.hive.strategy.plan import BeeOrder, Plan
from agent.games.hive.strategy.strategy import new_strategy
from agent.games.hive.strategy.world import NEVER, new_world


def state_view(state: ArenaState) -> BeeView:
    return parse_state(",".join(map(str, view(state))))


def put(state: ArenaState, player: int, bee: int, row: int, col: int, carrying: bool = False) -> None:
    state.set(*state.bees[player][bee], Cell.EMPTY)
    state.set(row, col, (Cell.BEE_0_WITH_FLOWER if carrying else Cell.BEE_0) + player)
    state.bees[player][bee] = (row, col)


def test_world_knows_hives_and_merges_views_with_their_turn() -> None:
    world = new_world(0)
    assert world.cells[12 * COLS + 1] == Cell.HIVE_0 and world.cells[12 * COLS + 28] == Cell.HIVE_1
    assert world.seen[0] == NEVER
    state = empty_arena()
    state.set(9, 4, Cell.FLOWER)
    world.update(state_view(state))
    assert world.cells[9 * COLS + 4] == Cell.FLOWER and world.seen[9 * COLS + 4] == 0
    assert world.flowers() == [9 * COLS + 4]
    assert not world.known(0)
    state.turn = 20
    state.set(9, 4, Cell.EMPTY)
    world.update(state_view(state))
    assert world.flowers() == [] and world.age(9 * COLS + 4) == 0


def test_world_forgets_where_our_bee_was_when_it_moved() -> None:
    world = new_world(0)
    state = empty_arena()
    world.update(state_view(state))
    apply_command(state, Action.MOVE, Direction.E, random.Random(0))  # bee 0 to (10, 3)
    state.turn = 10
    world.update(state_view(state))
    assert world.cells[10 * COLS + 2] == Cell.EMPTY and world.bees[0].position == 10 * COLS + 3


def test_map_render_marks_everything() -> None:
    world = new_world(1)
    text = world.render()
    rows = text.splitlines()
    assert len(rows) == 25 and all(len(r) == 30 for r in rows)
    assert rows[12][28] == "H" and rows[12][1] == "h" and rows[0][0] == "?"


def test_distance_field_goes_around_walls_and_respects_blocked() -> None:
    costs = bytearray([1] * CELLS)
    for r in range(24):
        costs[r * COLS + 5] = BLOCKED
    dist = distance_field(costs, [0])
    assert dist[4] == 4
    assert dist[6] == 48  # 24 steps to (24, 5) under the barrier, 24 back up to (0, 6)
    assert distance_field(costs, [0], until={1})[1] == 1
    closed = bytearray([BLOCKED] * CELLS)
    assert distance_field(closed, [0])[1] == INF


ALL_FORAGE = Plan(bees=[BeeOrder(bee=b, role="forage") for b in range(5)], aggression=0.5)
"""Bee 0 (the active bee of most tests) is a raider by default: the foraging tests name it a forager."""


def decide(state: ArenaState, plan: Plan | None = ALL_FORAGE, seed: int = 0) -> tuple[int, int, str]:
    strategy = new_strategy(state.turn % 2, seed, plan)
    d = strategy.decide(state_view(state))
    return d.action, d.direction, d.reason


def test_a_carrier_next_to_our_hive_delivers() -> None:
    state = empty_arena()
    state.set(1, 1, Cell.FLOWER)
    put(state, 0, 0, 11, 1, carrying=True)
    assert decide(state)[:2] == (Action.FORAGE, Direction.S)


def test_a_carrier_next_to_the_enemy_hive_never_feeds_it() -> None:
    state = empty_arena()
    state.set(1, 1, Cell.FLOWER)
    put(state, 0, 0, 11, 28, carrying=True)
    put(state, 1, 0, 0, 29)
    action, _, _ = decide(state)
    assert action != Action.FORAGE
    assert action == Action.MOVE


def test_a_carrier_heads_home() -> None:
    state = empty_arena()
    state.set(1, 1, Cell.FLOWER)
    put(state, 0, 0, 12, 10, carrying=True)
    action, direction, _ = decide(state)
    assert action == Action.MOVE and step(12, 10, direction)[1] == 9


def test_an_adjacent_flower_is_picked_up() -> None:
    state = empty_arena()
    state.set(9, 2, Cell.FLOWER)
    assert decide(state)[:2] == (Action.FORAGE, Direction.N)


def test_an_adjacent_enemy_carrier_is_knocked() -> None:
    state = empty_arena()
    state.set(1, 1, Cell.FLOWER)
    put(state, 1, 0, 9, 3, carrying=True)
    action, direction, reason = decide(state)
    assert (action, direction) == (Action.GUARD, Direction.NE) and "knock" in reason


def test_a_flower_in_view_is_approached() -> None:
    state = empty_arena()
    state.set(10, 5, Cell.FLOWER)
    action, direction, _ = decide(state)
    assert action == Action.MOVE and step(10, 2, direction) in {(10, 3), (9, 3), (11, 3)}


def clear_other_bees(state: ArenaState) -> None:
    """Park every bee but player 0's bee 0 along the top row, out of the way."""
    for player in (0, 1):
        for bee in range(5):
            if (player, bee) != (0, 0):
                put(state, player, bee, 0, 2 + 3 * bee + 15 * player)


def test_a_carrier_boxed_in_by_walls_breaks_the_one_towards_home() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    put(state, 0, 0, 12, 8, carrying=True)
    for d in range(8):
        state.set(*step(12, 8, d), Cell.WALL)
    action, direction, _ = decide(state)
    assert action == Action.GUARD and step(12, 8, direction)[1] == 7


def test_a_walled_in_hive_is_opened() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    put(state, 0, 0, 12, 3, carrying=True)
    for d in range(8):
        r, c = step(12, 1, d)
        if state.get(r, c) == Cell.EMPTY:
            state.set(r, c, Cell.WALL)
    action, direction, _ = decide(state)
    assert action == Action.GUARD and state.get(*step(12, 3, direction)) == Cell.WALL


ONLY_BEE_0_RAIDS = [BeeOrder(bee=0, role="raid"), *(BeeOrder(bee=b, role="forage") for b in range(1, 5))]


def test_a_raider_walls_the_enemy_hive() -> None:
    state = empty_arena()
    state.set(1, 1, Cell.FLOWER)
    put(state, 0, 0, 10, 29)
    plan = Plan(bees=ONLY_BEE_0_RAIDS, aggression=1.0)
    action, direction, _ = decide(state, plan)
    assert action == Action.BUILD and step(10, 29, direction) == (11, 29)


def beside_an_enemy_carrier(ours: tuple[int, int], theirs: tuple[int, int]) -> ArenaState:
    """Player 0's bee 0 at ``ours``, player 1's bee 0 carrying at ``theirs``, the others far away."""
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    put(state, 0, 0, *ours)
    put(state, 1, 0, *theirs, carrying=True)
    return state


def test_a_raider_on_its_way_does_not_stop_to_knock() -> None:
    state = beside_an_enemy_carrier((12, 10), (12, 11))
    action, _, reason = decide(state, Plan(bees=ONLY_BEE_0_RAIDS, aggression=0.5))
    assert action == Action.MOVE and reason == "go blockade the enemy hive"
    assert decide(state)[2] == "knock the flower off an enemy carrier"  # a forager does knock


def test_default_roles_follow_the_seat_and_the_aggression() -> None:
    # The two foragers' turns follow each other: 1 and 2 as player 0, 0 and 1 as player 1.
    first = new_strategy(0, 0)
    assert [first.role_of(b) for b in range(5)] == ["raid", "forage", "forage", "raid", "raid"]
    second = new_strategy(1, 0)
    assert [second.role_of(b) for b in range(5)] == ["forage", "forage", "raid", "raid", "raid"]
    first.plan = Plan(bees=[], aggression=0.1)
    assert first.role_of(3) == "forage"


def test_a_raider_breaks_into_a_walled_in_ring_and_holds_its_post() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    for d in range(8):
        r, c = step(12, 28, d)
        if state.get(r, c) == Cell.EMPTY:
            state.set(r, c, Cell.WALL)
    put(state, 0, 0, 12, 26)
    hold = Plan(bees=ONLY_BEE_0_RAIDS, aggression=0.9)
    action, direction, reason = decide(state, hold)
    assert reason.startswith("go blockade the enemy hive")
    assert action == Action.GUARD or state.get(*step(12, 26, direction)) == Cell.EMPTY
    state.set(11, 28, Cell.EMPTY)
    put(state, 0, 0, 11, 28)  # on the north post, every other ring cell walled
    action, direction, reason = decide(state, hold)
    assert action == Action.BUILD and step(11, 28, direction) in {(10, 27), (10, 28), (10, 29)}
    assert reason == "wall the enemy hive's second ring"
    for col in (27, 28, 29):
        state.set(10, col, Cell.WALL)
    action, direction, reason = decide(state, hold)
    assert action == Action.MOVE and state.get(*step(11, 28, direction)) != Cell.EMPTY  # stays put
    assert reason == "holding the enemy hive"
    leave = Plan(bees=ONLY_BEE_0_RAIDS, aggression=0.3)
    assert decide(state, leave)[2] != "holding the enemy hive"


def test_a_raider_in_the_ring_rebuilds_before_it_knocks() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    put(state, 0, 0, 11, 28)
    put(state, 1, 0, 10, 27, carrying=True)  # an enemy carrier next to the hole at (11, 27)
    for r, c in [(11, 29), (12, 27), (12, 29)]:
        state.set(r, c, Cell.WALL)
    action, direction, _ = decide(state, Plan(bees=ONLY_BEE_0_RAIDS, aggression=0.5))
    assert action == Action.BUILD and step(11, 28, direction) == (11, 27)


def test_a_coach_target_is_followed() -> None:
    state = empty_arena()
    state.set(1, 1, Cell.FLOWER)
    plan = Plan(bees=[BeeOrder(bee=0, role="explore", target=[20, 2])], aggression=0.0)
    action, direction, reason = decide(state, plan)
    assert action == Action.MOVE and step(10, 2, direction)[0] == 11 and reason == "coach's target"


def test_with_nothing_known_the_bee_explores() -> None:
    state = empty_arena()
    state.set(1, 20, Cell.FLOWER)
    action, _, reason = decide(state)
    assert action == Action.MOVE and reason == "explore"


def test_flower_claims_spread_the_bees() -> None:
    state = empty_arena()
    state.set(6, 3, Cell.FLOWER)
    state.set(16, 3, Cell.FLOWER)
    strategy = new_strategy(0, 0, ALL_FORAGE)
    targets = []
    for bee in (0, 4):
        state.turn = bee * 2
        targets.append(strategy.decide(state_view(state)).target)
    assert targets[0] != targets[1]


class NoFeedWatch:
    """Wraps a player and fails the test if it ever drops a flower into the enemy hive."""

    def __init__(self, inner: Player) -> None:
        self.inner = inner
        self.name = inner.name
        self.moves = 0

    def decide(self, v: BeeView) -> tuple[int, int]:
        action, direction = self.inner.decide(v)
        self.moves += 1
        if action == Action.FORAGE and v.carrying:
            target = v.at(*[(-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1)][direction])
            assert target != Cell.HIVE_0 + (1 - v.player), "fed the enemy hive"
            assert target == Cell.HIVE_0 + v.player, "dropped a flower outside our hive"
        return action, direction

    def bad_line(self, line: str, error: str) -> None:
        pass


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_our_strategy_beats_the_example_bot_and_never_feeds_the_enemy(seed: int) -> None:
    ours = NoFeedWatch(OurBot(seed))
    result = play((ours, ExampleBot(seed + 100)), seed=seed)
    me = result.seats[0]
    assert result.winner == me
    assert result.scores[me] >= 15


def test_same_seeds_same_match() -> None:
    a = play((OurBot(1), ExampleBot(2)), seed=4)
    b = play((OurBot(1), ExampleBot(2)), seed=4)
    assert (a.scores, a.turns, a.seats) == (b.scores, b.turns, b.seats)


def test_an_arena_with_every_kind_of_cell_is_handled() -> None:
    """Walls, flowers, enemy bees and carriers everywhere: every decision is a legal command."""
    rng = random.Random(5)
    state = new_arena(rng)
    for _ in range(120):
        r, c = rng.randrange(25), rng.randrange(30)
        if state.get(r, c) == Cell.EMPTY:
            state.set(r, c, rng.choice([Cell.WALL, Cell.FLOWER]))
    strategy = new_strategy(0, 1)
    for turn in range(0, 400, 2):
        state.turn = turn
        d = strategy.decide(state_view(state))
        assert 0 <= d.action <= 3 and 0 <= d.direction <= 7
        apply_command(state, d.action, d.direction, rng)
        if state.game_over:
            break


def test_the_forager_bot_never_raids() -> None:
    bot = make_bot("forager", 1)
    state = empty_arena()
    state.set(1, 1, Cell.FLOWER)
    bot.decide(state_view(state))
    strategy = getattr(bot, "strategy", None)
    assert strategy is not None and all(strategy.role_of(b) == "forage" for b in range(5))


# ---- the hive guard and the flower relay (against wall builders) ---------------------------

def decide_synced(state: ArenaState, seed: int = 0, plan: Plan | None = ALL_FORAGE) -> tuple[int, int, str]:
    """Like decide, with the world told where player 0's other bees really are."""
    strategy = new_strategy(0, seed, plan)
    for bee, (row, col) in enumerate(state.bees[0]):
        strategy.world.bees[bee].position = row * COLS + col
    d = strategy.decide(state_view(state))
    return d.action, d.direction, d.reason


def wall_our_ring(state: ArenaState, keep: set[tuple[int, int]]) -> None:
    for d in range(8):
        r, c = step(12, 1, d)
        if (r, c) not in keep and state.get(r, c) == Cell.EMPTY:
            state.set(r, c, Cell.WALL)


def test_a_carrier_walled_out_passes_its_flower_to_a_bee_at_our_hive() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    put(state, 0, 1, 12, 2)  # our bee inside the ring
    wall_our_ring(state, keep={(12, 2)})
    state.set(11, 3, Cell.WALL)
    state.set(13, 3, Cell.WALL)
    put(state, 0, 0, 12, 4, carrying=True)
    action, direction, reason = decide_synced(state)
    assert (action, direction) == (Action.FORAGE, Direction.W) and "pass" in reason


def test_no_flower_is_passed_to_a_bee_that_is_not_there() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    wall_our_ring(state, keep=set())
    put(state, 0, 0, 12, 4, carrying=True)
    strategy = new_strategy(0, 0)
    strategy.world.bees[1].position = 12 * COLS + 2  # believed in the ring, but a wall is seen there
    d = strategy.decide(state_view(state))
    assert d.action != Action.FORAGE


def test_a_guard_at_our_hive_takes_a_passed_flower() -> None:
    state = empty_arena()
    clear_other_bees(state)
    put(state, 0, 0, 12, 2)
    put(state, 1, 0, 11, 1)  # an enemy bee beside our hive
    state.set(13, 3, Cell.FLOWER)
    action, direction, reason = decide_synced(state)
    assert (action, direction) == (Action.FORAGE, Direction.SE) and reason == "take a passed flower"


def test_a_guard_holds_its_cell_at_a_threatened_hive_and_forages_otherwise() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    put(state, 0, 0, 12, 2)
    put(state, 1, 0, 11, 1)
    action, direction, reason = decide_synced(state)
    assert action == Action.MOVE and state.get(*step(12, 2, direction)) != Cell.EMPTY
    assert reason == "hold a cell at our hive"
    put(state, 1, 0, 0, 29)  # the enemy bee gone: no threat, the bee goes foraging
    action, _, reason = decide_synced(state)
    assert action == Action.MOVE and reason == "explore"


def test_a_guard_breaks_the_walls_sealing_our_hive() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    wall_our_ring(state, keep=set())
    put(state, 0, 0, 12, 3)
    action, direction, reason = decide_synced(state)
    assert action == Action.GUARD and reason == "break a wall sealing our hive"
    assert step(12, 3, direction) in {(11, 2), (12, 2), (13, 2)}


def test_the_first_of_two_foragers_guards_else_the_nearest_empty_handed_one() -> None:
    state = empty_arena()
    clear_other_bees(state)
    put(state, 1, 0, 11, 1)  # an enemy bee in our ring: our hive is threatened
    put(state, 0, 1, 14, 6)
    put(state, 0, 2, 12, 2)  # nearer our hive than bee 1
    strategy = new_strategy(0, 0)  # default roles as player 0: bees 1 and 2 forage, the others raid
    for bee, (row, col) in enumerate(state.bees[0]):
        strategy.world.bees[bee].position = row * COLS + col
    strategy.world.update(state_view(state))
    # Bee 1 acts just before bee 2: as the guard it opens a wall on the turn before bee 2 walks in.
    assert [strategy._is_guard(b) for b in range(5)] == [False, True, False, False, False]
    strategy.world.bees[1].carrying = True  # carrying, away from our hive: the nearest one guards
    assert strategy._is_guard(2) and not strategy._is_guard(1)
    strategy.world.bees[1].carrying = False
    strategy.adaptive = False  # the strategy before issue 31: the nearest empty-handed forager
    assert strategy._is_guard(2) and not strategy._is_guard(1)


def test_an_enemy_scout_passing_by_is_no_threat_but_walls_at_our_hive_are() -> None:
    state = empty_arena()
    clear_other_bees(state)
    put(state, 1, 0, 12, 5)  # four cells off: a scout, not a builder
    strategy = new_strategy(0, 0)
    strategy.world.update(state_view(state))
    assert not guard.threat(strategy.world)
    put(state, 1, 0, 12, 4)
    strategy.world.update(state_view(state))
    assert guard.threat(strategy.world)
    put(state, 1, 0, 0, 29)
    strategy.world.turn += 100  # the bee's last sighting grows old
    assert not guard.threat(strategy.world)
    state.set(13, 2, Cell.WALL)
    strategy.world.update(state_view(state))
    assert guard.threat(strategy.world)


def test_the_front_raider_walls_the_field_side_then_the_second_ring_then_knocks() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    put(state, 0, 0, 11, 28)  # north post
    put(state, 0, 4, 13, 28)  # south post
    put(state, 0, 3, 12, 26)  # the front: two steps out toward the field
    state.turn = 6  # player 0's bee 3

    def front_decides() -> tuple[int, int, str]:
        return decide_synced(state, plan=None)  # default roles as player 0: bees 0, 3 and 4 raid

    field_side = {(11, 27), (12, 27), (13, 27)}
    action, direction, reason = front_decides()
    assert action == Action.BUILD and step(12, 26, direction) in field_side
    assert reason == "wall the enemy hive"
    for cell in field_side:
        state.set(*cell, Cell.WALL)
    action, direction, reason = front_decides()
    assert action == Action.BUILD and step(12, 26, direction) in {(11, 26), (13, 26)}
    assert reason == "wall the enemy hive's second ring"
    state.set(11, 26, Cell.WALL)
    state.set(13, 26, Cell.WALL)
    put(state, 1, 3, 12, 25, carrying=True)  # a carrier where the front raider stands guard
    action, direction, reason = front_decides()
    assert action == Action.GUARD and step(12, 26, direction) == (12, 25)
    assert reason == "knock a carrier at the blockade"


def test_a_raider_with_nothing_to_build_knocks_a_carrier_beside_it() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    put(state, 0, 0, 11, 28)  # on the north post
    for r, c in [(11, 27), (11, 29), (12, 27), (12, 29), (13, 27), (13, 28), (13, 29),
                 (10, 27), (10, 28)]:
        state.set(r, c, Cell.WALL)
    put(state, 1, 0, 10, 29, carrying=True)  # beside the raider, on the second ring
    action, direction, reason = decide(state, Plan(bees=ONLY_BEE_0_RAIDS, aggression=0.5))
    assert action == Action.GUARD and step(11, 28, direction) == (10, 29)
    assert reason == "knock a carrier at the blockade"


def test_a_carrier_with_no_free_cell_beside_it_is_not_knocked() -> None:
    # A knock drops the flower on an empty cell beside the carrier; with none it does nothing.
    state = beside_an_enemy_carrier((5, 6), (5, 5))
    for d in range(8):
        r, c = step(5, 5, d)
        if state.get(r, c) == Cell.EMPTY:
            state.set(r, c, Cell.WALL)
    action, direction, reason = decide(state)
    assert reason != "knock the flower off an enemy carrier"
    state.set(4, 4, Cell.EMPTY)
    action, direction, reason = decide(state)
    assert (action, step(5, 6, direction), reason) == (Action.GUARD, (5, 5), "knock the flower off an enemy carrier")


def test_a_carrier_stuck_at_rebuilt_walls_walks_around_them() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    for row in range(6, 19):  # a wall line between the carrier and our hive, open above and below
        state.set(row, 4, Cell.WALL)
    put(state, 0, 0, 12, 5, carrying=True)
    strategy = new_strategy(0, 0, ALL_FORAGE)
    for row in range(6, 19):  # the map knows the whole line (another bee saw it)
        strategy.world.cells[row * COLS + 4] = Cell.WALL
        strategy.world.seen[row * COLS + 4] = 0
    for turn in range(0, 60, 10):  # six of its turns at the same place: the wall keeps coming back
        state.turn = turn
        d = strategy.decide(state_view(state))
        assert d.action == Action.GUARD and step(12, 5, d.direction)[1] == 4
    state.turn = 60
    d = strategy.decide(state_view(state))
    assert d.action == Action.MOVE and state.get(*step(12, 5, d.direction)) == Cell.EMPTY



def test_a_carrier_whose_only_way_in_is_through_our_guard_passes_it_the_flower() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    put(state, 0, 1, 11, 1)  # our guard, holding a ring cell
    wall_our_ring(state, keep={(11, 1), (12, 0)})  # (12, 0) is free, but only through the guard
    put(state, 0, 0, 10, 1, carrying=True)
    action, direction, reason = decide_synced(state)
    assert action == Action.FORAGE and "pass" in reason
    assert step(10, 1, direction) in {(10, 0), (10, 2)}


def test_against_walls_a_carrier_passes_to_our_guard_rather_than_wait_behind_it() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    put(state, 0, 1, 11, 0)  # our guard, holding a ring cell
    wall_our_ring(state, keep={(11, 0), (12, 0), (13, 0)})
    for cell in [(11, 3), (12, 3), (13, 3)]:
        state.set(*cell, Cell.WALL)
    # (12, 0) and (13, 0) are free and reachable from the south, a dozen steps around; the
    # guard does not step aside, so the carrier passes the flower beside it.
    put(state, 0, 0, 10, 1, carrying=True)
    action, direction, reason = decide_synced(state)
    assert action == Action.FORAGE and "pass" in reason and step(10, 1, direction) == (10, 0)
    # Without walls at our hive (the racers build none) a carrier there walks in and delivers.
    for row in range(9, 15):
        for col in range(4):
            if state.get(row, col) == Cell.WALL:
                state.set(row, col, Cell.EMPTY)
    action, direction, reason = decide_synced(state)
    assert action == Action.MOVE and reason == "carry home"

