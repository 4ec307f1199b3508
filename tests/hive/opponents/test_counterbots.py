"""The counter-bots (built to beat our strategy) and the strategy's answers to them (issue 31)."""

from __future__ import annotations

import random
from itertools import combinations
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.games.hive.opponents.bots import BOTS, make_bot
from agent.games.hive.opponents.counterbots import RECIPES, CounterBot, CounterStrategy
from agent.games.hive.protocol import parse_state
from agent.games.hive.rules import (
    COLS,
    Action,
    ArenaState,
    Cell,
    apply_command,
    empty_arena,
    new_arena,
    step,
    view,
)
from agent.games.hive.strategy import blockade, guard
from agent.games.hive.strategy.paths import NEIGHBOURS
from agent.games.hive.strategy.strategy import DEFAULT_RAIDERS, HOLDER_TURNS, Strategy, new_strategy
from agent.games.hive.strategy.world import new_world
from tests.hive.strategy.test_strategy import clear_other_bees, put, state_view, wall_our_ring

HIVE_0 = 12 * COLS + 1
HIVE_1 = 12 * COLS + 28


def at(row: int, col: int) -> int:
    return row * COLS + col


def synced(strategy: Strategy, state: ArenaState, player: int = 0) -> Strategy:
    """Tell the strategy where its player's bees really are (as their own views would)."""
    for bee, (row, col) in enumerate(state.bees[player]):
        strategy.world.bees[bee].position = row * COLS + col
    return strategy


# ---- the pool --------------------------------------------------------------------------------

def test_every_counter_bot_is_a_bot_of_the_evaluation() -> None:
    assert set(RECIPES) <= set(BOTS)
    for name in RECIPES:
        assert make_bot(name, 1).name == name


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_every_counter_bot_plays_legal_commands_for_a_while(name: str) -> None:
    rng = random.Random(5)
    state = new_arena(rng)
    players = (make_bot("ours", 1), make_bot(name, 2))
    actions = set()
    while not state.game_over and state.turn < 1500:
        turn, player, bee, row, col, digits = view(state)
        action, direction = players[player].decide(parse_state(f"{turn},{player},{bee},{row},{col},{digits}"))
        assert 0 <= action < 4 and 0 <= direction < 8
        if player == 1:
            actions.add(action)
        apply_command(state, action, direction, rng)
    assert Action.FORAGE in actions  # it plays the game, not only waits


def test_the_ring_siege_comes_with_every_choice_of_three_raiders() -> None:
    timings = {name: recipe for name, recipe in RECIPES.items() if name.startswith("siege-ring-")}
    raider_sets = {frozenset(recipe.jobs_for(0)) for recipe in timings.values()}
    # Ten choices of three bees of five; (0, 2, 4) is ``siege-ring`` itself.
    assert len(timings) == 9 and frozenset({0, 2, 4}) not in raider_sets and len(raider_sets) == 9
    for name, recipe in timings.items():
        assert recipe.ring_siege and recipe.start == 0
        assert recipe.jobs_for(1) == recipe.jobs_for(0) == dict.fromkeys(map(int, name[-3:]), "raid")


def test_ring_posts_are_ring_cells_with_the_field_side_middle_instead_of_the_front() -> None:
    for hive, middle in ((HIVE_1, at(12, 27)), (HIVE_0, at(12, 2))):
        ring_posts = blockade.ring_posts(hive)
        assert set(ring_posts) == set(blockade.ring(hive))
        assert ring_posts[:3] == [blockade.posts(hive)[0], blockade.posts(hive)[1], middle]


def counter(state: ArenaState, name: str, player: int = 1) -> CounterStrategy:
    bot = make_bot(name, 0)
    bot.decide(state_view(state))
    strategy = bot.strategy  # type: ignore[attr-defined]
    assert isinstance(strategy, CounterStrategy)
    return strategy


def test_the_siege_ring_raiders_head_for_our_ring_and_the_late_one_forages_first() -> None:
    state = empty_arena()
    state.turn = 1  # player 1, bee 0 (a raider of siege-ring)
    state.set(5, 20, Cell.FLOWER)
    strategy = counter(state, "siege-ring")
    assert strategy.role_of(0) == "raid" and strategy.role_of(1) == "forage"
    assert strategy.post_order(HIVE_0) == blockade.ring_posts(HIVE_0)
    late = counter(state, "siege-late")
    assert late.role_of(0) == "forage"
    late.world.turn = 1500
    assert late.role_of(0) == "raid"


