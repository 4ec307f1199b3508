"""Understanding what the human writes in the chat, without an LLM.

A message is read as one request: switch figure ("make a cat instead"), give a piece a part ("use
Red for the roof"), move or turn a piece ("move Blue left a bit", "rotate the square"), pass a
turn ("wait"), or a question (what are we building, what's next, where does Blue go, how far are
we). Words come from ``phrases.yaml``; the parsing is keyword spotting on normalised words. This module
holds the :class:`Request` a line makes and the word-finding the rules share; the rules themselves,
declared meaning by meaning with their priorities, are :mod:`.rules` (``parse_request``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from rapidfuzz import fuzz, process
from wordnet_lookup import is_wordnet_term

from agent.games.tangram.dialogue.phrases import Phrases
from agent.games.tangram.planner import shapes
from agent.games.tangram.planner.library import Figure, normalize_text
from agent.games.tangram.planner.matching import STOPWORDS

Intent = Literal["switch", "switch_offer", "switch_slip", "switch_same", "switch_unknown", "assign", "prefer", "move",
                 "rotate", "place_near", "wait", "where", "next", "plan", "progress", "help", "greeting", "thanks",
                 "unknown_piece", "keep", "release", "why", "resize", "yes", "no", "disagree", "undo", "how_are_you",
                 "bye", "identity", "for_you", "ack", "smalltalk", "praise", "unclear", "other",
                 "keep_piece", "strategy", "unknown_figure", "spatial", "vague", "other_language", "pieces_question",
                 "declared", "swap", "check", "claim", "fix"]
"""What a line asks for. ``declared``: a meaning declared in ``dialogue/words/meanings.yaml``, named by
the request's ``what`` (its reply is the chat line of that name)."""

# Words of part names too common to identify a part on their own ("left" wall, "upper" hull).
_GENERIC = {"left", "right", "upper", "lower", "top", "bottom", "front", "back", "of", "the", "side", "middle",
            "centre", "center", "corner", "edge", "root", "part"}
_NUMBER = re.compile(r"(?<![a-z])(\d+(?:\.\d+)?)")
_ASKED_FOR = ("how about a", "how about an", "what about a", "what about an")
"""Suggestions that name a thing to make ("what about an umbrella"), beside the plain requests."""
_PART_AFTER = re.compile(r"\b(?:for|as|be) the ([a-z]+(?: [a-z]+)?)")


@dataclass(frozen=True)
class Request:
    intent: Intent
    piece: str | None = None
    slot: str | None = None
    """The slot (named by its canonical piece) of the part the message names."""
    part: str = ""
    """The part words as the human wrote them (for 'the fish has no wheel')."""
    figure: Figure | None = None
    exact: bool = True
    what: str = ""
    dx: float = 0.0
    dy: float = 0.0
    direction: str = ""
    degrees: float = 0.0
    relation: str = ""
    """For place_near: a relation of :mod:`agent.games.tangram.geometry.relations`."""
    relation_words: str = ""
    """The relation as the human said it ("next to")."""
    anchor: str | None = None
    """For place_near: the piece to put it against (None: not named)."""
    anchor_owner: str = ""
    """For place_near: "partner" for "my piece", "agent" for "your piece", "" for a piece named."""
    question: bool = False
    """The message asks something rather than asks for something."""
    greeted: bool = False
    """The line greets ("hi! ...", "olá, ..."): the reply greets back."""
    pieces: tuple[str, ...] = ()
    """Every piece the message names, in its order (for "both small triangles")."""


@functools.lru_cache(maxsize=4096)
def _norm(phrase: str) -> str:
    """A vocabulary phrase normalised (the same few hundred phrases for every line: kept)."""
    return normalize_text(phrase)


def _phrase_at(words: Sequence[str], phrase: str) -> int:
    p = phrase.split()
    for i in range(len(words) - len(p) + 1):
        if list(words[i:i + len(p)]) == p:
            return i
    return -1


def _has_any(words: Sequence[str], phrases: Iterable[str]) -> bool:
    return any(_phrase_at(words, _norm(ph)) >= 0 for ph in phrases)


