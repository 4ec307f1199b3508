"""Which figure a free-text objective names: "a bird flying", "kitty", "a man on a chair".

Offline, deterministic and fast (well under a millisecond per text once the library's index is
built). The figure files are the lexicon: a figure's name and ``aliases`` name it, its ``related``
words are things it can stand in for ("tiger" -> cat), and its ``traits`` pick it among figures of
one kind ("a man *sitting*" -> the sitting person, a kind of human). Words are compared as lemmas
(plurals and a few irregular forms folded), and a word the library does not know is tried as a
typo of one it does.

How a text is read, in order:

1. Every phrase of the library found in the text. A figure is *named* by its name or an alias, and
   a figure whose ``kind_of`` is named ("man" names the human) is named too when one of its traits
   is in the text. Of the named figures the one with most traits wins, then the one named first
   ("a man with a hat" is a man), then the longest phrase; a name followed at once by another is
   a compound's modifier, and the last name its head ("a tree house", "a cat lady"), unless that
   is a depiction ("a dog doll").
2. Else a text made only of traits ("sitting") names the figure with most traits.
3. Else the first related word ("a tiger" -> cat, "a cow" -> horse), then typos of aliases
   and related words. Related words are the library's small hand-made thesaurus: the figure files
   list, for each figure, the things it is the nearest stand-in for. Only a word that is not an
   English word is read as a typo: WordNet's list of 88,000 words (shipped inside the
   ``wordnet-lookup`` package, no download) says that "stove" is a word, not a typo of "store",
   and that "brid" is not a word, so it may be "bird".
4. Else nothing fits, and the caller builds its default figure and says so.

We found no package on PyPI that ships WordNet's relations (synonyms, hypernyms) inside its wheel:
``wn``, ``nltk`` and ``textblob`` download them at run time, which the agent may not do, and the
packages that do ship a thesaurus (Moby's) are too loose to pick a figure ("pipe" lists "crow").
So the semantic part is the figure files' own related words, a hand-made thesaurus.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from wordnet_lookup import is_wordnet_term

from agent.games.tangram.planner.library import FALLBACK_FIGURE, Figure, FigureLibrary, load_library, normalize_text

MatchKind = Literal["exact", "related", "none"]

_IRREGULAR = {
    "men": "man", "women": "woman", "people": "person", "persons": "person", "children": "child",
    "geese": "goose", "mice": "mouse", "feet": "foot", "teeth": "tooth", "knives": "knife", "wolves": "wolf",
    "leaves": "leaf", "fishes": "fish", "ladies": "lady", "oxen": "ox", "halves": "half", "selves": "self",
    "wives": "wife", "elves": "elf", "dwarves": "dwarf", "axes": "axe", "dice": "die", "cacti": "cactus",
}
_AUX = frozenset({"am", "is", "are", "was", "were", "be", "been", "we", "you", "i", "they", "he", "she", "it"})
_KEEP_S = ("ss", "us", "is", "ous", "ics")
STOPWORDS = frozenset(w for line in (Path(__file__).resolve().parent / "stopwords.txt").read_text(encoding="utf-8")
                      .splitlines() if not line.startswith("#") for w in line.split())
"""Common English words (``stopwords.txt``): never read as a typo of a figure word ("whats" ~ "hats"),
and English whatever a chat line's subject."""
_STOP = STOPWORDS


