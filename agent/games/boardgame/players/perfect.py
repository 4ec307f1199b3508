"""Perfect play for small games by exhaustive negamax over the rules plugin (tic-tac-toe: 5,478 positions).

Scores prefer the quickest win and the slowest loss, so the player finishes a won game and holds
out in a lost one; among equally good moves it picks at random, so games vary.
"""

from __future__ import annotations

import random
from typing import Any

from agent.games.boardgame.rules.base import GameRules

MAX_POSITIONS = 200_000
"""Refuse games too large to solve this way instead of running out of memory."""


class TooLarge(RuntimeError):
    pass


class Solver:
    """Exact values of positions of one game; the cache lives as long as the solver."""

    def __init__(self, rules: GameRules[Any]) -> None:
        self._rules = rules
        self._values: dict[Any, int] = {}

    def value(self, position: Any) -> int:
        """The game value for the side to move: > 0 win, 0 draw, < 0 loss (bigger = sooner win)."""
        cached = self._values.get(position)
        if cached is not None:
            return cached
        rules = self._rules
        outcome = rules.outcome(position)
        if outcome is not None:
            # The previous mover made the last move; a decided game is a loss for the side to move.
            result = 0 if outcome.winner is None else -(100 - rules.ply(position))
        else:
            result = max(-self.value(rules.play(position, m)) for m in rules.legal_moves(position))
        if len(self._values) >= MAX_POSITIONS:
            raise TooLarge(f"{rules.title} has more than {MAX_POSITIONS} positions; use a search player")
        self._values[position] = result
        return result

    def best_moves(self, position: Any) -> list[int]:
        rules = self._rules
        scored = [(-self.value(rules.play(position, m)), m) for m in rules.legal_moves(position)]
        best = max(score for score, _ in scored)
        return [m for score, m in scored if score == best]


def perfect_move(solver: Solver, position: Any, rng: random.Random) -> int:
    return rng.choice(solver.best_moves(position))