def test_the_siege_twin_chooses_its_raiders_by_seat_as_ours_do() -> None:
    state = empty_arena()
    state.set(5, 20, Cell.FLOWER)
    for player in (0, 1):
        state.turn = player
        twin = counter(state, "siege-twin")
        ours = new_strategy(player, 0)
        assert [twin.role_of(b) for b in range(5)] == [ours.role_of(b) for b in range(5)]
        assert twin.post_order(HIVE_0) == blockade.ring_posts(HIVE_0)


def test_a_hunter_knocks_an_adjacent_carrier_and_lies_in_wait_by_our_hive() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.turn = 1  # player 1, bee 0: a hunter
    put(state, 1, 0, 12, 10)
    put(state, 0, 1, 12, 11, carrying=True)
    strategy = CounterStrategy(world=new_world(1), jobs={0: "hunt"})
    d = strategy.decide(state_view(state))
    assert d.action == Action.GUARD and step(12, 10, d.direction) == (12, 11)
    put(state, 0, 1, 0, 29)  # the carrier gone: the hunter heads for the column two out of our hive
    strategy = CounterStrategy(world=new_world(1), jobs={0: "hunt"})
    d = strategy.decide(state_view(state))
    assert d.action == Action.MOVE and step(12, 10, d.direction)[1] == 9


def test_a_denier_destroys_flowers_on_our_half_only() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.turn = 1
    put(state, 1, 0, 12, 10)
    state.set(12, 11, Cell.FLOWER)  # our half (player 0's hive is at column 1)
    d = CounterStrategy(world=new_world(1), jobs={0: "deny"}).decide(state_view(state))
    assert d.action == Action.GUARD and step(12, 10, d.direction) == (12, 11)
    put(state, 1, 0, 12, 20)
    state.set(12, 11, Cell.EMPTY)
    state.set(12, 21, Cell.FLOWER)  # their own half: picked up, not destroyed
    d = CounterStrategy(world=new_world(1), jobs={0: "deny"}).decide(state_view(state))
    assert d.action == Action.FORAGE and step(12, 20, d.direction) == (12, 21)


def test_the_mirror_is_our_strategy_before_it_adapted() -> None:
    state = empty_arena()
    strategy = counter(state, "mirror", player=0)
    assert not strategy.adaptive and strategy.role_of(0) == "raid" and strategy.role_of(1) == "forage"
    assert new_strategy(0).adaptive


# ---- reading the siege ---------------------------------------------------------------------

def test_two_enemy_bees_closing_in_are_a_siege_on_its_way_one_is_not() -> None:
    state = empty_arena()
    clear_other_bees(state)
    put(state, 0, 0, 12, 5)  # our bee sees (9..15, 2..8)
    put(state, 1, 0, 10, 7)
    world = new_world(0)
    world.update(state_view(state))
    assert not guard.incoming(world) and not guard.threat(world, early=True)
    put(state, 1, 1, 14, 7)
    world.update(state_view(state))
    assert guard.incoming(world) and guard.threat(world, early=True) and not guard.threat(world)
    world.turn += 100  # seen long ago: gone by now
    assert not guard.incoming(world)


def test_enemy_carriers_near_our_hive_are_no_siege() -> None:
    state = empty_arena()
    clear_other_bees(state)
    put(state, 0, 0, 12, 5)
    put(state, 1, 0, 10, 7, carrying=True)
    put(state, 1, 1, 14, 7, carrying=True)
    world = new_world(0)
    world.update(state_view(state))
    assert not guard.incoming(world)


def test_holders_are_the_enemy_bees_in_our_ring() -> None:
    state = empty_arena()
    clear_other_bees(state)
    put(state, 0, 0, 12, 3)
    put(state, 1, 0, 11, 1)
    put(state, 1, 1, 12, 4)  # beside our bee, not in our ring
    world = new_world(0)
    world.update(state_view(state))
    assert guard.holders(world) == [at(11, 1)]


# ---- answering it --------------------------------------------------------------------------

