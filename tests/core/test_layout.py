"""The layout is the architecture: the core knows no game, and games never know each other.

Checked on the source (every import statement, also those inside functions), so a lazy import
cannot slip past it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agent.core.game import Game
from agent.games import available_games, load_game

AGENT = Path(__file__).resolve().parents[2] / "agent"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def game_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["agent", "games"] else None


def test_the_core_imports_no_game() -> None:
    offenders = [f"{p.relative_to(AGENT.parent)} imports {m}" for p in sorted((AGENT / "core").rglob("*.py"))
                 for m in sorted(imported_modules(p)) if m.startswith(("agent.games", "agent.cli"))]
    assert offenders == []


@pytest.mark.parametrize("game", available_games())
def test_a_game_imports_no_other_game(game: str) -> None:
    offenders = [f"{p.relative_to(AGENT.parent)} imports {m}" for p in sorted((AGENT / "games" / game).rglob("*.py"))
                 for m in sorted(imported_modules(p))
                 if (game_of(m) not in (None, game)) or m == "agent.cli" or m in ("agent.games.load_game",)]
    assert offenders == []


def test_no_relative_imports_hide_from_the_rule() -> None:
    relative = []
    for path in sorted(AGENT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                relative.append(f"{path.relative_to(AGENT.parent)}:{node.lineno}")
    assert relative == []


def test_the_rule_detects_an_offender(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from agent.games.tangram.protocol import GameState\n")
    assert game_of(next(m for m in imported_modules(bad) if m.startswith("agent.games"))) == "tangram"


@pytest.mark.parametrize("game", available_games())
def test_every_game_folder_defines_a_game(game: str) -> None:
    loaded = load_game(game)
    assert isinstance(loaded, Game) and loaded.name == game and loaded.summary
    config = loaded.config_model()
    # The embedded default never needs a key: every game runs offline out of the box.
    assert not config.uses_llm()


def test_tangram_is_there() -> None:
    assert "tangram" in available_games()
