"""The guard: a model's legal move is replaced only when it throws away a decided position.

From the offline player's own knowledge (docs/boardgame.md, "The guard"):

- **win-in-one**: a move wins at once and the model chose another: the win is played;
- **losing-move**: the prover shows the model's move loses by force, and a move it cannot show
  losing exists: that move (the prover's best) is played.

Provers: tic-tac-toe exactly (:class:`~agent.games.boardgame.players.perfect.Solver`); connect
four with the alpha-beta search within its time budget (only forced results count, never an
evaluation); any other game one ply deep (the opponent wins at once). A weak but undecided move
stays the model's. Pure functions over the rules plugin; a search takes up to its budget of CPU,
so callers run :func:`review` in a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from agent.games.boardgame.players.c4_search import MATE_ZONE, Searcher
from agent.games.boardgame.players.perfect import Solver
from agent.games.boardgame.rules.base import GameRules


@dataclass(frozen=True, slots=True)
class Override:
    move: int
    rule: str
    """win-in-one or losing-move."""
    reason: str


class Prover(Protocol):
    def loses(self, position: Any, move: int) -> bool:
        """True only when ``move`` is proven to lose for the side to move in ``position``."""

    def safe_move(self, position: Any) -> int | None:
        """A move not proven to lose (the best the prover knows), or None when every move loses."""


class ExactProver:
    """Perfect knowledge, for games small enough to solve (tic-tac-toe)."""

    def __init__(self, rules: GameRules[Any]) -> None:
        self.rules = rules
        self.solver = Solver(rules)

    def loses(self, position: Any, move: int) -> bool:
        return self.solver.value(self.rules.play(position, move)) > 0

    def safe_move(self, position: Any) -> int | None:
        best = self.solver.best_moves(position)
        return best[0] if best and not self.loses(position, best[0]) else None


class SearchProver:
    """Connect four: forced results the alpha-beta search finds within ``seconds`` per search."""

    def __init__(self, rules: GameRules[Any], seconds: float) -> None:
        self.rules = rules
        self.seconds = seconds

    # A fresh searcher per search: a review cut short by the turn's time limit may still be
    # running in its thread when the next one starts, and searchers are not thread-safe.

    def loses(self, position: Any, move: int) -> bool:
        after = self.rules.play(position, move)
        if self.rules.outcome(after) is not None:
            return False  # a win or a draw, not a loss
        # The opponent moves in ``after``: a forced win for them is a proven loss for us.
        return Searcher().search(after, seconds=self.seconds).score >= MATE_ZONE

    def safe_move(self, position: Any) -> int | None:
        result = Searcher().search(position, seconds=self.seconds)
        return result.move if result.score > -MATE_ZONE else None


class OnePlyProver:
    """Any game: a move after which the opponent can win at once loses."""

    def __init__(self, rules: GameRules[Any]) -> None:
        self.rules = rules

    def loses(self, position: Any, move: int) -> bool:
        rules = self.rules
        after = rules.play(position, move)
        if rules.outcome(after) is not None:
            return False
        opponent = rules.to_move(after)
        return any(_wins(rules, after, reply, opponent) for reply in rules.legal_moves(after))

    def safe_move(self, position: Any) -> int | None:
        return next((m for m in self.rules.legal_moves(position) if not self.loses(position, m)), None)


def make_prover(rules: GameRules[Any], seconds: float) -> Prover:
    """The strongest prover this agent has for ``rules``."""
    if rules.name == "tictactoe":
        return ExactProver(rules)
    if rules.name == "connect_four":
        return SearchProver(rules, seconds)
    return OnePlyProver(rules)


def _wins(rules: GameRules[Any], position: Any, move: int, seat: int) -> bool:
    outcome = rules.outcome(rules.play(position, move))
    return outcome is not None and outcome.winner == seat


def review(rules: GameRules[Any], position: Any, move: int, prover: Prover) -> Override | None:
    """The replacement for the legal ``move`` when it throws away a decided position, else None."""
    seat = rules.to_move(position)
    legal = list(rules.legal_moves(position))
    if move not in legal:
        return None  # not the guard's business: the client refuses it with the reason
    wins = [m for m in legal if _wins(rules, position, m, seat)]
    if move in wins:
        return None
    if wins:
        return Override(wins[0], "win-in-one",
                        f"{rules.describe_move(wins[0])} wins at once; the model chose {rules.describe_move(move)}")
    if not prover.loses(position, move):
        return None
    safe = prover.safe_move(position)
    if safe is None or safe == move:
        return None  # every move loses: nothing decided to keep
    return Override(safe, "losing-move", f"{rules.describe_move(move)} loses by force; "
                                         f"{rules.describe_move(safe)} does not")
