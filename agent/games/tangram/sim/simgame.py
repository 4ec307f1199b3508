"""The game's rules and state, with no sockets: what the Godot game does with each frame.

:class:`SimGame` holds the seven poses, whose turn it is, and what happened. It builds the frames
the game would send (``play_request_frame`` and friends return dicts; :func:`frame_text` turns
one into the exact text) and reacts to the agent's frames with :meth:`SimGame.handle_agent_frame`
the way ``Main_scene.gd`` does (GAME_FACTS, last section):

* ``play`` is applied whenever it arrives, also outside the AI's turn. The piece is tweened
  numerically (position and the unnormalised rotation) over ``animation`` seconds; the caller sends
  ``playFeedback`` when :meth:`SimGame.feedback_due` says so. A ``play`` naming another piece than
  the one moved this turn puts that one back (unless its tween is still running: the tween wins).
  A ``play`` with a missing or wrongly typed field gets the game's error frame and ends the AI's
  turn, and the move may still happen. A turn of more than 180 degrees on screen is flagged.
* ``finish`` is applied whenever it arrives: the moved piece is checked *as it is now* (half-way
  through a tween, if one runs, which is flagged) and put back if it overlaps anything ("Sorry I
  had some trouble playing, I'll retry next round"); a running tween then lands it unchecked.
* ``error`` is ignored by the build that ships in the repository (``build="shipped"``, the default;
  flagged, since the AI's turn then never ends) and shown and ends the turn in the current source
  (``build="source"``).
* ``chat`` is shown at once. A frame without ``type`` is answered with the game's error frame.
* Optionally (``stale_collisions``), the collisions in a ``playFeedback`` describe the moved piece
  one physics step short of its target, as Godot's overlap lists can.
* Pictures have the real game's look (:mod:`agent.games.tangram.replica.crops`): a playRequest (and a
  chatRequest during the human's turn) carries the human-turn highlight, every piece but the
  human's just-moved one dimmed to 145/255; with ``false_tint``, a ``playFeedback`` picture shows
  the moved piece and its nearest neighbour in the overlap tint while the state says no collision,
  as the real game did in 2 of 4 turns (GAME_FACTS, "Seen in the real game").

Collisions, markers and coordinates come from :mod:`agent.games.tangram.replica.scene`, the simulator's
own reading of the scene, never from the agent's geometry package.
"""

from __future__ import annotations

import base64
import json
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, cast

from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.replica import crops, scene
from agent.games.tangram.sim import godot
from agent.games.tangram.sim.feedback_delay import FeedbackDelay

OBJECTIVES = ("A house", "A fish", "A human", "A rocket", "A cat", "A robot")
"""The objectives the current game draws from."""
NO_TYPE_ERROR = "Error: No message type in received JSON"
UNDO_MESSAGE = "Sorry I had some trouble playing, I'll retry next round"
AGENT_ERROR_PREFIX = "An error occured while I was playing: "  # sic, as the game spells it
GODOT_INBOUND_LIMIT = 65535
"""Godot's default WebSocket inbound buffer; a frame this big or bigger does not get through."""
GODOT_TWEEN_S = 0.5
"""How long the game animates a play."""
PHYSICS_STEP_S = 1.0 / 60.0
"""One physics step (and one process frame) of the game."""
BOUNDARY = scene.BOUNDARY
PIECE_NAMES: tuple[str, ...] = scene.GAME_ORDER
SPIN_TOLERANCE_DEG = 0.5
"""A play may turn a piece this much beyond 180 degrees before it counts as a spin (rounding)."""

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
FINISH_DURING_ANIMATION = "finish_during_animation"
PLAY_DURING_ANIMATION = "play_during_animation"
SPIN = "spin_over_180"
ERROR_IGNORED = "error_ignored"
TURN_TIMEOUT = "turn_timeout"
CLOSED = "connection_closed"

