"""One chat line understood: its language, then what it asks for.

1. Emoji become the words they stand for; the language is told (:mod:`.language`). A language the
   partner is not answered in gets a line saying so (``other_language``).
2. A Portuguese line is glossed into the planner's English words.
3. The keyword reading (:mod:`.requests`) takes the line apart: which piece, which part, which
   figure, which direction; the meaning classifier (:mod:`.intents`) reads what it is for. When the
   classifier is sure of a meaning the keywords cannot tell (praise, a strategy, a constraint, a
   figure the library lacks, space or size, a vague request) and the keywords found no plain
   request, the meaning wins, with the keywords' pieces and parts filled in.

Before 2 and 3, a line that holds a phrase of a meaning declared in ``dialogue/words/meanings.yaml``
is that meaning (``declared``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from agent.games.tangram.dialogue.intents import COMMAND, MIN_SCORE, IntentModel, Reading, load_intents
from agent.games.tangram.dialogue.language import DEFAULT, UNKNOWN, Languages, fold, load_languages
from agent.games.tangram.dialogue.meanings import Meanings, load_meanings
from agent.games.tangram.dialogue.phrases import Phrases, load_phrases
from agent.games.tangram.dialogue.requests import (
    PROMISES,
    STRONG,
    Request,
    _has_any,
    asks,
    asks_for_figure,
    clearly_asks,
    starts_question,
)
from agent.games.tangram.dialogue.rules import by_meaning, parse_request
from agent.games.tangram.planner.library import Figure, FigureLibrary


def warm() -> None:
    """Load what understanding needs once per process (about a second and a half, most of it the
    language identifier's model and the Portuguese lemmatizer's dictionary): call it off the event
    loop before the first chat line."""
    languages = load_languages()
    languages.detect("podes rodar o quadrado por favor")
    languages.gloss("rodamos o quadrado")  # a word read by its lemma: loads the dictionary
    load_intents().read("warm")
    for lang in languages.data.answered:
        load_phrases(lang=lang)


_SOCIAL = frozenset({"praise", "thanks", "ack"})
_WISHES = frozenset({"keep", "keep_piece", "release"})
_ABOUT_WISHES = frozenset({"keep_mine", "may_move_mine", "keep_piece", "spatial"})
"""The readings that may overrule a wish about pieces the keywords read (which pieces, consent or not)."""
_SEVERAL = frozenset({"both", "two", "like", "them", "all", "triangles", "pieces", "ones"})
_ORDER = frozenset({"first", "last", "end", "start", "begin", "later", "before", "after"})


@dataclass(frozen=True)
class Understood:
    lang: str
    """The line's language ("en", "pt", or another ISO 639-1 code)."""
    request: Request
    reading: Reading | None = None
    """The classifier's reading (None for a line in a language not answered)."""
    text: str = ""
    """The line as read: in English words (a Portuguese line's gloss)."""


