"""The statistics of a study's results, in one place: each test takes the study's "long" data (a pandas
DataFrame with columns participant, condition, position, value; one row per participant and condition)
and returns a ``TestResult``, with a note in plain words instead of numbers when the test cannot be run.

Within-subject: ``wilcoxon_paired``, ``paired_t`` (paired.py); ``friedman``, ``rm_anova`` (within.py);
``mixed_model`` (mixed.py). Between-subject: ``mann_whitney``, ``kruskal``, ``welch`` (between.py).
``correct`` (corrections.py), ``reliability`` (reliability.py), ``describe`` (descriptives.py).
Every test statistic and p-value comes from scipy.stats or statsmodels; the effect sizes and their
intervals are stated in each module's docstring and in docs/study.md ("The statistics").
"""

from __future__ import annotations

from agent.analyze.results.between import kruskal, mann_whitney, welch
from agent.analyze.results.corrections import correct
from agent.analyze.results.descriptives import Description, describe
from agent.analyze.results.mixed import mixed_model
from agent.analyze.results.paired import paired_t, wilcoxon_paired
from agent.analyze.results.reliability import Reliability, reliability
from agent.analyze.results.result import TestResult
from agent.analyze.results.within import friedman, rm_anova

__all__ = [
    "Description",
    "Reliability",
    "TestResult",
    "correct",
    "describe",
    "friedman",
    "kruskal",
    "mann_whitney",
    "mixed_model",
    "paired_t",
    "reliability",
    "rm_anova",
    "welch",
    "wilcoxon_paired",
]