StateLayout = Literal["dict", "list"]
Build = Literal["shipped", "source"]


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
    """What the game reported for this piece in the feedback (empty when it is fine, or not yet sent)."""
    replaced: str | None = None
    """The piece put back because this play named a different one."""
    spin: float = 0.0
    """Degrees the piece turns on screen during this play's tween."""
    start: Pose | None = None
    """Where the piece was when the play arrived (the tween's start)."""
    during_animation: bool = False
    out_of_turn: bool = False
    landing: float | None = None
    """Seconds from the play's arrival to its playFeedback, once drawn (with a feedback delay)."""


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
    """"finish", "error", "bad_play", "timeout" or "closed"."""
    error_message: str | None = None
    undone: bool = False
    undone_piece: str | None = None
    final_collisions: list[str] = field(default_factory=list)
    ended_at: float | None = None
    wall_end: float | None = None
    violations: list[Violation] = field(default_factory=list)
    piece: str | None = None
    """The piece this turn moved (after any undo, it is back where it was)."""
    landed_unchecked: bool = False
    """``finish`` came during a tween: the check ran on the half-moved piece and the tween then
    landed it where nobody checked."""

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
    """A play was applied: send playFeedback when :meth:`SimGame.feedback_due` says."""
    replies: list[dict[str, Any]] = field(default_factory=list)
    """Frames the game sends straight back (its own error frames)."""
    chat: str | None = None
    turn_ended: bool = False
    undone: bool = False
    violations: list[Violation] = field(default_factory=list)
    play: PlayRecord | None = None

    @property
    def reply(self) -> dict[str, Any] | None:
        return self.replies[0] if self.replies else None


@dataclass(frozen=True, slots=True)
class _Tween:
    start: Pose
    target: Pose
    t0: float
    duration: float

    def at(self, t: float) -> Pose:
        k = min(max((t - self.t0) / self.duration, 0.0), 1.0) if self.duration > 0 else 1.0
        s, e = self.start, self.target
        return Pose(e.piece, s.x + (e.x - s.x) * k, s.y + (e.y - s.y) * k, s.rotation + (e.rotation - s.rotation) * k)


def pose_dict(pose: Pose) -> dict[str, float]:
    return {"x": round(pose.x, 3), "y": round(pose.y, 3), "rotation": round(pose.rotation, 2)}


def _node(pose: Pose) -> tuple[scene.Vec, float]:
    """The node's position and rotation as Godot stores them (single precision)."""
    wx, wy = scene.simple_to_real((pose.x, pose.y))
    return (godot.f32(wx), godot.f32(wy)), godot.f32(math.radians(pose.rotation))


def outline_world(pose: Pose) -> list[scene.Vec]:
    """The piece's collision polygon in world pixels, by the scene's own transforms."""
    origin, rad = _node(pose)
    return scene.shape_world(pose.piece, origin, rad)


def markers_board(pose: Pose) -> tuple[scene.Vec, list[scene.Vec]]:
    """(VCenter, [V1..V4]) in board units, as the state reports them."""
    origin, rad = _node(pose)
    center, vertices = scene.markers_world(pose.piece, origin, rad)
    return scene.real_to_simple(center), [scene.real_to_simple(v) for v in vertices]


def node_degrees(pose: Pose) -> float:
    """``rotation_degrees`` of the node: the degrees after the single-precision radian round trip."""
    return math.degrees(godot.f32(math.radians(pose.rotation)))


def frame_text(frame: Mapping[str, Any]) -> str:
    """The exact text the game puts on the socket for ``frame``."""
    return godot.stringify(frame)


