"""The games: one folder each, found by name, so adding a game touches neither the core nor the CLI.

A folder ``agent/games/NAME/`` with a ``game.py`` defining ``GAME`` is a game. Games never import
each other.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from agent.core.game import Game

DEFAULT_GAME = "tangram"


def available_games() -> list[str]:
    """Names of the game folders, sorted."""
    here = Path(__file__).parent
    return sorted(m.name for m in pkgutil.iter_modules([str(here)])
                  if m.ispkg and (here / m.name / "game.py").is_file())


def load_game(name: str) -> Game:
    """The ``GAME`` of ``agent/games/NAME/game.py``; ValueError naming the known games otherwise."""
    if name not in available_games():
        raise ValueError(f"unknown game {name!r} (known: {', '.join(available_games())})")
    module = importlib.import_module(f"agent.games.{name}.game")
    game = getattr(module, "GAME", None)
    if not isinstance(game, Game):
        raise ValueError(f"agent/games/{name}/game.py defines no GAME")
    return game
