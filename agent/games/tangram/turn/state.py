"""The turn machine's state: its phases, its configuration and what it knows of the turn in progress."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Literal, Protocol, get_args

from agent.games.tangram.contract import Decision
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.protocol import GameFrame, GameState
from agent.games.tangram.turn.timing import TurnTimes

if TYPE_CHECKING:  # the machine reads the config's values, never loads one
    from agent.games.tangram.config import TurnConfig

WORK, SETTLE, HOLD, THINKING, LOST = "work", "settle", "hold", "thinking", "lost"
"""The machine's timers: the end of the turn's work, the end of a wait for the animation (or, on a
shutdown, for the landing), a play held back while an earlier play still animates, the "thinking"
line, and the hard cap on the wait for a play's feedback (timing.FEEDBACK_LOST_S)."""

LineName = Literal["ran_out", "no_time", "no_time_fix", "no_time_check", "no_feedback", "no_valid_pose",
                   "gave_up", "gave_up_back", "bad_feedback", "bad_frame", "bad_request", "bad_chat", "bug",
                   "stopping"]
"""The chat lines the turn says on its own (prompts/tangram/turn_lines.j2 has the words)."""
LINE_NAMES: tuple[LineName, ...] = get_args(LineName)


class TurnLines(Protocol):
    """The words of the turn's own chat lines: ``line`` with its ``piece`` or ``reason``, in the
    partner's language ``lang`` ("en", "pt"). Pure (a template loaded and checked at start-up,
    :mod:`agent.games.tangram.turn.lines`)."""

    def __call__(self, line: LineName, /, *, piece: str = "", reason: str = "", lang: str = "en") -> str: ...


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
    """The line in the game's own language (English), and in any language ``thinking_lines`` lacks."""
    lines: TurnLines | None = None
    """The words of the turn's own lines; required (the machine refuses rules without them)."""
    thinking_lines: Mapping[str, str] = field(default_factory=dict)
    """The "thinking" line in each of the partner's languages (turn/thinking.py)."""

    @classmethod
    def of(cls, turn: TurnConfig, thinking: Mapping[str, str] | None, lines: TurnLines) -> TurnRules:
        """The rules of ``turn`` (the config's section); ``thinking``: the rendered line by language,
        None when off."""
        english = (thinking.get("en") or "") if thinking else ""  # the game's own language
        return cls(turn.deadline, turn.max_feedback_iterations, turn.thinking_after_s if thinking else None,
                   english, lines, dict(thinking or {}))

    def thinking_in(self, lang: str) -> str:
        """The "thinking" line in ``lang`` (the game's own when it has none in that language)."""
        return self.thinking_lines.get(lang) or self.thinking_line


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
    sent_at: float | None = None
    """When the play out now was sent (its landing time is measured from here)."""
    overtime: bool = False
    """The work time ended while a play was landing: that play is seen through, nothing new starts."""
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
