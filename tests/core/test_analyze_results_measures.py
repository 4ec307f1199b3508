"""The plan's outcomes as long data from the scores table, a scale's items for its reliability, the
flow's counts, the page's numbers and a figure's bytes."""

from __future__ import annotations

import pytest

pytest.importorskip("pandas")

from agent.analyze.results.flow import flow_rows
from agent.analyze.results.measures import column_of, long_data, scale_items
from agent.analyze.results.page import num, pvalue

SCORES = [
    {"participant": "P2", "condition": "b", "order": 1, "score_trust": 4.0, "pieces_placed": 5},
    {"participant": "P2", "condition": "a", "order": 2, "score_trust": None, "pieces_placed": 6},
    {"participant": "P1", "condition": "a", "order": 1, "score_trust": 5.5, "pieces_placed": float("nan")},
    {"participant": "P1", "condition": "b", "order": 2, "score_trust": 3.0, "pieces_placed": 2},
    {"participant": "P3", "condition": "a", "order": 1, "score_trust": 1.0, "pieces_placed": 1},
]


def test_long_data_keeps_the_kept_participants_values_only() -> None:
    assert column_of("trust") == "score_trust" and column_of("pieces_placed") == "pieces_placed"
    trust = long_data(SCORES, "trust", {"P1", "P2"})
    assert list(trust.columns) == ["participant", "condition", "position", "value"]
    assert trust.to_dict("records") == [
        {"participant": "P1", "condition": "a", "position": 1, "value": 5.5},
        {"participant": "P1", "condition": "b", "position": 2, "value": 3.0},
        {"participant": "P2", "condition": "b", "position": 1, "value": 4.0}]
    pieces = long_data(SCORES, "pieces_placed", {"P1", "P2", "P3"})
    assert len(pieces) == 4 and pieces["value"].dtype == float  # P1's NaN left out
    assert len(long_data(SCORES, "trust", set())) == 0


def test_a_scales_items_per_participant_and_condition() -> None:
    answers = [{"participant": "P1", "condition": "a", "when": "after_each", "scale": "s", "item": i, "scored": v}
               for i, v in (("x", 1), ("y", 2))]
    answers += [{"participant": "P2", "condition": "a", "when": "after_each", "scale": "s", "item": "x",
                 "scored": 3},  # y missing: the row is left out
                {"participant": "P1", "condition": None, "when": "before_first", "scale": "s", "item": "x",
                 "scored": 5}]
    items = scale_items(answers, "s", {"P1", "P2"})
    assert list(items.columns) == ["x", "y"] and list(items.index) == ["P1 / a"]
    assert items.loc["P1 / a"].tolist() == [1.0, 2.0]


def test_the_flow_counts_each_stage_per_sequence() -> None:
    people = [
        {"participant": "A", "sequence": 1, "order": "a > b", "consent": "given", "attempts": 2,
         "state": "completed", "ended_early": None},
        {"participant": "B", "sequence": 1, "order": "a > b", "consent": "refused", "attempts": 0,
         "state": "dropped", "ended_early": None},
        {"participant": "C", "sequence": 2, "order": "b > a", "consent": "given", "attempts": 1,
         "state": "dropped", "ended_early": "screened_out"},
        {"participant": "D", "sequence": 2, "order": "b > a", "consent": None, "attempts": 0,
         "state": "dropped", "ended_early": "withdrawn"},
    ]
    rows = flow_rows(people, {"C": "screened_out", "D": "withdrawn"}, {"A"}, consent_asked=True, invited=10)
    first, second, total = rows
    assert (first["invited"], first["consented"], first["started"], first["completed"], first["analysed"]) == (
        2, 1, 1, 1, 1)
    assert (second["consented"], second["excluded_screened_out"], second["excluded_withdrawn"]) == (1, 1, 1)
    assert (total["sequence"], total["invited"], total["analysed"]) == ("all", 10, 1)


def test_numbers_for_reading() -> None:
    assert (num(None), num(3), num(2.0), num(0.123456), num(float("nan")), num(True)) == (
        "", "3", "2", "0.123", "", "yes")
    assert (pvalue(None), pvalue(0.0004), pvalue(0.04567)) == ("", "< 0.001", "0.046")


def test_a_figure_is_the_same_bytes_every_time() -> None:
    pytest.importorskip("matplotlib")
    from agent.analyze.results.figures import outcome_figure

    data = long_data(SCORES, "trust", {"P1", "P2", "P3"})
    first = outcome_figure(data, "trust", ["a", "b"], "trust (score)", within=True)
    assert first.startswith("<svg") and "<dc:date>" not in first and first.count("<path") >= 3
    assert outcome_figure(data, "trust", ["a", "b"], "trust (score)", within=True) == first
    between = outcome_figure(data, "trust", ["a", "b"], "trust (score)", within=False)
    assert between != first and "a point per participant" in between
