"""Every game's compact prompt (sent when the full one does not fit the model's context window) is
shorter, keeps what a decision needs, and renders from the game's real templates."""

from __future__ import annotations

from pathlib import Path

from agent.core.llm.dialect import estimate_tokens
from agent.core.prompts import load_prompts
from agent.core.resources import prompts_dir

TANGRAM_TEMPLATES = ("system", "play", "feedback", "chat", "reask")


def _tokens(*texts: str) -> int:
    return estimate_tokens([{"role": "user", "content": "\n".join(texts)}])


def test_tangram_compact_play_is_far_shorter_and_puts_the_candidates_first() -> None:
    from agent.games.tangram.llm_player.context import sample_context

    context = sample_context()
    assert context["compact"] is False
    prompts = load_prompts(prompts_dir("tangram"), context, TANGRAM_TEMPLATES)
    full = (prompts.render("system", context), prompts.render("play", context))
    compact = {**context, "compact": True}
    short = (prompts.render("system", compact), prompts.render("play", compact))
    assert _tokens(*short) < 0.6 * _tokens(*full)
    assert "Checked candidates" in short[1] and "Checked candidates" in full[1]
    assert short[1].index("Checked candidates") < short[1].index("Pieces on the board")
    assert full[1].index("Checked candidates") > full[1].index("Pieces on the board")
    assert context["board_description"] not in short[1]
    assert "reasoning" in short[0] and "chat" in short[0], "the compact rules still name the answer's fields"
    assert context["objective"] in short[1] and context["objective"] in full[1]
    # The system prompt is the same in every game (the start-up priming shares it): no objective in it.
    assert context["objective"] not in short[0] and context["objective"] not in full[0]


def test_forge_compact_drops_the_rules_text_but_not_the_options() -> None:
    from agent.games.forge.prompt_context import sample_context

    context = sample_context()
    prompts = load_prompts(prompts_dir("forge"), context, ("system", "decide"))
    full, short = prompts.render("decide", context), prompts.render("decide", {**context, "compact": True})
    assert len(short) < len(full)
    for option in context["options"]:
        assert f"{option['number']}: {option['text']}" in short
    assert all(c["name"] in short for c in context["cards"])


def test_boardgame_compact_leaves_out_the_rules_but_keeps_the_moves() -> None:
    from agent.games.boardgame.players.base import Turn
    from agent.games.boardgame.players.llm import prompt_context, rules_template
    from agent.games.boardgame.rules.registry import get_rules
    from agent.games.boardgame.templates import sample_context

    prompts = load_prompts(prompts_dir("boardgame"), sample_context(), ("system", "turn"))
    rules = get_rules("connect_four")
    turn = Turn(rules, rules.initial(), 0, 1, ("first refusal", "second refusal"))
    rules_text = prompts.render(rules_template(rules.name), {})
    full, short = prompt_context(turn, rules_text), prompt_context(turn, rules_text, compact=True)
    assert rules_text.strip() in prompts.render("system", full)
    assert rules_text.strip() not in prompts.render("system", short)
    assert short["legal_moves"] == full["legal_moves"] and short["feedback"] == ["second refusal"]
    for move in short["legal_moves"]:
        assert move in prompts.render("turn", short)


def test_hive_compact_plan_leaves_out_the_map() -> None:
    from agent.games.hive.coach.coach import _sample_context

    context = {**_sample_context(), "map": "MAP-LINE-" * 40}
    prompts = load_prompts(prompts_dir("hive"), context, ("system", "plan"))
    assert "MAP-LINE-" in prompts.render("plan", context)
    short = prompts.render("plan", {**context, "compact": True})
    assert "MAP-LINE-" not in short and "bee 0 at row" in short


def test_a_compact_branch_that_does_not_render_is_found_at_start_up(tmp_path: Path) -> None:
    import pytest

    from agent.core.prompts import PromptError

    (tmp_path / "t.j2").write_text("{% if compact %}{{ missing }}{% else %}fine{% endif %}")
    with pytest.raises(PromptError, match="missing"):
        load_prompts(tmp_path, {"compact": False}, ("t",))
