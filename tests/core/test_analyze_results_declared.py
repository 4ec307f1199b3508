"""Which tests the analysis plan runs for the design, and each family's correction."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("scipy")
pytest.importorskip("statsmodels")

import pandas as pd

from agent.analyze.results.declared import detected, pairs, run_declared
from agent.core.studies.analysis_plan import AnalysisSpec

CONDITIONS = ["a", "b", "c"]


def _within(n: int, shift: float, seed: int = 1) -> pd.DataFrame:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        base = rng.gauss(0, 1)
        for position, c in enumerate(CONDITIONS, start=1):
            rows.append({"participant": f"P{i:02d}", "condition": c, "position": position,
                         "value": base + rng.gauss(0, 0.5) + (shift if c == "a" else 0.0)})
    return pd.DataFrame(rows)


def _between(n: int, shift: float) -> pd.DataFrame:
    rng = random.Random(2)
    return pd.DataFrame([{"participant": f"P{i:02d}", "condition": CONDITIONS[i % 3], "position": 1,
                          "value": rng.gauss(0, 1) + (shift if i % 3 == 0 else 0.0)} for i in range(n)])


def test_pairs_all_or_against_the_control() -> None:
    assert pairs(AnalysisSpec(primary=["x"]), CONDITIONS) == [("a", "b"), ("a", "c"), ("b", "c")]
    control = AnalysisSpec.model_validate({"primary": ["x"], "comparison": {"control": "b"}})
    assert pairs(control, CONDITIONS) == [("a", "b"), ("c", "b")]


def test_within_defaults_and_the_families_corrected_apart() -> None:
    plan = AnalysisSpec(primary=["x"], secondary=["y"])
    data = {"x": _within(20, 1.5), "y": _within(20, 0.0, seed=4)}
    results = run_declared(plan, "within", CONDITIONS, data)
    primary = [d.result for d in results if d.family == "primary"]
    assert [(r.test, r.comparison) for r in primary] == [
        ("wilcoxon", "a vs b"), ("wilcoxon", "a vs c"), ("wilcoxon", "b vs c"), ("friedman", "all"),
        ("mixed_model", "condition: b"), ("mixed_model", "condition: c"), ("mixed_model", "position")]
    pairwise = [r for r in primary if r.test == "wilcoxon"]
    assert all(r.p_corrected is not None and r.p is not None and r.p_corrected >= r.p for r in pairwise)
    # Holm over the primary family's three p-values only: the smallest is multiplied by 3.
    smallest = min(pairwise, key=lambda r: r.p or 1.0)
    assert smallest.p_corrected == pytest.approx(min(1.0, 3 * (smallest.p or 0.0)))
    assert detected(results, plan)
    assert not detected(run_declared(AnalysisSpec(primary=["y"]), "within", CONDITIONS, data), plan)


def test_between_runs_its_own_tests_and_no_model() -> None:
    plan = AnalysisSpec(primary=["x"], test="welch")
    results = run_declared(plan, "between", CONDITIONS, {"x": _between(30, 2.0)})
    assert [d.result.test for d in results] == ["welch", "welch", "welch", "kruskal"]
    none = AnalysisSpec(primary=["x"], omnibus="none", mixed_model=False)
    assert [d.result.test for d in run_declared(none, "within", CONDITIONS, {"x": _within(20, 0.0)})] == [
        "wilcoxon"] * 3


def test_too_few_participants_are_said_in_words() -> None:
    plan = AnalysisSpec(primary=["x"])
    results = run_declared(plan, "within", CONDITIONS, {"x": _within(2, 1.0)})
    first = results[0].result
    assert first.note and first.p is None and first.statistic is None
