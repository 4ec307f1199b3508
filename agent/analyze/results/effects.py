"""Confidence intervals for effect sizes that have no closed-form interval.

- Rank-based effect sizes (rank-biserial r, Kendall's W, epsilon squared): scipy's bootstrap over
  participants (or within each group, between subjects), bias-corrected and accelerated (BCa), 2000
  resamples from a fixed seed, so the same data gives the same interval. When BCa is undefined (every
  resample gives the same value, as when every difference has the same sign), the percentile interval.
- Partial eta squared: the noncentral-F interval (Steiger 2004): the noncentrality parameters at which the
  observed F is the 97.5th and the 2.5th percentile, each turned into eta squared as
  lambda / (lambda + df1 + df2 + 1). scipy's noncentral F does the arithmetic.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import optimize, stats

from agent.analyze.results.result import number

LEVEL = 0.95
RESAMPLES = 2000
SEED = 20_240_601


def bootstrap_interval(
    samples: Sequence[np.ndarray], statistic: Callable[..., np.ndarray], *, paired: bool
) -> tuple[float | None, float | None]:
    """A 95 % bootstrap interval of ``statistic`` (vectorised over ``axis``), or Nones when undefined."""
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = stats.bootstrap(
                tuple(samples),
                statistic,
                n_resamples=RESAMPLES,
                vectorized=True,
                paired=paired,
                method=method,
                confidence_level=LEVEL,
                rng=np.random.default_rng(SEED),
            )
        low, high = number(result.confidence_interval.low), number(result.confidence_interval.high)
        if low is not None and high is not None:
            return low, high
    return None, None


def _noncentrality(f: float, df1: float, df2: float, quantile: float) -> float:
    """The noncentrality at which ``f`` is the ``quantile`` of the noncentral F (0 when even the
    central F puts more than that below it)."""

    def gap(lam: float) -> float:
        return float(stats.ncf.cdf(f, df1, df2, lam)) - quantile

    if gap(0.0) <= 0:
        return 0.0
    high = max(10.0, f * df1 * 2)
    for _ in range(60):  # the cdf falls towards 0 as lambda grows; double until it is below
        if gap(high) < 0:
            break
        high *= 2
    return float(optimize.brentq(gap, 0.0, high, xtol=1e-12, rtol=1e-12, maxiter=500))


def partial_eta_squared_interval(f: float, df1: float, df2: float) -> tuple[float, float]:
    """The 95 % noncentral-F interval of partial eta squared for an F(df1, df2) of ``f``."""
    tail = (1 - LEVEL) / 2
    low = _noncentrality(f, df1, df2, 1 - tail)
    high = _noncentrality(f, df1, df2, tail)
    return low / (low + df1 + df2 + 1), high / (high + df1 + df2 + 1)