def test_a_guard_steps_into_a_free_ring_cell_before_breaking_walls() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    wall_our_ring(state, keep={(12, 2)})
    put(state, 1, 0, 11, 1)  # a besieger in our ring
    put(state, 0, 0, 12, 3)
    for adaptive in (True, False):
        strategy = synced(new_strategy(0, 0), state)
        strategy.adaptive = adaptive
        strategy.role_of = lambda bee: "forage"  # type: ignore[method-assign]
        d = strategy.decide(state_view(state))
        if adaptive:
            assert d.action == Action.MOVE and step(12, 3, d.direction) == (12, 2)
        else:  # before: it broke a wall first, and the besieger beside the cell rebuilt it
            assert d.action == Action.GUARD


def test_a_forager_guards_our_hive_as_soon_as_a_siege_closes_in() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    put(state, 0, 0, 12, 6)
    put(state, 1, 0, 10, 5)
    put(state, 1, 1, 14, 5)  # two enemy bees four cells from our hive
    for adaptive, reason in ((True, "go guard our hive"), (False, "explore")):
        strategy = synced(new_strategy(0, 0), state)
        strategy.adaptive = adaptive
        strategy.role_of = lambda bee: "forage"  # type: ignore[method-assign]
        assert strategy.decide(state_view(state)).reason == reason


def test_a_carrier_does_not_wait_behind_an_enemy_bee_holding_our_ring() -> None:
    state = empty_arena()
    clear_other_bees(state)
    state.set(24, 20, Cell.FLOWER)
    wall_our_ring(state, keep={(12, 2)})
    put(state, 1, 0, 12, 2)  # their bee in the one open ring cell: it never leaves
    put(state, 0, 0, 12, 3, carrying=True)
    strategy = synced(new_strategy(0, 0), state)
    d = strategy.decide(state_view(state))
    # Not a wait behind the holder: the carrier breaks into the ring beside it.
    assert d.action == Action.GUARD and step(12, 3, d.direction) in {(11, 2), (13, 2)}


def test_relay_drops_are_flowers_beside_their_bee_in_their_ring() -> None:
    state = empty_arena()
    clear_other_bees(state)
    put(state, 1, 0, 11, 27)  # their bee in their own ring (their hive at (12, 28))
    state.set(10, 26, Cell.FLOWER)  # beside it: passed to it
    state.set(12, 25, Cell.FLOWER)  # beside our raider only
    cells = state.cells
    me = at(11, 25)
    assert blockade.relay_drops(HIVE_1, me, cells, int(Cell.BEE_1)) == [at(10, 26)]
    assert blockade.relay_drops(HIVE_1, me, cells, int(Cell.BEE_0)) == []


def test_a_raider_takes_a_flower_passed_to_their_bee_in_their_ring() -> None:
    state = empty_arena()
    clear_other_bees(state)
    put(state, 1, 1, 11, 27)
    state.set(10, 26, Cell.FLOWER)
    put(state, 0, 0, 11, 25)  # bee 0: a raider by default
    for adaptive in (True, False):
        strategy = synced(new_strategy(0, 0), state)
        strategy.adaptive = adaptive
        d = strategy.decide(state_view(state))
        if adaptive:  # taken, it is gone for sure; guarded, one try in two
            assert d.action == Action.FORAGE and step(11, 25, d.direction) == (10, 26)
            assert d.reason == "take a flower passed to their hive"
        else:
            assert not (d.action in (Action.GUARD, Action.FORAGE) and step(11, 25, d.direction) == (10, 26))


def test_a_raider_holding_such_a_flower_breaks_the_next_one_and_stays_at_the_blockade() -> None:
    state = empty_arena()
    clear_other_bees(state)
    put(state, 1, 1, 11, 27)
    state.set(10, 26, Cell.FLOWER)
    put(state, 0, 0, 11, 26, carrying=True)  # two cells from their hive, holding a taken flower
    strategy = synced(new_strategy(0, 0), state)
    d = strategy.decide(state_view(state))
    assert d.action == Action.GUARD and step(11, 26, d.direction) == (10, 26)
    state.set(10, 26, Cell.EMPTY)
    put(state, 1, 1, 0, 20)  # nothing passed any more: it goes on with the blockade, not home
    strategy = synced(new_strategy(0, 0), state)
    d = strategy.decide(state_view(state))
    assert d.reason not in ("carry home", "deliver") and d.target == HIVE_1


