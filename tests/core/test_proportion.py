"""The Wilson interval against published values, its properties, and the verdict on a goal."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.core.proportion import describe, verdict, wilson

# The worked examples of Newcombe (1998), "Two-sided confidence intervals for the single
# proportion" (Statistics in Medicine 17), method 3 (the score interval without continuity
# correction), to four decimals.
PUBLISHED = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
    (29, 29, 0.8830, 1.0),
]


@pytest.mark.parametrize(("k", "n", "low", "high"), PUBLISHED)
def test_the_interval_is_the_published_one(k: int, n: int, low: float, high: float) -> None:
    got = wilson(k, n)
    assert got == pytest.approx((low, high), abs=5e-5)


counts = st.integers(min_value=1, max_value=2000).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n)))


@given(counts)
def test_the_interval_holds_the_observed_rate_and_stays_within_0_and_1(kn: tuple[int, int]) -> None:
    k, n = kn
    low, high = wilson(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0
    assert low < high


@given(counts)
def test_successes_and_failures_mirror_each_other(kn: tuple[int, int]) -> None:
    k, n = kn
    low, high = wilson(k, n)
    mirrored = wilson(n - k, n)
    assert mirrored == pytest.approx((1 - high, 1 - low), abs=1e-12)


@given(counts)
def test_more_confidence_widens_the_interval(kn: tuple[int, int]) -> None:
    k, n = kn
    low90, high90 = wilson(k, n, 0.90)
    low99, high99 = wilson(k, n, 0.99)
    assert low99 <= low90 and high90 <= high99
    assert high99 - low99 > high90 - low90


def test_a_larger_sample_at_the_same_rate_narrows_it() -> None:
    widths = [high - low for low, high in (wilson(3 * m, 4 * m) for m in (12, 24, 120, 1200))]
    assert widths == sorted(widths, reverse=True)
    assert widths[-1] < 0.03 < 0.2 < widths[0]


def test_one_more_success_raises_both_bounds() -> None:
    for n in (1, 7, 48, 96):
        bounds = [wilson(k, n) for k in range(n + 1)]
        assert all(a[0] < b[0] or a[0] == b[0] == 0.0 for a, b in pairwise(bounds))
        assert all(a[1] < b[1] or a[1] == b[1] == 1.0 for a, b in pairwise(bounds))


def test_nothing_played_teaches_nothing() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    assert verdict(0, 0, 0.75) == "undecided"
    assert describe(0, 0) == "n/a (nothing played)"


@pytest.mark.parametrize(("k", "n", "confidence"), [(-1, 10, 0.95), (11, 10, 0.95), (0, -1, 0.95),
                                                    (5, 10, 0.0), (5, 10, 1.0), (5, 10, 1.5)])
def test_impossible_counts_and_confidences_are_refused_by_name(k: int, n: int, confidence: float) -> None:
    with pytest.raises(ValueError, match=r"successes|confidence"):
        wilson(k, n, confidence)


def test_the_verdict_on_a_goal_says_met_missed_or_undecided() -> None:
    # The worst counter-bot of issue 31 (17 of 48): surely under 75 %.
    assert verdict(17, 48, 0.75) == "missed"
    # 35 of 48 is 72.9 %, under the goal, but the sample cannot tell (59.0-83.4 %).
    assert verdict(35, 48, 0.75) == "undecided"
    # 41 of 41 against the example agent: surely at least 75 %, not surely 95 %.
    assert verdict(41, 41, 0.75) == "met"
    assert verdict(41, 41, 0.95) == "undecided"
    assert verdict(0, 20, 0.2) == "missed"


def test_the_description_carries_the_rate_and_the_interval() -> None:
    assert describe(17, 48) == "35.4 % (95 % interval 23.4-49.6 %)"
    assert describe(81, 263, 0.9).startswith("30.8 % (90 % interval ")
