"""Configuration shared by every game: YAML files validated by pydantic.

Each game's config model subclasses :class:`GameConfig` and adds its own sections. Every field has
a default, so an empty file (or no file at all) gives the game's offline default. Unknown keys are
errors, not silently ignored: a typo in a study's config must not go unnoticed.
"""

from __future__ import annotations

import difflib
import os
import re
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent.core.resources import PACKAGE_DIR, PROJECT_DIR, search_roots

__all__ = [
    "PACKAGE_DIR",
    "PROJECT_DIR",
    "C",
    "ConfigError",
    "GameConfig",
    "GuardedLLMConfig",
    "ImageConfig",
    "LLMConfig",
    "LogLevel",
    "RetryConfig",
    "StrictModel",
    "TranscriptConfig",
    "apply_tags",
    "check_api_key",
    "describe_errors",
    "load_config",
    "read_config_mapping",
    "read_yaml_mapping",
    "validate_config",
]

MAX_TAGS = 20
TAG_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,39}$")
MAX_TAG_VALUE_CHARS = 100
MAX_REPORTED_ERRORS = 20

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]


class StrictModel(BaseModel):
    """Base of every config section: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


class RetryConfig(StrictModel):
    max_attempts: int = Field(3, ge=1, le=10, description="Tries per LLM call, the first included.")
    initial_backoff: float = Field(0.5, ge=0, le=60, description="Seconds before the first retry; doubles each time.")
    max_backoff: float = Field(8.0, ge=0, le=120, description="Longest single wait, also the cap on Retry-After.")


class LLMConfig(StrictModel):
    base_url: str | None = Field(
        None, description="OpenAI-compatible endpoint; unset = the SDK's default (OPENAI_BASE_URL or OpenAI).")
    model: str = "gpt-4o"
    api_key_env: str = Field("OPENAI_API_KEY", description="Name of the environment variable holding the key.")
    api_key_required: bool = Field(True, description="False for local servers that take no key.")
    usd_per_million_input: float | None = Field(None, ge=0, le=10_000, description=(
        "The model's price per million prompt tokens (US dollars): what an online study's spend caps count."))
    usd_per_million_output: float | None = Field(None, ge=0, le=10_000, description=(
        "The model's price per million completion tokens (US dollars)."))
    temperature: float = Field(0.2, ge=0, le=2)
    max_tokens: int = Field(600, ge=16, le=16384)
    request_timeout: float = Field(30.0, gt=0, le=600, description="Seconds for one HTTP request.")
    server_status: Path | None = Field(None, description=(
        "The status file of a model server the agent started and watches itself (set by --local-model): read "
        "when the server stops answering, to name its crash and wait for its restart."))
    structured_output: Literal["json_schema", "json_object_schema", "json_object", "text"] = Field(
        "json_schema", description=(
            "How to ask for JSON first: json_schema (OpenAI, vLLM, Ollama, LM Studio), json_object_schema "
            "(json_object with the schema inside: the llama.cpp family), json_object, or text. A server that "
            "refuses one is asked the next way, and the endpoint keeps it."))
    probe_dialect: bool = Field(True, description=(
        "Before the first call, a few one-token requests find whether the server drops the system message "
        "or content sent as parts (images); false: send as configured."))
    system_role: Literal["auto", "keep", "fold"] = Field("auto", description=(
        "auto: found by the probe; keep: send system messages; fold: put their text into the first user "
        "message (for chat templates without a system role)."))
    field_chars: dict[str, Annotated[int, Field(ge=16, le=4000)]] = Field(
        default_factory=lambda: {"*": 200, "chat": 120, "reply": 160}, description=(
        "The most characters of each free-text field of an answer, by field name ('*': any other): told to the "
        "model in the schema, and enforced as maxLength where the server turns schemas into grammars."))
    context_tokens: int | None = Field(None, ge=256, le=10_000_000, description=(
        "The model's context window in tokens; unset: what the server tells (llama.cpp's /props, vLLM's model "
        "list) or shows (a refusal naming it, a prompt it cut). A prompt that does not fit is sent in the game's "
        "compact form, or not at all: never cut."))
    prompt_form: Literal["auto", "compact"] = Field("auto", description=(
        "auto: each game's full prompt, its compact form only where the full one does not fit the context "
        "window; compact: the compact form always (a slow model reads half as much)."))
    stream: bool | None = Field(None, description=(
        "Ask for each answer as a stream (server-sent events) and close it when the agent gives up: the server "
        "stops computing it (llama-cpp-python goes on with a request not streamed). Unset: on for the server the "
        "agent started itself (--local-model, which sets server_status), off elsewhere; true/false: always/never."))
    prime: bool = Field(True, description=(
        "At start, find the endpoint's dialect and send one decision prompt with max_tokens 1, so a local "
        "server has the prompt's unchanging start cached before the first decision (never sent to OpenAI itself)."))
    bound_answers: bool = Field(True, description=(
        "Bound free-text fields and size max_tokens to the schema; salvage or re-ask an answer cut off at "
        "max_tokens. False: send the game's schema and max_tokens as they are."))
    max_in_flight: int = Field(32, ge=1, le=1024, description=(
        "LLM requests in flight at once for the whole process; waiting plays go before waiting chats."))
    retry: RetryConfig = Field(default_factory=RetryConfig)


class GuardedLLMConfig(LLMConfig):
    """The LLM section of a game whose offline player can prove a position decided (a win to take,
    a loss to avoid): the game may override a model's choice that throws such a position away."""

    guard: Literal["decided", "off"] = Field("decided", description=(
        "decided: replace a model's choice that throws away a position the offline player proves "
        "decided (each override is a 'guard' transcript record); off: send the model's choice as it is."))