def test_the_enclosure_of_their_guard_leaves_no_drop_cell_open_with_the_north_and_south_posts() -> None:
    for holder in (at(11, 27), at(12, 27), at(13, 27), at(11, 28)):
        drops = set(blockade.drop_cells(HIVE_1, holder))
        assert drops and not drops & set(blockade.ring(HIVE_1))
        cell = blockade.enclosure(HIVE_1, holder)
        assert cell in drops
        reach = {cell, *NEIGHBOURS[cell]} | {n for p in blockade.posts(HIVE_1)[:2] for n in NEIGHBOURS[p]}
        assert drops <= reach
    assert blockade.enclosure(HIVE_1, at(12, 29)) is None  # by the edge: nothing can be passed to it


def test_raiders_enclose_a_guard_that_holds_a_cell_of_their_ring() -> None:
    state = empty_arena()
    clear_other_bees(state)
    put(state, 1, 1, 11, 27)  # their guard in their ring
    put(state, 0, 0, 10, 25)  # bee 0: a raider by default
    strategy = synced(new_strategy(0, 0), state)
    d = strategy.decide(state_view(state))
    assert strategy.held_since == {at(11, 27): 0}
    assert d.reason != "wall around their guard"  # a bee passing through is no guard yet
    state.turn += HOLDER_TURNS
    assert strategy.decide(state_view(state)).reason != "wall around their guard"  # never seen carrying
    put(state, 1, 1, 11, 27, carrying=True)  # it received a passed flower: a guard
    d = strategy.decide(state_view(state))
    assert strategy.relaying == {at(11, 27)}
    # Beside a cell a flower could be dropped in for their guard: it walls it.
    assert d.action == Action.BUILD and d.reason == "wall around their guard"
    assert at(*step(10, 25, d.direction)) in set(blockade.drop_cells(HIVE_1, at(11, 27)))
    not_adaptive = synced(new_strategy(0, 0), state)
    not_adaptive.adaptive = False
    not_adaptive.held_since = {at(11, 27): 0}
    not_adaptive.relaying = {at(11, 27)}
    assert not_adaptive.decide(state_view(state)).reason != "wall around their guard"


def test_the_pool_benchmark_counts_played_matches_with_forfeits_and_failures_apart() -> None:
    from benchmarks.hive.bench_pool import table, tally

    records = [{"winner": "a", "forfeit": None, "scores": (20, 10)},
               {"winner": "draw", "forfeit": None, "scores": (12, 12)},
               {"winner": "b", "forfeit": None, "scores": (9, 14)},
               {"winner": "b", "forfeit": "a", "scores": (3, 1)},
               {"winner": "none", "forfeit": None, "scores": (0, 0)}]
    t = tally(records)
    assert (t["matches"], t["played"], t["wins"], t["draws"], t["losses"]) == (5, 3, 1, 1, 1)
    assert t["forfeits_a"] == 1 and t["forfeits_b"] == 0 and round(t["rate"], 3) == 0.333
    worse = dict(t, rate=0.1)
    lines = table({"good": t, "bad": worse}).splitlines()
    assert lines[2].startswith("| `bad`")  # worst case first
    # 1 of 3 played: 33.3 %, and three matches cannot tell whether 75 % is met.
    assert "| 33.3 % (95 % interval 6.1-79.2 %) | undecided |" in lines[3]
    sure = tally([{"winner": "b", "forfeit": None, "scores": (0, 1)}] * 40 + [records[0]] * 8)
    assert "| 16.7 % (95 % interval 8.7-29.6 %) | missed |" in table({"weak": sure})
    assert "| met |" in table({"weak": sure}, goal=0.05)


