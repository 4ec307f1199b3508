"""What the tangram acceptance benchmarks count of every AI turn the simulator saw."""

from __future__ import annotations

from dataclasses import dataclass

from agent.games.tangram.sim.client import GameClient, TurnResult


@dataclass
class TurnTally:
    turns: int = 0
    ended: int = 0
    """Ended by the agent (finish or error)."""
    finished: int = 0
    """Ended with finish."""
    undone: int = 0
    with_play: int = 0
    first_valid: int = 0
    """Turns whose first play touched nothing."""
    violations: int = 0

    def turn(self, turn: TurnResult) -> None:
        self.turns += 1
        self.ended += turn.ended
        self.finished += turn.finished
        self.undone += turn.undone
        if turn.plays:
            self.with_play += 1
            self.first_valid += not turn.plays[0].collisions

    def game(self, game: GameClient) -> None:
        self.violations += len(game.violations)