class ImageConfig(StrictModel):
    max_side: int = Field(512, ge=64, le=4096, description="Longest side in pixels after downscaling.")
    format: Literal["png", "jpeg"] = "png"
    jpeg_quality: int = Field(85, ge=30, le=100)
    send_board: bool = True
    send_drawer: bool = True
    detail: Literal["auto", "low", "high"] = "auto"
    max_pixels: int = Field(2_500_000, ge=10_000, le=40_000_000, description=(
        "Larger images are refused unread (a game's board crop at 4K is about 1,100 x 1,100)."))
    decode_workers: int = Field(2, ge=1, le=16, description="Threads decoding images, shared by every game.")


class TranscriptConfig(StrictModel):
    enabled: bool = True
    dir: Path = Path("transcripts")
    images: bool = Field(False, description=(
        "Also keep every picture sent to the LLM, exactly as sent, once per distinct picture, in a folder "
        "next to the transcript (<transcript name>.files/); the llm records name the files."))


class GameConfig(StrictModel):
    """What every game's config has. ``player`` names the game's players; each game narrows it."""

    game: str = Field("tangram", description="Which game this config is for.")
    player: str = Field("offline", description="Who decides: the game's offline default or 'llm'.")
    llm: LLMConfig = Field(default_factory=LLMConfig)
    transcripts: TranscriptConfig = Field(default_factory=TranscriptConfig)
    log_level: LogLevel = "INFO"
    tags: dict[str, str] = Field(
        default_factory=dict,
        description="Free study labels (participant, condition...): in every session_start record and transcript name.")

    source: Path | None = Field(None, exclude=True, description="Where this config was read from.")

    @field_validator("tags", mode="before")
    @classmethod
    def _check_tags(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        if len(value) > MAX_TAGS:
            raise ValueError(f"at most {MAX_TAGS} tags")
        for key, item in value.items():
            if not isinstance(key, str) or not TAG_KEY.match(key):
                raise ValueError(f"tag name {key!r}: a letter, then up to 39 letters, digits, '_', '.' or '-'")
            if isinstance(item, bool) or not isinstance(item, str | int | float):
                raise ValueError(f"tag {key!r}: the value must be a word or a number")
            if len(str(item)) > MAX_TAG_VALUE_CHARS:
                raise ValueError(f"tag {key!r}: the value is over {MAX_TAG_VALUE_CHARS} characters")
        return {k: str(v) for k, v in value.items()}

    def api_key(self) -> str | None:
        value = os.environ.get(self.llm.api_key_env, "").strip()
        return value or None

    def uses_llm(self) -> bool:
        return self.player == "llm"

    def secret_values(self) -> tuple[str, ...]:
        """What must never reach a log, a transcript or a frame (games add their own, e.g. tokens)."""
        key = self.api_key()
        return (key,) if key else ()

    def resolve_dir(self, value: Path) -> Path:
        """A relative folder named by the config: next to the config first, then the shipped trees
        (installed package or checkout), then cwd."""
        if value.is_absolute():
            return value
        base = self.source.parent if self.source else Path.cwd()
        for root in (base, *search_roots(), Path.cwd()):
            if (root / value).is_dir():
                return (root / value).resolve()
        return value


class ConfigError(Exception):
    """The config cannot be used; the message names the file and each wrong field (one line each)."""


C = TypeVar("C", bound=GameConfig)


def read_config_mapping(path: str | Path) -> dict[str, Any]:
    """The YAML mapping in ``path``, or ConfigError with a one-line reason."""
    return read_yaml_mapping(path, "config")


class UniqueKeys(yaml.SafeLoader):
    """A SafeLoader refusing a key given twice: plain YAML keeps the last and silently drops the
    first (a second study condition of the same name, a words file's phrase glossed twice)."""


def _mapping_without_duplicates(loader: UniqueKeys, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node)


UniqueKeys.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)


