"""Builds the player each new session gets, from the config. Shared, read-only pieces (the
checked prompt templates) are prepared once; everything with state is made per session."""

from __future__ import annotations

from collections.abc import Callable

from agent.config import Config
from agent.players.base import Player
from agent.prompt_context import sample_context
from agent.prompts import PromptSet, load_prompts
from agent.transcript import Transcript

PlayerFactory = Callable[[Transcript], Player]


def make_player_factory(config: Config, prompts: PromptSet | None = None) -> PlayerFactory:
    if config.player == "planner":
        from agent.players.planner import PlannerPlayer

        return lambda transcript: PlannerPlayer(config)

    from agent.llm import LLMClient
    from agent.players.llm import LLMPlayer

    prompt_set = prompts or load_prompts(config.prompts_dir, sample_context())
    api_key = config.api_key()
    wants_planner = config.llm.fallback_to_planner or config.llm.planner_hint

    def build(transcript: Transcript) -> Player:
        planner = None
        if wants_planner:
            from agent.players.planner import PlannerPlayer

            planner = PlannerPlayer(config)
        return LLMPlayer(config, LLMClient(config.llm, api_key), prompt_set, transcript, planner)

    return build
