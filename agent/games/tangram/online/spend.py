"""What a game's LLM calls cost, counted from the calls the transcript records, and the check that
a study with spend caps knows its models' prices.

Every LLM call leaves an ``llm`` record with its prompt and completion tokens; the metered
transcript adds them up at the condition's prices (``llm.usd_per_million_input/output``) as they
are recorded, also when transcripts are not written. The sum goes to the game's row
(``games.spend_usd``), and each call's cost to the participant's and the study's running totals
(agent/core/studies/spend.py). The caps of the study file (``online.spend_cap_participant_usd``,
``spend_cap_study_usd``) are checked when a game starts (beyond them the offline planner plays it)
and, through those totals, by the LLM player before each call: a game that crosses a cap goes on
with the offline planner from its next call.
"""

from __future__ import annotations

from typing import Any

from agent.core.studies.spend import ParticipantSpend
from agent.core.studies.study_file import Study
from agent.core.transcript import Transcript

Prices = tuple[float, float]


def prices_of(config: Any) -> Prices | None:
    """The condition's prices per million input and output tokens; None for a player without an
    LLM or a model without prices."""
    llm = config.llm
    if not config.uses_llm() or llm.usd_per_million_input is None or llm.usd_per_million_output is None:
        return None
    return float(llm.usd_per_million_input), float(llm.usd_per_million_output)


def missing_prices(study: Study) -> str | None:
    """One line when the study caps spend but an LLM condition's model has no prices; else None."""
    spec = study.online
    if spec is None or (spec.spend_cap_participant_usd is None and spec.spend_cap_study_usd is None):
        return None
    for condition in study.conditions:
        if condition.config.uses_llm() and prices_of(condition.config) is None:
            return (f"study {study.path}: online spend caps need the model's prices: condition {condition.name!r} "
                    "sets no llm.usd_per_million_input and llm.usd_per_million_output")
    return None


class MeteredTranscript(Transcript):
    """A transcript that adds up what its LLM calls cost, and adds each call's cost to the
    participant's running total (``account``), which the caps are checked against before the next
    call (agent/core/studies/spend.py)."""

    def __init__(self, *args: Any, prices: Prices | None = None, account: ParticipantSpend | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.prices = prices
        self.account = account
        self.usd = 0.0
        self.spend_cap: str | None = None
        """Why a spend cap switched this game to the planner (its ``spend_cap`` record), if one did."""

    def record(self, kind: str, **data: Any) -> None:
        if kind == "llm" and self.prices is not None:
            tokens_in = data.get("prompt_tokens")
            tokens_out = data.get("completion_tokens")
            cost = ((tokens_in if isinstance(tokens_in, int) else 0) * self.prices[0]
                    + (tokens_out if isinstance(tokens_out, int) else 0) * self.prices[1]) / 1e6
            self.usd += cost
            if self.account is not None:
                self.account.add(cost)
        elif kind == "spend_cap" and self.spend_cap is None:
            self.spend_cap = str(data.get("reason", ""))
        super().record(kind, **data)
