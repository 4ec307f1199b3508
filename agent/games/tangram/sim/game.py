"""The game's rules and state, with no sockets: what the Godot game does with each frame.

:class:`SimGame` holds the seven poses, whose turn it is, and what happened. It builds the frames
the game would send (``play_request_frame`` and friends return dicts; :func:`frame_text` turns
one into the exact text) and reacts to the agent's frames with :meth:`SimGame.handle_agent_frame`,
which applies GAME_FACTS:

* ``play`` moves the named piece (node origin, board units; rotation in degrees); a ``play``
  naming another piece than this turn's first puts the first back; the game answers with
  ``playFeedback`` (the caller sends it, after the tween delay).
* ``finish`` ends the turn; if this turn's piece overlaps anything it is put back and the game
  says "Sorry I had some trouble playing, I'll retry next round" (the turn counts as undone).
* ``error`` is shown as "An error occured while I was playing: ..." and ends the turn.
* ``chat`` (``message``, or ``content`` in older builds) is shown at once, at any time.
* A frame without ``type`` is answered with the game's error frame. Everything the real game
  would choke on (unknown piece, malformed JSON, a frame too big for Godot's 64 KiB buffer, a
  ``play`` with missing fields) is recorded as a :class:`Violation` and ignored.
"""

from __future__ import annotations

import base64
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from shapely.geometry import box

from agent.games.tangram.geometry.collide import BOARD_PX, BOUNDARY, polygon_px, predict_collisions
from agent.games.tangram.geometry.frames import Pose, rotate_px, start_pose, world_to_board
from agent.games.tangram.geometry.pieces import PIECE_NAMES, PIECES, PieceSpec, Point
from agent.games.tangram.sim import godot, render

OBJECTIVES = ("A house", "A fish", "A human", "A rocket", "A cat", "A robot")
"""The objectives the current game draws from."""
NO_TYPE_ERROR = "Error: No message type in received JSON"
UNDO_MESSAGE = "Sorry I had some trouble playing, I'll retry next round"
AGENT_ERROR_PREFIX = "An error occured while I was playing: "  # sic, as the game spells it
GODOT_INBOUND_LIMIT = 65535
"""Godot's default WebSocket inbound buffer; a frame this big or bigger does not get through."""

DRAWER_PX = box(*render.DRAWER_WORLD_RECT)

# Violation kinds, one word each so summaries can count them.
MALFORMED = "malformed_frame"
NO_TYPE = "no_type"
UNKNOWN_TYPE = "unknown_type"
UNKNOWN_PIECE = "unknown_piece"
BAD_PLAY = "bad_play"
BAD_CHAT = "bad_chat"
TOO_LARGE = "frame_too_large"
BINARY = "binary_frame"
OUT_OF_TURN = "out_of_turn"
NO_WAIT = "did_not_wait_for_feedback"
TURN_TIMEOUT = "turn_timeout"
CLOSED = "connection_closed"

StateLayout = Literal["dict", "list"]


class SimRuleError(RuntimeError):
    """A caller (test or scripted human) asked for something the game would not allow."""


@dataclass(frozen=True, slots=True)
class Violation:
    kind: str
    detail: str
    turn: int | None
    """The AI turn (1-based) in progress or just played; None before the first."""
    at: float
    """Seconds since the game started."""


@dataclass(frozen=True, slots=True)
class ChatLine:
    speaker: Literal["human", "agent", "game"]
    text: str
    at: float
    turn: int | None
    during_ai_turn: bool


@dataclass(slots=True)
class PlayRecord:
    shape: str
    x: float
    y: float
    rotation: float
    at: float
    collisions: list[str]
    """What the game reported for this piece in the feedback (empty when it is fine)."""
    replaced: str | None = None
    """The piece put back because this play named a different one."""


@dataclass(slots=True)
class HumanMove:
    turn: int
    """The AI turn that follows this move."""
    piece: str
    before: dict[str, float]
    after: dict[str, float]
    at: float


