"""Pure helpers of the turn: what the game's reports mean for our pieces, and record shapes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agent.core.memory import Speaker
from agent.games.tangram.contract import Decision
from agent.games.tangram.geometry.collide import predict_collisions
from agent.games.tangram.geometry.frames import Pose, normalize_rotation, pose_from_marker, start_pose
from agent.games.tangram.geometry.pieces import PIECES
from agent.games.tangram.protocol import GameState

SAME_PLACE_UNITS = 0.5
SAME_PLACE_DEG = 0.5


def same_place(a: tuple[float, float], rot_a: float, b: tuple[float, float], rot_b: float) -> bool:
    turn = abs(normalize_rotation(rot_a) - normalize_rotation(rot_b))
    return abs(a[0] - b[0]) <= SAME_PLACE_UNITS and abs(a[1] - b[1]) <= SAME_PLACE_UNITS and \
        min(turn, 360.0 - turn) <= SAME_PLACE_DEG


def reported_rotation(state: GameState, piece: str) -> float:
    """The piece's rotation as the game last reported it (unnormalised), or its start rotation."""
    if piece in state.on_board:
        return state.on_board[piece].rotation
    if piece in state.off_board:
        return state.off_board[piece].rotation
    return PIECES[piece].start_rotation


def start_of_turn_pose(state: GameState, piece: str) -> Pose:
    """Where the piece was when the turn began: its reported pose on the board, or its drawer slot
    (a piece off the board always sits at its start position, with the reported rotation)."""
    entry = state.on_board.get(piece)
    if entry is not None:
        return pose_from_marker(piece, entry.position[0], entry.position[1], entry.rotation)
    drawer = start_pose(piece)
    rotation = state.off_board[piece].rotation if piece in state.off_board else drawer.rotation
    return Pose(piece, drawer.x, drawer.y, rotation)


def contradicts(piece: str, marker: tuple[float, float], rotation: float, collisions: list[str],
                others: dict[str, Pose]) -> bool:
    """True when our geometry finds the reported pose clear of everything the game reports."""
    actual = pose_from_marker(piece, marker[0], marker[1], rotation)
    known = set(others) | {"BOUNDARY"}
    if any(c not in known for c in collisions):
        return False
    return not predict_collisions(actual, others, 0.0)


def partner_moves(before: GameState | None, now: GameState, own: dict[str, Pose]) -> Iterator[tuple[Speaker, str]]:
    """What the partner moved since our last look, as memory lines. ``own``: where our plays of the
    last turn left pieces (their feedback may never have reached us), not the partner's doing."""
    if before is None:
        return
    for name, piece in now.on_board.items():
        old = before.on_board.get(name)
        mine = own.get(name)
        if mine is not None and same_place(mine.marker_board(), mine.rotation, piece.position, piece.rotation):
            continue
        if old is None or not same_place(old.position, old.rotation, piece.position, piece.rotation):
            yield "event", (f"partner moved {name} to ({piece.position[0]:.0f}, {piece.position[1]:.0f}),"
                            f" rotation {normalize_rotation(piece.rotation):g}")
    for name in before.on_board:
        if name not in now.on_board:
            yield "event", f"partner took {name} off the board"


def pose_dict(pose: Pose | None) -> dict[str, Any] | None:
    if pose is None:
        return None
    return {"piece": pose.piece, "x": round(pose.x, 3), "y": round(pose.y, 3), "rotation": round(pose.rotation, 2)}


def decision_fields(decision: Decision, *, adjust: bool = False) -> dict[str, Any]:
    """A ``decision`` record (``adjust``: made after the game reported a collision). An LLM decision
    says whether it named a checked candidate (its letter) or made its own move (null), and which
    marks the board image it saw carried."""
    fields: dict[str, Any] = {"source": decision.source, "chat": decision.chat, "reasoning": decision.reasoning,
                              "pose": pose_dict(decision.pose)}
    if adjust:
        fields["adjust"] = True
    return {**fields, "candidate": decision.candidate, "image_layers": list(decision.image_layers)}