def test_the_cross_benchmark_sees_each_pair_from_both_sides_and_ranks_rows_by_their_worst() -> None:
    from benchmarks.hive.bench_cross import DEFAULT_BOTS, from_b, matrix
    from benchmarks.hive.bench_pool import tally

    # our strategy and every ring siege that starts at once, not the late or rushing ones
    assert DEFAULT_BOTS[0] == "ours" and {"siege-ring", "siege-twin", "siege-ring-012"} <= set(DEFAULT_BOTS)
    assert "siege-late" not in DEFAULT_BOTS and "rush" not in DEFAULT_BOTS and len(DEFAULT_BOTS) == 12
    def record(winner: str, scores: tuple[int, int]) -> dict[str, Any]:
        return {"winner": winner, "forfeit": None, "scores": scores}

    win, draw, loss = record("a", (5, 3)), record("draw", (4, 4)), record("b", (2, 6))
    records = [win] * 6 + [draw] * 2 + [loss] * 2 + [{**loss, "forfeit": "b"}]
    t = tally(records)
    back = tally(from_b(records))
    assert (t["forfeits_a"], t["forfeits_b"]) == (back["forfeits_b"], back["forfeits_a"]) == (0, 1)
    assert (back["wins"], back["draws"], back["losses"], back["played"]) == (2, 2, 6, 10)
    assert back["rate"] == 0.2 and (back["score_a"], back["score_b"]) == (t["score_b"], t["score_a"])
    even = tally([win, loss])
    results = {("x", "y"): t, ("y", "x"): back, ("x", "z"): even, ("z", "x"): tally(from_b([win, loss])),
               ("y", "z"): tally([win] * 3), ("z", "y"): tally(from_b([win] * 3))}
    rows = matrix(["x", "y", "z"], results).splitlines()[2:]
    # worst rates: x 1 of 2 against z, y 2 of 10 against x, z none of 3 against y
    assert [r.split(" | ")[0] for r in rows] == ["| `x`", "| `y`", "| `z`"]
    assert rows[0].startswith("| `x` | - | 6/10 | 1/2 | `z` 50.0 %") and rows[0].endswith("| undecided |")
    assert rows[1].startswith("| `y` | 2/10 | - | 3/3 | `x` 20.0 %")
    assert rows[2].startswith("| `z` | 1/2 | 0/3 | - | `y` 0.0 %")


def _rates(pairs: dict[tuple[str, str], float]) -> dict[tuple[str, str], dict[str, Any]]:
    return {pair: {"rate": rate} for pair, rate in pairs.items()}


def test_the_value_of_the_game_is_the_best_mixture_against_its_best_answer() -> None:
    from benchmarks.hive.bench_cross import describe_value, value_of_game

    # rock, paper, scissors: every pure choice loses to one of the others, the even mixture
    # gets the self rate against each of them
    beats = {("rock", "scissors"), ("scissors", "paper"), ("paper", "rock")}
    bots = ["rock", "paper", "scissors"]
    rps = _rates({(a, b): float((a, b) in beats) for a in bots for b in bots if a != b})
    value, odds = value_of_game(bots, rps)
    assert round(value, 6) == 0.5 and all(round(odds[b], 6) == round(1 / 3, 6) for b in bots)
    # two bots that draw 40 % of their matches and share the rest: half and half, 40 % each way
    drawn = _rates({("x", "y"): 0.3, ("y", "x"): 0.3})
    value, odds = value_of_game(["x", "y"], drawn)
    assert round(value, 6) == 0.4 and round(odds["x"], 6) == 0.5
    # a bot that beats the others 90 % of the time is played alone; the worst column is itself
    strong = _rates({("x", "y"): 0.9, ("y", "x"): 0.1, ("x", "z"): 0.9, ("z", "x"): 0.1,
                     ("y", "z"): 0.6, ("z", "y"): 0.4})
    value, odds = value_of_game(["x", "y", "z"], strong)
    assert round(value, 6) == 0.5 and set(odds) == {"x"}
    assert value_of_game(["x", "y", "z"], strong, self_rate=0.95)[0] >= 0.9  # only itself could answer it
    line = describe_value(["x", "y"], drawn)
    assert line.startswith("Value of the game: 40.0 % against the worst column") and "`x` 50.0 %" in line


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 7).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=n * n, max_size=n * n))))
def test_no_mixture_beats_a_field_that_holds_every_bot_it_mixes(case: tuple[int, list[tuple[float, float]]]) -> None:
    """The reason the cross table's value stays under half: whatever the rates, a pair's two add
    up to at most one (the rest are draws), so some bot a mixture draws from holds it to half."""
    from benchmarks.hive.bench_cross import SELF_RATE, value_of_game

    n, draws = case
    bots = [f"b{i}" for i in range(n)]
    pairs: dict[tuple[str, str], float] = {}
    for (a, b), (share, drawn) in zip(combinations(bots, 2), draws, strict=False):
        pairs[a, b] = (1 - drawn) * share
        pairs[b, a] = (1 - drawn) * (1 - share)
    value, odds = value_of_game(bots, _rates(pairs))
    assert 0 <= value <= SELF_RATE + 1e-9
    assert abs(sum(odds.values()) - 1) < 0.01 and all(0 < p <= 1 + 1e-9 for p in odds.values())


