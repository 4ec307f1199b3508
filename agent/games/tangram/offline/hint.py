"""The planner's suggestion for a state, for LLM players that want a hint in their prompt."""

from __future__ import annotations

from collections.abc import Mapping

from agent.games.tangram.contract import Decision, board_of
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.offline.agent import OfflineAgent
from agent.games.tangram.planner.library import FigureLibrary
from agent.games.tangram.protocol import GameState, clean_chat_text

MAX_HINT_CHARS = 400


def _board(state: GameState | Mapping[str, Pose]) -> dict[str, Pose]:
    """On-board poses (node origins) from a game state, or a board given as poses already."""
    return board_of(state) if isinstance(state, GameState) else dict(state)


def planner_hint(objective: str, state: GameState | Mapping[str, Pose], default_figure: str | None = None,
                 library: FigureLibrary | None = None,
                 movers: Mapping[str, str] | None = None) -> tuple[Decision, str]:
    """The planner's suggested next move for this state and a one-line hint describing it.

    Stateless: the figure comes from ``objective`` and the anchor from the pieces on the board, as
    a fresh planner would see them. ``movers`` is who moved each piece last, from the session's record
    (``TurnView.movers``): a fresh planner played none of the game's turns, so without it every piece
    on the board reads as the partner's, and its chat line would call the agent's own pieces "your".
    The Decision passes (pose None) when the figure is complete or no valid move exists; its pose,
    when set, is valid on this board with the usual clearance.
    """
    planner = OfflineAgent(library=library, default_figure=default_figure)
    board = _board(state)
    decision = planner.play(objective, board, movers)
    step, fit = planner.last_step, planner.last_fit
    fig = planner.figure
    placed = len(fit.matched) if fit is not None else 0
    phrases = planner.phrases
    if step is None or step.pose is None or step.piece is None:
        key = "complete" if step is not None and step.action == "complete" else "stuck"
        hint = phrases.raw("hint", key, figure=fig.name, placed=placed)
    else:
        pose = step.pose
        slot = step.slot or (fit.slot_of[pose.piece] if fit else pose.piece)
        hint = phrases.raw("hint", "clear" if step.action == "clear" else "next", figure=fig.name, placed=placed,
                           action="move" if pose.piece in board else "place", piece=pose.piece,
                           part=fig.parts[slot], x=f"{pose.x:.2f}", y=f"{pose.y:.2f}", rotation=f"{pose.rotation:g}")
    return decision, clean_chat_text(hint, MAX_HINT_CHARS)