def _find_pieces(words: Sequence[str], phrases: Phrases, prefer: Sequence[str]) -> list[tuple[int, str]]:
    """(position, piece) for every piece named by colour, shape or kind words."""
    found: list[tuple[int, str]] = []
    vocab = phrases.vocabulary
    for piece, names in vocab.pieces.items():
        for name in names:
            i = _phrase_at(words, _norm(name))
            if i >= 0:
                found.append((i, piece))
                break
    named = {p for _, p in found}
    for kind, names in vocab.kinds.items():
        for name in names:
            i = _phrase_at(words, _norm(name))
            if i >= 0:
                of_kind = [p for p in prefer if shapes.kind(p) == kind]
                # "o triângulo grande vermelho": the colour says which big triangle
                if of_kind and not any(shapes.kind(p) == kind for p in named):
                    found.append((i, of_kind[0]))
                break
    return sorted(found)


def _find_part(words: Sequence[str], figure: Figure, order: Sequence[str]) -> tuple[str | None, str, set[int]]:
    """The slot whose part the message names, the words used, and their positions."""
    best: tuple[int, str, str, set[int]] | None = None
    for slot in order:
        part = _norm(figure.parts[slot])
        i = _phrase_at(words, part)
        n = len(part.split())
        if i < 0 and n > 1:  # "wall left" (Portuguese order, "parede esquerda") is the left wall
            wanted = sorted(part.split())
            i = next((k for k in range(len(words) - n + 1) if sorted(words[k:k + n]) == wanted), -1)
        if i >= 0 and (best is None or n > best[0]):
            best = (n, slot, part, set(range(i, i + n)))
    if best:
        return best[1], best[2], best[3]
    for slot in order:  # one distinctive word: "wall" finds the first wall still to build
        for w in _norm(figure.parts[slot]).split():
            if w in _GENERIC:
                continue
            for i, x in enumerate(words):
                if x == w or x.rstrip("s") == w:
                    return slot, w, {i}
    return None, "", set()


def _positions(words: Sequence[str], phrases: Iterable[str]) -> set[int]:
    """The positions of the words of every phrase of ``phrases`` found in ``words``."""
    out: set[int] = set()
    for phrase in phrases:
        p = _norm(phrase).split()
        i = _phrase_at(words, " ".join(p))
        if i >= 0:
            out |= set(range(i, i + len(p)))
    return out


def _direction(words: Sequence[str], phrases: Phrases, skip: set[int]) -> str:
    for direction, names in phrases.words.directions.items():
        for i, w in enumerate(words):
            if i not in skip and w in names:
                return direction
    return ""


def offset(direction: str, step: float) -> tuple[float, float]:
    """The board shift of a move ``step`` units ``direction`` (left, right, up, down)."""
    return {"left": (-step, 0.0), "right": (step, 0.0), "up": (0.0, step), "down": (0.0, -step)}[direction]


def _amount(words: Sequence[str], text: str, phrases: Phrases) -> float:
    vocab = phrases.vocabulary
    m = _NUMBER.search(text)
    if m:
        return min(float(m.group(1)), 40.0)
    if _has_any(words, vocab.amounts.get("small", [])):
        return vocab.steps.small
    if _has_any(words, vocab.amounts.get("large", [])):
        return vocab.steps.large
    return vocab.steps.default


def _wanted_thing(words: Sequence[str], phrases: Phrases) -> str:
    """The thing asked for after 'make a' / 'build an' ..., for 'I don't know how to make X'."""
    words = [w for w in words if w not in ("instead", "rather")]  # "lets make instead a star" (Portuguese order)
    for trigger in [*phrases.vocabulary.intents["switch"], *_ASKED_FOR]:
        t = _norm(trigger).split()
        i = _phrase_at(words, " ".join(t))
        if i >= 0 and t[-1] in ("a", "an", "to"):
            rest = [w for w in words[i + len(t):] if w not in ("instead", "please", "now", "then")]
            if rest:
                return ("an " if rest[0][0] in "aeiou" else "a ") + " ".join(rest[:3])
    return ""


def _planning(words: Sequence[str]) -> bool:
    """ "how are you planning to build it", "how are you going to make the roof": a question about
    the plan, not how the agent is."""
    for i in range(len(words) - 3):
        if words[i:i + 3] == ["how", "are", "you"]:
            after = words[i + 3:i + 5]
            return after[0].endswith("ing") and after[0] != "doing" and (after[0] != "going" or after[1:] == ["to"])
    return False


def _names_figure(what: str, figure: Figure) -> bool:
    """Whether the thing asked for ("a fish", "a big cat", "the fishes") names ``figure`` itself."""
    name = figure.name.lower()
    return any(w == name or w.rstrip("s") == name or w == name + "es" for w in what.lower().split())


