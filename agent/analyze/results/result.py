"""The record of one test: what was compared, the statistic, its p-value and an effect size with its
interval, or a note in plain words saying why the test was not run (and then no numbers)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

NOTES_FILE = "statistics_notes.yaml"


@dataclass(frozen=True)
class TestResult:
    """One test of one outcome (see ``statistics.py`` for the tests and their effect sizes)."""

    __test__ = False  # not a pytest test class, whatever its name

    outcome: str
    test: str
    comparison: str
    n: int
    statistic: float | None
    df: float | None
    df2: float | None
    p: float | None
    p_corrected: float | None
    effect: str | None
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    note: str | None


@functools.cache
def _notes() -> dict[str, str]:
    text = resources.files(__package__).joinpath(NOTES_FILE).read_text(encoding="utf-8")
    notes = yaml.safe_load(text)
    if not isinstance(notes, dict) or not all(isinstance(v, str) for v in notes.values()):
        raise ValueError(f"{NOTES_FILE}: expected a mapping of note names to texts")
    return notes


def note(key: str, **fields: Any) -> str:
    """The plain-words note ``key`` of statistics_notes.yaml with its fields filled in."""
    return _notes()[key].format(**fields)


def unavailable(outcome: str, test: str, comparison: str, n: int, text: str) -> TestResult:
    """A test that was not run: the note says why, every number is None."""
    return TestResult(outcome, test, comparison, n, None, None, None, None, None, None, None, None, None, text)


def number(value: Any) -> float | None:
    """A finite float, or None for NaN, infinity or None (a result that is no number)."""
    if value is None:
        return None
    result = float(value)
    return result if math.isfinite(result) else None