def understand(message: str, figure: Figure, library: FigureLibrary, phrases: Phrases, languages: Languages,
               intents: IntentModel, *, order: Sequence[str] | None = None, prefer: Sequence[str] | None = None,
               last_piece: str | None = None, offer: bool = False, meanings: Meanings | None = None) -> Understood:
    plain = languages.plain(message)
    bare = languages.plain(message, words=False)
    lang = languages.detect(bare)
    if lang == UNKNOWN and _read_as_english(languages.expand(plain), figure, library, phrases, intents):
        lang = DEFAULT  # chat English no dictionary has ("nope", "gotcha")
    if not languages.answered(lang):
        return Understood(lang, Request("other_language"))
    # A meaning declared in one entry (dialogue/words/meanings.yaml) is read before every rule but one
    # (a piece named as a part, below).
    meanings = meanings or load_meanings()
    declared = meanings.match(message) or meanings.match(languages.spelt_out(message))  # "isto demora mt?"

    def english(line: str) -> str:
        if lang == DEFAULT:
            return languages.expand(line)
        return languages.gloss(line) + ("?" if line.rstrip().endswith("?") else "")

    # A greeting before the line ("hi! could you place the yellow one?", "oi! podes rodar o quadrado?")
    # says nothing of what the line is for.
    ungreeted = _without_greeting(plain, languages, phrases)
    greeted = ungreeted != plain
    plain, bare = ungreeted, _without_greeting(bare, languages, phrases)
    text = english(plain)
    # Pieces, figures and moves are read without the emoji ("make a heart ❤️" asks for a heart);
    # the meaning with them ("omg yes 😍" is praise).
    named = english(bare) if fold(bare).strip() else text
    # A closing tag ("..., ok?") asks for agreement: the line before it says what it is for, and is no
    # question for its question mark ("whatever i put down stays where it is, ok?").
    untagged = _without_tag(fold(named).rstrip("?! "), phrases)
    tagged = named
    if untagged != fold(named).rstrip("?! ") and (named.rstrip().endswith("?") or untagged.endswith(",")):
        named = untagged
    parsed = parse_request(named, figure, library, phrases, order=order, prefer=prefer, last_piece=last_piece,
                           offer=offer)
    if parsed.intent == "other" and named != tagged:  # "we're still doing a fish, right?" asks, with its tag
        parsed = parse_request(tagged, figure, library, phrases, order=order, prefer=prefer, last_piece=last_piece,
                               offer=offer)
    # A piece named as a part of the figure ("i put the parallelogram as the tail, does it look right?",
    # "not sure... maybe the arms should be the small triangles?") is about that piece, an undo ("can you
    # undo your last move, i dont like it") about that move, and "oops, i meant the cream one" about the
    # last request, whatever else the line says.
    # "can i move your triangle? the cream one looks weird there" asks leave to move that piece.
    about_move = (parsed.intent, parsed.what) in (("assign", "idea"), ("disagree", "meant")) \
        or parsed.intent in ("undo", "fix") or (parsed.intent == "pieces_question" and bool(parsed.pieces))
    if declared is not None and not about_move:
        return Understood(lang, Request("declared", what=declared, greeted=greeted))
    if greeted:
        parsed = _greeting_slip(parsed, text, phrases)
    reading = intents.read(_without_tag(fold(text), phrases))
    request = parsed
    # A question the keywords answer ("what does the parallelogram do?") stays a question.
    plain_question = parsed.question and parsed.intent != "other"
    # A figure offered for a word in a short remark ("cheers mate") yields to a sure social reading.
    # Praise that names the figure being built ("it looks like a house now") is praise.
    social = ((parsed.intent == "switch_offer" and not asks_for_figure(text, phrases))
              or (parsed.intent in ("help", "switch_same") and (not parsed.question or "?" not in message))) \
        and reading.intent in _SOCIAL  # "thanks for the help"; "we're making a fish, right?" asks
    # Several pieces put somewhere "like ears" is a wish about the figure's shape, not one move.
    said = set(fold(text).split())
    shape_wish = reading.intent == "spatial" and parsed.intent in ("move", "place_near", "prefer", "assign") and bool(
        _SEVERAL & said)
    # Several pieces of a kind first or last ("lay down the two large triangles first") is an order, not one move.
    order_wish = reading.intent == "strategy" and parsed.intent in ("move", "place_near", "prefer", "assign") \
        and bool(_SEVERAL & said) and bool(_ORDER & said)
    # A line the keywords could not read ("unclear": a piece named, nothing asked; "other") takes the
    # classifier's best meaning when it is near enough, however close the second: a guess of what it
    # is for answers better than "I'm not sure what you want".
    unread = parsed.intent in ("unclear", "other") and reading.score >= MIN_SCORE
    # A wish the keywords read ("leave cream, it's perfect", "the house is too narrow", "I'd rather you
    # didn't touch mine") is no praise and no other figure: only a reading of the same kind refines it.
    # The keywords' polarity (a negated touch, a consent) is not flipped by the nearest examples:
    # "nas minhas peças ninguém toca" keeps, "its fine if you move my pieces" releases.
    flipped = (parsed.intent in ("keep", "keep_piece") and reading.intent == "may_move_mine") or (
        parsed.intent == "release" and reading.intent in ("keep_mine", "keep_piece"))
    wish = (parsed.intent in _WISHES and (reading.intent not in _ABOUT_WISHES or flipped)) or (
        parsed.intent == "resize" and reading.intent in _SOCIAL) or (  # "tiny ones last" is a strategy
        parsed.intent == "strategy" and parsed.what == "theirs") or (  # "I'll do the roof": that part is theirs
        parsed.intent == "resize" and reading.intent == "strategy" and _reshapes(
            fold(text), frozenset(phrases.vocabulary.intents.get("comparative", []))))
    if (reading.sure or unread) and reading.intent != COMMAND and not wish \
            and (parsed.intent not in STRONG or social or shape_wish or order_wish) and (not plain_question or social):
        request = by_meaning(reading.intent, text, parsed, figure, library, phrases, last_piece)
        # A promise (keep or move the partner's pieces, keep a piece) only for a line that clearly asks it;
        # a question the classifier is unsure of is answered as the question the keywords read.
        # A line that opens with a question word ("what happens to the pieces i put down?") asks, and is
        # answered, never agreed to.
        unsure_question = parsed.question and parsed.intent != "other" and not reading.sure
        if not clearly_asks(request, text, phrases) or (request.intent in PROMISES and (
                starts_question(text, phrases) or unsure_question)) \
                or (request.intent in (*PROMISES, "vague") and asks(parsed, text)):
            request = parsed
    if lang != DEFAULT and request.what and (request.intent in ("unknown_figure", "switch_unknown") or (
            request.intent == "switch_offer" and not request.exact)):
        own = _own_thing(bare)  # the partner's own words, not their gloss ("um bule", not "a teapot")
        if own:
            request = replace(request, what=" ".join(own))
    if greeted:
        # "goodmorning! fish time": a remark on the figure being built after a greeting is the greeting
        remark = request.intent in ("praise", "ack", "smalltalk", "switch_same") and not request.question
        if remark and figure.name in fold(text).split() and len(text.split()) <= 3:
            request = Request("greeting")
        request = replace(request, greeted=True)
    return Understood(lang, request, reading, text)


