"""From an LLM's validated :class:`~agent.games.tangram.llm_player.schema.Move` to a pose in the game's terms.

Pure: the board comes from the view's state, every number the model gave is checked or replaced by
exact geometry. Coordinates name the reported marker (what the state shows); relations are resolved
flush by :mod:`agent.games.tangram.geometry.relations`, one anchor or two at once; a rotation in
place keeps the node origin exactly, from the reported state rather than from the rounded numbers
the prompt showed, which is also what the human's right-click does in the game.
"""

from __future__ import annotations

from agent.games.tangram.contract import board_of
from agent.games.tangram.geometry.frames import Pose, normalize_rotation, pose_from_marker
from agent.games.tangram.geometry.relations import resolve_relation, resolve_two
from agent.games.tangram.llm_player.schema import Move
from agent.games.tangram.protocol import GameState


def move_to_pose(move: Move, state: GameState) -> Pose | None:
    """The pose ``move`` asks for on this board, or None when it cannot be made at all (an anchor or
    the piece to rotate is not on the board). The session still repairs whatever comes out."""
    assert move.piece is not None
    # Folded into [0, 360) first: a rotation like 1e20 would turn the outline by a meaningless angle.
    rotation = normalize_rotation(move.rotation) if move.rotation is not None else 0.0
    board = board_of(state)
    if move.action == "rotate":
        here = board.get(move.piece)
        return None if here is None else Pose(move.piece, here.x, here.y, rotation)
    if move.relation is not None and move.anchor is not None:
        if move.anchor not in board:
            return None
        others = {n: p for n, p in board.items() if n != move.piece}
        asked = rotation if move.rotation is not None else None
        if move.relation2 is not None and move.anchor2 is not None and move.anchor2 in board:
            both = resolve_two(move.piece, move.relation, move.anchor, move.relation2, move.anchor2, others,
                               rotation=asked)
            if both is not None:
                return both
        pose = resolve_relation(move.piece, move.relation, move.anchor, others, rotation=asked)
        if pose is None and move.anchor != move.piece:
            # No exact flush spot on that side: aim at the anchor and let the repair find the
            # nearest free place, which still serves "near that piece".
            ax, ay = state.on_board[move.anchor].position
            pose = pose_from_marker(move.piece, ax, ay, rotation)
        return pose
    assert move.x is not None and move.y is not None
    # The model speaks in the positions the state shows (the reported marker), not node origins.
    return pose_from_marker(move.piece, move.x, move.y, rotation)
