"""Meanings declared in one entry each (``words/meanings.yaml``): the phrases that say a meaning in
every language the partner is answered in, and its reply in each. A line holding one of a
meaning's phrases is that meaning (:meth:`Meanings.match`); its reply joins the chat lines of each
language (:mod:`.phrases`), under the meaning's name. Loading checks that every meaning has every
language, so a meaning in one language only stops the start."""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2
import jinja2.nodes
import yaml
from pydantic import BaseModel, ConfigDict, model_validator

from agent.core.config import UniqueKeys
from agent.games.tangram.dialogue.language import LANGUAGES, WordsFile, fold

MEANINGS_PATH = Path(__file__).resolve().parent / "words" / "meanings.yaml"


class Meaning(BaseModel):
    model_config = ConfigDict(extra="forbid")
    about: str
    """What the partner means (for the reader: the docs and the tables)."""
    says: dict[str, list[str]]
    """Phrases that say it, by language."""
    alone: dict[str, list[str]] = {}
    """Phrases that say it only as the whole line ("hmm"), by language (none, or every language)."""
    reply: dict[str, str]
    """Its reply, by language (a template of the chat lines' variables)."""
    resumes_play: bool = False
    """Whether it asks the agent to play again after "leave the rest to me" ("your turn")."""


class MeaningFile(WordsFile):
    meanings: dict[str, Meaning]

    @model_validator(mode="after")
    def _every_language(self) -> MeaningFile:
        for name, meaning in self.meanings.items():
            for field in ("says", "reply", "alone"):
                values = getattr(meaning, field)
                if field == "alone" and not values:
                    continue
                missing = [lang for lang in self.languages if not values.get(lang)]
                extra = sorted(set(values) - set(self.languages))
                if missing or extra:
                    raise ValueError(f"meaning {name!r}: {field} lacks {missing}, unknown languages {extra}")
            said = [*meaning.says.values(), *meaning.alone.values()]
            if any(not fold(p) for phrases in said for p in phrases):
                raise ValueError(f"meaning {name!r}: an empty phrase")
        return self


class Meanings:
    """The declared meanings: which one a line says, and each one's reply by language."""

    def __init__(self, data: MeaningFile) -> None:
        self.data = data
        self._phrases: list[tuple[str, str]] = [
            (name, f" {fold(p)} ") for name, m in data.meanings.items() for ps in m.says.values() for p in ps]
        self._alone: dict[str, str] = {
            fold(p): name for name, m in data.meanings.items() for ps in m.alone.values() for p in ps}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.data.meanings)

    def match(self, line: str) -> str | None:
        """The meaning ``line`` is as a whole (its ``alone`` phrases), else the first meaning (in the
        file's order) one of whose phrases ``line`` holds, as whole words."""
        folded = f" {fold(line)} "
        alone = self._alone.get(folded.strip())
        return alone or next((name for name, phrase in self._phrases if phrase in folded), None)

    @functools.cached_property
    def variables(self) -> dict[str, frozenset[str]]:
        """The variables each meaning's replies use (in any language): a costly one (``next``) is
        worked out only for a reply that says it."""
        env = jinja2.Environment()
        return {name: frozenset(node.name for text in m.reply.values()
                                for node in env.parse(text).find_all(jinja2.nodes.Name) if node.ctx == "load")
                for name, m in self.data.meanings.items()}

    @functools.cached_property
    def resuming(self) -> frozenset[str]:
        """The meanings that ask the agent to play again (``resumes_play``)."""
        return frozenset(name for name, m in self.data.meanings.items() if m.resumes_play)

    def replies(self, lang: str) -> dict[str, str]:
        """Each meaning's reply in ``lang`` (the game's own language where it has none)."""
        return {name: m.reply.get(lang) or m.reply[LANGUAGES[0]] for name, m in self.data.meanings.items()}


@functools.lru_cache(maxsize=4)
def _load(path: Path) -> Meanings:
    return Meanings(MeaningFile.model_validate(yaml.load(path.read_text(encoding="utf-8"), Loader=UniqueKeys)))


def load_meanings(path: str | Path | None = None) -> Meanings:
    """The meanings of ``path`` (default: the shipped ``words/meanings.yaml``); ValueError when one
    lacks a language."""
    return _load(Path(path or MEANINGS_PATH).resolve())
