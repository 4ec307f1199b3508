"""What the scripted human does around each AI turn: a fixed plan, so runs can be compared."""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.tangram.real_game.promises import ASK_PIECE, KEEP_MINE, THANKS

CHAT_BETWEEN = "Hi! Let's build it together."
CHAT_DURING = "Could you put a piece near the top?"


@dataclass(frozen=True)
class TurnPlan:
    turn: int
    """1-based AI turn within the game (page load)."""
    chat_before: str = ""
    """Typed in the human's turn, before the move."""
    undo: bool = False
    """Drag a piece, press Undo, then drag one again."""
    chat_during: str = ""
    """Typed while the AI plays."""
    reload: bool = False
    """Reload the page once the AI's first play has gone out: the game starts over."""


def plan(turns: int, reload_turn: int | None = None, chat: str = "default") -> list[TurnPlan]:
    """The plan for ``turns`` AI turns; the reload comes at ``reload_turn`` (default: the third turn
    when there are at least four, so turns follow it; 0: never). ``chat="requests"``: the human's
    lines are promises.py's constraint, request and thanks, one before each of the first three
    turns, and the page is never reloaded (a constraint holds for a session: one page load)."""
    if chat == "requests":
        lines = (KEEP_MINE, ASK_PIECE, THANKS)
        return [TurnPlan(turn=i, chat_before=lines[i - 1] if i <= len(lines) else "", undo=False)
                for i in range(1, turns + 1)]
    if reload_turn is None:
        reload_turn = 3 if turns >= 4 else 0
    return [TurnPlan(turn=i,
                     chat_before=CHAT_BETWEEN if i == 1 else "",
                     undo=i == 2,
                     chat_during=CHAT_DURING if i == 2 else "",
                     reload=i == reload_turn)
            for i in range(1, turns + 1)]
