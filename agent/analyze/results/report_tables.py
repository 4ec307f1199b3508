"""The results' tables, as rows: every number the page shows, in tidy CSV form, and what each column
holds (the results' data package is their codebook).

- ``descriptives``: one row per outcome and condition: n, mean, SD, median, quartiles, IQR;
- ``tests``: one row per declared test: its family, statistic, degrees of freedom, p (as computed and
  corrected), the effect size with its 95 % interval, or the note saying in words why it did not run;
- ``reliability``: one row per questionnaire scale: Cronbach's alpha with its interval;
- ``item_total``: one row per scale and item: the corrected item-total correlation;
- ``analysed``: the data the tests read, one row per outcome, analysed participant and condition (after
  the exclusions): the same analysis can be run again from it elsewhere (tests/core/r/ does, in R).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agent.analyze.results import statistics as stats
from agent.analyze.results.declared import Declared
from agent.analyze.results.measures import kind_of

if TYPE_CHECKING:
    import pandas as pd

TITLES = {
    "flow": "The flow of participants per condition sequence: invited, consented, started, completed, excluded by "
            "each rule, analysed.",
    "descriptives": "Each outcome per condition: n, mean, SD, median and quartiles of the analysed participants.",
    "tests": "The analysis plan's tests: statistic, degrees of freedom, p, corrected p, effect size with its 95 % "
             "interval, or a note why a test did not run.",
    "reliability": "Each questionnaire scale's Cronbach's alpha with its 95 % interval.",
    "item_total": "Each scale item's corrected item-total correlation.",
    "analysed": "The data the tests read: each outcome's value per analysed participant and condition, after "
                "the exclusions.",
}
COLUMNS = {
    "sequence": "The plan's 1-based order sequence ('all': every sequence).",
    "order": "The sequence's conditions in order.",
    "invited": "Participants entered on the sequence (the 'all' row: the invitations written, when more).",
    "consented": "Gave consent (everyone, when the study asks none).",
    "started": "Played at least one game (withdrawn participants included: their games are deleted).",
    "completed": "Played every game of their sequence.",
    "excluded_withdrawn": "Left out: withdrew.",
    "excluded_screened_out": "Left out: screened out by failed attention checks.",
    "excluded_not_completed": "Left out: did not complete every game.",
    "excluded_llm_unavailable": "Left out: a game had no model (LLM outage or spend cap) in more than the plan's "
                                "share of its AI turns.",
    "analysed": "Analysed: not excluded, with a value of a primary outcome.",
    "participant": "The participant's id in the study.",
    "position": "The condition's 1-based place in the participant's order (the mixed model's order term).",
    "value": "The outcome's value: the scale's score (the mean of its items) or the game measure.",
    "outcome": "The outcome: a questionnaire scale or a game measure.",
    "kind": "questionnaire scale or game measure.",
    "family": "primary or secondary (each family's pairwise tests are corrected together).",
    "condition": "The study condition.",
    "n": "Participants (tests: participants, or pairs, the test used).",
    "mean": "The mean.",
    "sd": "The standard deviation (n - 1).",
    "median": "The median.",
    "q1": "The first quartile.",
    "q3": "The third quartile.",
    "iqr": "The interquartile range (q3 - q1).",
    "test": "wilcoxon, paired_t, friedman, rm_anova, mixed_model, mann_whitney, kruskal or welch.",
    "comparison": "What was compared: 'A vs B', 'all' (omnibus), or a mixed model's term ('condition: B' against "
                  "the control, 'position').",
    "statistic": "The test statistic (Wilcoxon: the sum of positive ranks; t; chi-square; F; U; H; the model's z).",
    "df": "Degrees of freedom (the first, for F).",
    "df2": "The second degrees of freedom (F).",
    "p": "The p-value as computed.",
    "p_corrected": "The p-value corrected for the family's comparisons (pairwise tests; empty for the others).",
    "effect": "The effect size's name.",
    "estimate": "The effect size.",
    "ci_low": "The lower end of its 95 % interval.",
    "ci_high": "The upper end of its 95 % interval.",
    "significant": "The corrected p (the p of a test that is not corrected) is below the plan's alpha.",
    "note": "Why the test or coefficient was not computed (then every number is empty).",
    "scale": "The questionnaire scale.",
    "k": "The scale's items.",
    "alpha": "Cronbach's alpha.",
    "item": "The item's id in the study file.",
    "item_total": "The corrected item-total correlation (the item against the sum of the others).",
}


def analysed_rows(data: Mapping[str, pd.DataFrame]) -> list[dict[str, Any]]:
    """Each outcome's long data (the plan's order; within it, as measures.long_data sorts it)."""
    return [{"participant": str(r.participant), "condition": str(r.condition), "position": int(r.position),
             "outcome": outcome, "value": float(r.value)}
            for outcome, frame in data.items() for r in frame.itertuples(index=False)]


def descriptive_rows(data: Mapping[str, pd.DataFrame], conditions: Sequence[str]) -> list[dict[str, Any]]:
    rows = []
    for outcome, frame in data.items():
        for condition in conditions:
            d = stats.describe(frame.loc[frame["condition"] == condition, "value"])
            iqr = d.q3 - d.q1 if d.q3 is not None and d.q1 is not None else None
            rows.append({"outcome": outcome, "kind": kind_of(outcome), "condition": condition, "n": d.n,
                         "mean": d.mean, "sd": d.sd, "median": d.median, "q1": d.q1, "q3": d.q3, "iqr": iqr})
    return rows


def test_rows(results: Sequence[Declared], alpha: float) -> list[dict[str, Any]]:
    rows = []
    for d in results:
        r = d.result
        p = r.p_corrected if r.p_corrected is not None else r.p
        rows.append({"outcome": r.outcome, "family": d.family, "test": r.test, "comparison": r.comparison, "n": r.n,
                     "statistic": r.statistic, "df": r.df, "df2": r.df2, "p": r.p, "p_corrected": r.p_corrected,
                     "effect": r.effect, "estimate": r.estimate, "ci_low": r.ci_low, "ci_high": r.ci_high,
                     "significant": (p < alpha) if p is not None else None, "note": r.note})
    return rows


def reliability_rows(found: Sequence[stats.Reliability]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The scales' rows and the items' rows."""
    scales = [{"scale": r.scale, "n": r.n, "k": r.k, "alpha": r.alpha, "ci_low": r.ci_low, "ci_high": r.ci_high,
               "note": r.note} for r in found]
    items = [{"scale": r.scale, "item": item, "item_total": value}
             for r in found for item, value in r.item_total.items()]
    return scales, items
