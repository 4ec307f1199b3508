"""The LLM coach: every few rounds, a plan for the strategy, asked in the background.

Moves never wait for it. ``maybe_ask`` (called after each answer has been written) starts at most
one call at a time; when the reply comes, it is validated as a :class:`Plan` and handed to the
strategy, unless it is late (the match moved on too far), invalid or failed: then it is recorded
and ignored. Prompts are templates in ``prompts/hive/``; the summary they get is built here.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent.core.llm import Compact, LLMClient
from agent.core.llm.records import MATCH_OVER, record_llm_result, record_llm_unfinished
from agent.core.prompts import PromptSet, load_prompts
from agent.core.transcript import Transcript, record_scope
from agent.games.hive.config import CoachConfig
from agent.games.hive.rules import COLS, ROUND, hive_position
from agent.games.hive.strategy.plan import ROLES, Plan, plan_json_schema
from agent.games.hive.strategy.strategy import Strategy
from agent.games.hive.strategy.world import FRESH_BEE

log = logging.getLogger(__name__)

TEMPLATES = ("system", "plan", "direct_system", "move")


def _sample_context() -> dict[str, Any]:
    """Every variable any template may use, for the start-up check."""
    bee = {"bee": 0, "row": 10, "col": 2, "carrying": False, "role": "forage", "target": None}
    return {
        "turn": 0, "round": 0, "team": "team", "player": 0, "hive": [12, 1], "enemy_hive": [12, 28],
        "our_score": 0, "flowers_known": 0, "explored_pct": 0, "enemy_carriers": 0,
        "bees": [bee], "bee": bee, "map": "?", "view": "?", "current_plan": "none",
        "every_rounds": 10, "suggestion": "move N", "roles": list(ROLES), "compact": False,
    }


def load_hive_prompts(directory: Path) -> PromptSet:
    return load_prompts(directory, _sample_context(), names=TEMPLATES)


def summary_context(strategy: Strategy, team: str, our_score: int, every_rounds: int) -> dict[str, Any]:
    """What the coach is told: a compact picture of the match as our bees have seen it."""
    world = strategy.world
    bees = []
    marks: dict[int, str] = {}
    for own in world.bees:
        row, col = divmod(own.position, COLS)
        target = strategy.claims.get(own.index)
        bees.append({"bee": own.index, "row": row, "col": col, "carrying": own.carrying,
                     "role": strategy.role_of(own.index),
                     "target": list(divmod(target, COLS)) if target is not None else None})
        marks[own.position] = "C" if own.carrying else "B"
    plan = strategy.plan
    return {
        "turn": world.turn, "round": world.turn // ROUND, "team": team, "player": world.player,
        "hive": list(hive_position(world.player)), "enemy_hive": list(hive_position(world.opponent)),
        "our_score": our_score, "flowers_known": len(world.flowers()),
        "explored_pct": round(100 * world.explored_fraction()),
        "enemy_carriers": len(world.enemy_carriers(FRESH_BEE)),
        "bees": bees, "map": world.render(marks),
        "current_plan": plan.model_dump_json(exclude={"reasoning"}) if plan else "none (all bees forage)",
        "every_rounds": every_rounds,
        "bee": bees[0], "view": "", "suggestion": "", "roles": list(ROLES), "compact": False,
    }


@dataclass
class CoachStats:
    asked: int = 0
    applied: int = 0
    late: int = 0
    invalid: int = 0
    failed: int = 0
    abandoned: int = 0
    """Still running when the match ended."""


Recorder = Callable[..., None]


class Coach:
    """One per match. Call ``maybe_ask`` after answering a state; ``aclose`` at the end."""

    def __init__(self, client: LLMClient, prompts: PromptSet, config: CoachConfig, strategy: Strategy,
                 team: str, record: Recorder | None = None, transcript: Transcript | None = None) -> None:
        self.client = client
        self.transcript = transcript
        """Where the LLM calls go, as ``llm`` records in the shape every game writes."""
        self.prompts = prompts
        self.config = config
        self.strategy = strategy
        self.team = team
        self.record = record or (lambda kind, **data: None)
        self.stats = CoachStats()
        self._task: asyncio.Task[None] | None = None
        self._last_asked_turn: int | None = None
        self._schema = plan_json_schema()

    def rebind(self, strategy: Strategy) -> None:
        self.strategy = strategy

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    def maybe_ask(self, turn: int, our_score: int) -> bool:
        """Start a coach call if one is due and none is running; never waits. True if started."""
        if self.busy or self.stats.asked >= self.config.max_calls:
            return False
        if self._last_asked_turn is not None and turn - self._last_asked_turn < self.config.every_rounds * ROUND:
            return False
        self._last_asked_turn = turn
        self.stats.asked += 1
        try:
            context = summary_context(self.strategy, self.team, our_score, self.config.every_rounds)
            messages = self.prompts.messages("system", "plan", context)
        except Exception as exc:  # a template that fails at run time must not touch the match
            self.stats.failed += 1
            self.record("coach_error", turn=turn, error=f"prompt: {exc}")
            return False
        # Without the map, for a model whose context window the full prompt does not fit.
        compact = functools.partial(self.prompts.messages, "system", "plan", {**context, "compact": True})
        self._task = asyncio.get_running_loop().create_task(self._ask(turn, messages, compact),
                                                            name=f"hive-coach-{turn}")
        return True

    async def _ask(self, asked_turn: int, messages: list[dict[str, Any]], compact: Compact) -> None:
        with record_scope(turn=asked_turn):
            await self._ask_in_scope(asked_turn, messages, compact)

    async def _ask_in_scope(self, asked_turn: int, messages: list[dict[str, Any]], compact: Compact) -> None:
        started = time.monotonic()
        self.record("coach_request", turn=asked_turn, prompt=messages[-1]["content"])
        try:
            result = await asyncio.wait_for(self.client.complete_json(messages, self._schema, schema_name="hive_plan",
                                                                      compact=compact), self.config.timeout)
        except TimeoutError:
            self.stats.failed += 1
            error = f"no answer within {self.config.timeout:g} s"
            record_llm_unfinished(self.transcript, "coach", messages, started, "timeout", self.client.model, error)
            self.record("coach_error", turn=asked_turn, error=error)
            return
        except asyncio.CancelledError:
            # only aclose cancels a plan: the match is over
            record_llm_unfinished(self.transcript, "coach", messages, started, "cancelled", self.client.model,
                                  "the match ended before the answer", cause=MATCH_OVER)
            raise
        except Exception as exc:  # the client should not raise; if it does, the match goes on
            self.stats.failed += 1
            self.record("coach_error", turn=asked_turn, error=f"{type(exc).__name__}: {exc}"[:300])
            return
        record_llm_result(self.transcript, "coach", messages, started, result)
        latency = round(time.monotonic() - started, 3)
        if not result.ok or result.data is None:
            self.stats.failed += 1
            self.record("coach_error", turn=asked_turn, error=result.error or "no JSON object in the reply",
                        latency_s=latency, text=result.text[:500])
            return
        try:
            plan = Plan.model_validate(result.data)
        except ValidationError as exc:
            self.stats.invalid += 1
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            self.record("coach_invalid", turn=asked_turn, error=f"{where}: {first['msg']}", latency_s=latency,
                        text=result.text[:500])
            return
        now = self.strategy.world.turn
        if now - asked_turn > self.config.max_age_rounds * ROUND:
            self.stats.late += 1
            self.record("coach_late", turn=asked_turn, now=now, latency_s=latency, plan=plan.model_dump())
            return
        self.strategy.plan = plan
        self.stats.applied += 1
        self.record("coach_plan", turn=asked_turn, now=now, latency_s=latency, plan=plan.model_dump(),
                    tokens=[result.prompt_tokens, result.completion_tokens])

    async def aclose(self) -> None:
        """Abandon a call still running (the match is over)."""
        if self._task is not None and not self._task.done():
            self.stats.abandoned += 1
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
