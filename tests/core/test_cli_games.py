"""One CLI for every game: the game comes from --game, the config's ``game:``, or the default."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.cli import main, prepare
from agent.core.config import ConfigError
from agent.games import DEFAULT_GAME, available_games


def test_no_flags_pick_the_default_game_offline() -> None:
    game, config, _ = prepare([])
    assert game.name == DEFAULT_GAME == "tangram"
    assert not config.uses_llm()


def test_config_game_field_picks_the_game(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("game: tangram\nplayer: planner\n")
    game, config, _ = prepare(["--config", str(path)])
    assert game.name == "tangram" and config.source == path.resolve()


def test_game_flag_and_config_must_agree(tmp_path: Path) -> None:
    other = next((g for g in available_games() if g != "tangram"), "chess")
    path = tmp_path / "c.yaml"
    path.write_text("game: tangram\n")
    with pytest.raises(ConfigError, match=f"is for the game 'tangram', not '{other}'"):
        prepare(["--game", other, "--config", str(path)])


def test_unknown_game_is_one_line_naming_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--game", "chess-xyz"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown game 'chess-xyz' (known: ") and "tangram" in err
    assert err.count("\n") == 1


def test_config_game_must_be_a_name(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("game: [1, 2]\n")
    with pytest.raises(ConfigError, match="field 'game' must be a name"):
        prepare(["--config", str(path)])


def test_help_lists_every_game(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for name in available_games():
        assert f"\n  {name} " in out
    assert "tangram options:" in out and "--port" in out


def test_game_flags_are_applied(tmp_path: Path) -> None:
    _, config, _ = prepare(["--port", "5123", "--log-level", "debug"])
    assert config.server.port == 5123 and config.log_level == "DEBUG"
