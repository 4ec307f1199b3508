"""Which language a chat line is in, and a Portuguese line read as English.

English and Portuguese are answered (``languages.yaml``: ``answered``). A line is Portuguese when
more of its words are Portuguese markers than English words, or when the language identifier
(py3langid, its model inside the wheel) is sure of it; another language the same way, from its
markers or the identifier. Short lines without markers ("ok", "lol", an emoji) count as English.

A line with neither markers nor English words is Portuguese when the Portuguese dictionary knows
one of its words ("agradeço").

A Portuguese line is understood through its gloss: chat abbreviations written out ("n toques no q
eu pus" -> "nao toques no que eu pus"), accents folded, its words and phrases replaced (longest
first) by their English meaning in the planner's vocabulary, then read like English. A word with no
gloss of its own is read by its lemma (simplemma's Portuguese dictionary, inside its wheel): any
form of a verb the gloss has in the infinitive ("metes", "ponham", "puseste", "toques" -> meter,
pôr, tocar), a diminutive or a plural the same way; a misspelt word by the nearest gloss.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, field_validator
from rapidfuzz import fuzz, process
from wordnet_lookup import is_wordnet_term

from agent.core.config import UniqueKeys
from agent.games.tangram.planner.matching import STOPWORDS

LANGUAGES_PATH = Path(__file__).resolve().parent / "words" / "languages.yaml"
DEFAULT = "en"
UNKNOWN = "und"
"""A line in some language neither answered nor told apart (ISO 639-2's "undetermined")."""
_FOREIGN_LETTERS = frozenset("ąęłńśźżćřěůčšžďťňőűşğıøåæßäöëïÿñœ")
"""Letters of other Latin alphabets that neither English nor Portuguese writes."""
LANGUAGES = ("en", "pt")
"""The languages the partner's every line is written in; the first is the game's own (the default)."""


class WordsFile(BaseModel):
    """A words file written in every one of :data:`LANGUAGES`, which its ``languages`` names."""

    model_config = ConfigDict(extra="forbid")
    languages: list[str]

    @field_validator("languages")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        if tuple(v) != LANGUAGES:
            raise ValueError(f"languages must be {list(LANGUAGES)}")
        return v


IDENTIFIER_LANGUAGES = ("en", "pt", "es", "fr", "de", "it", "nl", "pl", "ro", "sv", "da", "cs", "tr")
"""The languages the identifier chooses among (fewer choices: fewer wild guesses on short lines)."""
TYPO_SCORE = 84.0
"""How like a glossed Portuguese word (rapidfuzz's ratio) an unknown word must be to be read as it."""
PIECE_TYPO_SCORE = 80.0
"""The same, for a word of a piece's colour or shape: one letter wrong in five ("verdd")."""
TYPO_MIN_LETTERS = 5
IDENTIFIER_MIN_WORDS = 3
IDENTIFIER_CONFIDENCE = 0.9
IDENTIFIER_CERTAIN = 0.99
MAX_CHARS = 400
_WORD = re.compile(r"[a-z0-9]+")
_SHORT_WORD = re.compile(r"[A-Za-z]+")
_SPELT = re.compile(r"[^\W_]+")
_PIECES = frozenset({"red", "cream", "blue", "green", "yellow", "purple", "brown"})
_PIECE_WORDS = _PIECES | {"square", "triangle", "parallelogram", "small", "large", "big", "medium"}


class LanguageFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answered: list[str]
    symbols: dict[str, str]
    markers: dict[str, list[str]]
    other_language: dict[str, str]
    whole: dict[str, str]
    gloss: dict[str, str]
    shorthand: dict[str, str] = {}
    """English chat shorthand, one word each ("r" -> "are", "u" -> "you"), read as the words."""
    neutral: list[str] = []
    """Words of no language ("ok", "lol"): they count neither as English nor as a marker."""
    informal: dict[str, str] = {}
    """Portuguese chat abbreviations, one word each ("q" -> "que", "n" -> "nao"), written out
    before the gloss."""
    greetings: list[str] = []
    """Portuguese greetings a line may open with ("oi!", "bom dia,"), set apart from what it asks."""
    interjections: list[str] = []
    """Greetings that are also calls for attention ("hey", "ei"): a greeting only when set apart by
    punctuation ("hey, who starts?"; not "hey that's my piece")."""


def fold(text: str) -> str:
    """Lower case, accents off, apostrophes dropped, only letters and digits as words."""
    text = unicodedata.normalize("NFKD", text[:MAX_CHARS].lower().replace("'", "").replace("\u2019", ""))
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return " ".join(_WORD.findall(text))


@dataclass(frozen=True)
class Languages:
    data: LanguageFile

    @functools.cached_property
    def _markers(self) -> dict[str, frozenset[str]]:
        return {lang: frozenset(fold(w) for w in words) for lang, words in self.data.markers.items()}

    @functools.cached_property
    def _neutral(self) -> frozenset[str]:
        return frozenset(fold(w) for w in self.data.neutral)

    @functools.cached_property
    def _not_portuguese(self) -> frozenset[str]:
        """Words the Portuguese dictionary may know that tell no Portuguese: neutral words and
        English chat shorthand ("sorta")."""
        return self._neutral | frozenset(fold(w) for w in self.data.shorthand)

    @functools.cached_property
    def interjections(self) -> frozenset[str]:
        """The greetings that greet only when set apart, folded."""
        return frozenset(fold(g) for g in self.data.interjections)

    @functools.cached_property
    def greetings(self) -> frozenset[str]:
        """The Portuguese greetings, folded."""
        return frozenset(fold(g) for g in self.data.greetings)

    @functools.cached_property
    def _gloss(self) -> list[tuple[list[str], list[str]]]:
        pairs = [(fold(k).split(), fold(v).split()) for k, v in self.data.gloss.items()]
        return sorted(pairs, key=lambda kv: -len(kv[0]))

    @functools.cached_property
    def _gloss_keys(self) -> frozenset[str]:
        """The words a gloss starts with."""
        return frozenset(src[0] for src, _ in self._gloss)

    @functools.cached_property
    def _gloss_single(self) -> frozenset[str]:
        """The words glossed alone."""
        return frozenset(src[0] for src, _ in self._gloss if len(src) == 1)

    @functools.cached_property
    def _informal(self) -> dict[str, tuple[list[str], list[str]]]:
        """Each abbreviation (folded) -> its words folded and as spelt."""
        return {fold(k): (fold(v).split(), v.lower().split()) for k, v in self.data.informal.items()}

    @functools.cached_property
    def _gloss_words(self) -> dict[str, list[str]]:
        """The one-word glosses, for reading a misspelt word ("quadardo")."""
        return {src[0]: dst for src, dst in self._gloss if len(src) == 1 and len(src[0]) >= TYPO_MIN_LETTERS}

    @functools.cached_property
    def _piece_words(self) -> dict[str, list[str]]:
        """The one-word glosses of the pieces' colours and shapes ("verde", "quadrado"): a typo of one
        is read a little more loosely ("verdd"), a piece named being what most chat lines are about."""
        return {w: dst for w, dst in self._gloss_words.items() if len(dst) == 1 and dst[0] in _PIECE_WORDS}

    def detect(self, text: str) -> str:
        """The language of ``text``: "en", "pt", another ISO 639-1 code, English when unsure."""
        words = fold(text).split()
        if not words:
            return DEFAULT
        neutral = self._neutral
        english = sum(1 for w in words if _english_word(w) and w not in neutral)
        counts = {lang: sum(1 for w in words if w in marks) for lang, marks in self._markers.items()}
        if counts.get("pt"):  # "a", "as", "no", "do" are Portuguese words too: in a Portuguese line, no English
            english -= sum(1 for w in words if w in self._gloss_single and w in STOPWORDS and w not in neutral)
        if not english and not any(counts.values()):  # a misspelt marker ("obrigadoo")
            for lang, marks in self._markers.items():
                counts[lang] = sum(1 for w in words if len(w) >= TYPO_MIN_LETTERS and process.extractOne(
                    w, marks, scorer=fuzz.ratio, score_cutoff=TYPO_SCORE) is not None)
        if not any(n for lang, n in counts.items() if lang != "pt"):
            # A word of the Portuguese dictionary that is no English word counts as a Portuguese
            # marker when no other language's marker is there ("ok ok percebido").
            counts["pt"] = counts.get("pt", 0) + sum(
                1 for w in _SPELT.findall(text[:MAX_CHARS].lower()) if len(w) >= TYPO_MIN_LETTERS - 1
                and fold(w) not in self._markers.get("pt", frozenset()) and fold(w) not in self._not_portuguese
                and not _english_word(fold(w)) and _known_pt(w))
        identified = functools.cache(lambda: _identifier().classify(text[:MAX_CHARS]))  # once, if at all
        # Words shared by several languages (casa, gira) count for each; the identifier breaks ties.
        best = max(counts, key=lambda k: (counts[k], k == "pt"))
        ranked = sorted(counts.values(), reverse=True)
        sure_marker = counts[best] > english and (len(ranked) < 2 or counts[best] > ranked[1])
        if counts.get("pt", 0) >= 3 and 2 * counts["pt"] >= len(words) and len(words) >= IDENTIFIER_MIN_WORDS:
            # Portuguese words that are English words too ("mete uma das grandes"): the identifier decides.
            lang, p = identified()
            if lang == "pt" and p >= IDENTIFIER_CONFIDENCE:
                return "pt"
        if len(words) >= IDENTIFIER_MIN_WORDS and max(counts.values(), default=0) >= 3:
            # Words another language shares with English ("on commence par les grandes pièces"): the
            # identifier, when it is all but certain and that language's markers agree.
            lang, p = identified()
            if lang != DEFAULT and p >= IDENTIFIER_CERTAIN and counts.get(lang, 0) >= 3:
                return str(lang)
        if len(words) >= IDENTIFIER_MIN_WORDS and english < 0.8 * len(words):
            lang, p = identified()
            # The identifier decides unless the markers clearly say another language (it takes
            # short European Portuguese for Spanish: "o que estamos a construir").
            markers_agree = not sure_marker or counts.get(lang, 0) >= counts[best]
            if p >= IDENTIFIER_CONFIDENCE and lang != DEFAULT and markers_agree:
                return str(lang)
            if p >= IDENTIFIER_CONFIDENCE and lang == DEFAULT and not sure_marker:
                return DEFAULT
        if sure_marker:
            return best
        if counts.get("pt", 0) and counts["pt"] >= english and counts["pt"] == ranked[0]:
            return "pt"
        if not english and not any(counts.values()) and any(
                len(w) >= TYPO_MIN_LETTERS - 1 and fold(w) not in self._not_portuguese and _known_pt(w)
                for w in _SPELT.findall(text[:MAX_CHARS].lower())):
            return "pt"  # no marker, no English word, but a word of the Portuguese dictionary ("agradeço")
        if not english and not any(counts.values()) and self._foreign(text):
            return UNKNOWN
        return DEFAULT

    def _foreign(self, text: str) -> bool:
        """Whether a line with no English word and no marker is in some other language: it has a
        letter neither English nor Portuguese writes ("dziękuję", "teşekkürler"), or none of its
        words is known here, even misspelt ("hvala", "dank je wel"), and one has four letters or more."""
        spelt = [w for w in _SPELT.findall(text[:MAX_CHARS].lower()) if not w.isdigit()]
        if not spelt:
            return False
        if any(ch in _FOREIGN_LETTERS for w in spelt for ch in w):
            return True
        words = [fold(w) for w in spelt]
        known = self._known_words
        if not any(len(w) >= TYPO_MIN_LETTERS - 1 for w in words):
            return False
        if any(sum(ch in "aeiouy" for ch in w) < 0.3 * len(w) for w in words if len(w) >= TYPO_MIN_LETTERS - 1):
            return False  # no language's words: a keyboard mash ("asdfgh")
        return not any(w in known or _known_pt(raw) or (len(w) >= TYPO_MIN_LETTERS - 1 and process.extractOne(
            w, known, scorer=fuzz.ratio, score_cutoff=TYPO_SCORE - 4) is not None) for w, raw in zip(words, spelt,
                                                                                                    strict=True))

    @functools.cached_property
    def _known_words(self) -> frozenset[str]:
        """Every word this file knows in English or Portuguese: glosses both ways, shorthand, markers."""
        d = self.data
        phrases = [*d.gloss, *d.gloss.values(), *d.shorthand, *d.shorthand.values(), *d.informal,
                   *d.informal.values(), *d.whole, *d.whole.values(), *d.neutral, *d.symbols.values(),
                   *d.markers.get("pt", [])]
        return frozenset(w for p in phrases for w in fold(p).split())

    def plain(self, text: str, words: bool = True) -> str:
        """``text`` with its emoji and symbols written as the English words they stand for (or
        dropped, ``words=False``: what is left tells the language)."""
        text = text[:MAX_CHARS]
        for symbol, meaning in self.data.symbols.items():
            if symbol in text:
                text = text.replace(symbol, meaning if words else " ")
        return text

    def expand(self, text: str) -> str:
        """An English line with its chat shorthand written out ("r we done" -> "are we done") and
        dropped g's put back ("makin" -> "making")."""
        short = self.data.shorthand

        def word(m: re.Match[str]) -> str:
            w = m.group(0)
            low = w.lower()
            if low in short:
                return short[low]
            if len(low) >= 4 and low.endswith("in") and not _english_word(low) and _english_word(low + "g"):
                return w + "g"
            return w

        return _SHORT_WORD.sub(word, text)

    def spelt_out(self, text: str) -> str:
        """``text`` folded, with chat abbreviations and shorthand written out ("isto demora mt" -> "isto
        demora muito", "r we done" -> "are we done")."""
        return " ".join(self._written_out(self.expand(text))[0])

    def answered(self, lang: str) -> bool:
        return lang in self.data.answered

    def gloss(self, text: str) -> str:
        """A Portuguese line in the planner's English words ("podes rodar o quadrado" -> "can you
        rotate the square"); words without a gloss stay as they are."""
        folded = fold(text)
        if folded in self.data.whole:
            return self.data.whole[folded]
        words, spelt = self._written_out(text)
        out: list[str] = []
        i = 0
        while i < len(words):
            match = self._match(words, i)
            if match is None and words[i] not in self._gloss_single:
                lemma = fold(_lemma(spelt[i]))
                if lemma != words[i] and lemma in self._gloss_keys:
                    match = self._match([*words[:i], lemma, *words[i + 1:]], i)
            if match is not None:
                out += match[1]
                i += match[0]
            else:
                out += self._misspelt(words[i])
                i += 1
        return " ".join(out)

    def _match(self, words: list[str], i: int) -> tuple[int, list[str]] | None:
        """The longest gloss phrase at ``words[i]``: how many words it takes and its English."""
        for src, dst in self._gloss:
            if words[i:i + len(src)] == src:
                return len(src), dst
        return None

    def _written_out(self, text: str) -> tuple[list[str], list[str]]:
        """The line's words folded and as spelt (accents kept, for the lemmatizer), with chat
        abbreviations written out."""
        spelt = _SPELT.findall(text[:MAX_CHARS].lower().replace("'", "").replace("\u2019", ""))
        pairs = [(fold(w), w) for w in spelt]
        if any(len(f.split()) != 1 for f, _ in pairs):  # a symbol folded away or apart: no accents
            pairs = [(w, w) for w in fold(text).split()]
        words: list[str] = []
        kept: list[str] = []
        for folded, word in pairs:
            full = self._informal.get(folded)
            words += full[0] if full else [folded]
            kept += full[1] if full else [word]
        return words, kept

    def _misspelt(self, word: str) -> list[str]:
        if len(word) < TYPO_MIN_LETTERS or _english_word(word):
            return [word]
        close = process.extractOne(word, list(self._gloss_words), scorer=fuzz.ratio, score_cutoff=TYPO_SCORE)
        if close:
            return self._gloss_words[close[0]]
        piece = process.extractOne(word, list(self._piece_words), scorer=fuzz.ratio, score_cutoff=PIECE_TYPO_SCORE)
        return self._piece_words[piece[0]] if piece else [word]

    def other_language_line(self, lang: str) -> str:
        lines = self.data.other_language
        return lines.get(lang, lines["default"])


def _english_word(word: str) -> bool:
    return word in STOPWORDS or word in _PIECES or (len(word) > 2 and is_wordnet_term(word))


@functools.lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    ident.set_languages(list(IDENTIFIER_LANGUAGES))
    return ident


@functools.lru_cache(maxsize=1)
def _lemmatizer() -> Any:
    """simplemma's lemmatizer on its memory-frugal dictionaries (the Portuguese one: 17 MB in memory,
    loaded in 0.4 s; the default backend takes 160 MB)."""
    from simplemma import Lemmatizer
    from simplemma.strategies import DefaultStrategy

    return Lemmatizer(lemmatization_strategy=DefaultStrategy(low_memory=True))


@functools.lru_cache(maxsize=8192)
def _known_pt(word: str) -> bool:
    """Whether the Portuguese dictionary knows ``word`` (as spelt, accents kept)."""
    from simplemma import is_known

    return bool(is_known(word, "pt", low_memory=True))


@functools.lru_cache(maxsize=8192)
def _lemma(word: str) -> str:
    """The Portuguese lemma of ``word`` (itself when the dictionary does not know it)."""
    return str(_lemmatizer().lemmatize(word, "pt"))


@functools.lru_cache(maxsize=2)
def _load(path: Path) -> Languages:
    return Languages(LanguageFile.model_validate(yaml.load(path.read_text(encoding="utf-8"), Loader=UniqueKeys)))


def load_languages(path: str | Path | None = None) -> Languages:
    return _load(Path(path or LANGUAGES_PATH).resolve())
