"""The planner's wording, read from ``phrases.yaml``: Jinja2 templates and the words it understands."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml
from jinja2 import Environment, StrictUndefined, Template
from pydantic import BaseModel, ConfigDict, field_validator

from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.geometry.relations import RELATION_DOCS
from agent.games.tangram.protocol import clean_chat_text

PHRASES_PATH = Path(__file__).resolve().parent / "phrases.yaml"
MAX_LINE_CHARS = 199


class Steps(BaseModel):
    model_config = ConfigDict(extra="forbid")
    default: float
    small: float
    large: float


class Vocabulary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pieces: dict[str, list[str]]
    kinds: dict[str, list[str]]
    amounts: dict[str, list[str]]
    steps: Steps
    intents: dict[str, list[str]]

    @field_validator("pieces")
    @classmethod
    def _all_pieces(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        if set(v) != set(PIECE_NAMES):
            raise ValueError("vocabulary.pieces must name each of the seven pieces")
        return v


class Words(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kinds: dict[str, str]
    places: list[list[str]]
    directions: dict[str, list[str]]
    relations: dict[str, list[str]]
    """Words for where to put a piece against another ("next to"), by relation of the geometry engine."""

    @field_validator("relations")
    @classmethod
    def _known_relations(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        unknown = set(v) - set(RELATION_DOCS)
        if unknown:
            raise ValueError(f"words.relations names relations the geometry engine lacks: {sorted(unknown)}")
        return v


class PhraseFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    turn: dict[str, str | list[str]]
    chat: dict[str, str | list[str]]
    hint: dict[str, str | list[str]]
    words: Words
    vocabulary: Vocabulary


class Phrases:
    """Renders lines by group and key; alternatives rotate with ``index``."""

    def __init__(self, data: PhraseFile) -> None:
        self.data = data
        env = Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)
        env.filters["a"] = with_article  # "an airplane", "a house"
        self._templates: dict[tuple[str, str], list[Template]] = {}
        for group in ("turn", "chat", "hint"):
            for key, value in getattr(data, group).items():
                items = value if isinstance(value, list) else [value]
                self._templates[(group, key)] = [env.from_string(t) for t in items]
        self.words = data.words
        self.vocabulary = data.vocabulary

    def raw(self, group: str, key: str, index: int = 0, **values: Any) -> str:
        """The rendered text without trimming (for prefixes and suffixes)."""
        options = self._templates[(group, key)]
        return options[index % len(options)].render(**values)

    def say(self, group: str, key: str, index: int = 0, **values: Any) -> str:
        return clean_chat_text(self.raw(group, key, index, **values), MAX_LINE_CHARS)

    def keys(self, group: str) -> list[str]:
        return [k for g, k in self._templates if g == group]


def with_article(word: object) -> str:
    text = str(word)
    return ("an " if text[:1].lower() in "aeiou" else "a ") + text


@functools.lru_cache(maxsize=4)
def _load(path: Path) -> Phrases:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return Phrases(PhraseFile.model_validate(data))


def load_phrases(path: str | Path | None = None) -> Phrases:
    return _load(Path(path or PHRASES_PATH).resolve())