class SimGame:
    """State and rules of one game. Not thread-safe; one event loop drives it."""

    def __init__(self, objective: str = "A house", *, state_layout: StateLayout = "dict",
                 build: Build = "shipped", animation: float = 0.0, stale_collisions: bool = False,
                 false_tint: bool = False, feedback_delay: FeedbackDelay | None = None,
                 feedback_seed: int | str = 0, clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time) -> None:
        self.objective = objective
        self.state_layout = state_layout
        self.build = build
        self.animation = max(0.0, float(animation))
        self.stale_collisions = stale_collisions
        self.feedback_delay = feedback_delay
        """None: the feedback follows the tween and a frame; else each play takes a time drawn from it."""
        self._feedback_rng = random.Random(f"feedback:{feedback_seed}")
        self.false_tint = false_tint
        """Feedback pictures show the moved piece and its nearest neighbour tinted, whatever the state says."""
        self._clock = clock
        self._wall = wall_clock
        self._t0 = clock()
        self.poses: dict[str, Pose] = {name: scene.start_pose(name) for name in PIECE_NAMES}
        self._tweens: dict[str, _Tween] = {}
        self.turn_owner: Literal["human", "ai"] = "human"
        self.turns: list[TurnRecord] = []
        self.human_moves: list[HumanMove] = []
        self.chat_log: list[ChatLine] = []
        self.violations: list[Violation] = []
        self.spins: list[float] = []
        """Degrees turned on screen by every play, in order."""
        self._moved: str | None = None
        """The game's ``movedPiece``: shared by the human and the AI, as in the game."""
        self._pre_move: Pose | None = None
        """The game's ``preMovePos``/``preMoveRot`` for the moved piece."""
        self._images: dict[tuple[Any, ...], tuple[str, str]] = {}

    # ------------------------------------------------------------------ clock, poses

    def elapsed(self) -> float:
        return self._clock() - self._t0

    def timestamp(self) -> int:
        """Whole seconds since the game started, as the game sends it."""
        return int(self.elapsed())

    def _settle(self) -> None:
        """Finished tweens leave their piece at the target (whatever was set on it meanwhile)."""
        if not self._tweens:
            return
        now = self.elapsed()
        for name, tween in list(self._tweens.items()):
            if now >= tween.t0 + tween.duration:
                self.poses[name] = tween.target
                del self._tweens[name]

    def pose_now(self, name: str) -> Pose:
        """Where the piece is at this moment (part way through a tween, if one runs)."""
        self._settle()
        tween = self._tweens.get(name)
        return tween.at(self.elapsed()) if tween is not None else self.poses[name]

    def current_poses(self) -> dict[str, Pose]:
        return {name: self.pose_now(name) for name in PIECE_NAMES}

    def animating(self, name: str | None = None) -> bool:
        """Whether a tween is running (on ``name``, or on any piece)."""
        self._settle()
        return name in self._tweens if name is not None else bool(self._tweens)

    @property
    def current_turn(self) -> TurnRecord | None:
        return self.turns[-1] if self.turns and self.turn_owner == "ai" else None

    @property
    def turn_index(self) -> int | None:
        return self.turns[-1].index if self.turns else None

    # ------------------------------------------------------------------ geometry (the scene's own)

    def is_on_board(self, name: str, pose: Pose | None = None) -> bool:
        """The game's test: the piece's area overlaps the board's area (touching counts)."""
        return scene.overlaps_rect(outline_world(pose or self.pose_now(name)), scene.BOARD_AREA)

    def on_board(self) -> dict[str, Pose]:
        return {n: p for n, p in self.current_poses().items() if self.is_on_board(n, p)}

    def collisions(self, name: str, pose: Pose | None = None,
                   others: Mapping[str, Pose] | None = None) -> list[str]:
        """What ``updateOverlaps`` lists for a piece: every piece it overlaps (in the drawer too),
        and BOUNDARY when it overlaps the frame around the board and the drawer."""
        poses = dict(others) if others is not None else self.current_poses()
        mine = outline_world(pose or poses[name])
        hits = [n for n in PIECE_NAMES if n != name and scene.convex_overlap(mine, outline_world(poses[n]))]
        if scene.touches_frame(mine):
            hits.append(BOUNDARY)
        return hits

    # ------------------------------------------------------------------ frames the game sends

    def state(self, stale: Mapping[str, Pose] | None = None) -> dict[str, Any]:
        """``state`` exactly as the game reports it (nested position, Godot vector text).

        ``stale`` gives, for a piece, the pose its overlap list still describes (one physics step
        behind); its reported position and rotation are the fresh ones.
        """
        poses = self.current_poses()
        seen = {**poses, **(stale or {})}
        on: dict[str, Any] = {}
        off: dict[str, Any] = {}
        for name in PIECE_NAMES:  # the game's own dictionary order
            pose = poses[name]
            rotation = godot.snapped_degrees(pose.rotation)
            if self.is_on_board(name, pose):
                center, vertices = markers_board(pose)
                on[name] = {
                    "position": {
                        "position": godot.vector_text(*center),
                        "vertices": [godot.vector_text(*v) for v in vertices],
                    },
                    "rotation": rotation,
                    "collisions": self.collisions(name, seen[name], seen),
                }
            else:
                off[name] = {"rotation": rotation}
        if self.state_layout == "list":  # the older build: lists of one-key objects
            return {"on_board": [{k: v} for k, v in on.items()], "off_board": [{k: v} for k, v in off.items()]}
        return {"on_board": on, "off_board": off}

    def images(self, lit: str | None = None, tinted: tuple[str, ...] = ()) -> tuple[str, str]:
        """(board_img, drawer_img) as base64 PNG, rendered once per distinct board and look
        (``lit``: the human-turn highlight's undimmed piece; ``tinted``: pieces in the overlap tint)."""
        poses = self.current_poses()
        key = (*((p.piece, round(p.x, 4), round(p.y, 4), round(p.rotation, 4)) for p in poses.values()), lit, tinted)
        cached = self._images.get(key)
        if cached is None:
            listed = list(poses.values())
            cached = (base64.b64encode(crops.render_board(listed, lit=lit, tinted=tinted)).decode("ascii"),
                      base64.b64encode(crops.render_drawer(listed, lit=lit, tinted=tinted)).decode("ascii"))
            if len(self._images) > 64:
                self._images.clear()
            self._images[key] = cached
        return cached

    def board_png(self) -> bytes:
        return base64.b64decode(self.images()[0])

    def _frame(self, ftype: str, message: str | None = None, stale: Mapping[str, Pose] | None = None,
               lit: str | None = None, tinted: tuple[str, ...] = ()) -> dict[str, Any]:
        board, drawer = self.images(lit, tinted)
        frame: dict[str, Any] = {"type": ftype, "objective": self.objective,
                                 "state": self.state(stale) if stale else self.state(),
                                 "board_img": board, "drawer_img": drawer, "timestamp": self.timestamp()}
        if message is not None:
            frame["message"] = message
        return frame

    def play_request_frame(self, lit: str | None = None) -> dict[str, Any]:
        """``lit``: the human's just-moved piece (the game's highlight dims every other one)."""
        return self._frame("playRequest", lit=lit)

    def _highlight(self) -> str | None:
        """The piece the human-turn highlight leaves undimmed, when it is on (the human moved one)."""
        return self._moved if self.turn_owner == "human" else None

    def _false_tint(self, play: PlayRecord | None) -> tuple[str, ...]:
        if not self.false_tint or play is None:
            return ()
        moved = outline_world(self.pose_now(play.shape))
        others = [(scene.separation(moved, outline_world(p)), n) for n, p in self.on_board().items() if n != play.shape]
        return (play.shape, min(others)[1]) if others else (play.shape,)

    def play_feedback_frame(self, play: PlayRecord | None = None) -> dict[str, Any]:
        """The feedback for ``play`` (once its tween is over). With ``stale_collisions``, the moved
        piece's overlaps are those of one physics step before the tween's end."""
        stale: dict[str, Pose] = {}
        if play is not None and self.stale_collisions and play.start is not None and self.animation > 0:
            k = max(0.0, 1.0 - PHYSICS_STEP_S / self.animation)
            tween = _Tween(play.start, Pose(play.shape, play.x, play.y, play.rotation), 0.0, 1.0)
            if self.pose_now(play.shape) == tween.target:
                stale[play.shape] = tween.at(k)
        frame = self._frame("playFeedback", stale=stale, tinted=self._false_tint(play))
        if play is not None:
            entry = frame["state"]["on_board"]
            if isinstance(entry, dict) and play.shape in entry:
                play.collisions = list(entry[play.shape]["collisions"])
        return frame

    def feedback_due(self, play: PlayRecord) -> float:
        """Seconds since the start at which the game sends this play's feedback: after the tween
        and one more process frame, or after the play's own time from ``feedback_delay`` (drawn
        once per play, never shorter than the tween and a frame)."""
        quickest = self.animation + (PHYSICS_STEP_S if self.animation > 0 else 0.0)
        if self.feedback_delay is None:
            return play.at + quickest
        if play.landing is None:
            play.landing = max(quickest, self.feedback_delay.sample(self._feedback_rng))
        return play.at + play.landing

    def chat_request_frame(self, message: str) -> dict[str, Any]:
        return self._frame("chatRequest", message, lit=self._highlight())

    @staticmethod
    def no_type_error_frame() -> dict[str, Any]:
        return {"type": "error", "message": NO_TYPE_ERROR}

    # ------------------------------------------------------------------ turn flow

    def start_ai_turn(self) -> dict[str, Any]:
        """The human pressed End Turn: the AI's turn begins. Returns the playRequest frame."""
        if self.turn_owner == "ai":
            raise SimRuleError("the AI's turn is already in progress")
        lit = self._highlight()  # the picture is the last screen drawn, still the human's
        self.turn_owner = "ai"
        self._moved = self._pre_move = None  # ai_play() clears movedPiece
        self.turns.append(TurnRecord(index=len(self.turns) + 1, started_at=self.elapsed(), wall_start=self._wall()))
        return self.play_request_frame(lit)

    def _end_ai_turn(self, how: str) -> TurnRecord:
        turn = self.turns[-1]
        turn.ended_by = how
        turn.ended_at = self.elapsed()
        turn.wall_end = self._wall()
        turn.piece = self._moved
        self._set_player_turn()
        return turn

    def _set_player_turn(self) -> None:
        """The game's setPlayerTurn: the human's turn, and nobody's piece locked."""
        self.turn_owner = "human"
        self._moved = self._pre_move = None

    def _finish_check(self) -> tuple[bool, list[str]]:
        """finishPlayRequest's check on the moved piece *as it is now*; True if it was put back."""
        name = self._moved
        if name is None:
            return False, []
        hits = self.collisions(name)
        if hits and self._pre_move is not None:
            self.poses[name] = self._pre_move  # a running tween overrides this, as in the game
            return True, hits
        return False, hits

    def finish(self) -> TurnRecord | None:
        """The game's finishPlayRequest, applied whenever it arrives. Returns the AI turn it ended."""
        name = self._moved
        mid_tween = name is not None and self.animating(name)
        undone, hits = self._finish_check()
        if undone:
            self._say("game", UNDO_MESSAGE)
        if self.turn_owner != "ai":
            self._set_player_turn()
            return None
        turn = self.turns[-1]
        turn.final_collisions = hits
        turn.landed_unchecked = mid_tween
        if undone:
            turn.undone = True
            turn.undone_piece = name
        return self._end_ai_turn("finish")

    def agent_error(self, message: str) -> TurnRecord | None:
        """The current source shows the message and finishes; the shipped build ignores it."""
        if self.build == "shipped":
            self.violation(ERROR_IGNORED, f"error frame ignored by the shipped build: {message[:100]}")
            return None
        self._say("game", AGENT_ERROR_PREFIX + message)
        was_ai = self.turn_owner == "ai"
        if was_ai:
            self.turns[-1].error_message = message
        turn = self.finish()
        if turn is not None:
            turn.ended_by = "error"
        return turn if was_ai else None

    def abandon_turn(self, how: str = "timeout") -> TurnRecord | None:
        """The simulator gives up on a turn the agent never ended (the real game would wait
        for ever). The piece is judged as on ``finish`` so the game can go on sensibly."""
        if self.turn_owner != "ai":
            return None
        turn = self.finish()
        if turn is not None:
            turn.ended_by = how
        return turn

    def apply_play(self, shape: str, x: float, y: float, rotation: float) -> PlayRecord:
        """Move a piece as the game's aiPlayRequest does, at any time, with the one-piece rule."""
        if shape not in scene.SCENE_PIECES:
            raise SimRuleError(f"unknown piece {shape!r}")
        replaced = None
        if self._moved is not None and shape != self._moved:
            replaced = self._moved
            assert self._pre_move is not None
            self.poses[replaced] = self._pre_move
            self._moved = None
        current = self.pose_now(shape)
        if self._moved is None:
            self._moved = shape
            self._pre_move = current
        during = self.animating()
        target = Pose(shape, float(x), float(y), float(rotation))
        spin = abs(float(rotation) - node_degrees(current))
        self.spins.append(spin)
        record = PlayRecord(shape, float(x), float(y), float(rotation), self.elapsed(), [], replaced, spin,
                            current, during, self.turn_owner != "ai")
        if during:
            self.violation(PLAY_DURING_ANIMATION, f"play {shape} while a play was still animating")
        if spin > 180.0 + SPIN_TOLERANCE_DEG:
            self.violation(SPIN, f"{shape} turns {spin:.1f} degrees on screen "
                                 f"(from {node_degrees(current):.2f} to {float(rotation):g})")
        if self.animation > 0:
            self.poses[shape] = current
            self._tweens[shape] = _Tween(current, target, self.elapsed(), self.animation)
        else:
            self._tweens.pop(shape, None)
            self.poses[shape] = target
        if self.turn_owner == "ai":
            self.turns[-1].plays.append(record)
        return record

    # ------------------------------------------------------------------ the human side

    def human_move(self, shape: str, x: float, y: float, rotation: float) -> bool:
        """The player drags a piece and drops it. As in the game, only one piece per turn, and a
        drop onto another piece or the frame around the board snaps back (returns False)."""
        if self.turn_owner != "human":
            raise SimRuleError("the human cannot move during the AI's turn")
        if shape not in scene.SCENE_PIECES:
            raise SimRuleError(f"unknown piece {shape!r}")
        if self._moved is not None and shape != self._moved:
            return False
        pose = Pose(shape, float(x), float(y), float(rotation))
        if self.collisions(shape, pose):
            return False
        before = self.pose_now(shape)
        if self._moved is None:
            self._moved = shape
            self._pre_move = before
        self._tweens.pop(shape, None)
        self.poses[shape] = pose
        self.human_moves.append(HumanMove(len(self.turns) + 1, shape, pose_dict(before), pose_dict(pose),
                                          self.elapsed()))
        return True

    def place(self, shape: str, x: float, y: float, rotation: float) -> None:
        """Test set-up: put a piece anywhere, no rules, no record."""
        if shape not in scene.SCENE_PIECES:
            raise SimRuleError(f"unknown piece {shape!r}")
        self._tweens.pop(shape, None)
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
        """React to one frame from the agent the way the game does (feedback timing is the caller's)."""
        violations: list[Violation] = []
        size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "replace"))
        if size >= GODOT_INBOUND_LIMIT:
            violations.append(self.violation(TOO_LARGE,
                                             f"{size} bytes (Godot's buffer holds {GODOT_INBOUND_LIMIT - 1})"))
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
            return Reaction("ignored", data=data, replies=[self.no_type_error_frame()], violations=violations)
        ftype = data["type"]
        if ftype == "play":
            return self._on_play(data, violations)
        if ftype == "finish":
            return self._on_finish(data, violations)
        if ftype == "chat":
            text = data.get("message")
            if not isinstance(text, str):
                # The game sends its error, then fails reading the field: nothing is shown.
                violations.append(self.violation(BAD_CHAT, "chat without a 'message' text"))
                replies = [] if "message" in data else [{"type": "error",
                                                         "message": "Error: Missing message field in received JSON"}]
                return Reaction("ignored", data=data, replies=replies, violations=violations)
            self._say("agent", text)
            if self.turn_owner == "ai" and self.turns:
                self.turns[-1].agent_chat.append(text)
            return Reaction("chat", data=data, chat=text, violations=violations)
        if ftype == "error":
            message = data.get("message", "")
            message = message if isinstance(message, str) else json.dumps(message)[:200]
            if self.turn_owner == "ai" and self.turns:
                self.turns[-1].agent_chat.append(f"[error] {message}")
            before = len(self.violations)
            turn = self.agent_error(message)
            violations.extend(self.violations[before:])
            if self.build == "shipped":
                return Reaction("ignored", data=data, violations=violations)
            return Reaction("error", data=data, chat=AGENT_ERROR_PREFIX + message, turn_ended=turn is not None,
                            undone=bool(turn and turn.undone), violations=violations)
        violations.append(self.violation(UNKNOWN_TYPE, f"type {str(ftype)[:40]!r}"))
        return Reaction("ignored", data=data, violations=violations)

    def _on_finish(self, data: dict[str, Any], violations: list[Violation]) -> Reaction:
        if self.turn_owner != "ai":
            violations.append(self.violation(OUT_OF_TURN, "finish outside the AI's turn (applied, as the game does)"))
        elif self._moved is not None and self.animating(self._moved):
            violations.append(self.violation(FINISH_DURING_ANIMATION,
                                             f"finish while {self._moved} was still moving: checked half-way"))
        turn = self.finish()
        return Reaction("finish", data=data, turn_ended=turn is not None, undone=bool(turn and turn.undone),
                        violations=violations)

    def _on_play(self, data: dict[str, Any], violations: list[Violation]) -> Reaction:
        shape = data.get("shape")
        if "shape" in data and shape not in scene.SCENE_PIECES:
            # The real game would look up a node that does not exist and break.
            violations.append(self.violation(UNKNOWN_PIECE, f"shape {str(shape)[:40]!r}"))
            return Reaction("ignored", data=data, violations=violations)
        pos, rot = data.get("position"), data.get("rotation")
        # sic: the game says "shape" for each of the three missing fields
        problems = ["Error: No shape field in received JSON" for key in ("shape", "position", "rotation")
                    if key not in data]
        good_position = isinstance(pos, list) and len(pos) == 2 and _is_number(pos[0]) and _is_number(pos[1])
        if "position" in data and not good_position:
            problems.append("Error: Invalid position field in received JSON")
        if "rotation" in data and not _is_number(rot):
            problems.append("Error: Invalid rotation field in received JSON")
        if problems:
            # Each failed check sends an error and hands the turn to the player, without returning.
            violations.append(self.violation(BAD_PLAY, f"position={str(pos)[:40]} rotation={str(rot)[:20]}"))
            replies = [{"type": "error", "message": p} for p in problems]
            ended = self.turn_owner == "ai"
            if ended:
                self._end_ai_turn("bad_play")
            else:
                self._set_player_turn()
            usable = (isinstance(shape, str) and isinstance(pos, list) and len(pos) >= 2 and _is_number(pos[0])
                      and _is_number(pos[1]) and _is_number(rot))
            if not usable:  # the script then fails reading the field: nothing moves, no feedback
                return Reaction("ignored", data=data, replies=replies, turn_ended=ended, violations=violations)
            x, y = cast(list[float], pos)[:2]
            record = self.apply_play(str(shape), float(x), float(y), float(cast(float, rot)))
            return Reaction("play", data=data, replies=replies, send_feedback=True, turn_ended=ended,
                            violations=violations, play=record)
        if self.turn_owner != "ai":
            violations.append(self.violation(OUT_OF_TURN,
                                             f"play {shape} outside the AI's turn (applied, as the game does)"))
        before = len(self.violations)
        x, y = cast(list[float], pos)
        record = self.apply_play(str(shape), float(x), float(y), float(cast(float, rot)))
        violations.extend(self.violations[before:])
        return Reaction("play", data=data, send_feedback=True, violations=violations, play=record)

    # ------------------------------------------------------------------ summaries

    def board_poses(self) -> dict[str, Pose]:
        return dict(self.on_board())

    def snapshot(self) -> dict[str, dict[str, float]]:
        return {n: pose_dict(p) for n, p in self.current_poses().items()}


def _reject_constant(name: str) -> float:
    # Godot's JSON parser knows no NaN or Infinity: such a frame does not parse at all.
    raise ValueError(f"{name} is not JSON")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
