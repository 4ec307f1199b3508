"""Two conditions of the same participants: the Wilcoxon signed-rank test and the paired t-test.

Each pairs the values by participant; a participant missing either condition (or its value) is left out,
and ``n`` says how many pairs were used. Differences are ``a - b``, so a positive effect means ``a`` is
higher.

- **Wilcoxon signed-rank** (scipy.stats.wilcoxon): zero differences are dropped before ranking (Wilcoxon's
  method, as R's ``wilcox.test``). The p-value is exact when fewer than 50 differences remain and none are
  zero or tied; otherwise it is the normal approximation with the tie-corrected variance and a continuity
  correction -- R's default choice, made explicitly here. The statistic is V, the sum of the ranks of the
  positive differences (R's V). Effect size: the matched-pairs rank-biserial correlation
  r = (R+ - R-) / (R+ + R-) (Kerby 2014), between -1 and 1, with a bootstrap interval (effects.py).
- **Paired t** (scipy.stats.ttest_rel): t on n - 1 degrees of freedom. Effect size: the mean difference
  with its t interval (R's ``t.test(paired=TRUE)`` interval), in the outcome's own unit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from agent.analyze.results.effects import bootstrap_interval
from agent.analyze.results.long_data import check_long, pairs
from agent.analyze.results.result import TestResult, note, number, unavailable

MIN_PAIRS = 3
EXACT_BELOW = 50  # exact Wilcoxon p-values below this many non-zero differences without ties (as R)


def _differences(data: pd.DataFrame, a: str, b: str) -> np.ndarray:
    both = pairs(check_long(data), a, b)
    return (both[a] - both[b]).to_numpy(dtype=float)


def _rank_biserial(d: np.ndarray, axis: int = -1) -> np.ndarray:
    """(R+ - R-) / (R+ + R-) along ``axis``, zeros dropped: 2 V / (m (m + 1) / 2) - 1."""
    nonzero = np.count_nonzero(d, axis=axis)
    positive = stats.wilcoxon(d, zero_method="wilcox", method="approx", alternative="greater", axis=axis).statistic
    return 2 * positive / (nonzero * (nonzero + 1) / 2) - 1


def wilcoxon_paired(data: pd.DataFrame, a: str, b: str, outcome: str) -> TestResult:
    """The Wilcoxon signed-rank test of ``a`` against ``b`` with the rank-biserial r."""
    comparison = f"{a} vs {b}"
    d = _differences(data, a, b)
    if len(d) < MIN_PAIRS:
        text = note("too_few_pairs", n=len(d), a=a, b=b, minimum=MIN_PAIRS)
        return unavailable(outcome, "wilcoxon", comparison, len(d), text)
    nonzero = d[d != 0]
    if len(nonzero) == 0:
        return unavailable(outcome, "wilcoxon", comparison, len(d), note("no_differences", a=a, b=b))
    ties = len(np.unique(np.abs(nonzero))) < len(nonzero)
    exact = len(nonzero) < EXACT_BELOW and len(nonzero) == len(d) and not ties
    method = "exact" if exact else "approx"
    test = stats.wilcoxon(d, zero_method="wilcox", correction=not exact, method=method)
    positive = stats.wilcoxon(d, zero_method="wilcox", method=method, alternative="greater").statistic
    m = len(nonzero)
    low, high = bootstrap_interval((d,), _rank_biserial, paired=False)
    return TestResult(
        outcome=outcome,
        test="wilcoxon",
        comparison=comparison,
        n=len(d),
        statistic=number(positive),
        df=None,
        df2=None,
        p=number(test.pvalue),
        p_corrected=None,
        effect="rank-biserial r",
        estimate=number(2 * positive / (m * (m + 1) / 2) - 1),
        ci_low=low,
        ci_high=high,
        note=None,
    )


def paired_t(data: pd.DataFrame, a: str, b: str, outcome: str) -> TestResult:
    """The paired t-test of ``a`` against ``b`` with the mean difference and its interval."""
    comparison = f"{a} vs {b}"
    both = pairs(check_long(data), a, b)
    n = len(both)
    if n < MIN_PAIRS:
        return unavailable(outcome, "paired_t", comparison, n, note("too_few_pairs", n=n, a=a, b=b, minimum=MIN_PAIRS))
    d = (both[a] - both[b]).to_numpy(dtype=float)
    if np.ptp(d) == 0:
        key = "no_differences" if d[0] == 0 else "constant_differences"
        return unavailable(outcome, "paired_t", comparison, n, note(key, a=a, b=b))
    test = stats.ttest_rel(both[a].to_numpy(dtype=float), both[b].to_numpy(dtype=float))
    interval = test.confidence_interval(0.95)
    return TestResult(
        outcome=outcome,
        test="paired_t",
        comparison=comparison,
        n=n,
        statistic=number(test.statistic),
        df=number(test.df),
        df2=None,
        p=number(test.pvalue),
        p_corrected=None,
        effect="mean difference",
        estimate=number(np.mean(d)),
        ci_low=number(interval.low),
        ci_high=number(interval.high),
        note=None,
    )
