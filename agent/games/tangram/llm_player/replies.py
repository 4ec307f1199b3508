"""Is a model's chat line fit to show the partner? Empty and degenerate lines never are.

A small model answers a chat request with ``{"reply": "..."}``, with punctuation only, with its own
prompt or the answer's schema copied back, with the partner's words echoed, or in another language
than the partner's. :func:`degenerate` names what is wrong with such a line (None: the line may be
shown); the LLM player then answers from what it knows instead and records that it did
(``chat_replaced``). Pure functions; the language identifier (py3langid, its model shipped in the
wheel) is loaded once, in whichever thread first needs it.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from wordnet_lookup import is_wordnet_term

from agent.games.tangram.dialogue.language import load_languages
from agent.games.tangram.geometry.pieces import PIECE_NAMES, PIECES
from agent.games.tangram.planner.matching import STOPWORDS

MIN_LETTERS = 2
"""A line with fewer letters than this says nothing ("...", "?", "a")."""
COPY_NGRAM = 4
COPY_SHARE = 0.5
"""A line of at least COPY_MIN_WORDS words whose word 4-grams are this much found in the prompt is a copy."""
COPY_MIN_WORDS = 6
LANGUAGE_MIN_WORDS = 4
"""Shorter lines are not judged by language: a language guess on two words is noise."""
LANGUAGE_CONFIDENCE = 0.5
"""How sure the identifier must be that a line is in another language than the partner's (asked only
about lines that are not mostly English words when the partner writes English)."""
PARTNER_CONFIDENCE = 0.5
"""How sure it must be of the partner's own language; below it the game's language counts."""
ENGLISH_SHARE = 0.8
"""The share of English words above which a line counts as English without asking the identifier
(English chat lines score 0.83-1.0; Portuguese, Spanish, French and German ones 0.09-0.67)."""
DEFAULT_LANGUAGE = "en"
"""The game's own language: what the partner is taken to write when their lines are too short to tell."""
LANGUAGES = ("en", "pt", "es", "fr", "de", "it", "nl", "pl", "ru", "uk", "tr", "zh", "ja", "ko", "ar", "hi", "sv",
             "da", "no", "fi", "cs", "ro", "hu", "el", "he", "id", "vi", "th")
"""The languages the identifier chooses among (fewer choices: fewer wild guesses on short lines)."""
_SCHEMA = re.compile(r'[{}\[\]]|"\s*:|\breply\b\s*["\':]|\bjson\b|\bschema\b|<[^<>]{1,40}>', re.IGNORECASE)
_FIELD_WORDS = frozenset({"reply", "chat", "reasoning", "answer", "json", "string", "null", "none", "message", "text",
                         "your reply", "reply here", "your answer", "type string"})
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_PIECE = re.compile(r"\b(" + "|".join(PIECE_NAMES) + r")\b")


def degenerate(reply: str, *, partner: Sequence[str] = (), prompt: Iterable[str] = (),
               language: bool = True) -> str | None:
    """Why ``reply`` must not reach the partner, or None when it may.

    ``partner``: the partner's chat lines, newest last (the newest is the one being answered; all of
    them tell the partner's language). ``prompt``: the texts the model was sent (a copy of them is
    not an answer). ``language``: judge the language too (the identifier's first use loads its
    model, most of a second: call from a worker thread)."""
    text = reply.strip()
    if not text:
        return "empty"
    letters = sum(1 for ch in text if unicodedata.category(ch).startswith("L"))
    if letters < MIN_LETTERS:
        return "no words"
    words = _words(text)
    if _SCHEMA.search(text) or " ".join(words) in _FIELD_WORDS:
        return "a copy of the answer's format"
    if partner and words == _words(partner[-1]):
        return "an echo of the partner's line"
    if _copied(words, prompt):
        return "a copy of the prompt"
    return _other_language(text, words, partner) if language else None


_CLAIM = re.compile(r"\bI(?:'ve| have)? (?:just )?(?:put|placed|moved|turned|rotated|added) (?:the |my |your )?(" +
                    "|".join(PIECE_NAMES) + r")\b", re.IGNORECASE)
_OWNER = re.compile(r"\b(your|my) (" + "|".join(PIECE_NAMES) + r")\b", re.IGNORECASE)


def false_claim(reply: str, movers: Mapping[str, str]) -> str | None:
    """What ``reply`` says falsely of who moved which piece (None: nothing found): "I placed Red"
    when the agent did not move Red last, "your Red" for the agent's piece, "my Red" for the
    partner's. ``movers``: who moved each piece on the board last (the session's ledger); without
    it nothing is judged."""
    if not movers:
        return None
    for m in _CLAIM.finditer(reply):
        piece = m.group(1).capitalize()
        if movers.get(piece) != "agent":
            return f"it claims a move the agent did not make ({piece})"
    for m in _OWNER.finditer(reply):
        piece, owner = m.group(2).capitalize(), m.group(1).lower()
        if piece in movers and movers[piece] != ("partner" if owner == "your" else "agent"):
            return f"it says '{owner} {piece}' of the {movers[piece]}'s piece"
    return None


