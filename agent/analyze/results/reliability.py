"""A questionnaire scale's internal consistency: Cronbach's alpha (the variance ratio
k / (k - 1) (1 - sum of item variances / variance of the total)), its 95 % interval by Feldt's method
(scipy's F quantiles on n - 1 and (n - 1)(k - 1) degrees of freedom, as R's ``psych::alpha``), and each
item's corrected item-total correlation (the Pearson correlation of the item with the sum of the other
items, psych's ``r.drop``). Items are already reverse-scored; a row with any missing item is left out."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from agent.analyze.results.result import note, number

MIN_ITEMS = 2
MIN_ROWS = 3
MAX_ITEMS = 200
LEVEL = 0.95


@dataclass(frozen=True)
class Reliability:
    scale: str
    n: int
    k: int
    alpha: float | None
    ci_low: float | None
    ci_high: float | None
    item_total: dict[str, float]
    note: str | None


def reliability(items: pd.DataFrame, scale: str) -> Reliability:
    """Cronbach's alpha of ``items`` (one row per answer, one column per item) with its interval."""
    if not isinstance(items, pd.DataFrame):
        raise ValueError(f"{scale}: expected a DataFrame of items, got {type(items).__name__}")
    if items.shape[1] > MAX_ITEMS:
        raise ValueError(f"{scale}: {items.shape[1]} items; at most {MAX_ITEMS} are analysed")
    numbers = items.apply(pd.to_numeric, errors="coerce")
    bad = items.notna() & numbers.isna()
    if bad.to_numpy().any():
        column = str(bad.any().idxmax())
        raise ValueError(f"{scale}: item {column} has a value that is not a number")
    rows = numbers.dropna().astype(float)
    n, k = len(rows), rows.shape[1]
    if k < MIN_ITEMS:
        text = note("too_few_items", scale=scale, k=k, minimum=MIN_ITEMS)
        return Reliability(scale, n, k, None, None, None, {}, text)
    if n < MIN_ROWS:
        text = note("too_few_respondents", scale=scale, n=n, minimum=MIN_ROWS)
        return Reliability(scale, n, k, None, None, None, {}, text)
    total = rows.sum(axis=1)
    total_variance = float(total.var(ddof=1))
    if total_variance == 0:
        return Reliability(scale, n, k, None, None, None, {}, note("no_item_variance", scale=scale))
    alpha = k / (k - 1) * (1 - float(rows.var(ddof=1).sum()) / total_variance)
    tail = (1 - LEVEL) / 2
    df1, df2 = n - 1, (n - 1) * (k - 1)
    low = 1 - (1 - alpha) * float(stats.f.ppf(1 - tail, df1, df2))
    high = 1 - (1 - alpha) * float(stats.f.ppf(tail, df1, df2))
    with np.errstate(all="ignore"):
        item_total = {str(c): float(rows[c].corr(total - rows[c])) for c in rows.columns}
    return Reliability(scale, n, k, number(alpha), number(low), number(high), item_total, None)
