"""The blockade's geometry: posts, who takes which, and which holes to wall first."""

from __future__ import annotations

from agent.games.hive.rules import COLS
from agent.games.hive.strategy.blockade import (
    assign_posts,
    chebyshev,
    front,
    outer,
    outer_to_wall,
    posts,
    ring,
    to_wall,
)
from agent.games.hive.strategy.paths import NEIGHBOURS


def at(row: int, col: int) -> int:
    return row * COLS + col


HIVE_1 = at(12, 28)
HIVE_0 = at(12, 1)


def test_posts_best_first_for_both_hives() -> None:
    assert posts(HIVE_1)[:3] == [at(11, 28), at(13, 28), at(12, 26)]
    assert posts(HIVE_0)[:3] == [at(11, 1), at(13, 1), at(12, 3)]
    assert front(HIVE_1) == at(12, 26) and front(HIVE_0) == at(12, 3)
    for hive in (HIVE_0, HIVE_1):
        # The ring cell in front of the hive is a wall, closed from the front post instead.
        in_front = front(hive) + (1 if hive == HIVE_1 else -1)
        assert len(ring(hive)) == 8 and len(posts(hive)) == 8 == len(set(posts(hive)))
        assert set(posts(hive)) == set(ring(hive)) - {in_front} | {front(hive)}
        assert front(hive) in outer(hive)


def test_the_front_post_touches_the_field_side_of_the_ring() -> None:
    field_side = {at(11, 27), at(12, 27), at(13, 27)}
    assert field_side <= set(NEIGHBOURS[front(HIVE_1)])
    # The field-side ring cell touches all three posts: any raider rebuilds it.
    assert all(at(12, 27) in NEIGHBOURS[p] for p in posts(HIVE_1)[:3])


def test_two_raiders_north_and_south_touch_every_other_ring_cell() -> None:
    north, south = posts(HIVE_1)[:2]
    touched = (set(NEIGHBOURS[north]) | set(NEIGHBOURS[south])) & set(ring(HIVE_1))
    assert touched | {north, south} == set(ring(HIVE_1))


def test_posts_are_shared_for_the_shortest_walks() -> None:
    raiders = {0: at(10, 20), 2: at(12, 20), 4: at(14, 20)}
    assert assign_posts(HIVE_1, raiders, set()) == {0: at(11, 28), 4: at(13, 28), 2: at(12, 26)}
    # The whole walk counts (13 steps), not each post's nearest raider in turn (17): bee 0 is
    # nearest the north post, but taking it leaves bee 4 the front post further away.
    raiders = {0: at(12, 25), 2: at(7, 28), 4: at(20, 20)}
    assert assign_posts(HIVE_1, raiders, set()) == {2: at(11, 28), 4: at(13, 28), 0: at(12, 26)}


def test_a_raider_on_a_post_keeps_it_and_taken_posts_are_skipped() -> None:
    raiders = {0: at(13, 28), 2: at(5, 5)}
    assert assign_posts(HIVE_1, raiders, set()) == {0: at(13, 28), 2: at(11, 28)}
    # An enemy bee on the north post: the next best post instead.
    assert assign_posts(HIVE_1, {2: at(5, 5)}, {at(11, 28)}) == {2: at(13, 28)}


def test_a_raider_on_a_poor_post_does_not_keep_it() -> None:
    corner = at(11, 27)
    assert assign_posts(HIVE_1, {0: corner}, set()) == {0: at(11, 28)}


def test_holes_with_enemies_beside_them_come_first() -> None:
    me = at(11, 28)
    # Beside the north post: (11,27), (11,29), (12,27), (12,29); (12,27) is another raider's post.
    holes = to_wall(HIVE_1, me, held={me, at(12, 27)}, raiders=set(), enemies={at(10, 29)})
    assert holes[0] == at(11, 29) and set(holes) == {at(11, 27), at(11, 29), at(12, 29)}
    # No enemies: the hole no other raider can rebuild first.
    holes = to_wall(HIVE_1, me, held={me}, raiders={at(13, 28)}, enemies=set())
    assert holes[0] == at(11, 27) or holes[0] == at(11, 29)
    assert holes[-1] in (at(12, 27), at(12, 29))


def test_chebyshev() -> None:
    assert chebyshev(at(0, 0), at(3, 5)) == 5 and chebyshev(at(4, 4), at(4, 4)) == 0


def test_the_second_ring_is_two_steps_out_and_stays_in_the_arena() -> None:
    assert len(outer(HIVE_1)) == 11  # column 30 does not exist
    assert len(outer(HIVE_0)) == 11  # nor does column -1
    assert at(10, 26) in outer(HIVE_1) and at(11, 27) not in outer(HIVE_1)


def test_second_ring_cells_beside_the_raider_with_enemies_first() -> None:
    me = at(11, 28)
    cells = outer_to_wall(HIVE_1, me, enemies={at(9, 29)})
    assert set(cells) == {at(10, 27), at(10, 28), at(10, 29)}
    assert cells[0] in (at(10, 28), at(10, 29))
