"""An outcome's description in one condition: n, mean, SD (n - 1 in the denominator), median and the
quartiles as R's default (type 7: numpy's "linear"). Missing values are left out; with no value every
number is None, and with one the SD is."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Description:
    n: int
    mean: float | None
    sd: float | None
    median: float | None
    q1: float | None
    q3: float | None


def describe(values: Iterable[float] | pd.Series | np.ndarray) -> Description:
    """n, mean, SD, median and quartiles of ``values`` (NaN left out)."""
    array = pd.to_numeric(pd.Series(list(values) if not isinstance(values, pd.Series) else values), errors="raise")
    data = array.dropna().to_numpy(dtype=float)
    n = len(data)
    if n == 0:
        return Description(0, None, None, None, None, None)
    q1, median, q3 = (float(q) for q in np.quantile(data, [0.25, 0.5, 0.75], method="linear"))
    sd = float(np.std(data, ddof=1)) if n > 1 else None
    return Description(n, float(np.mean(data)), sd, median, q1, q3)
