"""The LLM player's prompt templates, loaded and checked once with a complete sample context.

Used by the run (its players), the start-up check, the evaluation and the ``--check-llm`` sample;
it imports none of them.
"""

from __future__ import annotations

from typing import Any

from agent.core.prompts import PromptSet, load_prompts
from agent.games.boardgame.config import BoardgameConfig
from agent.games.boardgame.players.base import TextTurn, Turn
from agent.games.boardgame.players.llm import TEMPLATES, prompt_context, rules_template, text_prompt_context
from agent.games.boardgame.rules.registry import GAMES, get_rules


def sample_context() -> dict[str, Any]:
    """A complete context for checking the templates at start-up."""
    rules = get_rules(GAMES[0])
    refusal = ("an example refusal",)
    context = prompt_context(Turn(rules, rules.initial(), 0, 1, refusal), "the rules")
    text = text_prompt_context(TextTurn(rules.name, "agent", "X", 1, rules.to_data(rules.initial()), refusal,
                                        ({"row": 1, "column": 1},)), "the rules")
    return {**context, **text}


def load_templates(config: BoardgameConfig) -> PromptSet:
    directory = config.resolve_dir(config.prompts_dir)
    names = (*TEMPLATES, *(rules_template(game) for game in GAMES))
    return load_prompts(directory, sample_context(), names=names)
