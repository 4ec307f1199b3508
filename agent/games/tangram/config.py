"""Tangram's configuration: the core's sections plus the planner, images, turns and the server.

Every field has a default, so an empty file (or no file at all) gives the offline planner on
ws://localhost:5000. The shipped tangram configs name no ``game:`` (it defaults to tangram).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from agent.core.config import (
    PROJECT_DIR,
    ConfigError,
    GameConfig,
    ImageConfig,
    LLMConfig,
    StrictModel,
    TranscriptConfig,
)
from agent.core.config import load_config as _load_config
from agent.core.net import ListenConfig
from agent.core.resources import prompts_dir as shipped_prompts

__all__ = [
    "PROJECT_DIR",
    "Config",
    "ConfigError",
    "ConsoleConfig",
    "ConsoleMode",
    "ImageConfig",
    "ImageSource",
    "LLMConfig",
    "PlannerConfig",
    "ServerConfig",
    "TangramImageConfig",
    "TangramLLMConfig",
    "TranscriptConfig",
    "TurnConfig",
    "load_config",
]


MAX_CANDIDATES = 6


class TangramLLMConfig(LLMConfig):
    fallback_to_planner: bool = Field(False, description="When the LLM fails, let the offline planner play the turn.")
    planner_hint: bool = Field(False, description="Show the offline planner's suggestion to the LLM in the prompt.")
    chat_drawer_image: bool = Field(False, description="Show the drawer image in chat prompts too, not only the board.")
    chat_wait: float = Field(20.0, gt=0, le=600, description=(
        "Seconds a chat reply waits for the model. When the model gives none in that time, or cannot be expected "
        "to (its recent decisions took longer, it missed its time twice in a row, its server is down), the offline "
        "planner answers the partner at once instead, and keeps what it promised."))
    candidates: int = Field(0, ge=0, le=MAX_CANDIDATES, description=(
        "Placements the offline planner proposes before each play, each checked by the geometry engine, "
        "lettered A, B, ... in the prompt and on the board image; the model may name one. 0 turns it off."))
    max_reasks: int = Field(1, ge=0, le=3, description=(
        "Corrective re-asks of a move nothing can be salvaged from (same conversation, the problem and the facts "
        "the model got wrong, prompts/<game>/reask.j2), each only when this session's LLM latency says it fits "
        "before the turn's deadline; 0 turns them off."))


Layer = Literal["grid", "labels", "candidates"]
LAYERS: tuple[Layer, ...] = ("grid", "labels", "candidates")


ImageSource = Literal["game", "restored", "redrawn"]


class TangramImageConfig(ImageConfig):
    source: ImageSource = Field("redrawn", description=(
        "What the LLM's pictures start from. 'redrawn': drawn from the state in the game's look at the size the "
        "model gets (the game dims all pieces but the human's last one in every playRequest picture and can show "
        "a false overlap tint); 'restored': the game's picture with every piece the state places repainted in its "
        "own colour; 'game': exactly as the game sent it."))
    annotate: list[Layer] = Field(default_factory=list, description=(
        "Marks drawn on the images sent to the LLM: 'grid' (board units every 10, y up), 'labels' (piece "
        "names at their centres, board and drawer), 'candidates' (each candidate's outline and letter). "
        "[] sends the game's pictures untouched."))

    @field_validator("annotate")
    @classmethod
    def _in_drawing_order(cls, value: list[Layer]) -> list[Layer]:
        # Drawn in a fixed order whatever the config's order, so the same layers give the same picture.
        return [layer for layer in LAYERS if layer in value]


class PlannerConfig(StrictModel):
    default_figure: str | None = Field(
        None, description="Figure for objectives the library does not know; None = pick by similarity.")
    figures_dir: list[Path] = Field(default_factory=list, description=(
        "Folder(s) of extra figure files (YAML, as made by the design or SVG import tools) added to the "
        "built-in library; a figure with a built-in figure's name replaces it. One folder or a list."))

    @field_validator("figures_dir", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, (str, Path)) else value


class TurnConfig(StrictModel):
    deadline: float = Field(60.0, gt=1, le=3600, description="Seconds from playRequest to finish, whatever happens.")
    max_feedback_iterations: int = Field(3, ge=0, le=20, description="Corrective plays after the first one.")
    thinking_line: bool = Field(True, description=(
        "Say one short chat line (prompts/tangram/thinking.j2) when no play has gone out thinking_after_s into "
        "the AI's turn, so the partner knows a slow model is at work; false for studies that must not have it."))
    thinking_after_s: float = Field(4.0, gt=0, le=3600, description=(
        "Seconds into the AI's turn, with no play made yet, before the thinking line (at most once per turn)."))


class ServerConfig(ListenConfig):
    port: int = Field(5000, ge=0, le=65535, description="The port the game dials.")
    max_frame_bytes: int = Field(16 * 1024 * 1024, ge=64 * 1024, description="Largest frame accepted from the game.")
    token: str | None = Field(None, description="If set, clients must connect with ?token=<this>.")
    ping_interval: float | None = Field(20.0, description="Seconds between keep-alive pings; null disables.")
    max_connections: int = Field(64, ge=1, le=10_000, description=(
        "WebSocket connections at once; when full, a newcomer replaces the oldest connection that has not sent "
        "a frame, else it gets HTTP 503. Lowered at start to fit the open-files limit."))


class StudyGameConfig(StrictModel):
    """How a game of a study (python -m agent --study FILE, docs/study.md) is judged done."""

    completed_after_turns: int = Field(2, ge=1, le=100, description=(
        "A study game counts as completed when the game closes its connection on the participant's turn "
        "(the game's Finish button and closing form end a game that way; Finish needs two rounds) after at "
        "least this many AI turns of that connection ended with finish. A connection lost during an AI turn "
        "or earlier, or an agent that stops, leaves the game uncompleted: the condition is played again."))


ConsoleMode = Literal["autonomous", "supervised", "wizard"]


class ConsoleConfig(StrictModel):
    """The experimenter console (docs/console.md): a web page that shows every game and may step in."""

    enabled: bool = Field(False, description="Serve the console (the --console flag turns it on).")
    host: str = Field("127.0.0.1", description="Interface for the console's page; loopback unless a token is set.")
    port: int = Field(8080, ge=0, le=65535)
    token: str | None = Field(None, min_length=16, description="Required to listen off loopback; the page is "
                              "opened once with ?token=..., then a cookie carries it. Generated when missing.")
    default_mode: ConsoleMode = Field("autonomous", description="Mode each new game starts in.")
    wizard_fallback: Literal["suggestion", "pass"] = Field(
        "suggestion", description="What a wizard turn plays when nobody acts before the deadline.")
    max_clients: int = Field(16, ge=1, le=256, description="Browser tabs connected at once.")


class Config(GameConfig):
    game: Literal["tangram"] = "tangram"
    player: Literal["planner", "llm"] = Field("planner", description="Who decides: the offline planner or an LLM.")
    llm: TangramLLMConfig = Field(default_factory=TangramLLMConfig)
    planner: PlannerConfig = Field(default_factory=PlannerConfig)
    images: TangramImageConfig = Field(default_factory=TangramImageConfig)
    prompts_dir: Path = Field(default_factory=lambda: shipped_prompts("tangram"),
                              description="Folder of Jinja2 templates.")
    chat_history: int = Field(10, ge=0, le=200, description="Exchanges of chat kept in the memory and the prompt.")
    turn: TurnConfig = Field(default_factory=TurnConfig)
    server: ServerConfig = Field(default_factory=ServerConfig)
    console: ConsoleConfig = Field(default_factory=ConsoleConfig)
    study: StudyGameConfig = Field(default_factory=StudyGameConfig)

    @model_validator(mode="after")
    def _resolve_paths(self) -> Config:
        # Relative template folders are looked up next to the config first, then in the project.
        self.prompts_dir = self.resolve_dir(self.prompts_dir)
        self.planner.figures_dir = [self.resolve_dir(d) for d in self.planner.figures_dir]
        if not (self.prompts_dir / "system.j2").exists() and (self.prompts_dir / "tangram" / "system.j2").exists():
            # Configs written before the games were split name the old flat ``prompts`` folder.
            self.prompts_dir = self.prompts_dir / "tangram"
        return self

    def secret_values(self) -> tuple[str, ...]:
        """What must never reach a log, a transcript, a frame or a page: the API key and both tokens."""
        return tuple(s for s in (self.api_key(), self.server.token, self.console.token) if s)


def load_config(path: str | Path | None) -> Config:
    return _load_config(path, Config)
