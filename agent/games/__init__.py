"""The games: one folder each, found by name, so adding a game touches neither the core nor the CLI.

A folder ``agent/games/NAME/`` with a ``game.py`` defining ``GAME`` is a game. Games never import
each other.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

from agent.core.game import Game
from agent.core.studies.study_file import Study, load_study

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


def study_config_model(game: str) -> type[Any]:
    """The config model of ``game`` (ValueError naming the known games): how a study file's
    conditions are validated."""
    return load_game(game).config_model


def read_study(path: Path) -> Study:
    """The study file with every condition's config validated; StudyError with one line each."""
    return load_study(path, study_config_model, DEFAULT_GAME)
