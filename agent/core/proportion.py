"""How far a measured rate can be trusted: the Wilson score interval of a proportion.

A win rate of 35 % over 48 matches and one of 73 % over 48 are both "under 75 %", but only the
first is surely so: the second's interval reaches past the goal. The evaluation commands print the
interval beside every rate so that a reader (and a closing note) says which goals are met, which
are missed, and which a sample of this size cannot decide.

The Wilson interval (Wilson 1927; method 3 in Newcombe 1998) keeps its coverage near the nominal
level for small samples and rates near 0 or 1, where the textbook normal interval fails (it gives
0-0 for 0 of 20). It is one formula over the normal quantile from the standard library, so no
statistics package is pulled into the agent's dependencies for it.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Literal

Verdict = Literal["met", "missed", "undecided"]


def wilson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """The two-sided ``confidence`` interval of the rate ``successes / trials``; (0, 1) for no
    trials, since nothing was learnt."""
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    if trials == 0:
        return 0.0, 1.0
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / trials
    z2n = z * z / trials
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / trials + z2n / (4 * trials))
    # The bounds are exact at the ends; rounding must not push them past the observed extremes.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def verdict(successes: int, trials: int, goal: float, confidence: float = 0.95) -> Verdict:
    """Against a goal of "at least ``goal``": met when the whole interval is at or above it,
    missed when the whole interval is below it, undecided when the sample cannot tell."""
    low, high = wilson(successes, trials, confidence)
    if low >= goal:
        return "met"
    if high < goal:
        return "missed"
    return "undecided"


def describe(successes: int, trials: int, confidence: float = 0.95) -> str:
    """``"35.4 % (95 % interval 23.4-49.6 %)"``: the rate and its interval, for a summary line."""
    if trials == 0:
        return "n/a (nothing played)"
    low, high = wilson(successes, trials, confidence)
    return (f"{100 * successes / trials:.1f} % ({100 * confidence:.0f} % interval "
            f"{100 * low:.1f}-{100 * high:.1f} %)")


__all__ = ["Verdict", "describe", "verdict", "wilson"]
