"""The turn machine's state: its phases, its configuration and what it knows of the turn in progress."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.players.base import Decision
from agent.games.tangram.protocol import GameFrame, GameState
from agent.games.tangram.turn.timing import TurnTimes

if TYPE_CHECKING:  # the machine reads the config's values, never loads one
    from agent.games.tangram.config import TurnConfig

WORK, SETTLE, HOLD, THINKING = "work", "settle", "hold", "thinking"
"""The machine's timers: the end of the turn's work, the end of the wait for a feedback, a play held
back while an earlier play still animates, the "thinking" line."""


class Phase(StrEnum):
    IDLE = "idle"
    DECIDING = "deciding"
    PLAYING = "playing"
    ADJUSTING = "adjusting"
    SETTLING = "settling"
    FINISHED = "finished"


ASKING = (Phase.DECIDING, Phase.ADJUSTING)


@dataclass(frozen=True, slots=True)
class TurnRules:
    """The configuration the machine needs (from ``turn.*`` and ``tangram.*`` in the config)."""

    deadline: float
    max_feedback_iterations: int
    thinking_after_s: float | None = None
    """Say ``thinking_line`` when no play has gone out this long into the turn; None: never."""
    thinking_line: str = ""

    @classmethod
    def of(cls, turn: TurnConfig, thinking: str | None) -> TurnRules:
        """The rules of ``turn`` (the config's section); ``thinking``: the rendered line, None when off."""
        return cls(turn.deadline, turn.max_feedback_iterations, turn.thinking_after_s if thinking else None,
                   thinking or "")


@dataclass
class TurnState:
    turn_id: int | None
    """None for the finish that answers an unreadable playRequest (not a turn the game could show us)."""
    times: TurnTimes
    frame: GameFrame | None = None
    decision: Decision | None = None
    ask_id: int | None = None
    said: bool = False
    """The decision's chat line went out (before the first play)."""
    plays: int = 0
    """Plays whose feedback came (corrections count; the move back does not)."""
    sent: int = 0
    """Plays sent (any purpose): a "thinking" line never follows one."""
    pose: Pose | None = None
    """The pose of the play out now."""
    purpose: Literal["move", "return"] = "move"
    resent: bool = False
    """The same play was sent again once after a feedback our geometry contradicts."""
    awaiting: bool = False
    """A play is out and its feedback has not come (nor an unreadable frame in its place)."""
    held: Pose | None = None
    """A play waiting for an earlier play's animation to be over."""
    board: dict[str, Pose] = field(default_factory=dict)
    latest: GameState | None = None
    """The newest state the game reported: where each piece is and its unnormalised rotation."""
    outcome: str = "ended"
    shutdown: bool = False
    thought: bool = False
