"""The bee arena's configuration: where the arena is, who we are, and the LLM coach."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from agent.core.config import GameConfig, StrictModel


class ArenaConfig(StrictModel):
    host: str = Field("127.0.0.1", description="The arena's host (it is the TCP server; we dial it).")
    port: int = Field(8000, ge=1, le=65535)
    team: str = Field("llm-bees", min_length=1, max_length=64, description="Team name sent on connecting.")
    connect_timeout: float = Field(30.0, gt=0, le=3600,
                                   description="Seconds to keep dialling an arena that is not listening yet.")
    idle_timeout: float = Field(600.0, gt=0, le=86400,
                                description="Longest silence from the arena (it waits for the other agent) "
                                            "before giving up.")

    @field_validator("team")
    @classmethod
    def _one_printable_line(cls, value: str) -> str:
        if not value.isprintable() or "," in value:
            raise ValueError("team must be printable, on one line, without commas")
        return value


class CoachConfig(StrictModel):
    every_rounds: int = Field(15, ge=1, le=1000, description="Ask the coach for a new plan every this many rounds.")
    # Matches are fast (an arena paces nothing: 3,000-4,000 turns take seconds), so an LLM answer
    # lands hundreds of turns after its summary; roles and aggression stay sound that long.
    max_age_rounds: int = Field(150, ge=1, le=10000,
                                description="A plan arriving more than this many rounds after it was asked for "
                                            "is ignored.")
    timeout: float = Field(20.0, gt=0, le=600, description="Seconds after which a coach call is abandoned.")
    max_calls: int = Field(200, ge=0, le=10000, description="Most coach calls in one match (bounds cost).")


class DirectConfig(StrictModel):
    """Research mode: the LLM picks each move itself, within a budget, else the strategy does."""

    enabled: bool = False
    budget_s: float = Field(0.8, gt=0, le=1.5,
                            description="Seconds the LLM gets per move; the arena forfeits after 2 s, so at most 1.5.")
    max_calls: int = Field(500, ge=0, le=100000, description="Most direct-move calls in one match.")


class HiveConfig(GameConfig):
    game: str = "hive"
    player: Literal["offline", "llm"] = Field(
        "offline", description="offline: the strategy alone; llm: the strategy with an LLM coach.")
    arena: ArenaConfig = Field(default_factory=ArenaConfig)
    coach: CoachConfig = Field(default_factory=CoachConfig)
    direct: DirectConfig = Field(default_factory=DirectConfig)
    prompts_dir: Path = Field(Path("prompts/hive"), description="Folder of the coach's templates.")
    seed: int | None = Field(None, description="Seed for the strategy's tie-breaks (reproducible runs).")