def contradicts_move(chat: str, piece: str) -> bool:
    """A move's chat line that names pieces but not the one played says something else than what
    was done ("I put Red as the roof" while Blue is played)."""
    named = set(_PIECE.findall(chat))
    return bool(named) and piece not in named


def silent_on_move(chat: str, piece: str) -> bool:
    """A move's chat line that says neither the piece played nor its shape ("A cat with a partner.",
    the local model's line for a move on the real game): the partner cannot tell from it what moved."""
    words = set(_words(chat))
    shape = PIECES[piece].kind.split()[-1] if piece in PIECES else ""
    return piece.lower() not in words and (not shape or not (words & {shape, shape + "s"}))


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _copied(words: list[str], prompt: Iterable[str]) -> bool:
    """Most of the line's word 4-grams are the prompt's, it opens with six words of the prompt, or
    the whole line (two words or more) is a run of the prompt's words ("A fish": the objective)."""
    if len(words) < 2:
        return False
    texts = [_words(text) for text in prompt]
    if len(words) < COPY_MIN_WORDS:
        n = len(words)
        return any(w[i:i + n] == words for w in texts for i in range(len(w) - n + 1))
    grams = {tuple(words[i:i + COPY_NGRAM]) for i in range(len(words) - COPY_NGRAM + 1)}
    opening = words[:COPY_MIN_WORDS]
    seen: set[tuple[str, ...]] = set()
    for w in texts:
        seen.update(tuple(w[i:i + COPY_NGRAM]) for i in range(len(w) - COPY_NGRAM + 1))
        if any(w[i:i + COPY_MIN_WORDS] == opening for i in range(len(w) - COPY_MIN_WORDS + 1)):
            return True
    return len(grams & seen) >= COPY_SHARE * len(grams)


def _other_language(text: str, words: list[str], partner: Sequence[str]) -> str | None:
    """A reason when the line is, with confidence, in another language than the partner's."""
    theirs = partner_language(partner)
    script = _script(text)
    if script not in ("latin", "none") and (theirs is None or theirs in _LATIN) and _script(" ".join(partner)) in (
            "latin", "none"):
        return f"another language than the partner's ({script} script)"
    if theirs is None or len(words) < LANGUAGE_MIN_WORDS:
        return None
    if _english_like(text):
        # An English line stands (the game's language), except to a partner writing a language the
        # offline answer speaks too (Portuguese): that answer, in their language, replaces it.
        answered = theirs != DEFAULT_LANGUAGE and load_languages().answered(theirs)
        return f"English, not the partner's language ({theirs})" if answered else None
    lang, p = _identifier().classify(text)
    if lang != theirs and p >= LANGUAGE_CONFIDENCE:
        return f"another language than the partner's ({lang}, not {theirs})"
    return None


def partner_language(partner: Sequence[str]) -> str | None:
    """The language the partner writes in: the language of the line being answered when the offline
    chat's reading (:mod:`agent.games.tangram.dialogue.language`: its markers, then the identifier)
    finds one other than English; else English when a line of theirs is mostly English words,
    else the surest guess over their lines; the game's own language when their lines are too short
    to tell; None when they are long enough but no guess is sure (then only the script is judged)."""
    if partner:  # the line being answered, however short ("roda o azul"), as the offline chat reads it
        newest = load_languages().detect(partner[-1])
        if newest != DEFAULT_LANGUAGE:
            return newest
    best: str | None = DEFAULT_LANGUAGE
    sure = PARTNER_CONFIDENCE
    for line in partner:
        if len(_words(line)) < LANGUAGE_MIN_WORDS:
            continue
        if _english_like(line):
            return "en"
        if _script(line) != "latin" and _script(line) != "none":
            lang, p = _identifier().classify(line)
            if p >= 0.5:
                return str(lang)
        lang, p = _identifier().classify(line)
        if p >= sure:
            best, sure = str(lang), p
        elif best == DEFAULT_LANGUAGE:
            best = None
    return best


def _english_like(text: str) -> bool:
    """Most words of ``text`` are English (WordNet's words, the common function words): no need to
    load the identifier for it. Lines in other languages score well under the threshold."""
    words = _words(text.replace("'", "").replace("\u2019", ""))
    known = sum(1 for w in words if w in STOPWORDS or w.capitalize() in PIECE_NAMES or is_wordnet_term(w))
    return bool(words) and known >= ENGLISH_SHARE * len(words)


_LATIN = frozenset({"en", "pt", "es", "fr", "de", "it", "nl", "pl", "tr", "sv", "da", "no", "fi", "cs", "ro", "hu",
                    "id", "vi"})


def _script(text: str) -> str:
    """The script most letters of ``text`` are in: "latin", another script's name, or "none"."""
    counts: dict[str, int] = {}
    for ch in text:
        if unicodedata.category(ch).startswith("L"):
            name = unicodedata.name(ch, "")
            script = "latin" if name.startswith("LATIN") else (name.split(" ")[0].lower() or "unknown")
            counts[script] = counts.get(script, 0) + 1
    return max(counts, key=lambda k: counts[k]) if counts else "none"


@functools.lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    ident.set_languages(list(LANGUAGES))
    return ident
