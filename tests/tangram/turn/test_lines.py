"""The words of the turn's own chat lines come from prompts/tangram/turn_lines.j2 (data, not Python)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agent.core.prompts import PromptError
from agent.games.tangram.config import Config
from agent.games.tangram.turn.lines import shipped_turn_lines, turn_lines
from agent.games.tangram.turn.state import LINE_NAMES

ROOT = Path(__file__).resolve().parents[3]


def test_every_line_renders_one_short_nonempty_line_naming_its_piece() -> None:
    lines = shipped_turn_lines()
    for name in LINE_NAMES:
        text = lines(name, piece="Cream", reason="There was no room for Cream.")
        assert text and "\n" not in text and len(text) <= 300 and "{" not in text, name
    for name in ("no_time_fix", "no_time_check", "gave_up", "gave_up_back"):
        assert "Cream" in lines(name, piece="Cream"), name


def test_no_line_claims_a_move_that_its_situation_did_not_make() -> None:
    lines = shipped_turn_lines()
    # Said only when nothing of ours was played this turn: each says so, none says it placed anything.
    for name in ("ran_out", "no_time"):
        text = lines(name).lower()
        assert "placed" not in text and ("before i could move" in text or "left the board" in text), text
    # Said after our piece landed overlapping: none claims the piece stays.
    assert "goes back" in lines("no_time_fix", piece="Green") and "game puts it back" in \
        lines("no_time_check", piece="Green")


def test_a_prompt_folder_without_the_template_uses_the_shipped_one_and_a_custom_one_wins(tmp_path: Path) -> None:
    config = Config.model_validate({"prompts_dir": str(tmp_path)})
    assert turn_lines(config)("ran_out") == shipped_turn_lines()("ran_out")
    (tmp_path / "turn_lines.j2").write_text("Sorry ({{ line }}{{ piece }}{{ reason }}).")
    assert turn_lines(config)("gave_up", piece="Red") == "Sorry (gave_upRed)."


def test_a_broken_or_empty_line_stops_the_start_not_a_turn(tmp_path: Path) -> None:
    config = Config.model_validate({"prompts_dir": str(tmp_path)})
    (tmp_path / "turn_lines.j2").write_text("{{ pieec }}")
    with pytest.raises(PromptError, match=r"turn_lines\.j2"):
        turn_lines(config)
    (tmp_path / "turn_lines.j2").write_text("{% if line == 'bug' %}Oops.{% endif %}")
    with pytest.raises(PromptError, match="'ran_out' is empty"):
        turn_lines(config)


def test_the_turn_machine_holds_no_chat_prose() -> None:
    # Its own lines are template data; the only strings it says are the player's (decision.chat).
    source = (ROOT / "agent" / "games" / "tangram" / "turn" / "machine.py").read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Say":
            assert not any(isinstance(a, (ast.Constant, ast.JoinedStr)) for a in node.args), ast.unparse(node)
