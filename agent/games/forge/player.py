"""Who decides: the heuristic alone, or an LLM with the heuristic as its safety net.

The heuristic's decision is computed first (well under a millisecond), so it is ready the moment
the LLM fails, answers nonsense or runs past ``decision.deadline``. An LLM answer goes through
the same validator as the heuristic's: valid answers are sent, invalid ones repaired (invalid
entries dropped) when what remains is still a decision, and otherwise replaced by the heuristic's;
each case is logged with the reason. With ``llm.guard: decided`` a valid answer that throws away a
position the heuristic proves decided (lethal to take, a block to survive) is replaced
(:mod:`~agent.games.forge.guard`), and the override is a ``guard`` transcript record.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from agent.core.llm import Compact, LLMClient
from agent.core.llm.records import record_llm_result, record_llm_unfinished
from agent.core.prompts import PromptSet
from agent.core.transcript import Transcript
from agent.games.forge import guard, heuristic
from agent.games.forge.config import ForgeConfig
from agent.games.forge.decisions import ActionDecision, Decision, safe_decision
from agent.games.forge.models import ActionState, ForgeRequest
from agent.games.forge.prompt_context import build_context, describe, has_choice, read_reply, schema_for, schema_key
from agent.games.forge.validate import problems, repair
from agent.games.forge.view import View

log = logging.getLogger(__name__)

MODEL_SOURCES = frozenset({"llm", "llm-repaired"})
"""Sources whose decision is the model's own choice (``llm.guard: off`` sends those as they are)."""


@dataclass
class Outcome:
    decision: Decision
    reason: str
    source: str
    """heuristic, llm, llm-repaired, guard (the model's choice replaced), heuristic-after-llm (the LLM
    failed), safe (deciding failed)."""
    note: str = ""
    """Why the LLM's answer was not used as it came, when it was not."""
    llm_outcome: str | None = None
    """ok, error, timeout, skipped (not sent: the endpoint too slow for the deadline): how the LLM call
    of this decision ended (None: no call)."""


def _repeats_a_tried_action(request: ForgeRequest, view: View, decision: Decision, tried: Collection[str]) -> bool:
    """An action chosen before in this turn and phase and offered again could not be done (A6)."""
    if not isinstance(request.options, ActionState) or not isinstance(decision, ActionDecision):
        return False
    option = next((o for o in request.options.options if o.index == decision.index), None)
    return option is not None and not option.is_pass and heuristic.action_key(view, option) in tried


def heuristic_outcome(request: ForgeRequest, view: View, tried: Collection[str]) -> Outcome:
    try:
        choice = heuristic.decide(request, view, tried)
    except Exception:  # a bug must cost one clever decision, not the game
        log.exception("heuristic failed on a %s request; answering the safe default", request.request_type)
        return Outcome(safe_decision(request), "safe default after an internal error", "safe")
    return Outcome(choice.decision, choice.reason, "heuristic")


