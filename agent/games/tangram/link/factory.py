"""Builds the player each new session gets, from the config.

Read-only or provider-level pieces are made once per server: the checked prompt templates and
the LLM client (its connection pool and what it learned about the provider, such as "rejects
json_schema"). Everything that holds game state (the player, its memory, its plan) is made per
session, so two connections never see each other's game.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from agent.core.config import check_api_key
from agent.core.prompts import PromptSet, load_prompts
from agent.core.transcript import Transcript
from agent.games.tangram.config import Config
from agent.games.tangram.contract import Player
from agent.games.tangram.llm_player.context import REASK_TEMPLATE, TEMPLATE_NAMES, sample_context

if TYPE_CHECKING:
    from agent.core.llm import LLMClient
    from agent.core.llm.sample import LLMSample
    from agent.core.llm.spend_guard import SpendGuard

PlayerSource = Callable[[Transcript], Player]
"""Anything that makes a session's player; the server takes any such callable."""


class PlayerFactory:
    def __init__(self, config: Config, prompts: PromptSet | None = None, with_client: bool = True) -> None:
        self.config = config
        self._client: LLMClient | None = None
        self._priming: asyncio.Task[None] | None = None
        self._prompts = prompts
        if uses_planner(config):
            check_planner_config(config)  # also loads the figure library now, not in the first turn
        if config.player == "llm":
            from agent.core.llm import LLMClient

            check_api_key(config)
            # A prompt folder written before re-asks existed works with llm.max_reasks: 0.
            names = (*TEMPLATE_NAMES, REASK_TEMPLATE) if config.llm.max_reasks else TEMPLATE_NAMES
            self._prompts = prompts or load_prompts(config.prompts_dir, sample_context(), names)
            # Made here, not per connection: building an HTTPS client loads the CA store, which
            # would stall every other game's event loop for tens of milliseconds at each connect.
            if with_client:
                self._client = LLMClient(config.llm, config.api_key())
                self._client.warm_up()

    def __call__(self, transcript: Transcript) -> Player:
        return self.make(transcript)

    def capped(self, spend: SpendGuard) -> PlayerSource:
        """This factory's players with their LLM calls under ``spend``'s caps (an online study's):
        past them the offline planner plays the rest of the session."""
        return lambda transcript: self.make(transcript, spend)

    def make(self, transcript: Transcript, spend: SpendGuard | None = None) -> Player:
        """A new session's player; ``spend``: asked before each of its LLM calls."""
        from agent.games.tangram.offline.player import PlannerPlayer

        if self.config.player == "planner":
            return PlannerPlayer(self.config)
        from agent.games.tangram.llm_player.player import LLMPlayer  # here: only LLM configs pay for the SDK import

        assert self._client is not None and self._prompts is not None
        planner = PlannerPlayer(self.config) if uses_planner(self.config) else None
        return LLMPlayer(self.config, self._client, self._prompts, transcript, planner, spend)

    def on_llm_server(self, listener: Callable[[str, str], None]) -> None:
        """``listener(state, line)`` whenever the LLM server stops answering or answers again (no LLM: never)."""
        if self._client is not None:
            self._client.outage.subscribe(listener)

    def prime_soon(self) -> None:
        """Prime the model server with a play prompt (the LLM client's ``prime``) while the agent
        waits for the game; call from the running loop. The sample prompt (a rendered board and
        drawer, prepared as a turn's) is made in a thread: on the loop it held up the first frames
        of games that connect as the agent starts by 0.3-0.4 s."""
        if self._client is not None and self.config.llm.prime and self._priming is None:
            self._priming = asyncio.get_running_loop().create_task(self._prime(self._client))

    async def _prime(self, client: LLMClient) -> None:
        sample = await asyncio.to_thread(_priming_sample, self.config)
        client.prime_soon(sample)

    async def aclose(self) -> None:
        if self._priming is not None and not self._priming.done():
            self._priming.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._priming
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _priming_sample(config: Config) -> LLMSample:
    """The priming's prompt; its module too is loaded here, in the worker thread (Pillow, the simulator's
    renderer)."""
    from agent.games.tangram.llm_player.sample import llm_sample

    return llm_sample(config)


def uses_planner(config: Config) -> bool:
    return (config.player == "planner" or config.llm.fallback_to_planner or config.llm.planner_hint
            or (config.player == "llm" and config.llm.candidates > 0))


def check_planner_config(config: Config) -> None:
    """Load the figure library (with ``planner.figures_dir``) and check ``planner.default_figure`` names one
    of its figures."""
    from agent.core.config import ConfigError
    from agent.games.tangram.planner.library import FigureError, load_library
    from agent.games.tangram.planner.matching import find_figure

    try:
        library = load_library(extra=config.planner.figures_dir)
    except FigureError as exc:
        raise ConfigError(f"field 'planner.figures_dir': {exc}") from exc
    name = config.planner.default_figure
    if name is not None:
        figure, exact = find_figure(name, library)
        if figure is None or not exact:
            known = ", ".join(sorted(f.name for f in library))
            raise ConfigError(f"field 'planner.default_figure': no figure named {name!r} (known: {known})")


def make_player_factory(config: Config, prompts: PromptSet | None = None, with_client: bool = True) -> PlayerFactory:
    """``with_client=False`` runs every start-up check without building the LLM client."""
    return PlayerFactory(config, prompts, with_client)
