"""The study file's analysis plan (``analysis:``): what the study compares, declared before the
first participant, and run as declared by ``python -m agent.analyze --study FILE --results OUT``.

```yaml
analysis:
  primary: teamwork                 # a questionnaire scale or a game measure (or a list of them)
  secondary: [reliance, effort, pieces_placed, duration_s]
  comparison: {control: quiet}      # or: all_pairs (the default)
  test: default                     # within: wilcoxon (or paired_t); between: mann_whitney (or welch)
  omnibus: default                  # within: friedman (or rm_anova); between: kruskal; none: leave it out
  mixed_model: true                 # within: value ~ condition + position, a random intercept per participant
  alpha: 0.05
  correction: holm                  # holm | bonferroni | fdr_bh | none (over each family's pairwise tests)
  exclude:
    screened_out: true              # failed attention checks ended the participation
    not_completed: true             # did not play every game of their sequence
    withdrawn: true                 # withdrew (their data is deleted already; counted in the flow)
    llm_unavailable_share: 0.25     # a game whose AI turns had no model (outage, spend cap) in more than this share
```

The plan is checked with the rest of the study file (every problem at once, one line each): an
outcome names a scale of the questionnaires' items, or one of :data:`GAME_MEASURES`; a control names
a condition. Its hash (:func:`analysis_hash`) goes into every session's record beside the plan's.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field, field_validator

from agent.core.config import StrictModel

GAME_MEASURES = {
    "pieces_placed": "pieces on the board at the end of the game",
    "ai_turns": "AI turns",
    "duration_s": "the game's duration in seconds",
    "chats": "chat replies",
    "games_completed": "games played to their end (the figure finished)",
    "llm_cost_usd": "estimated LLM cost, US dollars",
}
"""The game measures an outcome may name: the columns of the scores table (analyze/answers.py)."""
MAX_OUTCOMES = 20
Design = Literal["within", "between", "fixed"]
PairwiseTest = Literal["default", "wilcoxon", "paired_t", "mann_whitney", "welch"]
OmnibusTest = Literal["default", "friedman", "rm_anova", "kruskal", "none"]
Correction = Literal["holm", "bonferroni", "fdr_bh", "none"]
WITHIN_TESTS = ("wilcoxon", "paired_t", "friedman", "rm_anova")
BETWEEN_TESTS = ("mann_whitney", "welch", "kruskal")


class ExclusionSpec(StrictModel):
    """Which participants the analysis leaves out (each rule named on the results page and in flow.csv)."""

    screened_out: bool = Field(True, description="Leave out participants screened out by failed attention checks.")
    not_completed: bool = Field(True, description="Leave out participants who did not complete every game.")
    withdrawn: bool = Field(True, description=(
        "Leave out participants who withdrew (their data is deleted already: the rule counts them)."))
    llm_unavailable_share: float | None = Field(None, ge=0, lt=1, description=(
        "Leave out a participant with a game whose AI turns began during an LLM outage or after a spend cap in "
        "more than this share of its AI turns (unset: no such rule)."))


class Comparison(StrictModel):
    control: str = Field(description="Compare every other condition with this one.")


class AnalysisSpec(StrictModel):
    primary: list[str] = Field(min_length=1, max_length=MAX_OUTCOMES, description=(
        "The primary outcome(s): questionnaire scales or game measures."))
    secondary: list[str] = Field(default_factory=list, max_length=MAX_OUTCOMES, description="Secondary outcomes.")
    comparison: Literal["all_pairs"] | Comparison = Field("all_pairs", description=(
        "all_pairs, or {control: CONDITION}: every other condition against it."))
    test: PairwiseTest = Field("default", description=(
        "The pairwise test (default: wilcoxon within, mann_whitney between)."))
    omnibus: OmnibusTest = Field("default", description=(
        "The test over all conditions when there are more than two (default: friedman within, kruskal between)."))
    mixed_model: bool = Field(True, description=(
        "Within: a linear mixed model (condition and order position fixed, a random intercept per participant)."))
    alpha: float = Field(0.05, gt=0, le=0.2, description="The significance level.")
    correction: Correction = Field("holm", description="The correction over each family's pairwise tests.")
    exclude: ExclusionSpec = Field(default_factory=ExclusionSpec)

    @field_validator("primary", "secondary", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @property
    def outcomes(self) -> list[str]:
        """Primary then secondary outcomes, each once."""
        return list(dict.fromkeys([*self.primary, *self.secondary]))

    @property
    def control(self) -> str | None:
        return self.comparison.control if isinstance(self.comparison, Comparison) else None


def _guess(name: str, known: Sequence[str], what: str) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    if close:
        return f" (did you mean {close[0]!r}?)"
    return f" ({what}: {', '.join(known)})" if known else f" (no {what})"


def check_analysis(spec: AnalysisSpec, design: Design, conditions: Sequence[str],
                   scales: Sequence[str]) -> list[str]:
    """Every problem of the plan against the study, one line each: unknown outcomes and conditions,
    a test the design cannot run."""
    problems: list[str] = []
    known = [*sorted(scales), *GAME_MEASURES]
    for field in ("primary", "secondary"):
        names: list[str] = getattr(spec, field)
        problems += [f"field 'analysis.{field}': unknown outcome {name!r}"
                     f"{_guess(name, known, 'scales and game measures')}" for name in names if name not in known]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            problems.append(f"field 'analysis.{field}': {', '.join(twice)} listed more than once")
    both = sorted(set(spec.primary) & set(spec.secondary))
    if both:
        problems.append(f"field 'analysis.secondary': {', '.join(both)} is primary already")
    control = spec.control
    if control is not None and control not in conditions:
        problems.append(f"field 'analysis.comparison.control': unknown condition {control!r}"
                        f"{_guess(control, list(conditions), 'conditions')}")
    if design == "fixed" or len(conditions) < 2:
        problems.append("field 'analysis': a comparison needs two conditions or more, in a within or between design")
        return problems
    own = WITHIN_TESTS if design == "within" else BETWEEN_TESTS
    for field in ("test", "omnibus"):
        value = getattr(spec, field)
        if value not in ("default", "none") and value not in own:
            problems.append(f"field 'analysis.{field}': {value} is not a test of a {design} design "
                            f"({', '.join(t for t in own)})")
    return problems


def scales_of(questionnaires: Mapping[str, Any], after_each: Sequence[str]) -> list[str]:
    """The scales of the questionnaires shown after each game (the ones a condition has a score of)."""
    return sorted({str(item.scale) for name in after_each if name in questionnaires
                   for item in questionnaires[name].items if item.scale is not None})


def analysis_hash(spec: AnalysisSpec | None) -> str | None:
    """16 hex digits of the SHA-256 of the plan's canonical JSON (defaults filled in); None without one."""
    if spec is None:
        return None
    canonical = json.dumps(spec.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
