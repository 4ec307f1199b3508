"""What the turn machine asks the session to do. The session carries them out in order.

Frames are named, not built: the session builds them with :mod:`agent.games.tangram.protocol`,
and ``finish`` only ever for a :class:`SendFinish`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agent.core.memory import Speaker
from agent.games.tangram.contract import Decision
from agent.games.tangram.protocol import GameFrame


@dataclass(frozen=True, slots=True)
class Say:
    """One chat line to the game (skipped when empty)."""

    text: str


@dataclass(frozen=True, slots=True)
class SendPlay:
    """A ``play``; the session answers with FrameSent("play") once it is out."""

    piece: str
    x: float
    y: float
    rotation: float
    """The rotation to send: the piece's reported rotation plus the shortest signed turn."""


@dataclass(frozen=True, slots=True)
class SendFinish:
    """This turn's ``finish``; the session answers with FrameSent("finish")."""


@dataclass(frozen=True, slots=True)
class AskPlayer:
    """Start the player's call: ``play`` (the turn's move) or ``adjust`` (after a reported collision).

    The session builds the view from ``frame`` and answers with DecisionReady or DecisionFailed
    carrying ``ask_id``."""

    ask_id: int
    kind: Literal["play", "adjust"]
    frame: GameFrame
    decide_by: float
    collisions: tuple[str, ...] = ()
    previous: Decision | None = None
    attempt: int = 0


@dataclass(frozen=True, slots=True)
class CancelPlayer:
    """The answer to ``ask_id`` is no longer wanted: stop the call (an LLM request included)."""

    ask_id: int


@dataclass(frozen=True, slots=True)
class Record:
    """One transcript record."""

    kind: str
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Remember:
    """A line for the shared memory the prompts show."""

    speaker: Speaker
    text: str


@dataclass(frozen=True, slots=True)
class SetTimer:
    """Feed Timer(name) at ``at``; a later SetTimer with the same name replaces this one."""

    name: str
    at: float


@dataclass(frozen=True, slots=True)
class Log:
    """A line for the agent's log (the machine reads no clock, so it does not log itself)."""

    level: int
    message: str
    error: BaseException | None = None


Action = Say | SendPlay | SendFinish | AskPlayer | CancelPlayer | Record | Remember | SetTimer | Log
