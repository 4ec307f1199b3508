"""The games this package knows, by protocol ``game`` code.

Adding a game: write ``rules/<name>.py`` with a :class:`~agent.games.boardgame.rules.base.GameRules`
subclass, add it to ``_RULES`` below, give it a rules text in ``prompts/boardgame/rules_<name>.j2``
(the LLM player's description of the game), and optionally offline players (``OFFLINE_PLAYERS``
in ``players/offline.py``). The engine, the client, the random player and the LLM player then work
for it with no other change.
"""

from __future__ import annotations

from typing import Any

from agent.games.boardgame.rules.base import GameRules
from agent.games.boardgame.rules.connect_four import ConnectFour
from agent.games.boardgame.rules.tictactoe import TicTacToe

_RULES: dict[str, type[GameRules[Any]]] = {
    TicTacToe.name: TicTacToe,
    ConnectFour.name: ConnectFour,
}

GAMES: tuple[str, ...] = tuple(_RULES)


def get_rules(name: str) -> GameRules[Any]:
    """A fresh rules object for ``name``; KeyError with the known names otherwise."""
    try:
        return _RULES[name]()
    except KeyError:
        raise KeyError(f"unknown game {name!r}; known games: {', '.join(GAMES)}") from None
