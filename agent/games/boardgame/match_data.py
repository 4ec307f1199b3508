"""What the match client takes and gives: its settings, each turn's record, the match's result, and
the error that says why a match cannot be played. Plain data, so the runner, the evaluation and the
tests use them without the client's loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class ClientError(RuntimeError):
    """The match cannot be played (engine unreachable, refuses, unknown game); the text says why."""


@dataclass(frozen=True)
class ClientSettings:
    url: str
    agent_id: str
    game: str | None = None
    """The board game to create; None: the engine's only (or first) game."""
    match_id: str | None = None
    """Join this match instead of creating one."""
    create_settings: dict[str, Any] = field(default_factory=dict)
    """``create_match`` ``settings.data`` (bot, seat, name)."""
    max_attempts: int = 3
    """Actions tried per turn (the player's, then after each refusal) before the offline player acts."""
    decision_seconds: float = 60.0
    """Time the player has for one attempt; past it, the offline player acts."""
    response_timeout: float = 15.0
    poll_seconds: float = 5.0
    """get_state this often while waiting, in case a push was lost."""
    reconnect_attempts: int = 8
    reconnect_delay: float = 0.25
    reconnect_max_delay: float = 5.0
    max_turns: int = 1_000
    """Stop a match that never ends (a misbehaving engine)."""
    refusal_delay: float = 0.25
    """Wait before the next action after the engine refused one; doubles with each refusal in a row."""
    refusal_max_delay: float = 4.0
    max_refusals: int = 10
    """Engine refusals in a row (across turns, the offline player's included) before the match is
    given up: an engine that refuses everything must not be asked for ever."""
    max_engine_faults: int = 4
    """Impossible states in a row (our turn on a finished or full board) before the match is given up."""
    check_locally: bool = True
    """Check actions against our rules before sending (off: let the engine judge, e.g. a variant)."""


@dataclass
class Decision:
    seconds: float
    attempts: int
    illegal: int
    fallback: bool
    accepted: bool = True
    """False when no action of the turn was accepted (the turn is asked again)."""


@dataclass
class MatchResult:
    game: str
    match_id: str
    agent_id: str
    status: str
    winners: list[str]
    mark: str = "?"
    moves: int = 0
    decisions: list[Decision] = field(default_factory=list)
    protocol_errors: int = 0
    reconnects: int = 0

    @property
    def outcome(self) -> str:
        if self.status != "ended":
            return self.status
        if not self.winners:
            return "draw"
        return "win" if self.agent_id in self.winners else "loss"

    @property
    def illegal(self) -> int:
        return sum(d.illegal for d in self.decisions)

    @property
    def attempts(self) -> int:
        return sum(d.attempts for d in self.decisions)

    @property
    def fallbacks(self) -> int:
        return sum(1 for d in self.decisions if d.fallback)

    def line(self) -> str:
        times = [d.seconds for d in self.decisions]
        mean = sum(times) / len(times) if times else 0.0
        return (f"{self.game} match {self.match_id}: {self.outcome.upper()} for {self.agent_id} ({self.mark}); "
                f"winners: {', '.join(self.winners) or 'none'}; {self.moves} moves, {self.illegal} illegal of "
                f"{self.attempts} attempts, {self.fallbacks} offline fallbacks, mean decision {mean:.2f} s, "
                f"{self.reconnects} reconnects")