_GREETING_END = re.compile(r"^\s*([^\W\d_]+(?:\s+[^\W\d_]+)?)\s*[!,.:;]+\s*(?=\S)")
_OPENING_WORDS = re.compile(r"^\s*([^\W\d_]+)(\s+[^\W\d_]+)?(?=\s+\S)")


def _without_greeting(line: str, languages: Languages, phrases: Phrases) -> str:
    """``line`` without a greeting it opens with ("hi! ...", "boas, quem começa?", "hello who goes
    first"), when at least two words are left (three after a greeting without punctuation). A greeting
    that also calls for attention ("hey", "ei") greets only when punctuation sets it apart ("hey, who
    starts?"; not "hey that's mine")."""
    greetings = languages.greetings | {fold(g) for g in phrases.vocabulary.intents.get("greeting", [])}
    m = _GREETING_END.match(line)
    if m is not None and len(line[m.end():].split()) >= 2 and fold(m.group(1)) in greetings:
        return line[m.end():]
    m = _OPENING_WORDS.match(line)
    if m is None:
        return line
    two = m.group(2) is not None and fold(m.group(1) + m.group(2)) in greetings
    end = m.end(2) if two else m.end(1)
    opener = fold(line[m.start(1):end])
    if opener in greetings and opener not in languages.interjections and len(line[end:].split()) >= 3:
        return line[end:].strip()
    return line


def _greeting_slip(parsed: Request, text: str, phrases: Phrases) -> Request:
    """"Hello! Let's build the house." while the game asks for a cat: the greeting's figure is a slip
    to ask about, unless the line asks for a change ("instead", "change", ...)."""
    change = phrases.vocabulary.intents.get("change_figure", [])
    named = parsed.intent == "switch" or (parsed.intent == "switch_offer" and parsed.exact)
    if not named or _has_any(fold(text).split(), change):
        return parsed
    return replace(parsed, intent="switch_slip")


def _reshapes(text: str, comparatives: frozenset[str]) -> bool:
    """A comparative of size, without an order of pieces ("can the roof be wider than the walls"; not
    "bigger ones first")."""
    words = set(text.split())
    return bool(words & comparatives) and not words & (_ORDER | {"ones", "pieces"})


def _read_as_english(line: str, figure: Figure, library: FigureLibrary, phrases: Phrases,
                     intents: IntentModel) -> bool:
    """Whether a line of unknown words still reads as English: the keywords or the meaning
    examples find something in it."""
    return parse_request(line, figure, library, phrases).intent != "other" or intents.read(fold(line)).sure


def _without_tag(text: str, phrases: Phrases) -> str:
    """``text`` without a closing tag ("..., ok?", "..., pode ser?", "..., right?") when enough is
    left to read: the tag asks for agreement, the rest says what the line is for."""
    words = text.split()
    bare = [w.replace("'", "").replace("\u2019", "").strip(",.!?") for w in words]
    for tag in phrases.vocabulary.intents.get("tag", []):
        t = tag.split()
        if len(words) >= len(t) + 3 and bare[-len(t):] == t:
            return " ".join(words[:-len(t)])
    return text


_ARTICLES = {"um": "um", "uma": "uma", "uns": "uns", "umas": "umas", "num": "um", "numa": "uma", "nuns": "uns",
             "numas": "umas"}
"""Indefinite articles, alone or fused with "em" ("transformar numa igreja")."""


def _own_thing(line: str) -> tuple[str, str] | None:
    """The article and noun after the line's last indefinite article ("e se fizermos um bule" ->
    ("um", "bule"), "numa igreja" -> ("uma", "igreja")), in the partner's own spelling, or None."""
    words = re.findall(r"\w+", line.lower())
    spots = [i for i, w in enumerate(words[:-1]) if w in _ARTICLES]
    return (_ARTICLES[words[spots[-1]]], words[spots[-1] + 1]) if spots else None