def lemma(word: str) -> str:
    """A word's singular, by rule: enough to fold the plurals that name figures ("horses", "butterflies")."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(_KEEP_S):
        return word[:-1]
    return word


def lemmas(text: str) -> tuple[str, ...]:
    return tuple(lemma(w) for w in normalize_text(text).split())


@dataclass(frozen=True)
class Match:
    """What a text names: ``figure`` is None when nothing fits; ``word`` is what in the text matched."""

    figure: Figure | None
    kind: MatchKind
    word: str = ""

    @property
    def exact(self) -> bool:
        return self.kind == "exact"


@dataclass
class _Index:
    names: dict[tuple[str, ...], list[str]] = field(default_factory=dict)
    related: dict[tuple[str, ...], list[str]] = field(default_factory=dict)
    traits: dict[tuple[str, ...], list[str]] = field(default_factory=dict)
    kinds: dict[str, list[str]] = field(default_factory=dict)
    """figure -> the figures that are kinds of it (human -> sitting person, ...)."""
    longest: int = 1


def _add(table: dict[tuple[str, ...], list[str]], phrases: Iterable[str], name: str) -> int:
    longest = 1
    for phrase in phrases:
        key = lemmas(phrase)
        if len(key) == 1 and key[0] in _STOP:
            continue  # "building", "figure": chat words, never a figure's name on their own
        if key and name not in table.setdefault(key, []):
            table[key].append(name)
            longest = max(longest, len(key))
    return longest


def is_word(word: str) -> bool:
    """An English word (WordNet's word list), so never read as a typo of a figure word."""
    return is_wordnet_term(word)


@functools.lru_cache(maxsize=16)
def _index(library: FigureLibrary) -> _Index:
    import wordnet_lookup.hs  # noqa: F401  loads the whole word list now, at start-up, not during a match

    idx = _Index()
    for fig in library:
        idx.longest = max(idx.longest, _add(idx.names, fig.words, fig.name),
                          _add(idx.related, fig.related, fig.name), _add(idx.traits, fig.traits, fig.name))
        if fig.kind_of:
            idx.kinds.setdefault(fig.kind_of, []).append(fig.name)
    return idx


_Hit = tuple[int, int, str, str]
"""(start, length, figure, phrase): a phrase of the library found in a text."""


def _hits(words: tuple[str, ...], table: dict[tuple[str, ...], list[str]], longest: int) -> list[_Hit]:
    """(start, length, figure, phrase) for every phrase of ``table`` in ``words``."""
    return [(i, n, name, " ".join(words[i:i + n]))
            for n in range(min(longest, len(words)), 0, -1)
            for i in range(len(words) - n + 1)
            for name in table.get(words[i:i + n], ())]


def _nouns(words: tuple[str, ...], hits: list[_Hit]) -> list[_Hit]:
    """Leave out a one-word hit that is a verb after an auxiliary: "what are we *building*?"."""
    return [h for h in hits if not (h[1] == 1 and h[0] > 0 and words[h[0] - 1] in _AUX
                                    and words[h[0]].endswith("ing"))]


_DEPICTIONS = frozenset({"doll", "toy", "statue", "puppet", "figurine", "model", "mascot", "costume", "sculpture"})
"""Heads that show their modifier: a dog doll is shaped like a dog."""


def _head(hit: _Hit, named: list[_Hit], trait_count: dict[str, int]) -> _Hit:
    """The last name of a compound is its head: "a tree *house*", "a cat *lady*", "a school *graduate*"
    (but "a dog doll" is shaped like a dog)."""
    while True:
        following = [h for h in named if h[0] == hit[0] + hit[1] and h[2] != hit[2] and h[3] not in _DEPICTIONS
                     and trait_count.get(h[2], 0) >= trait_count.get(hit[2], 0)]
        if not following:
            return hit
        hit = min(following, key=lambda h: (-h[1], h[2]))


def _typo(word: str, vocabulary: tuple[str, ...], cutoff: float = 0.8) -> str | None:
    """A vocabulary word ``word`` misspells: two letters swapped ("brid", "thropy") or close enough.
    Only words of about its length that keep its first or last letter are tried ("street" is not
    "tree"), which also keeps a long text well under a millisecond a word."""
    near = tuple(v for v in vocabulary if abs(len(v) - len(word)) <= 1 and (v[0] == word[0] or v[-1] == word[-1]))
    return _closest(word, near, cutoff)


@functools.lru_cache(maxsize=4096)
def _closest(word: str, near: tuple[str, ...], cutoff: float) -> str | None:
    swapped = [v for v in near if len(v) == len(word) and sorted(v) == sorted(word)
               and sum(a != b for a, b in zip(v, word, strict=True)) == 2]
    if swapped:
        return swapped[0]
    close = difflib.get_close_matches(word, near, n=1, cutoff=cutoff)
    return close[0] if close else None


@functools.lru_cache(maxsize=16)
def _vocabulary(library: FigureLibrary) -> tuple[tuple[str, ...], tuple[str, ...]]:
    idx = _index(library)
    names = tuple(sorted({k[0] for k in idx.names if len(k) == 1 and len(k[0]) >= 4}))
    related = tuple(sorted({k[0] for k in idx.related if len(k) == 1 and len(k[0]) >= 5}))
    return names, related


def match_text(text: str, library: FigureLibrary) -> Match:
    """The figure ``text`` names, one it is related to, or none (see the module's docstring)."""
    words = lemmas(text)
    if not words:
        return Match(None, "none")
    idx = _index(library)
    # "what are we building?": a one-word name right after an auxiliary is the verb, not the figure.
    named = _nouns(words, _hits(words, idx.names, idx.longest))
    traits = _hits(words, idx.traits, idx.longest)
    trait_count: dict[str, int] = {}
    for _, _, name, _ in traits:
        trait_count[name] = trait_count.get(name, 0) + 1
    # A kind named with a trait names the figure of that kind ("a woman kneeling").
    for start, n, name, phrase in list(named):
        for sub in idx.kinds.get(name, ()):
            if trait_count.get(sub):
                named.append((start, n, sub, phrase))
    if named:
        best = min(named, key=lambda h: (-trait_count.get(h[2], 0), h[0], -h[1], h[2]))
        best = _head(best, named, trait_count)
        return Match(library[best[2]], "exact", best[3])
    if traits:
        name = max(sorted(trait_count), key=lambda k: trait_count[k])
        return Match(library[name], "exact", next(p for _, _, f, p in traits if f == name))
    people = [w for w in words if w.endswith(("man", "woman")) and len(w) > 5 and w not in _STOP]
    if people and "human" in library.figures:  # "fisherman", "mailman", "superwoman": a person
        return Match(library["human"], "exact", people[0])
    related = _nouns(words, _hits(words, idx.related, idx.longest))
    if related:
        start, n, name, phrase = min(related, key=lambda h: (h[0], -h[1], h[2]))
        return Match(library[name], "related", phrase)
    names_vocab, related_vocab = _vocabulary(library)
    verbs = {words[i] for i in range(1, len(words)) if words[i - 1] in _AUX and words[i].endswith("ing")}
    # Typos: "hous", "rocekt", "butterfy"; short words are left alone ("are" is not "hare"), and so
    # are English words ("stove" is not "store", "finger" not "singer").
    raw = normalize_text(text).split()  # as written: "canvas" is a word, its folded "canva" is not
    content = [w for w, r in zip(words, raw, strict=True)
               if w not in _STOP and w not in verbs and not w.isdigit() and not is_word(r) and not is_word(w)]
    for w in content:
        hit = _typo(w, names_vocab) if len(w) >= 4 else None
        if hit:
            return Match(library[idx.names[(hit,)][0]], "exact", hit)
    for w in content:
        hit = _typo(w, related_vocab, 0.85) if len(w) >= 5 else None  # a looser guess: "clock" is not "block"
        if hit:
            return Match(library[idx.related[(hit,)][0]], "related", hit)
    return Match(None, "none")


def find_figure(text: str, library: FigureLibrary) -> tuple[Figure | None, bool]:
    """The figure a text names: (figure, True) for a name or alias (typos forgiven),
    (figure, False) for a related word ("shark" -> fish), (None, False) when nothing fits.
    """
    m = match_text(text, library)
    return m.figure, m.exact


def match_objective(text: str, library: FigureLibrary | None = None,
                    default: str | None = None) -> tuple[Figure, bool]:
    """The figure for a free-text objective ("A house", "a little cat") and whether it was named.

    When nothing in the library is named, a related figure is chosen ("a shark" -> fish), then the
    configured ``default``, then the house; ``exact`` is
    False in all those cases, so the player says in the chat what it builds instead.
    """
    library = library or load_library()
    m = match_text(text, library)
    if m.figure is not None:
        return m.figure, m.exact
    chosen = library.get(default) or library.get(FALLBACK_FIGURE) or next(iter(library))
    return chosen, False
