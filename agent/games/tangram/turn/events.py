"""What happens to a turn: the events the session feeds the turn machine, each with its time.

Frames arrive already parsed (:mod:`agent.games.tangram.protocol`); the session assigns turn ids
and ask ids are the machine's own. Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.games.tangram.contract import Decision
from agent.games.tangram.protocol import GameFrame


@dataclass(frozen=True, slots=True)
class TurnRequested:
    """A readable ``playRequest``: the AI's turn begins."""

    at: float
    turn_id: int
    frame: GameFrame


@dataclass(frozen=True, slots=True)
class DecisionReady:
    """The player answered the ask ``ask_id`` (a move, or a pass)."""

    at: float
    ask_id: int
    decision: Decision


@dataclass(frozen=True, slots=True)
class DecisionFailed:
    """The player's call for ``ask_id`` raised: a bug, which costs this turn only."""

    at: float
    ask_id: int
    error: str
    """``Type: message``, for the log and the transcript."""


@dataclass(frozen=True, slots=True)
class Feedback:
    """A readable ``playFeedback``."""

    at: float
    frame: GameFrame


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A frame that could not be parsed; ``type_hint`` is the type its text names, if any."""

    at: float
    type_hint: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class FrameSent:
    """The session carried out a SendPlay or SendFinish (``ok``: the socket took it)."""

    at: float
    kind: str
    """"play" or "finish"."""
    ok: bool


@dataclass(frozen=True, slots=True)
class Timer:
    """A timer the machine set (SetTimer) is due."""

    at: float
    name: str


@dataclass(frozen=True, slots=True)
class Shutdown:
    """The agent is stopping (Ctrl-C, SIGTERM) and the socket still works: end the turn politely."""

    at: float


@dataclass(frozen=True, slots=True)
class Closed:
    """The connection is gone (or a shutdown could not finish in time): nothing more can be sent."""

    at: float


@dataclass(frozen=True, slots=True)
class PartnerLanguage:
    """The partner wrote a chat line in ``lang`` ("en", "pt"): the turn's own lines and the
    "thinking" line are said in it from now on."""

    at: float
    lang: str


Event = (TurnRequested | DecisionReady | DecisionFailed | Feedback | Unreadable | FrameSent | Timer | Shutdown | Closed
         | PartnerLanguage)