@dataclass(slots=True)
class TurnRecord:
    """One AI turn, from playRequest to finish / error / timeout."""

    index: int
    started_at: float
    wall_start: float
    plays: list[PlayRecord] = field(default_factory=list)
    agent_chat: list[str] = field(default_factory=list)
    ended_by: str | None = None
    """"finish", "error", "timeout" or "closed"."""
    error_message: str | None = None
    undone: bool = False
    undone_piece: str | None = None
    final_collisions: list[str] = field(default_factory=list)
    ended_at: float | None = None
    wall_end: float | None = None
    violations: list[Violation] = field(default_factory=list)
    piece: str | None = None
    """The piece this turn moved (after any undo, it is back where it was)."""

    @property
    def latency(self) -> float | None:
        return None if self.ended_at is None else self.ended_at - self.started_at

    @property
    def ended(self) -> bool:
        return self.ended_by in ("finish", "error")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["latency"] = self.latency
        return d


@dataclass(slots=True)
class Reaction:
    """What the game did with one agent frame."""

    kind: str
    """"play", "finish", "error", "chat" or "ignored"."""
    data: dict[str, Any] | None = None
    send_feedback: bool = False
    """A play was applied: send playFeedback (after the tween)."""
    reply: dict[str, Any] | None = None
    """A frame to send straight back (the game's own error frame)."""
    chat: str | None = None
    turn_ended: bool = False
    undone: bool = False
    violations: list[Violation] = field(default_factory=list)


def pose_dict(pose: Pose) -> dict[str, float]:
    return {"x": round(pose.x, 3), "y": round(pose.y, 3), "rotation": round(pose.rotation, 2)}


def vertex_offsets(spec: PieceSpec) -> tuple[Point, ...]:
    """Where the game's V1..V4 markers sit (pixels, rotation 0, relative to the origin).

    The geometry package may carry the scene's marker offsets; until it does, the outline
    corners stand in for them (they are within a pixel or two of the markers).
    """
    for name in ("vertex_markers", "vertices", "corner_markers"):
        value = getattr(spec, name, None)
        if value:
            return tuple(value)
    return spec.outline


def vertices_board(pose: Pose) -> list[Point]:
    ox, oy = pose.origin_px
    out = []
    for v in vertex_offsets(PIECES[pose.piece]):
        dx, dy = rotate_px(v, pose.rotation)
        out.append(world_to_board(ox + dx, oy + dy))
    return out


def frame_text(frame: Mapping[str, Any]) -> str:
    """The exact text the game puts on the socket for ``frame``."""
    return godot.stringify(frame)