def asks_for_figure(text: str, phrases: Phrases) -> bool:
    """A word that asks for another figure or likens the board to one ("looks like a")."""
    words = normalize_text(text).split()
    return switch_word_only(words, phrases) or _has_any(words, phrases.vocabulary.intents.get("soft_switch_only", []))


def switch_word_only(words: Sequence[str], phrases: Phrases) -> bool:
    """A word that asks for another figure, plainly or not."""
    intents = phrases.vocabulary.intents
    return _has_any(words, intents.get("switch", [])) or _has_any(words, intents.get("soft_switch", []))


def _relation(words: Sequence[str], phrases: Phrases) -> tuple[str, str, set[int]]:
    """The relation a message asks for ("next to" -> touching), its words and their positions."""
    best: tuple[int, str, str, int] | None = None
    for relation, names in phrases.words.relations.items():
        for name in names:
            norm = _norm(name)
            i = _phrase_at(words, norm)
            n = len(norm.split())
            if i >= 0 and (best is None or n > best[3]):
                best = (i, relation, name, n)
    if best is None:
        return "", "", set()
    return best[1], best[2], set(range(best[0], best[0] + best[3]))


def _anchor(words: Sequence[str], pieces: Sequence[tuple[int, str]], piece: str, rel_pos: set[int],
            phrases: Phrases) -> tuple[str | None, str]:
    """The piece to put ``piece`` against: one named after the relation words, else "my piece"
    (the partner's last) or "your piece" (the agent's last), to be looked up by the caller."""
    after = max(rel_pos) if rel_pos else -1
    named = [p for i, p in pieces if i > after and p != piece]
    if named:
        return named[0], ""
    intents = phrases.vocabulary.intents
    if _has_any(words[after + 1:], intents.get("mine", [])):
        return None, "partner"
    if _has_any(words[after + 1:], intents.get("yours", [])):
        return None, "agent"
    others = [p for _, p in pieces if p != piece]
    return (others[0], "") if others else (None, "")


def correct_typos(text: str, phrases: Phrases) -> str:
    """``text`` with misspelt words of the planner's vocabulary put right ("yelow" -> yellow,
    "rotat" -> rotate): only words of four letters or more that are not English words themselves."""
    known = _vocabulary_words(phrases)
    names = {n for names in phrases.vocabulary.pieces.values() for n in names if " " not in n}
    out = []
    for w in text.split():
        if w.endswith("s") and w[:-1] in names:  # "purple's good" (its apostrophe gone): Purple
            out.append(w[:-1])
        elif len(w) >= 4 and w not in known and not w.isdigit() and not is_wordnet_term(w) and w not in STOPWORDS:
            close = process.extract(w, known, scorer=fuzz.ratio, score_cutoff=TYPO_SCORE, limit=4)
            best = [c[0] for c in close if c[1] == close[0][1]] if close else []
            # a tie goes to a piece's name: "grean" is as near "great" as "green", and it names a piece
            out.append(next((c for c in best if c in names), best[0]) if best else w)
        else:
            out.append(w)
    return " ".join(out)


TYPO_SCORE = 80.0
"""How like a vocabulary word (rapidfuzz's ratio, 0-100) a misspelt word must be to be read as it."""


@functools.lru_cache(maxsize=4)
def _vocabulary_words(phrases: Phrases) -> list[str]:
    vocab = phrases.vocabulary
    words: set[str] = set()
    for group in (vocab.pieces, vocab.kinds, vocab.amounts, vocab.intents):
        for names in group.values():
            for name in names:
                words.update(w for w in _norm(name).split() if len(w) >= 4)
    for names in phrases.words.directions.values():
        words.update(n for n in names if len(n) >= 4)
    return sorted(words)


STRONG = frozenset({"switch", "switch_offer", "switch_slip", "switch_same", "switch_unknown", "move", "rotate",
                    "place_near", "assign", "prefer", "spatial", "swap",
                    "yes", "no",
                    "why", "undo", "wait", "for_you", "identity", "bye", "how_are_you", "greeting", "help",
                    "disagree", "claim", "fix"})
