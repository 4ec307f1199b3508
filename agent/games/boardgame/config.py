"""The Boardgame agent's configuration: where the engine is, who we are, and how we play."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from agent.core.config import GameConfig, GuardedLLMConfig, StrictModel


class EngineConnection(StrictModel):
    url: str = Field("ws://127.0.0.1:8765", description="The engine's WebSocket URL (it is the server; we dial it).")
    agent_id: str = Field("agent", min_length=1, max_length=64, description="Our agent id in every message.")
    name: str | None = Field(None, max_length=64, description="Display name sent with create_match (default: the id).")
    board_game: str | None = Field(
        None, description="Game code to create (tictactoe, connect_four, ...); unset: the engine's own game.")
    match_id: str | None = Field(None, max_length=128, description="Join this match instead of creating one.")
    opponent: Literal["engine", "random", "strong", "none"] = Field(
        "engine", description="Who takes the other seat of a match we create: the engine's default bot, "
                              "a random or strong bot, or nobody (another agent joins).")
    seat: Literal[1, 2] = Field(1, description="Our seat in a match we create: 1 moves first.")
    response_timeout: float = Field(15.0, gt=0, le=600, description="Seconds to wait for the engine's answer.")
    reconnect_attempts: int = Field(8, ge=0, le=100, description="Reconnections tried (with backoff) after a drop.")

    @field_validator("url")
    @classmethod
    def _websocket_url(cls, value: str) -> str:
        if not value.startswith(("ws://", "wss://")):
            raise ValueError("must start with ws:// or wss://")
        return value

    @field_validator("agent_id", "name")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        if value is not None and not value.isprintable():
            raise ValueError("must be printable text on one line")
        return value


class PlayConfig(StrictModel):
    search_seconds: float = Field(1.0, gt=0, le=60, description="Time per move of the connect-four search.")
    max_attempts: int = Field(3, ge=1, le=10,
                              description="LLM actions tried per turn (after refusals) before the offline player acts.")
    decision_seconds: float = Field(60.0, gt=0, le=600,
                                    description="Time for one LLM attempt; past it the offline player acts.")
    matches: int = Field(1, ge=1, le=1000, description="Matches to play one after another.")
    max_llm_calls: int = Field(200, ge=0, le=100_000,
                               description="LLM calls per match (bounds cost); past it the offline player acts.")


class BoardgameConfig(GameConfig):
    game: str = "boardgame"
    player: Literal["offline", "llm", "random"] = Field(
        "offline", description="offline: perfect/search play; llm: the LLM with the offline player as fallback; "
                               "random: random legal moves.")
    llm: GuardedLLMConfig = Field(default_factory=GuardedLLMConfig)
    engine: EngineConnection = Field(default_factory=EngineConnection)
    play: PlayConfig = Field(default_factory=PlayConfig)
    prompts_dir: Path = Field(Path("prompts/boardgame"), description="Folder of the LLM player's templates.")
    seed: int | None = Field(None, description="Seed for tie-breaks among equally good moves.")
