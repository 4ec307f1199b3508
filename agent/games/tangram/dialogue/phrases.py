"""The planner's wording, read from ``phrases.yaml`` (English: the lines and the words it understands)
and ``phrases.<lang>.yaml`` (the same lines in another language, with the names of the pieces and a
glossary of the figures' and parts' English words that its templates translate with filters)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml
from jinja2 import Environment, StrictUndefined, Template
from pydantic import BaseModel, ConfigDict, field_validator

from agent.core.config import UniqueKeys
from agent.games.tangram.dialogue.meanings import load_meanings
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.geometry.relations import RELATION_DOCS
from agent.games.tangram.protocol import PARTNER_LINE_CHARS, clean_chat_text

PHRASES_PATH = Path(__file__).resolve().parent / "words" / "phrases.yaml"
LANGUAGE_PATH = Path(__file__).resolve().parent / "words" / "phrases.{lang}.yaml"


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
    sides: dict[str, list[str]] = {}
    """A side of another piece said in one word ("i meant under", "beside ..., left side"), by relation
    of the geometry engine."""

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


class LanguagePhraseFile(BaseModel):
    """The lines in another language: every ``turn`` and ``chat`` key of the English file."""

    model_config = ConfigDict(extra="forbid")
    names: dict[str, str]
    """Each piece's name in the language (Red -> "o triângulo vermelho"), for the ``name`` filter."""
    terms: dict[str, str]
    """English words and phrases of figures, parts, places and directions with their translation,
    for the ``term`` filter (longest phrase first, word by word for the rest)."""
    feminine: list[str] = []
    """Translated words that take the feminine article (filters ``um`` and ``o``)."""
    modifiers: list[str] = []
    """English words that qualify a part ("upper", "left"): put after the noun, as the language does."""
    feminine_forms: dict[str, str] = {}
    """A translated modifier's form after a feminine noun ("direito" -> "direita")."""
    turn: dict[str, str | list[str]]
    chat: dict[str, str | list[str]]

    @field_validator("names")
    @classmethod
    def _all_names(cls, v: dict[str, str]) -> dict[str, str]:
        if set(v) != set(PIECE_NAMES):
            raise ValueError("names must name each of the seven pieces")
        return v


class Phrases:
    """Renders lines by group and key; alternatives rotate with ``index``. ``lang`` is the
    language of the lines; one in another language than English (``translation``) keeps the
    English file's words and vocabulary (the understanding) and hints (for the LLM's prompt)."""

    def __init__(self, data: PhraseFile, translation: LanguagePhraseFile | None = None, lang: str = "en",
                 declared: dict[str, str] | None = None) -> None:
        self.data = data
        self.lang = lang
        env = Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)
        env.filters["a"] = with_article  # "an airplane", "a house"
        names = translation.names if translation else {}
        self.names = names
        """Each piece's name in this language (empty: the game's own names)."""
        terms = Glossary(translation.terms if translation else {}, translation.feminine if translation else [],
                         translation.modifiers if translation else [],
                         translation.feminine_forms if translation else {})
        self.glossary = terms
        """The figures' and parts' words in this language (the filters ``term``, ``um``, ``o``)."""
        env.filters["name"] = lambda piece: names.get(str(piece), str(piece))
        env.filters["term"] = terms.translate
        env.filters["um"] = terms.indefinite
        env.filters["o"] = terms.definite
        env.filters["completo"] = terms.complete
        self._templates: dict[tuple[str, str], list[Template]] = {}
        groups = {"turn": data.turn, "chat": data.chat, "hint": data.hint}
        if translation is not None:
            groups.update(turn=translation.turn, chat=translation.chat)
        # The declared meanings' replies (words/meanings.yaml) are chat lines under their names.
        taken = sorted(set(declared or {}) & set(groups["chat"]))
        if taken:
            raise ValueError(f"meanings.yaml declares meanings named as chat lines: {', '.join(taken)}")
        groups["chat"] = {**groups["chat"], **(declared or {})}
        for group, lines in groups.items():
            for key, value in lines.items():
                items = value if isinstance(value, list) else [value]
                self._templates[(group, key)] = [env.from_string(t) for t in items]
        self.words = data.words
        self.vocabulary = data.vocabulary

    def raw(self, group: str, key: str, index: int = 0, **values: Any) -> str:
        """The rendered text without trimming (for prefixes and suffixes)."""
        options = self._templates[(group, key)]
        return options[index % len(options)].render(**values)

    def say(self, group: str, key: str, index: int = 0, **values: Any) -> str:
        return clean_chat_text(self.raw(group, key, index, **values), PARTNER_LINE_CHARS)

    def keys(self, group: str) -> list[str]:
        return [k for g, k in self._templates if g == group]


