"""The tests the analysis plan declares, run on each outcome's long data (the statistics are
statistics.py's; this module only decides which to run and corrects each family).

Within-subject: the pairwise test (Wilcoxon signed-rank, or the paired t test) for every pair of
conditions or every condition against the control; with more than two conditions the omnibus test
(Friedman, or the repeated-measures ANOVA); and the linear mixed model (a random intercept per
participant, the order position a fixed effect: also the check for order effects). Between-subject:
Mann-Whitney (or Welch), and Kruskal-Wallis with more than two conditions. The pairwise tests of the
primary outcomes are one family, those of the secondary outcomes another: each is corrected as the
plan says (Holm by default); omnibus tests and the model's terms are shown as they come.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

from agent.analyze.results import statistics as stats
from agent.analyze.results.result import unavailable
from agent.core.studies.analysis_plan import AnalysisSpec

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_PAIRWISE = {"within": "wilcoxon", "between": "mann_whitney"}
DEFAULT_OMNIBUS = {"within": "friedman", "between": "kruskal"}


@dataclass(frozen=True)
class Declared:
    """One test result and the family it belongs to (primary or secondary)."""

    family: str
    result: stats.TestResult


def pairs(plan: AnalysisSpec, conditions: Sequence[str]) -> list[tuple[str, str]]:
    """The comparisons: every pair in the study's order, or every other condition against the control."""
    control = plan.control
    if control is None:
        return list(combinations(conditions, 2))
    return [(c, control) for c in conditions if c != control]


def pairwise_test(plan: AnalysisSpec, design: str) -> str:
    return DEFAULT_PAIRWISE[design] if plan.test == "default" else plan.test


def omnibus_test(plan: AnalysisSpec, design: str) -> str | None:
    if plan.omnibus == "none":
        return None
    return DEFAULT_OMNIBUS[design] if plan.omnibus == "default" else plan.omnibus


def _pairwise(name: str, data: pd.DataFrame, a: str, b: str, outcome: str) -> stats.TestResult:
    run = {"wilcoxon": stats.wilcoxon_paired, "paired_t": stats.paired_t, "mann_whitney": stats.mann_whitney,
           "welch": stats.welch}[name]
    try:
        return run(data, a, b, outcome)
    except ValueError as exc:  # a condition without any value (everyone in it excluded): said, not a crash
        return unavailable(outcome, name, f"{a} vs {b}", 0, str(exc))


def _omnibus(name: str, data: pd.DataFrame, outcome: str) -> stats.TestResult:
    run = {"friedman": stats.friedman, "rm_anova": stats.rm_anova, "kruskal": stats.kruskal}[name]
    try:
        return run(data, outcome)
    except ValueError as exc:
        return unavailable(outcome, name, "all", 0, str(exc))


def _model(data: pd.DataFrame, outcome: str, control: str | None) -> list[stats.TestResult]:
    try:
        return stats.mixed_model(data, outcome, control)
    except ValueError as exc:
        return [unavailable(outcome, "mixed_model", "all", 0, str(exc))]


def run_declared(plan: AnalysisSpec, design: str, conditions: Sequence[str],
                 data: Mapping[str, pd.DataFrame]) -> list[Declared]:
    """Every declared test of every outcome (primary first, in the plan's order), each family's
    pairwise tests corrected."""
    out: list[Declared] = []
    for family, outcomes in (("primary", plan.primary), ("secondary", plan.secondary)):
        pairwise = [_pairwise(pairwise_test(plan, design), data[o], a, b, o)
                    for o in outcomes for a, b in pairs(plan, conditions)]
        corrected = iter(stats.correct(pairwise, plan.correction))
        for outcome in outcomes:
            out += [Declared(family, next(corrected)) for _ in pairs(plan, conditions)]
            omnibus = omnibus_test(plan, design)
            if omnibus is not None and len(conditions) > 2:
                out.append(Declared(family, _omnibus(omnibus, data[outcome], outcome)))
            if design == "within" and plan.mixed_model:
                control = plan.control or conditions[0]  # the model's reference: the study's first, unless named
                out += [Declared(family, r) for r in _model(data[outcome], outcome, control)]
    return out


def detected(results: Sequence[Declared], plan: AnalysisSpec) -> bool:
    """Whether a primary outcome's corrected pairwise test rejects at the plan's alpha (the
    benchmark's measure of power and of the false-positive rate)."""
    pairwise = {"wilcoxon", "paired_t", "mann_whitney", "welch"}
    return any(d.family == "primary" and d.result.test in pairwise and d.result.p_corrected is not None
               and d.result.p_corrected < plan.alpha for d in results)
