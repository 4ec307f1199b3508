"""One match on the engine: seats, turn order, validation and the state the protocol reports.

Pure: no I/O and no clock of its own (times are passed in), so the server is a thin layer that
turns frames into calls and the returned events into push frames.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent.games.boardgame.protocol import (
    AgentInfo,
    GetStateResponse,
    MatchSummary,
    Payload,
)
from agent.games.boardgame.rules.base import GameRules

PHASE = "main"


class MatchError(ValueError):
    """A request this match refuses (not seated, not started, ...); the message says why."""

    def __init__(self, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.data = data or {}


@dataclass(frozen=True)
class Seat:
    agent_id: str
    name: str
    bot: str | None = None
    """The bot's kind ("random", "strong") for a bot seat; None for an agent."""


@dataclass(frozen=True)
class Event:
    """Something every seated agent is told about, as ``push_event.event.data``."""

    data: dict[str, Any]


@dataclass
class Match:
    match_id: str
    rules: GameRules[Any]
    created_at: datetime
    seats: list[Seat | None] = field(default_factory=lambda: [None, None])
    status: str = "waiting"
    position: Any = None
    turn: int = 0
    started_at: datetime | None = None
    ended_at: datetime | None = None
    winners: list[str] = field(default_factory=list)
    end_reason: str = ""

    def __post_init__(self) -> None:
        if self.position is None:
            self.position = self.rules.initial()

    # ---- who is who -----------------------------------------------------------------------------

    @property
    def game(self) -> str:
        return self.rules.name

    def seat_of(self, agent_id: str) -> int | None:
        for index, seat in enumerate(self.seats):
            if seat is not None and seat.agent_id == agent_id:
                return index
        return None

    def agents(self) -> list[Seat]:
        return [seat for seat in self.seats if seat is not None]

    def free_seat(self) -> int | None:
        if self.status != "waiting":
            return None
        for index, seat in enumerate(self.seats):
            if seat is None:
                return index
        return None

    @property
    def active_seat(self) -> int | None:
        if self.status != "started":
            return None
        return self.rules.to_move(self.position)

    @property
    def active_agent_id(self) -> str:
        seat = self.active_seat
        occupant = self.seats[seat] if seat is not None else None
        return occupant.agent_id if occupant is not None else ""

    @property
    def over(self) -> bool:
        return self.status in ("ended", "abandoned")

    # ---- changes --------------------------------------------------------------------------------

    def sit(self, index: int, seat: Seat, now: datetime) -> list[Event]:
        """Put ``seat`` in place ``index``; starts the match when every seat is taken."""
        if self.status != "waiting" or self.seats[index] is not None:
            raise MatchError(f"seat {index + 1} of match {self.match_id} is not free")
        if self.seat_of(seat.agent_id) is not None:
            raise MatchError(f"agent {seat.agent_id!r} is already seated in match {self.match_id}")
        self.seats[index] = seat
        events = [Event({"kind": "agent_joined", "agent_id": seat.agent_id, "seat": index + 1,
                         "message": f"{seat.name} joined as {self.rules.marks[index]}"})]
        if all(s is not None for s in self.seats):
            self.status = "started"
            self.started_at = now
            self.turn = 1
            events.append(Event({"kind": "match_started", "active_agent_id": self.active_agent_id,
                                 "message": f"the match started; {self.active_agent_id} moves first"}))
        return events

    def act(self, agent_id: str, action_type: str, data: dict[str, Any], now: datetime) -> tuple[str, list[Event]]:
        """Apply an agent's action; (description, events). MatchError/RuleError say why not."""
        index = self.seat_of(agent_id)
        if index is None:
            raise MatchError(f"agent {agent_id!r} has no seat in match {self.match_id}")
        if self.status == "waiting":
            raise MatchError("the match has not started: it is waiting for an opponent")
        if self.over:
            raise MatchError(f"the match is over ({self.status})")
        move = self.rules.check_action(self.position, index, action_type, data)
        self.position = self.rules.play(self.position, move)
        description = self.rules.describe_move(move)
        mark = self.rules.marks[index]
        events = [Event({"kind": "action", "agent_id": agent_id, "turn": self.turn,
                         "action": {"type": action_type, "data": self.rules.move_to_action(move).data},
                         "message": f"{agent_id} ({mark}) played {description}"})]
        outcome = self.rules.outcome(self.position)
        if outcome is None:
            self.turn += 1
        else:
            winner = self.seats[outcome.winner] if outcome.winner is not None else None
            self.winners = [winner.agent_id] if winner is not None else []
            events.append(self._end("ended", "win" if winner else "draw", now))
        return description, events

    def forfeit(self, agent_id: str, reason: str, now: datetime) -> list[Event]:
        """``agent_id`` loses (e.g. ran out of time); the other seat wins."""
        if self.over:
            return []
        self.winners = [s.agent_id for s in self.agents() if s.agent_id != agent_id]
        return [self._end("ended", reason, now)]

    def abandon(self, reason: str, now: datetime) -> list[Event]:
        if self.over:
            return []
        self.winners = []
        return [self._end("abandoned", reason, now)]

    def _end(self, status: str, reason: str, now: datetime) -> Event:
        self.status = status
        self.ended_at = now
        self.end_reason = reason
        if self.winners:
            message = f"the match is over: {', '.join(self.winners)} won ({reason})"
        else:
            message = f"the match is over: {reason}"
        return Event({"kind": "match_ended", "status": status, "reason": reason,
                      "winners": list(self.winners), "message": message})

    # ---- what the protocol reports --------------------------------------------------------------

    def state_data(self) -> dict[str, Any]:
        data = self.rules.to_data(self.position)
        data["marks"] = {seat.agent_id: self.rules.marks[i] for i, seat in enumerate(self.seats) if seat}
        if self.end_reason:
            data["end_reason"] = self.end_reason
        return data

    def state_response(self) -> GetStateResponse:
        return GetStateResponse(
            game=self.game,
            match_id=self.match_id,
            status=self.status,
            phase=PHASE,
            turn=self.turn,
            stage=_stage(self.status),
            started_at=self.started_at or self.created_at,
            ended_at=self.ended_at,
            active_agent_id=self.active_agent_id,
            agents=[AgentInfo(id=s.agent_id, name=s.name) for s in self.agents()],
            winners=list(self.winners) if self.over else None,
            state=Payload(data=self.state_data()),
        )

    def summary(self) -> MatchSummary:
        status = "ended" if self.over else self.status
        return MatchSummary(match_id=self.match_id, status=status,  # type: ignore[arg-type]
                            agents=[AgentInfo(id=s.agent_id, name=s.name) for s in self.agents()])


def _stage(status: str) -> str:
    return {"waiting": "waiting_for_agents", "started": "move"}.get(status, "over")
