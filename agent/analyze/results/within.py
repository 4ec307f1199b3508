"""Every condition of the same participants at once: the Friedman test and the repeated-measures ANOVA.

Both use the participants with a value in every condition (``n`` says how many); a participant missing
one is left out (the mixed model, mixed.py, uses every value instead).

- **Friedman** (scipy.stats.friedmanchisquare, with its correction for ties, as R's ``friedman.test``):
  chi-squared on k - 1 degrees of freedom, for three or more conditions (two conditions: the Wilcoxon
  test). Effect size: Kendall's W = chi2 / (n (k - 1)), from 0 (no agreement among participants on the
  conditions' order) to 1, with a bootstrap interval over participants (effects.py).
- **Repeated-measures ANOVA** (statsmodels AnovaRM): F on k - 1 and (n - 1)(k - 1) degrees of freedom,
  sphericity assumed (no Greenhouse-Geisser correction), as R's ``aov`` with ``Error(participant)``.
  Effect size: partial eta squared = F df1 / (F df1 + df2) with its noncentral-F interval (effects.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.anova import AnovaRM

from agent.analyze.results.effects import bootstrap_interval, partial_eta_squared_interval
from agent.analyze.results.long_data import check_long, complete
from agent.analyze.results.result import TestResult, note, number, unavailable

MIN_PARTICIPANTS = 3
MIN_CONDITIONS_FRIEDMAN = 3
MIN_CONDITIONS_ANOVA = 2


def _check(
    data: pd.DataFrame, outcome: str, test: str, min_conditions: int
) -> tuple[pd.DataFrame, TestResult | None]:
    """The complete participants' values, or the result saying why the test cannot run."""
    long = check_long(data)
    wide = complete(long)
    k, n = len(long.conditions), len(wide)
    names = ", ".join(long.conditions)
    if k < min_conditions:
        text = note("too_few_conditions", minimum=min_conditions, k=k, conditions=names)
        return wide, unavailable(outcome, test, "all", n, text)
    if n < MIN_PARTICIPANTS:
        text = note("too_few_complete", n=n, conditions=names, minimum=MIN_PARTICIPANTS)
        return wide, unavailable(outcome, test, "all", n, text)
    if (wide.nunique(axis=1) == 1).all():
        return wide, unavailable(outcome, test, "all", n, note("no_variance_within"))
    return wide, None


def _kendalls_w(*columns: np.ndarray, axis: int = -1) -> np.ndarray:
    n, k = columns[0].shape[axis], len(columns)
    return stats.friedmanchisquare(*columns, axis=axis).statistic / (n * (k - 1))


def friedman(data: pd.DataFrame, outcome: str) -> TestResult:
    """The Friedman test across every condition, with Kendall's W."""
    wide, reason = _check(data, outcome, "friedman", MIN_CONDITIONS_FRIEDMAN)
    if reason is not None:
        return reason
    columns = [wide[c].to_numpy(dtype=float) for c in wide.columns]
    n, k = len(wide), len(columns)
    test = stats.friedmanchisquare(*columns)
    low, high = bootstrap_interval(columns, _kendalls_w, paired=True)
    return TestResult(
        outcome=outcome,
        test="friedman",
        comparison="all",
        n=n,
        statistic=number(test.statistic),
        df=float(k - 1),
        df2=None,
        p=number(test.pvalue),
        p_corrected=None,
        effect="Kendall's W",
        estimate=number(test.statistic / (n * (k - 1))),
        ci_low=low,
        ci_high=high,
        note=None,
    )


def rm_anova(data: pd.DataFrame, outcome: str) -> TestResult:
    """The one-way repeated-measures ANOVA across every condition, with partial eta squared."""
    wide, reason = _check(data, outcome, "rm_anova", MIN_CONDITIONS_ANOVA)
    if reason is not None:
        return reason
    long = wide.reset_index().melt(id_vars="participant", var_name="condition", value_name="value")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        table = AnovaRM(long, depvar="value", subject="participant", within=["condition"]).fit().anova_table
    row = table.loc["condition"]
    f, df1, df2 = float(row["F Value"]), float(row["Num DF"]), float(row["Den DF"])
    if not np.isfinite(f):  # no residual variance: every participant differs between conditions alike
        return unavailable(outcome, "rm_anova", "all", len(wide), note("no_variance_within"))
    low, high = partial_eta_squared_interval(f, df1, df2)
    return TestResult(
        outcome=outcome,
        test="rm_anova",
        comparison="all",
        n=len(wide),
        statistic=f,
        df=df1,
        df2=df2,
        p=number(row["Pr > F"]),
        p_corrected=None,
        effect="partial eta squared",
        estimate=f * df1 / (f * df1 + df2),
        ci_low=low,
        ci_high=high,
        note=None,
    )
