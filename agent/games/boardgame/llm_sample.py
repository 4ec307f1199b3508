"""The Boardgame player's move request as play sends it, for ``--check-llm``."""

from __future__ import annotations

from agent.core.llm.check import LLMSample
from agent.games.boardgame.config import BoardgameConfig
from agent.games.boardgame.players.base import Turn
from agent.games.boardgame.players.llm import prompt_context, reply_schema, rules_template
from agent.games.boardgame.rules.registry import GAMES, get_rules
from agent.games.boardgame.templates import load_templates


def llm_sample(config: BoardgameConfig) -> LLMSample:
    prompts = load_templates(config)
    rules = get_rules(GAMES[0])
    position = rules.initial()
    rules_text = prompts.render(rules_template(rules.name), {})
    full, short = (prompt_context(Turn(rules, position, 0, 1), rules_text, compact) for compact in (False, True))
    return LLMSample(messages=prompts.messages("system", "turn", full), schema=reply_schema(rules, position),
                     schema_name="board_game_action", compact=prompts.messages("system", "turn", short))
