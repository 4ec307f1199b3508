"""Balanced Latin squares: every condition once per place per square, and every ordered pair of
different conditions next to each other equally often (once for an even n, twice over the square
and its mirror for an odd n)."""

from __future__ import annotations

import pytest

from agent.core.studies.latin import (
    MAX_CONDITIONS,
    balanced_latin_square,
    carryover_counts,
    position_counts,
    williams_first_row,
)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_each_condition_stands_equally_often_at_each_place(n: int) -> None:
    square = balanced_latin_square(n)
    per_cell = 2 if n % 2 else 1
    assert len(square) == n * per_cell
    assert all(sorted(row) == list(range(n)) for row in square)  # every sequence has every condition once
    assert position_counts(square) == {(place, c): per_cell for place in range(n) for c in range(n)}


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_each_condition_follows_each_other_equally_often(n: int) -> None:
    square = balanced_latin_square(n)
    per_pair = 2 if n % 2 else 1
    assert carryover_counts(square) == {(a, b): per_pair for a in range(n) for b in range(n) if a != b}


@pytest.mark.parametrize("n", range(2, MAX_CONDITIONS + 1))
def test_balance_holds_up_to_the_largest_study(n: int) -> None:
    square = balanced_latin_square(n)
    assert len(set(position_counts(square).values())) == 1
    assert len(carryover_counts(square)) == n * (n - 1) and len(set(carryover_counts(square).values())) == 1


def test_first_row_is_the_williams_zigzag() -> None:
    # 1, 2, n, 3, n-1, 4, ... counted from 0
    assert williams_first_row(4) == [0, 1, 3, 2]
    assert williams_first_row(6) == [0, 1, 5, 2, 4, 3]
    assert balanced_latin_square(3)[3:] == [list(reversed(r)) for r in balanced_latin_square(3)[:3]]


def test_an_unbalanceable_plain_square_is_caught_by_the_counts() -> None:
    # The cyclic square (each row shifted by one) balances places but not carry-over: the checks see it.
    cyclic = [[(c + r) % 4 for c in range(4)] for r in range(4)]
    assert len(set(position_counts(cyclic).values())) == 1
    assert carryover_counts(cyclic).get((1, 0)) is None


@pytest.mark.parametrize("n", [0, MAX_CONDITIONS + 1])
def test_out_of_range_sizes_are_refused(n: int) -> None:
    with pytest.raises(ValueError, match="balanced Latin square needs"):
        balanced_latin_square(n)