def test_the_cross_benchmark_pools_saved_runs_whichever_way_round_a_pair_was_played(tmp_path, capsys) -> None:
    from benchmarks.hive.bench_cross import load, main, save

    def record(winner: str) -> dict[str, Any]:
        return {"winner": winner, "forfeit": None, "scores": {"a": (3, 1), "b": (1, 3), "draw": (2, 2)}[winner]}

    first, second = tmp_path / "one.json", tmp_path / "two.json"
    save(first, ["x", "y", "z"], range(10, 13), {("x", "y"): [record("a")] * 3, ("x", "z"): [record("b")] * 3,
                                                  ("y", "z"): [record("draw")] * 3})
    # the same pairs on other seeds, x against y saved from y's side
    save(second, ["y", "x", "z"], range(20, 21), {("y", "x"): [record("a")], ("x", "z"): [record("a")],
                                                  ("y", "z"): [record("a")]})
    bots, runs = load([first, second])
    assert bots == ["x", "y", "z"] and set(runs) == {("x", "y"), ("x", "z"), ("y", "z")}
    assert [r["winner"] for r in runs["x", "y"]] == ["a", "a", "a", "b"]
    assert main(["--load", str(first), str(second)]) == 0
    out = capsys.readouterr().out
    assert "| `x` | - | 3/4 | 1/4 |" in out and "| `y` | 1/4 | - | 1/4 |" in out and "Value of the game:" in out
    # a pair that no run played, a file that is not a saved run, the same seeds twice, and saving
    # what was loaded are refused
    for argv, message in ((["--load", str(first), "--bots", "x,w"], "the saved runs have no matches of x vs w"),
                          (["--load", str(tmp_path)], "cannot pool the saved runs"),
                          (["--load", str(second), str(first), str(second)],
                           f"{second} and {second} both hold seeds 20-20"),
                          (["--load", str(first), "--save", str(second)], "nothing to --save")):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_the_pool_benchmark_refuses_an_unknown_bot_before_playing(capsys) -> None:
    from benchmarks.hive.bench_pool import main

    with pytest.raises(SystemExit) as exit_:
        main(["--sim", "--bots", "hunter,huntr", "-n", "1"])
    assert exit_.value.code == 2 and "unknown bot huntr for --sim; choose from ours," in capsys.readouterr().err


@pytest.mark.parametrize("bots", ["ours", "ours,ours", "ours,nosuch"])
def test_the_cross_benchmark_refuses_bad_bot_lists_before_playing(bots: str, capsys) -> None:
    from benchmarks.hive.bench_cross import main

    with pytest.raises(SystemExit) as exit_:
        main(["--bots", bots, "-n", "1"])
    assert exit_.value.code == 2
    message = capsys.readouterr().err
    assert ("unknown bot nosuch; choose from ours," in message) == bots.endswith("nosuch")
    assert ("at least two different bots" in message) != bots.endswith("nosuch")


def test_the_2022_benchmark_plays_the_chosen_side_against_each_built_agent(tmp_path, monkeypatch) -> None:
    from agent.games.hive import eval as hive_eval
    from benchmarks.hive import bench_2022

    assert bench_2022.main(["--built", str(tmp_path)]) == 2  # nothing built: says so, plays nothing
    (tmp_path / "arena" / "bin").mkdir(parents=True)
    (tmp_path / "arena" / "bin" / "arena").write_text("", encoding="utf-8")
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "epk_final").write_text("", encoding="utf-8")
    commands: list[list[str]] = []

    def evaluate(command: list[str]) -> int:
        commands.append(command)
        return 0

    monkeypatch.setattr(hive_eval, "main", evaluate)
    # an agent that was not built is reported and makes the run fail; the built one is played
    status = bench_2022.main(["--built", str(tmp_path), "--a", "siege-ring-234", "-n", "4",
                              "--opponents", "epk_final,spy_smart"])
    assert status == 1 and len(commands) == 1
    command = commands[0]
    assert command[command.index("--a") + 1] == "siege-ring-234"
    assert command[command.index("--b") + 1] == f"cmd:{tmp_path / 'agents' / 'epk_final'} {{host}} {{port}}"
    assert command[command.index("-n") + 1] == "4"
    bench_2022.main(["--built", str(tmp_path), "--opponents", "epk_final"])
    assert commands[1][commands[1].index("--a") + 1] == "ours"


