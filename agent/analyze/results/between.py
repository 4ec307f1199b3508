"""Different participants in each condition: Mann-Whitney, Kruskal-Wallis and Welch's t-test.

``n`` counts the observations used. A positive effect means the first condition named (``a``) is higher.

- **Mann-Whitney** (scipy.stats.mannwhitneyu): the statistic is U of ``a`` (R's W). The p-value is exact
  when both groups have fewer than 50 values and no value is tied; otherwise the normal approximation with
  the tie-corrected variance and a continuity correction -- R's default choice, made explicitly here.
  Effect size: the rank-biserial correlation r = 2 U / (n_a n_b) - 1 (the probability that a value of
  ``a`` beats one of ``b``, minus the reverse), with a bootstrap interval resampling within each group.
- **Kruskal-Wallis** (scipy.stats.kruskal, tie-corrected as R's ``kruskal.test``): H on k - 1 degrees of
  freedom. Effect size: epsilon squared = H / (n - 1) (Tomczak & Tomczak 2014), with a bootstrap interval
  resampling within each group.
- **Welch's t** (scipy.stats.ttest_ind with unequal variances): t on the Welch-Satterthwaite degrees of
  freedom. Effect size: the mean difference with its Welch interval (R's ``t.test(var.equal=FALSE)``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from agent.analyze.results.effects import bootstrap_interval
from agent.analyze.results.long_data import check_long, group
from agent.analyze.results.result import TestResult, note, number, unavailable

MIN_PER_GROUP = 2
MIN_GROUPS = 2
EXACT_BELOW = 50  # exact Mann-Whitney p-values when both groups are smaller than this and untied (as R)


def _two_groups(data: pd.DataFrame, a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
    long = check_long(data)
    if a == b:
        raise ValueError(f"a comparison needs two different conditions, got {a!r} twice")
    return group(long, a).to_numpy(dtype=float), group(long, b).to_numpy(dtype=float)


def _too_small(outcome: str, test: str, comparison: str, groups: dict[str, np.ndarray]) -> TestResult | None:
    n = sum(len(v) for v in groups.values())
    for name, values in groups.items():
        if len(values) < MIN_PER_GROUP:
            text = note("too_few_in_group", condition=name, n=len(values), minimum=MIN_PER_GROUP)
            return unavailable(outcome, test, comparison, n, text)
    if np.ptp(np.concatenate(list(groups.values()))) == 0:
        return unavailable(outcome, test, comparison, n, note("no_variance"))
    return None


def _rank_biserial(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    u = stats.mannwhitneyu(x, y, axis=axis, method="asymptotic").statistic
    return 2 * u / (x.shape[axis] * y.shape[axis]) - 1


def mann_whitney(data: pd.DataFrame, a: str, b: str, outcome: str) -> TestResult:
    """The Mann-Whitney test of ``a`` against ``b`` with the rank-biserial r."""
    comparison = f"{a} vs {b}"
    x, y = _two_groups(data, a, b)
    reason = _too_small(outcome, "mann_whitney", comparison, {a: x, b: y})
    if reason is not None:
        return reason
    both = np.concatenate([x, y])
    exact = len(x) < EXACT_BELOW and len(y) < EXACT_BELOW and len(np.unique(both)) == len(both)
    test = stats.mannwhitneyu(x, y, method="exact" if exact else "asymptotic", use_continuity=True)
    low, high = bootstrap_interval((x, y), _rank_biserial, paired=False)
    return TestResult(
        outcome=outcome,
        test="mann_whitney",
        comparison=comparison,
        n=len(both),
        statistic=number(test.statistic),
        df=None,
        df2=None,
        p=number(test.pvalue),
        p_corrected=None,
        effect="rank-biserial r",
        estimate=number(2 * test.statistic / (len(x) * len(y)) - 1),
        ci_low=low,
        ci_high=high,
        note=None,
    )


def _epsilon_squared(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
    n = sum(s.shape[axis] for s in samples)
    return stats.kruskal(*samples, axis=axis).statistic / (n - 1)


def kruskal(data: pd.DataFrame, outcome: str) -> TestResult:
    """The Kruskal-Wallis test across every condition, with epsilon squared."""
    long = check_long(data)
    groups = {c: group(long, c).to_numpy(dtype=float) for c in long.conditions}
    n = sum(len(v) for v in groups.values())
    if len(groups) < MIN_GROUPS:
        text = note("too_few_conditions", minimum=MIN_GROUPS, k=len(groups), conditions=", ".join(groups))
        return unavailable(outcome, "kruskal", "all", n, text)
    reason = _too_small(outcome, "kruskal", "all", groups)
    if reason is not None:
        return reason
    samples = list(groups.values())
    test = stats.kruskal(*samples)
    low, high = bootstrap_interval(samples, _epsilon_squared, paired=False)
    return TestResult(
        outcome=outcome,
        test="kruskal",
        comparison="all",
        n=n,
        statistic=number(test.statistic),
        df=float(len(samples) - 1),
        df2=None,
        p=number(test.pvalue),
        p_corrected=None,
        effect="epsilon squared",
        estimate=number(test.statistic / (n - 1)),
        ci_low=low,
        ci_high=high,
        note=None,
    )


def welch(data: pd.DataFrame, a: str, b: str, outcome: str) -> TestResult:
    """Welch's t-test of ``a`` against ``b`` with the mean difference and its interval."""
    comparison = f"{a} vs {b}"
    x, y = _two_groups(data, a, b)
    reason = _too_small(outcome, "welch", comparison, {a: x, b: y})
    if reason is not None:
        return reason
    if np.ptp(x) == 0 and np.ptp(y) == 0:
        return unavailable(outcome, "welch", comparison, len(x) + len(y), note("no_variance_groups", a=a, b=b))
    test = stats.ttest_ind(x, y, equal_var=False)
    interval = test.confidence_interval(0.95)
    return TestResult(
        outcome=outcome,
        test="welch",
        comparison=comparison,
        n=len(x) + len(y),
        statistic=number(test.statistic),
        df=number(test.df),
        df2=None,
        p=number(test.pvalue),
        p_corrected=None,
        effect="mean difference",
        estimate=number(np.mean(x) - np.mean(y)),
        ci_low=number(interval.low),
        ci_high=number(interval.high),
        note=None,
    )
