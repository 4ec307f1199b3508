"""The Forge agent's config: the HTTP endpoint Forge posts to, the decision deadline, the LLM.

Every field has a default, so no config at all gives the heuristic player on
http://localhost:5005 (POST / or /decide).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from agent.core import resources
from agent.core.config import GameConfig, GuardedLLMConfig, StrictModel
from agent.core.net import ListenConfig

EARLY_CLIENT_TIMEOUT_S = 30.0
"""The early Forge client gives up on a decision after this long (FORGE_FACTS)."""


class ServerConfig(ListenConfig):
    port: int = Field(5005, ge=0, le=65535, description="The port in Forge's agent endpoint URL.")
    token: str | None = Field(None, description="If set, requests need 'Authorization: Bearer <token>'.")
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=64 * 1024, le=64 * 1024 * 1024,
                                description="Largest request body accepted; bigger ones get 413.")
    max_games: int = Field(64, ge=1, le=10_000, description="Games remembered at once; the longest idle is dropped.")
    game_idle_s: float = Field(6 * 3600.0, gt=0, description="A game with no request for this long is closed.")
    max_concurrent: int = Field(256, ge=1, le=10_000,
                                description="Decisions worked on at once (bodies read); more get 503.")
    body_timeout_s: float = Field(10.0, gt=0, le=600,
                                  description="Time a request's whole body has to arrive; a slower one gets 408 "
                                              "and its connection is closed.")


class DecisionConfig(StrictModel):
    deadline: float = Field(8.0, gt=0.05, le=EARLY_CLIENT_TIMEOUT_S - 5,
                            description="Seconds the LLM has for one decision; then the heuristic answers.")
    memory: int = Field(12, ge=0, le=200, description="Earlier decisions of the same game shown to the LLM.")
    heuristic_hint: bool = Field(True, description="Show the LLM the heuristic's suggestion and its reason.")
    max_oracle_chars: int = Field(400, ge=40, le=4000, description="Oracle text per card in the prompt.")


class ForgeConfig(GameConfig):
    game: Literal["forge"] = "forge"
    player: Literal["heuristic", "llm"] = Field("heuristic", description="Who decides: the rules heuristic or an LLM.")
    llm: GuardedLLMConfig = Field(default_factory=GuardedLLMConfig)
    server: ServerConfig = Field(default_factory=ServerConfig)
    decision: DecisionConfig = Field(default_factory=DecisionConfig)
    # The shipped folder, in a checkout or an installed wheel (agent/data/prompts/forge).
    prompts_dir: Path = Field(default_factory=lambda: resources.prompts_dir("forge"),
                              description="Folder of Jinja2 templates.")

    @model_validator(mode="after")
    def _resolve(self) -> ForgeConfig:
        self.prompts_dir = self.resolve_dir(self.prompts_dir)
        return self

    def secret_values(self) -> tuple[str, ...]:
        return tuple(s for s in (self.api_key(), self.server.token) if s)
