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


# ---------------------------------------------------------------------- rooms inside a game
# A game's folder holds a few modules a reader needs to find the rest, and rooms (subpackages) named
# for their job. Imports between rooms run one way: no two rooms import each other, however
# indirectly, lazy imports included.

ROOM_GAMES = ("tangram", "hive")
MAX_TOP_MODULES = {"tangram": 6}
SAME_ROLE = {"__init__.py", "__main__.py", "player.py"}
"""Names that may recur in one game: a package's face and entry, and each player room's player."""


def room_of(module: str, game: str) -> str | None:
    """The room of ``module`` inside ``game``: its first part under the game's folder."""
    prefix = f"agent.games.{game}."
    if not module.startswith(prefix):
        return None
    return module[len(prefix):].split(".")[0]


def room_arrows(game: str) -> dict[str, set[str]]:
    folder = AGENT / "games" / game
    arrows: dict[str, set[str]] = {}
    for path in sorted(folder.rglob("*.py")):
        source = path.relative_to(folder).with_suffix("").parts[0]
        for module in imported_modules(path):
            target = room_of(module, game)
            if target is not None and target != source and ((folder / target).is_dir()
                                                            or (folder / f"{target}.py").is_file()):
                arrows.setdefault(source, set()).add(target)
    return arrows


def loops(arrows: dict[str, set[str]]) -> list[list[str]]:
    """Every set of rooms that import each other (Tarjan's strongly connected components of size > 1)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(room: str) -> None:
        index[room] = low[room] = len(index)
        stack.append(room)
        for nxt in sorted(arrows.get(room, ())):
            if nxt not in index:
                visit(nxt)
                low[room] = min(low[room], low[nxt])
            elif nxt in stack:
                low[room] = min(low[room], index[nxt])
        if low[room] == index[room]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == room:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for room in sorted({*arrows, *(t for ts in arrows.values() for t in ts)}):
        if room not in index:
            visit(room)
    return found


@pytest.mark.parametrize("game", ROOM_GAMES)
def test_no_two_rooms_of_a_game_import_each_other(game: str) -> None:
    assert loops(room_arrows(game)) == []


def test_the_loop_finder_finds_a_loop() -> None:
    assert loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("game", sorted(MAX_TOP_MODULES))
def test_a_games_top_level_holds_only_a_few_modules(game: str) -> None:
    modules = sorted(p.name for p in (AGENT / "games" / game).glob("*.py"))
    assert len(modules) <= MAX_TOP_MODULES[game], modules


@pytest.mark.parametrize("game", ROOM_GAMES)
def test_no_two_modules_of_a_game_share_a_name(game: str) -> None:
    folder = AGENT / "games" / game
    seen: dict[str, list[str]] = {}
    for path in sorted(folder.rglob("*.py")):
        if path.name not in SAME_ROLE:
            seen.setdefault(path.name, []).append(str(path.relative_to(folder)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}


def test_no_code_probes_a_player_for_what_the_contract_declares() -> None:
    """The contract declares every capability with its default: nothing asks a player whether it has one."""
    from agent.games.tangram.contract import Player
    from agent.games.tangram.offline.player import PlannerPlayer

    declared = {n for cls in (Player, PlannerPlayer) for n in [*vars(cls), *cls.__annotations__]
                if not n.startswith("_") and n != "name"} | {"planner", "library"}
    probes = []
    for path in sorted((AGENT / "games" / "tangram").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("getattr", "hasattr")
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                    and (node.args[1].value in declared or "player" in ast.unparse(node.args[0]))
                    and not any(word in ast.unparse(node.args[0]) for word in ("frame", "args"))):
                probes.append(f"{path.relative_to(AGENT.parent)}:{node.lineno}: {ast.unparse(node)}")
    assert probes == []
