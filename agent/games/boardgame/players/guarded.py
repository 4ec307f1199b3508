"""The LLM player with the guard in front (``llm.guard: decided``): the model's legal move goes out
unless it throws away a decided position (:mod:`~agent.games.boardgame.players.guard`).

Each override is a ``guard`` transcript record in the turn's scope (the model's choice, the
replacement, the rule and the reason) and is kept in :attr:`GuardedPlayer.overrides` for
evaluations that keep no transcript. The turn's own records keep their shape: the client sees an
action from the player, as before.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from agent.core.transcript import Transcript
from agent.games.boardgame.players.base import Player, TextPlayer, TextTurn, Turn
from agent.games.boardgame.players.guard import Override, Prover, make_prover, review
from agent.games.boardgame.rules.base import GameRules, RuleError, WireAction

log = logging.getLogger(__name__)

MAX_KEPT = 1_000
"""Moves kept in :attr:`GuardedPlayer.moves` (a match has far fewer)."""


@dataclass(frozen=True)
class GuardedMove:
    position: Any
    move: int
    """The move sent: the chosen one, or the guard's replacement."""
    override: Override | None
    source: str = "model"
    """Who chose the move the guard saw: model, fallback (the offline player) or last-resort."""


class GuardedPlayer(Player, TextPlayer):
    """Wraps the LLM player of one match. ``seconds`` bounds each search of the prover."""

    def __init__(self, inner: Any, rules: GameRules[Any], seconds: float,
                 transcript: Transcript | None = None) -> None:
        self.inner = inner
        self.label = getattr(inner, "label", "llm")
        self._prover: Prover = make_prover(rules, seconds)
        self._transcript = transcript
        self.overrides: list[Override] = []
        self.fallback_overrides = 0
        """Overrides of a move the model did not choose (the offline fallback's)."""
        self.moves: list[GuardedMove] = []

    async def choose(self, turn: Turn) -> WireAction:
        action: WireAction = await self.inner.choose(turn)
        return await self.settle(turn, action, "model")

    async def settle(self, turn: Turn, action: WireAction, source: str = "fallback") -> WireAction:
        """The one place that decides what is sent for this player: the model's legal move (whether
        it came as the schema's label, from a salvaged reply or after a re-ask) and the offline
        fallback's alike meet the guard here."""
        rules = turn.rules
        try:
            move = rules.check_action(turn.position, turn.seat, action.type, action.data)
        except RuleError:
            return action  # illegal: the client refuses it and tells the model why
        try:
            override = await asyncio.to_thread(review, rules, turn.position, move, self._prover)
        except Exception:  # a guard bug must not cost a legal move
            log.exception("the guard failed; the %s move stands", source)
            override = None
        if len(self.moves) < MAX_KEPT:
            self.moves.append(GuardedMove(turn.position, move if override is None else override.move, override,
                                          source))
        if override is None:
            return action
        self.overrides.append(override)
        self.fallback_overrides += source != "model"
        log.info("guard (%s, %s move): %s", override.rule, source, override.reason)
        if self._transcript is not None:
            self._transcript.record("guard", rule=override.rule, model_choice=rules.describe_move(move),
                                    replacement=rules.describe_move(override.move), reason=override.reason,
                                    engine_turn=turn.turn, replaced_source=source)
        return rules.move_to_action(override.move)

    async def choose_text(self, turn: TextTurn) -> WireAction:
        result: WireAction = await self.inner.choose_text(turn)
        return result
