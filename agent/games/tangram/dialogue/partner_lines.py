"""The partner's lines that are not the offline planner's phrases (``words/partner_lines.yaml``):
each line once, with its words in every language the agent answers in. Loading checks that every
line has every language and renders (StrictUndefined), so a line in one language only stops the
start, not a participant's game. Rendering is pure (templates made once, cached)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml
from jinja2 import Environment, StrictUndefined, Template
from pydantic import model_validator

from agent.core.config import UniqueKeys
from agent.games.tangram.dialogue.language import LANGUAGES, WordsFile
from agent.games.tangram.protocol import clean_chat_text

WORDS_DIR = Path(__file__).resolve().parent / "words"
LINES_PATH = WORDS_DIR / "partner_lines.yaml"
MAX_LINE_CHARS = 300
"""A line is clipped to this: the game's chat box, not a paragraph."""


class PartnerLineFile(WordsFile):
    lines: dict[str, dict[str, str]]

    @model_validator(mode="after")
    def _every_language(self) -> PartnerLineFile:
        for key, words in self.lines.items():
            missing = [lang for lang in self.languages if not (words.get(lang) or "").strip()]
            extra = sorted(set(words) - set(self.languages))
            if missing or extra:
                raise ValueError(f"line {key!r}: missing {missing}, unknown languages {extra}")
        return self


class PartnerLines:
    """Renders a line by key in a language (the game's own for a language the lines lack). A line
    says a piece or a part in its language with the filters of the planner's lines: ``name`` (Green
    -> "o triângulo verde"), ``o`` / ``um`` / ``term`` (tail -> "a cauda"), from ``phrases.<lang>.yaml``."""

    def __init__(self, data: PartnerLineFile) -> None:
        envs = {lang: _environment(lang) for lang in data.languages}
        self._templates: dict[tuple[str, str], Template] = {
            (key, lang): envs[lang].from_string(text) for key, words in data.lines.items()
            for lang, text in words.items()}
        self.keys = tuple(data.lines)

    def __call__(self, key: str, lang: str = LANGUAGES[0], /, **values: Any) -> str:
        template = self._templates.get((key, lang)) or self._templates[(key, LANGUAGES[0])]
        return clean_chat_text(template.render(**values), MAX_LINE_CHARS)


def _environment(lang: str) -> Environment:
    """A template environment whose filters put pieces and parts into ``lang`` (read when first used:
    the planner's lines load the partner lines' languages, not the other way round)."""
    env = Environment(undefined=StrictUndefined, autoescape=False)

    def phrases() -> Any:
        from agent.games.tangram.dialogue.phrases import load_phrases

        return load_phrases(lang=lang)

    env.filters["name"] = lambda piece: phrases().names.get(str(piece), str(piece))
    env.filters["term"] = lambda text: phrases().glossary.translate(text)
    env.filters["o"] = lambda text: phrases().glossary.definite(text)
    env.filters["um"] = lambda text: phrases().glossary.indefinite(text)
    return env


@functools.lru_cache(maxsize=4)
def _load(path: Path) -> PartnerLines:
    return PartnerLines(PartnerLineFile.model_validate(yaml.load(path.read_text(encoding="utf-8"), Loader=UniqueKeys)))


def load_partner_lines(path: str | Path | None = None) -> PartnerLines:
    """The lines of ``path`` (default: the shipped ``words/partner_lines.yaml``); ValueError when one
    lacks a language."""
    return _load(Path(path or LINES_PATH).resolve())


def partner_line(key: str, lang: str = LANGUAGES[0], /, **values: Any) -> str:
    """One shipped line in ``lang``."""
    return load_partner_lines()(key, lang, **values)


def line_language(message: str) -> str:
    """The language a reply to ``message`` is said in: one of :data:`LANGUAGES` (the offline chat's
    reading of the line), the game's own for any other (CPU work: the first call loads dictionaries)."""
    from agent.games.tangram.dialogue.language import load_languages

    lang = load_languages().detect(message)
    return lang if lang in LANGUAGES else LANGUAGES[0]