class SimGame:
    """State and rules of one game. Not thread-safe; one event loop drives it."""

    def __init__(self, objective: str = "A house", *, state_layout: StateLayout = "dict",
                 clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time) -> None:
        self.objective = objective
        self.state_layout = state_layout
        self._clock = clock
        self._wall = wall_clock
        self._t0 = clock()
        self.poses: dict[str, Pose] = {name: start_pose(name) for name in PIECE_NAMES}
        self.turn_owner: Literal["human", "ai"] = "human"
        self.turns: list[TurnRecord] = []
        self.human_moves: list[HumanMove] = []
        self.chat_log: list[ChatLine] = []
        self.violations: list[Violation] = []
        self._turn_piece: str | None = None
        self._turn_piece_start: Pose | None = None
        self._human_piece: str | None = None
        self._human_piece_start: Pose | None = None
        self._images: dict[tuple[Any, ...], tuple[str, str]] = {}

    # ------------------------------------------------------------------ clock, queries

    def elapsed(self) -> float:
        return self._clock() - self._t0

    def timestamp(self) -> int:
        """Whole seconds since the game started, as the game sends it."""
        return int(self.elapsed())

    @property
    def current_turn(self) -> TurnRecord | None:
        return self.turns[-1] if self.turns and self.turn_owner == "ai" else None

    @property
    def turn_index(self) -> int | None:
        return self.turns[-1].index if self.turns else None

    def is_on_board(self, name: str) -> bool:
        """The game's test: the piece's area overlaps the board's (touching counts)."""
        return BOARD_PX.intersects(polygon_px(self.poses[name]))

    def on_board(self) -> dict[str, Pose]:
        return {n: p for n, p in self.poses.items() if self.is_on_board(n)}

    def collisions(self, name: str, pose: Pose | None = None) -> list[str]:
        """What the game lists for a piece: pieces it overlaps, and BOUNDARY when it overlaps
        the frame around the board (whose holes are the board and the drawer)."""
        pose = pose or self.poses[name]
        others = {n: p for n, p in self.poses.items() if n != name}
        poly = polygon_px(pose)
        if BOARD_PX.intersects(poly):
            return predict_collisions(pose, others)
        hits = [n for n, p in others.items() if poly.intersects(polygon_px(p))]
        minx, miny, maxx, maxy = poly.bounds
        dx0, dy0, dx1, dy1 = DRAWER_PX.bounds
        if not (minx > dx0 and miny > dy0 and maxx < dx1 and maxy < dy1):
            hits.append(BOUNDARY)
        return hits

    # ------------------------------------------------------------------ frames the game sends

    def state(self) -> dict[str, Any]:
        """``state`` exactly as the game reports it (nested position, Godot vector text)."""
        on: dict[str, Any] = {}
        off: dict[str, Any] = {}
        for name in PIECE_NAMES:  # the game's own dictionary order
            pose = self.poses[name]
            rotation = godot.snapped_degrees(pose.rotation)
            if self.is_on_board(name):
                mx, my = pose.marker_board()
                on[name] = {
                    "position": {
                        "position": godot.vector_text(mx, my),
                        "vertices": [godot.vector_text(vx, vy) for vx, vy in vertices_board(pose)],
                    },
                    "rotation": rotation,
                    "collisions": self.collisions(name),
                }
            else:
                off[name] = {"rotation": rotation}
        if self.state_layout == "list":  # the older build: lists of one-key objects
            return {"on_board": [{k: v} for k, v in on.items()], "off_board": [{k: v} for k, v in off.items()]}
        return {"on_board": on, "off_board": off}

    def images(self) -> tuple[str, str]:
        """(board_img, drawer_img) as base64 PNG, rendered once per distinct board."""
        key = tuple((p.piece, round(p.x, 4), round(p.y, 4), round(p.rotation, 4)) for p in self.poses.values())
        cached = self._images.get(key)
        if cached is None:
            poses = list(self.poses.values())
            cached = (base64.b64encode(render.render_board(poses)).decode("ascii"),
                      base64.b64encode(render.render_drawer(poses)).decode("ascii"))
            if len(self._images) > 64:
                self._images.clear()
            self._images[key] = cached
        return cached

    def board_png(self) -> bytes:
        return base64.b64decode(self.images()[0])

    def _frame(self, ftype: str, message: str | None = None) -> dict[str, Any]:
        board, drawer = self.images()
        frame: dict[str, Any] = {"type": ftype, "objective": self.objective, "state": self.state(),
                                 "board_img": board, "drawer_img": drawer, "timestamp": self.timestamp()}
        if message is not None:
            frame["message"] = message
        return frame

    def play_request_frame(self) -> dict[str, Any]:
        return self._frame("playRequest")

    def play_feedback_frame(self) -> dict[str, Any]:
        return self._frame("playFeedback")

    def chat_request_frame(self, message: str) -> dict[str, Any]:
        return self._frame("chatRequest", message)

    @staticmethod
    def no_type_error_frame() -> dict[str, Any]:
        return {"type": "error", "message": NO_TYPE_ERROR}

    # ------------------------------------------------------------------ turn flow

    def start_ai_turn(self) -> dict[str, Any]:
        """The human pressed End Turn: the AI's turn begins. Returns the playRequest frame."""
        if self.turn_owner == "ai":
            raise SimRuleError("the AI's turn is already in progress")
        self.turn_owner = "ai"
        self._human_piece = self._human_piece_start = None
        self._turn_piece = self._turn_piece_start = None
        self.turns.append(TurnRecord(index=len(self.turns) + 1, started_at=self.elapsed(), wall_start=self._wall()))
        return self.play_request_frame()

    def _end_ai_turn(self, how: str) -> TurnRecord:
        turn = self.turns[-1]
        turn.ended_by = how
        turn.ended_at = self.elapsed()
        turn.wall_end = self._wall()
        turn.piece = self._turn_piece
        self.turn_owner = "human"
        self._turn_piece = self._turn_piece_start = None
        return turn

    def _check_and_undo(self) -> tuple[bool, list[str]]:
        """The finish rule: this turn's piece must not overlap anything, or it goes back."""
        name = self._turn_piece
        if name is None:
            return False, []
        hits = self.collisions(name)
        if hits and self._turn_piece_start is not None:
            self.poses[name] = self._turn_piece_start
            return True, hits
        return False, hits

    def finish(self) -> TurnRecord:
        if self.turn_owner != "ai":
            raise SimRuleError("finish outside the AI's turn")
        if self._judge_turn_piece():
            self._say("game", UNDO_MESSAGE)
        return self._end_ai_turn("finish")

    def agent_error(self, message: str) -> TurnRecord | None:
        self._say("game", AGENT_ERROR_PREFIX + message)
        if self.turn_owner != "ai":
            return None
        turn = self.turns[-1]
        turn.error_message = message
        if self._turn_piece is not None:
            turn.final_collisions = self.collisions(self._turn_piece)
        return self._end_ai_turn("error")

    def abandon_turn(self, how: str = "timeout") -> TurnRecord | None:
        """The simulator gives up on a turn the agent never ended (the real game would wait
        for ever). The piece is judged as on ``finish`` so the game can go on sensibly."""
        if self.turn_owner != "ai":
            return None
        self._judge_turn_piece()
        return self._end_ai_turn(how)

    def _judge_turn_piece(self) -> bool:
        """What the game does on finish: a piece that still collides goes back. True if undone."""
        turn = self.turns[-1]
        undone, hits = self._check_and_undo()
        turn.final_collisions = hits
        if undone:
            turn.undone = True
            turn.undone_piece = self._turn_piece
        return undone

    def apply_play(self, shape: str, x: float, y: float, rotation: float) -> PlayRecord:
        """Move a piece for the AI, with the one-piece-per-turn rule."""
        if self.turn_owner != "ai":
            raise SimRuleError("play outside the AI's turn")
        if shape not in PIECES:
            raise SimRuleError(f"unknown piece {shape!r}")
        replaced = None
        if self._turn_piece is not None and shape != self._turn_piece:
            replaced = self._turn_piece
            assert self._turn_piece_start is not None
            self.poses[replaced] = self._turn_piece_start
            self._turn_piece = None
        if self._turn_piece is None:
            self._turn_piece = shape
            self._turn_piece_start = self.poses[shape]
        self.poses[shape] = Pose(shape, float(x), float(y), float(rotation))
        record = PlayRecord(shape, float(x), float(y), float(rotation), self.elapsed(),
                            self.collisions(shape) if self.is_on_board(shape) else [], replaced)
        self.turns[-1].plays.append(record)
        return record

    # ------------------------------------------------------------------ the human side

    def human_move(self, shape: str, x: float, y: float, rotation: float) -> bool:
        """The player drags a piece and drops it. As in the game, only one piece per turn, and a
        drop onto another piece or the frame around the board snaps back (returns False)."""
        if self.turn_owner != "human":
            raise SimRuleError("the human cannot move during the AI's turn")
        if shape not in PIECES:
            raise SimRuleError(f"unknown piece {shape!r}")
        if self._human_piece is not None and shape != self._human_piece:
            return False
        pose = Pose(shape, float(x), float(y), float(rotation))
        if self.collisions(shape, pose):
            return False
        if self._human_piece is None:
            self._human_piece = shape
            self._human_piece_start = self.poses[shape]
        before = self.poses[shape]
        self.poses[shape] = pose
        self.human_moves.append(HumanMove(len(self.turns) + 1, shape, pose_dict(before), pose_dict(pose), self.elapsed()))
        return True

    def place(self, shape: str, x: float, y: float, rotation: float) -> None:
        """Test set-up: put a piece anywhere, no rules, no record."""
        if shape not in PIECES:
            raise SimRuleError(f"unknown piece {shape!r}")
        self.poses[shape] = Pose(shape, float(x), float(y), float(rotation))

    def human_chat(self, text: str) -> dict[str, Any]:
        """The player types in the chat box: returns the chatRequest frame to send."""
        self._say("human", text)
        return self.chat_request_frame(text)

    def _say(self, speaker: Literal["human", "agent", "game"], text: str) -> None:
        self.chat_log.append(ChatLine(speaker, text, self.elapsed(), self.turn_index, self.turn_owner == "ai"))

    # ------------------------------------------------------------------ frames from the agent

    def violation(self, kind: str, detail: str) -> Violation:
        v = Violation(kind, detail[:300], self.turn_index, round(self.elapsed(), 3))
        self.violations.append(v)
        if self.turn_owner == "ai" and self.turns:
            self.turns[-1].violations.append(v)
        return v

    def handle_agent_frame(self, raw: str | bytes) -> Reaction:
        """React to one frame from the agent the way the game does (minus the tween delay)."""
        violations: list[Violation] = []
        size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "replace"))
        if size >= GODOT_INBOUND_LIMIT:
            violations.append(self.violation(TOO_LARGE, f"{size} bytes (Godot's buffer holds {GODOT_INBOUND_LIMIT - 1})"))
            return Reaction("ignored", violations=violations)
        if isinstance(raw, bytes):
            violations.append(self.violation(BINARY, f"binary frame of {size} bytes"))
            raw = raw.decode("utf-8", "replace")
        try:
            data = json.loads(raw, parse_constant=_reject_constant)
        except (json.JSONDecodeError, RecursionError, ValueError) as exc:
            violations.append(self.violation(MALFORMED, f"not JSON: {exc}; {raw[:80]!r}"))
            return Reaction("ignored", violations=violations)
        if not isinstance(data, dict):
            violations.append(self.violation(MALFORMED, f"JSON {type(data).__name__}, not an object"))
            return Reaction("ignored", violations=violations)
        if "type" not in data:
            violations.append(self.violation(NO_TYPE, f"keys {sorted(data)[:8]}"))
            return Reaction("ignored", data=data, reply=self.no_type_error_frame(), violations=violations)
        ftype = data["type"]
        if ftype == "play":
            return self._on_play(data, violations)
        if ftype == "finish":
            if self.turn_owner != "ai":
                violations.append(self.violation(OUT_OF_TURN, "finish outside the AI's turn"))
                return Reaction("ignored", data=data, violations=violations)
            turn = self.finish()
            return Reaction("finish", data=data, turn_ended=True, undone=turn.undone, violations=violations)
        if ftype == "chat":
            text = data.get("message", data.get("content"))
            if not isinstance(text, str):
                violations.append(self.violation(BAD_CHAT, "chat without a 'message' text"))
                return Reaction("ignored", data=data, violations=violations)
            self._say("agent", text)
            if self.turn_owner == "ai" and self.turns:
                self.turns[-1].agent_chat.append(text)
            return Reaction("chat", data=data, chat=text, violations=violations)
        if ftype == "error":
            message = data.get("message", "")
            message = message if isinstance(message, str) else json.dumps(message)[:200]
            ended = self.turn_owner == "ai"
            self.agent_error(message)
            return Reaction("error", data=data, chat=AGENT_ERROR_PREFIX + message, turn_ended=ended, violations=violations)
        violations.append(self.violation(UNKNOWN_TYPE, f"type {str(ftype)[:40]!r}"))
        return Reaction("ignored", data=data, violations=violations)

    def _on_play(self, data: dict[str, Any], violations: list[Violation]) -> Reaction:
        shape = data.get("shape")
        if shape not in PIECES:
            # The real game would look up a node that does not exist and break.
            violations.append(self.violation(UNKNOWN_PIECE, f"shape {str(shape)[:40]!r}"))
            return Reaction("ignored", data=data, violations=violations)
        pos, rot = data.get("position"), data.get("rotation")
        if not (isinstance(pos, list) and len(pos) >= 2 and _is_number(pos[0]) and _is_number(pos[1])
                and _is_number(rot)):
            # Godot's handler dies on the bad field: nothing moves, no feedback comes.
            violations.append(self.violation(BAD_PLAY, f"position={str(pos)[:40]} rotation={str(rot)[:20]}"))
            return Reaction("ignored", data=data, violations=violations)
        if self.turn_owner != "ai":
            violations.append(self.violation(OUT_OF_TURN, f"play {shape} outside the AI's turn"))
            return Reaction("ignored", data=data, violations=violations)
        self.apply_play(shape, float(pos[0]), float(pos[1]), float(rot))
        return Reaction("play", data=data, send_feedback=True, violations=violations)

    # ------------------------------------------------------------------ summaries

    def board_poses(self) -> dict[str, Pose]:
        return dict(self.on_board())

    def snapshot(self) -> dict[str, dict[str, float]]:
        return {n: pose_dict(p) for n, p in self.poses.items()}


def _reject_constant(name: str) -> float:
    # Godot's JSON parser knows no NaN or Infinity: such a frame does not parse at all.
    raise ValueError(f"{name} is not JSON")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