class Decider:
    """Shared by all games of a server: holds no game state (that is the session's)."""

    def __init__(self, config: ForgeConfig, client: LLMClient | None = None, prompts: PromptSet | None = None) -> None:
        self.config = config
        self.client = client
        self.prompts = prompts

    async def decide(self, request: ForgeRequest, view: View, memory: list[str], tried: Collection[str],
                     transcript: Transcript | None = None) -> Outcome:
        """The decision that is sent; an LLM call is recorded in ``transcript`` (an ``llm`` record)
        however it ends. Whatever made the answer, it leaves through :meth:`settle`."""
        fallback = heuristic_outcome(request, view, tried)
        if self.client is None or self.prompts is None or not has_choice(request):
            return self.settle(request, view, tried, fallback, transcript)
        outcome = await self._ask_llm(request, view, memory, tried, fallback, transcript)
        return self.settle(request, view, tried, outcome, transcript)

    def settle(self, request: ForgeRequest, view: View, tried: Collection[str], outcome: Outcome,
               transcript: Transcript | None = None) -> Outcome:
        """The one place that decides what is sent: the validator, then the guard, for every answer
        whatever made it (the model's, a repaired or salvaged one, the heuristic's after a failed or
        skipped call, a safe default). ``llm.guard: off`` exempts only the model's own answers."""
        wrong = problems(request, outcome.decision)
        if wrong:  # the validator has the last word, whoever decided
            log.error("an invalid %s decision (%s) reached the last check; sending the safe default",
                      outcome.source, "; ".join(wrong))
            outcome = Outcome(safe_decision(request), "safe default", "safe", note=f"invalid: {'; '.join(wrong)}",
                              llm_outcome=outcome.llm_outcome)
        if self.config.llm.guard == "off" and outcome.source in MODEL_SOURCES:
            return outcome
        return self._guarded(request, view, tried, outcome, transcript)

    @staticmethod
    def _guarded(request: ForgeRequest, view: View, tried: Collection[str], outcome: Outcome,
                 transcript: Transcript | None) -> Outcome:
        try:
            override = guard.review(request, view, outcome.decision, tried)
        except Exception:  # a guard bug must not cost a valid answer
            log.exception("the guard failed on a %s request; the %s answer stands", request.request_type,
                          outcome.source)
            return outcome
        if override is None or problems(request, override.decision):
            return outcome
        chose, instead = describe(request, outcome.decision), describe(request, override.decision)
        whose = "the model's" if outcome.source in MODEL_SOURCES else f"the {outcome.source} answer's"
        log.info("guard (%s): %s choice %s; sending %s instead", override.rule, whose, chose, instead)
        if transcript is not None:
            transcript.record("guard", request_type=request.request_type, rule=override.rule, model_choice=chose,
                              replacement=instead, reason=override.reason, replaced_source=outcome.source)
        note = f"guard {override.rule}: replaced {whose} choice ({chose})"
        if outcome.note:
            note = f"{outcome.note}; {note}"
        return Outcome(override.decision, override.reason, "guard", note=note, llm_outcome=outcome.llm_outcome)

    async def _ask_llm(self, request: ForgeRequest, view: View, memory: list[str], tried: Collection[str],
                       fallback: Outcome, transcript: Transcript | None) -> Outcome:
        assert self.client is not None and self.prompts is not None
        cfg = self.config.decision
        hint = fallback.reason if cfg.heuristic_hint else ""
        try:
            ctx = build_context(request, view, memory[-cfg.memory:] if cfg.memory else [], hint, cfg.max_oracle_chars)
            messages = self.prompts.messages("system", "decide", ctx)
        except Exception as exc:  # a template that fails on this request's data
            log.error("prompt could not be built (%s); the heuristic answers", exc)
            fallback.note = f"prompt failed: {exc}"
            fallback.source = "heuristic-after-llm"
            return fallback
        key = schema_key(request)
        started = time.monotonic()
        try:
            deadline = asyncio.get_running_loop().time() + cfg.deadline
            async with asyncio.timeout_at(deadline):
                result = await self.client.complete_json(messages, schema_for(request), schema_name=f"forge_{key}",
                                                         deadline=deadline, compact=self._compact(ctx))
        except TimeoutError:
            error = f"no answer within the {cfg.deadline:g}s decision deadline"
            record_llm_unfinished(transcript, "decide", messages, started, "timeout", self.config.llm.model, error)
            return self._fallback(fallback, error, "timeout")
        except asyncio.CancelledError:
            record_llm_unfinished(transcript, "decide", messages, started, "cancelled", self.config.llm.model)
            raise
        record_llm_result(transcript, "decide", messages, started, result)
        llm_outcome = "skipped" if result.skipped else "ok" if result.ok else "error"
        if not result.ok or result.data is None:
            return self._fallback(fallback, f"LLM call failed: {result.error}", llm_outcome)
        decision, reason = read_reply(request, result.data)
        if decision is None:
            return self._fallback(fallback, f"unusable LLM answer: {reason}", llm_outcome)
        wrong = problems(request, decision)
        if not wrong and _repeats_a_tried_action(request, view, decision, tried):
            return self._fallback(fallback, "the LLM chose an action that already came back this turn", llm_outcome)
        if not wrong:
            return Outcome(decision, reason or "(no reason given)", "llm", llm_outcome=llm_outcome)
        fixed = repair(request, decision)
        note = f"invalid LLM answer ({'; '.join(wrong)})"
        if fixed is not None and not problems(request, fixed):
            log.warning("%s; repaired to %s", note, describe(request, fixed))
            return Outcome(fixed, reason or "(no reason given)", "llm-repaired", note=note, llm_outcome=llm_outcome)
        return self._fallback(fallback, note, llm_outcome)

    def _compact(self, ctx: dict[str, Any]) -> Compact:
        """The prompt without the cards' rules text and with two earlier decisions, for a model whose
        context window the full one does not fit."""
        assert self.prompts is not None
        prompts, short = self.prompts, {**ctx, "compact": True}
        return lambda: prompts.messages("system", "decide", short)

    @staticmethod
    def _fallback(fallback: Outcome, why: str, llm_outcome: str) -> Outcome:
        log.warning("%s; the heuristic answers: %s", why, fallback.reason)
        return Outcome(fallback.decision, fallback.reason, "heuristic-after-llm", note=why, llm_outcome=llm_outcome)
