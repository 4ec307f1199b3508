"""The plan: sequences per design, which sequence the next participant gets (drop-outs refilled,
quotas kept), and a hash that changes with anything that changes assignments."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.core.studies.plan import make_plan


def _assign(plan, dropped_after: dict[int, bool] | None = None, count: int = 8) -> list[int]:
    """Sequences of ``count`` participants started in turn; participant i (0-based) in
    ``dropped_after`` drops out right after being started."""
    holders: dict[int, int] = {}
    got = []
    for i in range(count):
        seq = plan.choose_sequence(holders)
        got.append(seq)
        if not (dropped_after or {}).get(i):
            holders[seq] = holders.get(seq, 0) + 1
    return got


def test_within_gives_each_sequence_in_turn() -> None:
    plan = make_plan("within", ["a", "b", "c", "d"])
    assert _assign(plan) == [0, 1, 2, 3, 0, 1, 2, 3]
    assert plan.sequences[0] == ("a", "b", "d", "c")


def test_a_dropped_participants_sequence_goes_to_the_next_one_started() -> None:
    plan = make_plan("within", ["a", "b", "c", "d"])
    assert _assign(plan, {1: True}, 6) == [0, 1, 1, 2, 3, 0]


def test_odd_conditions_need_twice_as_many_sequences() -> None:
    assert len(make_plan("within", ["a", "b", "c"]).sequences) == 6


def test_between_balances_conditions_and_keeps_quotas() -> None:
    plan = make_plan("between", ["a", "b"], quotas={"a": 1})
    assert plan.sequences == (("a",), ("b",))
    assert _assign(plan, count=3) == [0, 1, 1]
    full = make_plan("between", ["a", "b"], quotas={"a": 1, "b": 1})
    assert full.choose_sequence({0: 1, 1: 1}) is None


def test_fixed_gives_everyone_the_order() -> None:
    plan = make_plan("fixed", ["a", "b", "c"], order=["c", "a", "b"])
    assert plan.sequences == (("c", "a", "b"),)
    assert _assign(plan, count=3) == [0, 0, 0]


def test_games_per_condition_repeat_each_condition_in_place() -> None:
    plan = make_plan("within", ["a", "b"], games_per_condition=2)
    assert [(s.position, s.condition, s.order, s.repeat) for s in plan.slots(1)] == [
        (1, "b", 1, 1), (2, "b", 1, 2), (3, "a", 2, 1), (4, "a", 2, 2)]
    assert plan.games_per_participant() == 4


def test_a_seed_shuffles_the_places_reproducibly() -> None:
    names = ["a", "b", "c", "d", "e", "f"]
    plain = make_plan("within", names)
    seeded = make_plan("within", names, seed=7)
    assert seeded.sequences == make_plan("within", names, seed=7).sequences
    assert seeded.sequences != plain.sequences and seeded.hash != plain.hash
    assert plain.sequences[0] == ("a", "b", "f", "c", "e", "d")


def test_the_hash_covers_what_assigns_and_nothing_else() -> None:
    base = make_plan("within", ["a", "b"])
    assert base.hash == make_plan("within", ["a", "b"]).hash and len(base.hash) == 16
    assert len({base.hash, make_plan("within", ["b", "a"]).hash, make_plan("between", ["a", "b"]).hash,
                make_plan("within", ["a", "b"], games_per_condition=2).hash}) == 4


def test_unknown_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown condition 'x'"):
        make_plan("fixed", ["a"], order=["x"])


@given(n=st.integers(2, 6), steps=st.lists(st.booleans(), min_size=1, max_size=60))
def test_drop_outs_never_unbalance_the_sequences(n: int, steps: list[bool]) -> None:
    """Whatever participants drop out, the sequences held by those who did not differ by at most one,
    and after n more participants with no drop-out every sequence has gained."""
    plan = make_plan("within", [f"c{i}" for i in range(n)])
    holders: dict[int, int] = {}
    for drops in steps:
        seq = plan.choose_sequence(holders)
        assert seq is not None
        if not drops:
            holders[seq] = holders.get(seq, 0) + 1
        counts = [holders.get(i, 0) for i in range(len(plan.sequences))]
        assert max(counts) - min(counts) <= 1
    before = [holders.get(i, 0) for i in range(len(plan.sequences))]
    for _ in range(len(plan.sequences)):
        seq = plan.choose_sequence(holders)
        assert seq is not None
        holders[seq] = holders.get(seq, 0) + 1
    assert all(holders.get(i, 0) == b + 1 for i, b in enumerate(before))
