"""A headless simulator of the Tangram game (the WebSocket client side) and an evaluation runner.

``GameClient`` plays the game against any agent server over a real socket; ``SimGame`` is the
same game without a socket (rules, state, frames); ``make_human`` builds the scripted partners;
``python -m agent.games.tangram.sim`` runs whole evaluations, and with ``--study`` pilots a study
(``pilot``). See docs/simulator.md, and
docs/tangram-real-game.md for how it models the real game (its own scene geometry, the shipped
build, the animation, spins, stale collisions).
"""

from agent.games.tangram.sim.client import ChatResult, GameClient, HumanTurn, ReceivedFrame, TurnResult
from agent.games.tangram.sim.humans import HUMAN_KINDS, ScriptedHuman, make_human
from agent.games.tangram.sim.simgame import (
    NO_TYPE_ERROR,
    OBJECTIVES,
    UNDO_MESSAGE,
    PlayRecord,
    Reaction,
    SimGame,
    SimRuleError,
    Violation,
    frame_text,
)

__all__ = [
    "HUMAN_KINDS", "NO_TYPE_ERROR", "OBJECTIVES", "UNDO_MESSAGE",
    "ChatResult", "GameClient", "HumanTurn", "PlayRecord", "Reaction", "ReceivedFrame", "ScriptedHuman",
    "SimGame", "SimRuleError", "TurnResult", "Violation", "frame_text", "make_human",
]