class Glossary:
    """English words of figures and parts put into another language, phrase first, then by word."""

    def __init__(self, terms: dict[str, str], feminine: list[str], modifiers: list[str],
                 feminine_forms: dict[str, str]) -> None:
        self._terms = {k.lower(): v for k, v in terms.items()}
        self._longest = max((len(k.split()) for k in self._terms), default=0)
        self._feminine = frozenset(feminine)
        self._modifiers = frozenset(modifiers)
        self._feminine_forms = feminine_forms
        self._values = frozenset(self._terms.values())

    def translate(self, text: object) -> str:
        """A phrase the glossary has, whole; else a part's name noun first: "upper tail root" ->
        "raiz de cauda superior" (its nouns in reverse order joined by "de", its modifiers after)."""
        words = str(text).split()
        if not self._terms:
            return " ".join(words)
        whole = self._terms.get(" ".join(words).lower())
        if whole is not None:
            return whole
        if "of" in words:  # "side of the roof": the same order in the language
            return self._words(" ".join(words))
        mods = [w for w in words if w.lower() in self._modifiers]
        nouns = [w for w in words if w.lower() not in self._modifiers]
        if mods and nouns:
            head = " de ".join(self._words(n) for n in reversed(nouns))
            qualities = [self._words(m) for m in mods]
            if self._female(head):
                qualities = [self._feminine_forms.get(q, q) for q in qualities]
            if self._plural(head):
                qualities = [_plural_of(q) for q in qualities]
            return " ".join([head, *qualities])
        if len(nouns) > 1 and all(n.lower() in self._terms for n in nouns):
            return " de ".join(self._words(n) for n in reversed(nouns))
        return self._words(" ".join(words))

    def _words(self, text: str) -> str:
        words = text.split()
        out: list[str] = []
        i = 0
        while i < len(words):
            for n in range(min(self._longest, len(words) - i), 0, -1):
                found = self._terms.get(" ".join(words[i:i + n]).lower())
                if found is not None:
                    out.append(found)
                    i += n
                    break
            else:
                out.append(words[i])
                i += 1
        return " ".join(w for w in out if w)

    def _plural(self, translated: str) -> bool:
        """A known word of the language ending in -s is a plural ("patas", "olhos"): none of the
        glossary's singular nouns ends so."""
        head = translated.split(" ", 1)[0]
        return head.endswith("s") and head in self._values

    def _female(self, translated: str) -> bool:
        """Listed as feminine (a plural by its singular); a word the glossary does not know, by its
        ending ("guitarra")."""
        head = translated.split(" ", 1)[0]
        if self._plural(head):
            head = head[:-1]
        known = head in self._feminine or head in self._values
        return head in self._feminine or (bool(self._terms) and not known and head.endswith(("a", "ção", "dade")))

    def indefinite(self, text: object) -> str:
        if str(text).split()[:1] and str(text).split()[0].lower() in _INDEFINITE:  # the partner's own "uma igreja"
            return str(text)
        word = self.translate(text)
        article = ("umas" if self._plural(word) else "uma") if self._female(word) else \
            ("uns" if self._plural(word) else "um")
        return f"{article} {word}"

    def complete(self, text: object) -> str:
        """"completo" / "completa" (plural: "completos" / "completas"), agreeing with ``text``."""
        word = self.translate(text)
        return ("completa" if self._female(word) else "completo") + ("s" if self._plural(word) else "")

    def definite(self, text: object) -> str:
        word = self.translate(text)
        return ("a" if self._female(word) else "o") + ("s" if self._plural(word) else "") + " " + word


_INDEFINITE = frozenset({"um", "uma", "uns", "umas"})


def _plural_of(adjective: str) -> str:
    """A Portuguese adjective's plural ("traseira" -> "traseiras", "superior" -> "superiores",
    "dorsal" -> "dorsais"); a phrase ("da frente") is left as it is."""
    if " " in adjective:
        return adjective
    if adjective.endswith("al"):
        return adjective[:-1] + "is"
    if adjective.endswith(("r", "z")):
        return adjective + "es"
    return adjective + "s"


def with_article(word: object) -> str:
    text = str(word)
    return ("an " if text[:1].lower() in "aeiou" else "a ") + text


@functools.lru_cache(maxsize=8)
def _load(path: Path, lang: str) -> Phrases:
    data = PhraseFile.model_validate(yaml.load(path.read_text(encoding="utf-8"), Loader=UniqueKeys))
    declared = load_meanings().replies(lang)
    if lang == "en":
        return Phrases(data, declared=declared)
    other = Path(str(LANGUAGE_PATH).format(lang=lang))
    translation = LanguagePhraseFile.model_validate(yaml.load(other.read_text(encoding="utf-8"), Loader=UniqueKeys))
    missing = [f"{g}.{k}" for g in ("turn", "chat") for k in getattr(data, g) if k not in getattr(translation, g)]
    if missing:
        raise ValueError(f"{other.name} lacks lines the English file has: {', '.join(missing)}")
    return Phrases(data, translation, lang, declared)


def load_phrases(path: str | Path | None = None, lang: str = "en") -> Phrases:
    """The planner's lines in ``lang`` ("en", or a language with a ``phrases.<lang>.yaml``)."""
    return _load(Path(path or PHRASES_PATH).resolve(), lang)
