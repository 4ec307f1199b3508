"""Builds the decider a server shares between its games, from the config (checked at start-up)."""

from __future__ import annotations

from agent.core.config import check_api_key
from agent.core.prompts import PromptSet, load_prompts
from agent.games.forge.config import ForgeConfig
from agent.games.forge.player import Decider
from agent.games.forge.prompt_context import TEMPLATE_NAMES, sample_context


def load_forge_prompts(config: ForgeConfig) -> PromptSet:
    return load_prompts(config.prompts_dir, sample_context(), TEMPLATE_NAMES)


def make_decider(config: ForgeConfig, with_client: bool = True) -> Decider:
    """The heuristic alone, or the LLM player; raises ConfigError/PromptError with one line."""
    if config.player != "llm":
        return Decider(config)
    check_api_key(config)
    prompts = load_forge_prompts(config)
    client = None
    if with_client:
        from agent.core.llm import LLMClient

        # One client for all games: one connection pool, one memory of what the provider rejects.
        client = LLMClient(config.llm, config.api_key())
    return Decider(config, client, prompts)