"""What the keyword reading takes apart with confidence: a reading by meaning does not overrule it."""
_ARTICLE = {"a", "an"}
_STAYS = ("where it is", "where they are", "where it was", "where its", "where she is", "where he is", "as it is",
          "as they are", "stays there", "stay there", "stays put", "stay put", "locked in", "where i put it",
          "where i put them", "where i left it", "where i left them", "where i placed it", "where i placed them",
          "keep it there", "keep them there", "keep it like that", "keep it as is")
"""Words that keep a piece where it is ("purple stays as it is", "red is locked in")."""


_KEEPING = frozenset({"keep", "keeps", "stay", "stays", "alone", "fixed", "locked", "untouched", "there", "is"})
PROMISES = frozenset({"keep", "release", "keep_piece"})
"""Replies that agree to a constraint or consent for the rest of the game."""
ANSWERED = frozenset({"next", "plan", "progress", "where"})
"""Questions the keyword reading answers; a line with a question word that reads as one is that question."""
_ASKING = frozenset({"what", "whats", "which", "where", "wheres", "how", "when", "whos"})


def asks(parsed: Request, text: str) -> bool:
    """Whether ``text``, read by the keywords as ``parsed``, asks one of their questions with a question
    word ("e tu agora o que fazes" -> "and you now what do you do": the next move)."""
    if parsed.intent == "where" and not parsed.question:  # "it stays where it is"
        return False
    return parsed.intent in ANSWERED and bool(_ASKING & set(normalize_text(text).split()))


def starts_question(text: str, phrases: Phrases) -> bool:
    """Whether ``text`` opens with a question word ("what", "is", "are", "why"), not a request's opening
    ("can you", "please")."""
    words = correct_typos(normalize_text(text), phrases).split()
    intents = phrases.vocabulary.intents

    def starts(key: str) -> bool:
        return any(_phrase_at(words, _norm(p)) == 0 for p in intents.get(key, []))

    return starts("question_start") and not starts("request_start")


def clearly_asks(request: Request, text: str, phrases: Phrases) -> bool:
    """Whether ``text`` clearly asks for the promise ``request`` makes: keeping or consenting to move the
    partner's pieces needs a word of whose pieces ("my", "mine", "anything") or a negated or consented
    touch; keeping one piece needs that piece named. A meaning read from a line's likeness to examples
    ("whats the figure again?" near "leave the figure as it is") never promises without them."""
    if request.intent not in PROMISES:
        return True
    words = correct_typos(normalize_text(text), phrases).split()
    intents = phrases.vocabulary.intents

    def has(key: str) -> bool:
        return _has_any(words, intents.get(key, []))

    if request.intent == "keep_piece":  # "leave yellow alone", "blue stays where it is", "keep it there"
        return request.piece is not None and (has("negation") or has("keep") or has("leave_piece")
                                              or _has_any(words, _STAYS) or bool(_KEEPING & set(words)))
    if has("yours") and not _has_any(words, ["my", "mine", "i placed", "i put"]):
        return False  # "can i move yours?" asks about the agent's pieces, not consent to move the partner's
    touch = has("touch") or has("move") or has("leave_piece") or has("keep") or has("release")
    return has("ownership") or has("keep") or has("release") or (touch and (has("negation") or has("consent")))


_BIG = frozenset({"big", "bigger", "biggest", "large", "larger", "largest", "huge"})


def _size_words(words: Sequence[str]) -> bool:
    return any(w in _BIG for w in words)


def _kind_named(words: Sequence[str], parsed: Request, has: Callable[[str], bool]) -> str:
    """The kind of piece a vague request names ("the big triangle", "one of the little ones"), or ""."""
    if _size_words(words):
        return "large triangle"
    if has("small_first"):
        return "small triangle"
    if parsed.piece:
        return shapes.kind(parsed.piece)
    return "triangle" if has("triangle") else ""


def _region(has: Callable[[str], bool]) -> str:
    """The part of the figure a line points at: "top", "bottom", "left", "right", "middle", or ""."""
    for region in ("top", "bottom", "left", "right", "middle"):
        if has(f"region_{region}"):
            return region
    return ""


def _thing(words: Sequence[str]) -> str:
    """What a line names after its last "a"/"an" ("it should be a teapot instead" -> "teapot")."""
    spots = [i for i, w in enumerate(words) if w in _ARTICLE]
    for i in reversed(spots):
        rest = [w for w in words[i + 1:i + 4] if w not in STOPWORDS and w not in ("instead", "please", "now")]
        if rest:
            return " ".join(rest[:2])
    return ""