def test_the_roles_benchmark_plays_ours_with_each_forager_pair_against_each_siege_of_the_pool() -> None:
    from benchmarks.hive.bench_roles import FORAGER_PAIRS, OUR_DEFAULT, SIEGES, ours, siege_bot

    assert len(SIEGES) == 10 and siege_bot("024") == "siege-ring"
    assert all(RECIPES[siege_bot(r)].ring_siege for r in SIEGES)
    assert all({b for b, job in RECIPES[siege_bot(r)].jobs.items() if job == "raid"} == set(map(int, r))
               for r in SIEGES)
    assert len(set(FORAGER_PAIRS)) == 5
    state = empty_arena()
    state.set(5, 20, Cell.FLOWER)
    for player in (0, 1):
        state.turn = player
        # the default pair is what our strategy plays, so the benchmark's "*" marks our real roles
        assert OUR_DEFAULT[player] in FORAGER_PAIRS
        assert set(OUR_DEFAULT[player] or ()) == set(range(5)) - DEFAULT_RAIDERS[player]
        for pair in FORAGER_PAIRS:
            bot = CounterBot("ours-pair", 0, ours(pair))
            bot.decide(state_view(state))
            strategy = bot.strategy
            assert strategy is not None
            assert [b for b in range(5) if strategy.role_of(b) == "forage"] == sorted(pair)
            assert strategy.post_order(HIVE_1) == blockade.posts(HIVE_1)


def test_the_race_benchmark_finds_when_each_ring_closes_and_whether_the_seal_decided() -> None:
    from agent.games.hive.rules import hive_index
    from benchmarks.hive.bench_race import Race, RaceProbe, from_probe, ring_closed, summary

    state = empty_arena()
    probe = RaceProbe()
    probe(state)
    assert probe.closed == [None, None]
    # Player 0's ring: seven walls and a bee of theirs; one empty cell keeps it open.
    ring0 = list(NEIGHBOURS[hive_index(0)])
    for cell in ring0[:-2]:
        state.cells[cell] = Cell.WALL
    state.cells[ring0[-2]] = Cell.BEE_1
    state.turn, state.scores = 300, [4, 2]
    probe(state)
    assert not ring_closed(state.cells, hive_index(0)) and probe.closed == [None, None]
    state.cells[ring0[-1]] = Cell.BEE_0  # our own guard closes it too: nobody can step in
    state.turn, state.scores = 310, [5, 2]
    probe(state)
    assert probe.closed == [310, None] and probe.at_seal is None and probe.last_point == 310
    for cell in NEIGHBOURS[hive_index(1)]:
        state.cells[cell] = Cell.WALL
    state.turn = 420
    probe(state)
    assert probe.closed == [310, 420] and probe.at_seal == (5, 2)
    state.turn, state.scores = 900, [5, 6]  # player 1 overtakes after the seal
    probe(state)
    as_one = from_probe(probe, 1, state.scores, 1900)
    assert as_one.closed == (420, 310) and as_one.at_seal == (2, 5) and as_one.final == (6, 5)
    assert as_one.result == 1 and as_one.decided_at_seal is False and as_one.last_point == 900

    held = Race(ours=0, closed=(300, 280), at_seal=(5, 4), final=(5, 4), last_point=290, turns=1300)
    tie = Race(ours=0, closed=(300, 280), at_seal=(3, 3), final=(3, 3), last_point=200, turns=1300)
    open_ = Race(ours=0, closed=(None, 500), at_seal=None, final=(20, 9), last_point=3000, turns=4000)
    s = summary([held, tie, open_, as_one])
    assert (s["wins"], s["draws"], s["losses"]) == (3, 1, 0)
    assert (s["sealed"], s["decided"]) == (3, 2)
    assert s["after_seal"] == pytest.approx((4 / 3, 0))  # as_one scored 4 after it, they none
    assert s["closed_ours"] == 300 and s["closed_theirs"] == 295  # medians of 300, 300, 420 and 280, 280, 500, 310
    assert s["seal_score"] == pytest.approx((10 / 3, 4))


def test_a_simulated_match_shows_its_probe_every_turn_and_the_end() -> None:
    from agent.games.hive.opponents.bots import ExampleBot
    from agent.games.hive.opponents.sim import play

    seen: list[tuple[int, bool]] = []
    result = play((ExampleBot(1), ExampleBot(2)), seed=5, observe=lambda s: seen.append((s.turn, s.game_over)))
    assert [t for t, _ in seen] == list(range(result.turns + 1))
    assert seen[-1][1] and not any(over for _, over in seen[:-1])
