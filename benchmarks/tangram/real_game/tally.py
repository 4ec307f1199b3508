"""The numbers of a run, from its event log alone (so a saved ``events.jsonl`` can be tallied again):
one row per AI turn and a summary."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from benchmarks.tangram.real_game.console import PUT_BACK_LINE
from benchmarks.tangram.real_game.events import Event

Ending = Literal["finish", "error", "reload", "closed", "open"]
MOVED_BACK_UNITS = 0.5
"""A piece whose marker is this far (board units) from where its last feedback put it was moved."""


@dataclass
class TurnRow:
    turn: int
    game: int
    """Which page load (socket) the turn belongs to."""
    objective: str
    start: float
    end: float | None = None
    ended: Ending = "open"
    plays: int = 0
    latencies: list[float] = field(default_factory=list)
    """play -> playFeedback, seconds, in order."""
    finish_while_landing: bool = False
    put_back: bool = False
    put_back_by: str = ""
    """"chat" (the game's apology was printed) and/or "state" (the next state shows the piece moved)."""
    chats: int = 0
    """Agent chat lines the game showed during the turn."""
    chat_requests: int = 0
    replies: int = 0
    pending_plays: list[float] = field(default_factory=list)
    last_shape: str = ""
    last_feedback_pos: tuple[float, float] | None = None

    @property
    def seconds(self) -> float | None:
        return None if self.end is None else self.end - self.start


class Summary(BaseModel):
    turns: int
    finished: int
    finish_while_landing: int
    put_back: int
    gdscript_errors: int
    chats: int
    replies: int
    chat_requests: int
    errors_sent: int
    interrupted: int
    """Turns cut by a reload or a closed tab (the game forgets them)."""
    unfinished: int
    """Turns still waiting at the end of the run (never ended by the agent)."""
    games: int
    objectives: list[str]
    gdscript_warnings: int
    play_feedback_s: dict[str, float | None]
    turn_s: dict[str, float | None]
    frames: dict[str, int]
    largest_frame_bytes: dict[str, int]


def _vec(text: Any) -> tuple[float, float] | None:
    if not isinstance(text, str):
        return None
    parts = text.strip().strip("()").split(",")
    try:
        return float(parts[0]), float(parts[1])
    except (ValueError, IndexError):
        return None


def piece_position(msg: dict[str, Any], shape: str) -> tuple[float, float] | None:
    """The marker position of ``shape`` in a frame's state, or None when it is off the board."""
    state = msg.get("state")
    if not isinstance(state, dict):
        return None
    entry = (state.get("on_board") or {}).get(shape)
    if not isinstance(entry, dict):
        return None
    position = entry.get("position")
    return _vec(position.get("position")) if isinstance(position, dict) else _vec(position)


@dataclass
class Tally:
    rows: list[TurnRow] = field(default_factory=list)
    chat_requests_between: int = 0
    """Chat lines the human sent between AI turns."""
    replies_between: int = 0


def tally(events: list[Event]) -> Tally:
    """Rows of every AI turn in ``events`` (any order; sorted by time here)."""
    result = Tally()
    rows = result.rows
    objectives: dict[int, str] = {}
    open_turn: dict[int, TurnRow] = {}
    last_ended: dict[int, TurnRow] = {}
    """A socket's latest ended turn, whose put-back the next frames and console lines may show."""
    unanswered: dict[int, TurnRow | None] = {}
    """A socket's latest chatRequest not yet answered -> the turn it came in (None between turns)."""
    moved_by_human: set[str] = set()
    current_ws = 0

    def close(ws: int, how: Ending, t: float) -> None:
        row = open_turn.pop(ws, None)
        if row is not None:
            row.ended, row.end = how, t

    for event in sorted(events, key=lambda e: e.t):
        ws = event.ws or current_ws
        if event.src == "game" and event.type:
            current_ws = event.ws
            if isinstance(event.msg.get("objective"), str):
                objectives.setdefault(ws, event.msg["objective"])
            if event.type == "playFeedback":
                landed = open_turn.get(ws) or last_ended.get(ws)
                if landed is not None and landed.pending_plays:
                    landed.latencies.append(event.t - landed.pending_plays.pop(0))
                    if landed.last_shape:
                        landed.last_feedback_pos = piece_position(event.msg, landed.last_shape)
                continue
            done = last_ended.pop(ws, None)
            if done is not None and done.last_shape and not done.put_back and done.last_shape not in moved_by_human \
                    and done.last_feedback_pos is not None and isinstance(event.msg.get("state"), dict):
                now = piece_position(event.msg, done.last_shape)
                if now is None or math.dist(now, done.last_feedback_pos) > MOVED_BACK_UNITS:
                    done.put_back, done.put_back_by = True, "state"
            if event.type == "playRequest":
                open_turn.pop(ws, None)  # a second request while a turn is open: the first never ended
                started = TurnRow(turn=len(rows) + 1, game=ws, objective=objectives.get(ws, ""), start=event.t)
                rows.append(started)
                open_turn[ws] = started
                moved_by_human.clear()
            elif event.type == "chatRequest":
                asking = open_turn.get(ws)
                if asking is not None:
                    asking.chat_requests += 1
                else:
                    result.chat_requests_between += 1
                unanswered[ws] = asking
        elif event.src == "agent" and event.type:
            row = open_turn.get(ws)
            if event.type == "play":
                if row is not None:
                    row.plays += 1
                    row.pending_plays.append(event.t)
                    shape = event.msg.get("shape")
                    row.last_shape = shape if isinstance(shape, str) else ""
            elif event.type in ("finish", "error") and row is not None:
                row.finish_while_landing = event.type == "finish" and bool(row.pending_plays)
                close(ws, "finish" if event.type == "finish" else "error", event.t)
                last_ended[ws] = row
            elif event.type == "chat":
                if row is not None:
                    row.chats += 1
                if ws in unanswered:
                    asked = unanswered.pop(ws)
                    if asked is not None:
                        asked.replies += 1
                    else:
                        result.replies_between += 1
        elif event.src == "console" and PUT_BACK_LINE in event.text:
            sorry = last_ended.get(current_ws) or open_turn.get(current_ws)
            if sorry is not None:
                sorry.put_back = True
                sorry.put_back_by = "chat" if not sorry.put_back_by else f"{sorry.put_back_by}+chat"
        elif event.src == "human":
            if event.type in ("reload", "close"):
                close(current_ws, "reload" if event.type == "reload" else "closed", event.t)
            elif event.type == "drag" and isinstance(event.msg.get("shape"), str):
                moved_by_human.add(event.msg["shape"])
    return result