def read_yaml_mapping(path: str | Path, what: str, loader: type[yaml.SafeLoader] = yaml.SafeLoader) -> dict[str, Any]:
    """The YAML mapping in ``path`` (a ``what``: config, study...), or ConfigError with one line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    try:
        data: Any = yaml.load(text, Loader=loader) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark else ""
        problem = getattr(exc, "problem", None)
        reason = f": {problem}" if isinstance(problem, str) and problem.startswith("duplicate") else ""
        raise ConfigError(f"{what} {path} is not valid YAML{where}{reason}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{what} {path} must be a mapping of fields, not a {type(data).__name__}")
    return data


def validate_config(model: type[C], data: dict[str, Any], path: Path | None) -> C:
    """``data`` as ``model``; every problem is reported at once, one line each, naming the field
    (and, for a misspelt key, the field it probably meant)."""
    payload = {**data, "source": path.resolve()} if path is not None else dict(data)
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        where = f"config {path}" if path is not None else "config"
        problems = describe_errors(model, exc)
        shown = problems[:MAX_REPORTED_ERRORS]
        if len(problems) > len(shown):
            shown.append(f"... and {len(problems) - len(shown)} more")
        if len(shown) == 1:
            raise ConfigError(f"{where}: {shown[0]}") from exc
        raise ConfigError(f"{where} has {len(problems)} problems:\n  " + "\n  ".join(shown)) from exc


def describe_errors(model: type[BaseModel], exc: ValidationError) -> list[str]:
    """One line per problem pydantic found, naming the field (with a guess for a misspelt key)."""
    return [_describe_error(model, err) for err in exc.errors()]


def _describe_error(model: type[BaseModel], err: Any) -> str:
    loc = tuple(err["loc"])
    field = ".".join(str(p) for p in loc) or "(top level)"
    if err["type"] == "extra_forbidden":
        known = _fields_at(model, loc[:-1])
        guess = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6) if known else []
        hint = f" (did you mean '{'.'.join([*map(str, loc[:-1]), guess[0]])}'?)" if guess else ""
        return f"field '{field}': unknown field{hint}"
    return f"field '{field}': {err['msg']}"


def _section(annotation: Any, parts: list[Any]) -> Any:
    """The model an annotation holds at ``parts`` (consumed as it goes): through a mapping's key, a
    list's index, an optional, and a union's tag (pydantic names a tagged union's member in the
    error's place, e.g. ``items.0.likert.points``)."""
    current = annotation
    while True:
        origin = typing.get_origin(current)
        args = typing.get_args(current)
        if origin is typing.Annotated:
            current = args[0]
        elif origin is dict and parts:
            parts.pop(0)  # the mapping's key: its value's model comes next
            current = args[1]
        elif origin is list and parts and isinstance(parts[0], int):
            parts.pop(0)
            current = args[0]
        elif origin in (typing.Union, types.UnionType):
            models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
            tagged = [m for m in models if parts and _tag_of(m) and parts[0] in _tag_of(m)]
            if tagged:
                parts.pop(0)
                return tagged[0]
            if len(models) == 1:
                return models[0]
            return None
        else:
            return current


def _tag_of(model: type[BaseModel]) -> tuple[Any, ...]:
    kind = model.model_fields.get("kind")
    return typing.get_args(kind.annotation) if kind is not None else ()


def _fields_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The field names of the section ``loc`` points to, for "did you mean" (through sections and
    mappings of sections, e.g. a study's ``conditions.<name>``)."""
    current: Any = model
    parts = list(loc)
    while parts:
        part = parts.pop(0)
        fields = getattr(current, "model_fields", None)
        if fields is None or part not in fields:
            return []
        current = _section(fields[part].annotation, parts)
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
    fields = getattr(current, "model_fields", None)
    return [name for name in fields if name != "source"] if fields else []


def apply_tags(config: C, tags: dict[str, str]) -> C:
    """The config with ``tags`` (from the command line) over its own; ConfigError if one is invalid."""
    if not tags:
        return config
    merged = {**config.tags, **tags}
    try:
        checked = type(config).model_validate({"tags": merged}).tags
    except ValidationError as exc:
        raise ConfigError(f"--tag: {exc.errors()[0]['msg']}") from exc
    return config.model_copy(update={"tags": checked})


def load_config(path: str | Path | None, model: type[C]) -> C:
    """Read and validate a config file as ``model``; no file gives the model's defaults."""
    if path is None:
        return model()
    path = Path(path)
    return validate_config(model, read_config_mapping(path), path)


def check_api_key(config: GameConfig) -> None:
    """An LLM config whose key is missing fails at start-up, not with a 401 in the first decision."""
    if config.uses_llm() and config.llm.api_key_required and not config.api_key():
        where = f" by {config.source.name}" if config.source else ""
        raise ConfigError(f"the LLM player{where} needs an API key: set {config.llm.api_key_env} in .env or the "
                          "environment (or set llm.api_key_required: false for a local server)")
