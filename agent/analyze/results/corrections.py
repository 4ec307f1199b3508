"""Corrections for several comparisons (statsmodels ``multipletests``): Holm, Bonferroni, or
Benjamini-Hochberg's false discovery rate; "none" copies each p-value. The family is the results passed
in together; a result without a p-value (a test that was not run) is not counted and keeps no
corrected p-value."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

from statsmodels.stats.multitest import multipletests

from agent.analyze.results.result import TestResult

Method = Literal["holm", "bonferroni", "fdr_bh", "none"]
METHODS: tuple[Method, ...] = ("holm", "bonferroni", "fdr_bh", "none")


def correct(results: Sequence[TestResult], method: Method) -> list[TestResult]:
    """``results`` with ``p_corrected`` filled in over the family of those with a p-value."""
    if method not in METHODS:
        raise ValueError(f"unknown correction {method!r}; one of {', '.join(METHODS)}")
    tested = [i for i, r in enumerate(results) if r.p is not None]
    ps = [results[i].p for i in tested]
    corrected = list(ps) if method == "none" or not ps else list(multipletests(ps, method=method)[1])
    out = [dataclasses.replace(r, p_corrected=None) for r in results]
    for i, p in zip(tested, corrected, strict=True):
        out[i] = dataclasses.replace(results[i], p_corrected=float(p) if p is not None else None)
    return out
