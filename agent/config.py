"""Configuration: YAML files validated by pydantic. Every field has a default, so an empty file
(or no file at all) gives the offline planner on ws://localhost:5000.

Unknown keys are errors, not silently ignored: a typo in a study's config must not go unnoticed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_DIR = PACKAGE_DIR.parent


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RetryConfig(_Strict):
    max_attempts: int = Field(3, ge=1, le=10, description="Tries per LLM call, the first included.")
    initial_backoff: float = Field(0.5, ge=0, le=60, description="Seconds before the first retry; doubles each time.")
    max_backoff: float = Field(8.0, ge=0, le=120, description="Longest single wait, also the cap on Retry-After.")


class LLMConfig(_Strict):
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint; unset = the SDK's default (OPENAI_BASE_URL or OpenAI).")
    model: str = "gpt-4o"
    api_key_env: str = Field("OPENAI_API_KEY", description="Name of the environment variable holding the key.")
    api_key_required: bool = Field(True, description="False for local servers that take no key.")
    temperature: float = Field(0.2, ge=0, le=2)
    max_tokens: int = Field(600, ge=16, le=16384)
    request_timeout: float = Field(30.0, gt=0, le=600, description="Seconds for one HTTP request.")
    structured_output: Literal["json_schema", "json_object", "text"] = Field(
        "json_schema", description="How to ask for JSON; json_schema falls back to text when the server rejects it.")
    retry: RetryConfig = Field(default_factory=RetryConfig)
    fallback_to_planner: bool = Field(False, description="When the LLM fails, let the offline planner play the turn.")
    planner_hint: bool = Field(False, description="Show the offline planner's suggestion to the LLM in the prompt.")


class PlannerConfig(_Strict):
    default_figure: str | None = Field(None, description="Figure for objectives the library does not know; None = pick by similarity.")


class ImageConfig(_Strict):
    max_side: int = Field(512, ge=64, le=4096, description="Longest side in pixels after downscaling.")
    format: Literal["png", "jpeg"] = "png"
    jpeg_quality: int = Field(85, ge=30, le=100)
    send_board: bool = True
    send_drawer: bool = True
    detail: Literal["auto", "low", "high"] = "auto"


class TurnConfig(_Strict):
    deadline: float = Field(60.0, gt=1, le=3600, description="Seconds from playRequest to finish, whatever happens.")
    max_feedback_iterations: int = Field(3, ge=0, le=20, description="Corrective plays after the first one.")


class ServerConfig(_Strict):
    host: str = Field("localhost", description="'localhost' listens on 127.0.0.1 and ::1.")
    port: int = Field(5000, ge=0, le=65535)
    max_frame_bytes: int = Field(16 * 1024 * 1024, ge=64 * 1024, description="Largest frame accepted from the game.")
    allow_remote: bool = Field(False, description="Must be true to listen on a non-loopback address.")
    token: str | None = Field(None, description="If set, clients must connect with ?token=<this>.")
    ping_interval: float | None = Field(20.0, description="Seconds between keep-alive pings; null disables.")


class TranscriptConfig(_Strict):
    enabled: bool = True
    dir: Path = Path("transcripts")


class Config(_Strict):
    player: Literal["planner", "llm"] = Field("planner", description="Who decides: the offline planner or an LLM.")
    llm: LLMConfig = Field(default_factory=LLMConfig)
    planner: PlannerConfig = Field(default_factory=PlannerConfig)
    images: ImageConfig = Field(default_factory=ImageConfig)
    prompts_dir: Path = Field(PROJECT_DIR / "prompts", description="Folder of Jinja2 templates.")
    chat_history: int = Field(10, ge=0, le=200, description="Exchanges of chat kept in the memory and the prompt.")
    turn: TurnConfig = Field(default_factory=TurnConfig)
    server: ServerConfig = Field(default_factory=ServerConfig)
    transcripts: TranscriptConfig = Field(default_factory=TranscriptConfig)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    source: Path | None = Field(None, exclude=True, description="Where this config was read from.")

    @model_validator(mode="after")
    def _resolve_paths(self) -> Config:
        base = self.source.parent if self.source else Path.cwd()
        if not self.prompts_dir.is_absolute():
            # Relative template folders are looked up next to the config first, then in the project.
            for root in (base, PROJECT_DIR, Path.cwd()):
                if (root / self.prompts_dir).is_dir():
                    self.prompts_dir = (root / self.prompts_dir).resolve()
                    break
        return self

    def api_key(self) -> str | None:
        value = os.environ.get(self.llm.api_key_env, "").strip()
        return value or None

    def secret_values(self) -> tuple[str, ...]:
        """What must never reach a log, a transcript or a frame: the API key and the server token."""
        return tuple(s for s in (self.api_key(), self.server.token) if s)


class ConfigError(Exception):
    """The config cannot be used; the message is one line naming the file and the field."""


def load_config(path: str | Path | None) -> Config:
    if path is None:
        return Config()
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from exc
    try:
        data: Any = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark else ""
        raise ConfigError(f"config {path} is not valid YAML{where}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config {path} must be a mapping of fields, not a {type(data).__name__}")
    try:
        return Config.model_validate({**data, "source": path.resolve()})
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise ConfigError(f"config {path}: field '{field}': {err['msg']}") from exc
