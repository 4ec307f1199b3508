"""The keyword reading of a chat line, declared meaning by meaning (issue 68, "one entry per meaning").

Each rule reads one :class:`Line` (a message taken apart once: its words, the pieces, part, figure,
direction and relation it names, whether it asks or requests) and returns the :class:`Request` it
makes, or None when it does not apply. A rule is declared with its meaning and its **priority**:
the rules are tried from the lowest priority up and the first that answers wins, so where two
meanings' words overlap, the priority says which reading goes first ("thanks for not moving my
square" is thanks before it is a wish about pieces: thanks 20, keep 290). Every rule of a meaning
sits in that meaning's section below; two rules of one priority stop the import.

The priorities are spaced by ten: a new rule takes a free number between the two it must come
between. :func:`parse_request` reads a line with every rule; a line no rule reads is ``other``.

A meaning the keywords cannot tell is read from its likeness to examples (``dialogue/words/intents.yaml``,
:mod:`agent.games.tangram.dialogue.intents`); the request such a reading makes is declared in the
meaning's section too, with ``@reads`` (:func:`by_meaning`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from agent.games.tangram.dialogue.declared import by_name
from agent.games.tangram.dialogue.phrases import Phrases
from agent.games.tangram.dialogue.requests import (
    _NUMBER,
    _PART_AFTER,
    _STAYS,
    Request,
    _amount,
    _anchor,
    _direction,
    _find_part,
    _find_pieces,
    _has_any,
    _kind_named,
    _names_figure,
    _norm,
    _phrase_at,
    _planning,
    _positions,
    _region,
    _relation,
    _size_words,
    _thing,
    _wanted_thing,
    correct_typos,
    offset,
    switch_word_only,
)
from agent.games.tangram.planner import shapes
from agent.games.tangram.planner.library import Figure, FigureLibrary, normalize_text
from agent.games.tangram.planner.matching import Match, find_figure, match_text


class Line:
    """One message as the rules read it: every fact is worked out once, when a rule first asks."""

    def __init__(self, message: str, figure: Figure, library: FigureLibrary, phrases: Phrases,
                 order: Sequence[str] | None, prefer: Sequence[str] | None, last_piece: str | None,
                 offer: bool) -> None:
        self.message = message
        self.figure = figure
        self.library = library
        self.phrases = phrases
        self.text = correct_typos(normalize_text(message), phrases)
        self.words = self.text.split()
        self.intents = phrases.vocabulary.intents
        self.order = list(order or figure.order)
        self.prefer = list(prefer or self.order)
        self.last_piece = last_piece
        self.offer = offer
        # "the blue one faces the wrong way, can you rotate it?": a request after a remark
        self.asking = self.starts("request_start") or (
            _has_any(self.words, ["can you", "could you", "would you", "please"])
            and (self.has("move") or self.has("rotate")))
        # "what i put down stays where it is" opens with a relative "what", no question
        self.question = not self.asking and (message.rstrip().endswith("?") or (
            self.starts("question_start") and self.words[:2] != ["what", "i"]))
        self.asked = self.question and not self.asking
        """A question, not a request phrased as one: answered, never acted on."""

    def has(self, intent: str) -> bool:
        """A phrase of the vocabulary's ``intent`` is in the line."""
        return _has_any(self.words, self.intents.get(intent, []))

    def has_words(self, phrases: Sequence[str]) -> bool:
        return _has_any(self.words, phrases)

    def starts(self, intent: str) -> bool:
        """The line opens with a phrase of ``intent``."""
        return any(_phrase_at(self.words, _norm(p)) == 0 for p in self.intents.get(intent, []))

    @functools.cached_property
    def found(self) -> Match:
        """The figure the line names, if any: not one it sets aside ("forget the robot, let's make a
        house", "a house instead of the robot")."""
        kept = _SET_ASIDE.sub(" ", self.message)
        found = match_text(kept, self.library) if kept != self.message else None
        return found if found is not None and found.figure is not None else match_text(self.message, self.library)

    @functools.cached_property
    def sides(self) -> dict[str, str]:
        """Each one-word side (the vocabulary's ``sides``: "under", "left") and its relation."""
        return {w: relation for relation, ws in self.phrases.vocabulary.sides.items() for w in ws}

    @functools.cached_property
    def plain_switch(self) -> bool:
        return self.has("switch") and not self.has("soft_switch_only")

    @functools.cached_property
    def soft_switch(self) -> bool:
        return self.has("soft_switch") or self.has("soft_switch_only")

    @functools.cached_property
    def pieces(self) -> list[tuple[int, str]]:
        """(position, piece) for every piece named."""
        return _find_pieces(self.words, self.phrases, self.prefer)

    @functools.cached_property
    def part_match(self) -> tuple[str | None, str, set[int]]:
        """The slot of the part the line names, the words used, and their positions."""
        return _find_part(self.words, self.figure, self.order)

    @property
    def slot(self) -> str | None:
        """The slot of the part the line names."""
        return self.part_match[0]

    @property
    def part_words(self) -> str:
        return self.part_match[1]

    @functools.cached_property
    def piece(self) -> str | None:
        """The first piece named, else "it" (the last piece spoken of) in a move or turn."""
        if self.pieces:
            return self.pieces[0][1]
        if self.last_piece and self.has("your_last"):
            return self.last_piece  # "whats the piece you put down meant to be"
        if "it" in self.words and self.last_piece and (self.has("move") or self.has("rotate")) \
                and not self.has("keep") and not self.has("mine") and not self.has("switch") \
                and not self.has_words(["is it", "does it", "will it"]):  # "I put the head, is it ok?": no piece
            return self.last_piece  # "turn it into a penguin" asks for a figure
        return None

    @functools.cached_property
    def described(self) -> bool:
        """"bora fazer uma girafa azul": a colour after the thing asked for describes it, and names no piece."""
        asked_for = _wanted_thing(self.words, self.phrases).split()[1:]
        other = self.found.figure
        return self.plain_switch and bool(self.pieces) and (
            (other is not None and _names_figure(" ".join(asked_for), other))  # "make a blue cat"
            or (len(asked_for) >= 2 and not _find_pieces(asked_for[:1], self.phrases, self.prefer)))

    @functools.cached_property
    def direction(self) -> str:
        """"left", "right", "up", "down" or ""."""
        direction = _direction(self.words, self.phrases,
                               self.part_match[2] | _positions(self.words, self.intents.get("put_down", [])))
        amounts = self.phrases.vocabulary.amounts
        if direction == "down" and self.has("place_verb") and not self.has("shift_verb") and not _has_any(
                self.words, [*amounts.get("small", []), *amounts.get("large", [])]):
            return ""  # "put the big triangles down first": on the board, not lower
        return direction

    @functools.cached_property
    def relation_match(self) -> tuple[str, str, set[int]]:
        """The relation the line asks for ("next to" -> touching), its words and their positions."""
        return _relation(self.words, self.phrases)

    @property
    def relation(self) -> str:
        return self.relation_match[0]

    @functools.cached_property
    def region(self) -> str:
        return _region(self.has)

    @functools.cached_property
    def stays(self) -> bool:
        """Words that keep a piece where it is ("purple stays as it is")."""
        return (_has_any(self.words, _STAYS) or self.has("leave_piece")) and not self.has("move") \
            and not self.has("space") and not self.has("last")

    @functools.cached_property
    def acting(self) -> bool:
        """The line asks something of a piece (a move, a turn, a "don't", what's next, where)."""
        return self.asking or self.has("move") or self.has("rotate") or self.has("dont") or self.has("next") \
            or self.has("where")


Rule = Callable[[Line], Request | None]


@dataclass(frozen=True)
class Declared:
    meaning: str
    priority: int
    read: Rule


_DECLARED: list[Declared] = []


def rule(meaning: str, priority: int) -> Callable[[Rule], Rule]:
    """Declare a rule of ``meaning`` at ``priority`` (lower first); a priority taken twice stops the import."""
    def register(read: Rule) -> Rule:
        taken = [d.meaning for d in _DECLARED if d.priority == priority]
        if taken:
            raise ValueError(f"rule priority {priority} of {meaning!r} is taken by {taken[0]!r}")
        _DECLARED.append(Declared(meaning, priority, read))
        return read
    return register


def parse_request(message: str, figure: Figure, library: FigureLibrary, phrases: Phrases,
                  order: Sequence[str] | None = None, prefer: Sequence[str] | None = None,
                  last_piece: str | None = None, offer: bool = False) -> Request:
    """Read one chat message: the first rule (by priority) that reads it, else ``other``.

    ``order`` is the build order of slots (to pick the first of several walls), ``prefer`` the
    pieces not yet in place first (to pick which large triangle "the big triangle" means),
    ``last_piece`` what "it" refers to, and ``offer`` whether the agent has just asked a yes/no
    question (another figure) that a short "yes" or "no" answers.

    A question ("what is Purple for?") is answered, never taken for a request; a request may be
    phrased as one ("can you move Blue left?"). A figure is switched only when asked plainly
    ("let's make a boat"); a remark ("it should be a boat instead") or a related figure is offered.
    """
    line = Line(message, figure, library, phrases, order, prefer, last_piece, offer)
    for declared in RULES:
        request = declared.read(line)
        if request is not None:
            return request
    return Request("other")


@dataclass(frozen=True)
class Meant:
    """A line read by its meaning (the meanings' model), with what the keywords read in it (``parsed``)."""

    meaning: str
    words: list[str]
    parsed: Request
    figure: Figure
    library: FigureLibrary
    phrases: Phrases
    last_piece: str | None

    def has(self, key: str) -> bool:
        return _has_any(self.words, self.phrases.vocabulary.intents.get(key, []))


Reading = Callable[[Meant], Request]
_READINGS: dict[str, Reading] = {}


reads = by_name(_READINGS, "the meaning {name} is read twice")
"""``@reads(*meanings)``: the request a line read as one of ``meanings`` (of the meanings' model)
makes; a meaning declared twice stops the import."""


def by_meaning(meaning: str, text: str, parsed: Request, figure: Figure, library: FigureLibrary,
               phrases: Phrases, last_piece: str | None = None) -> Request:
    """The request a line read by its meaning (:mod:`agent.games.tangram.dialogue.intents`) makes, with
    what it names filled in from the keyword reading (``parsed``) and the line's own words; a meaning
    with no reading declared keeps the keywords' request."""
    read = _READINGS.get(meaning)
    if read is None:
        return parsed
    words = correct_typos(normalize_text(text), phrases).split()
    return read(Meant(meaning, words, parsed, figure, library, phrases, last_piece))


# --- identity, greetings, remarks


@rule("identity", 10)
def _identity(r: Line) -> Request | None:
    # "are you a real person or a robot?", "tu es mesmo um computador? pareces uma pessoa ahah"
    if r.has("identity") and len(r.words) <= 9 and (r.question or r.has_words(["you seem human", "you sound human"])):
        return Request("identity", question=True)
    return None


@rule("bye", 15)
def _thanks_and_bye(r: Line) -> Request | None:
    # "obrigado e adeus", "thanks, bye!": the goodbye, which thanks too
    return Request("bye") if r.has("bye") and r.has("thanks") else None


@rule("thanks", 20)
def _thanks_for(r: Line) -> Request | None:
    # "thanks for not moving my square": thanks, for whatever it thanks for
    return Request("thanks") if r.starts("thanks") and "for" in r.words[1:4] else None


@rule("thanks", 50)
def _thanks(r: Line) -> Request | None:
    # "thank you, that was very kind of you to help me with the roof": thanks
    return Request("thanks") if r.starts("thanks") and not r.acting and not r.question else None


@rule("thanks", 580)
def _thanks_said(r: Line) -> Request | None:
    return Request("thanks") if r.has("thanks") else None


@reads("praise", "thanks", "ack")
def _social(m: Meant) -> Request:
    return Request(m.meaning)  # type: ignore[arg-type]  # the three are intents of their own


@rule("praise", 30)
def _praise_idiom(r: Line) -> Request | None:
    # "not bad at all", "no complaints", "couldn't have done it better": praise, whatever its negation
    return Request("praise") if r.has("praise_idiom") and not r.question else None


@rule("praise", 40)
def _praise_alone(r: Line) -> Request | None:
    # "that's a clever spot for the cream one, well done": praise that names a piece asks nothing of it
    return Request("praise") if r.has("praise") and not r.acting and not r.question else None


@rule("praise", 620)
def _praise(r: Line) -> Request | None:
    if r.has("praise") or (r.has("praise_word") and len(r.words) <= 4 and not (r.pieces or r.slot)):
        return Request("praise")
    return None


@rule("how_are_you", 230)
def _how_are_you_asked(r: Line) -> Request | None:
    if r.asked and r.has("how_are_you") and not _planning(r.words):
        return Request("how_are_you", question=True)
    return None


@rule("how_are_you", 590)
def _how_are_you(r: Line) -> Request | None:
    return Request("how_are_you") if r.has("how_are_you") else None


@rule("bye", 600)
def _bye(r: Line) -> Request | None:
    return Request("bye") if r.has("bye") else None


@rule("greeting", 610)
def _greeting(r: Line) -> Request | None:
    return Request("greeting") if r.has("greeting") else None


@rule("smalltalk", 690)
def _smalltalk(r: Line) -> Request | None:
    return Request("smalltalk") if r.has("smalltalk") else None


@rule("ack", 700)
def _ack(r: Line) -> Request | None:
    return Request("ack") if r.has("yes") and len(r.words) <= 4 else None


# --- whose pieces move: keep, keep_piece, release


@rule("claim", 52)
def _claim(r: Line) -> Request | None:
    # "i made the hull with the red one, you do the sail?", "fico com o amarelo, o resto podes usar", "im gonna
    # keep the two small triangles for myself": pieces the partner says are theirs, and what they leave to the agent
    claim_at = _positions(r.words, r.intents.get("claim", []))
    if not claim_at or not r.pieces or r.has("negation"):
        return None
    hand_at = _positions(r.words, r.intents.get("hand_part", []))
    if not hand_at and not r.has("keep_for_self") and not (r.has("claim_future") and r.slot and not r.has("idea")):
        return None  # "i'll make the humps with the big triangles": a part, and pieces, said theirs
    start = min(hand_at, default=len(r.words))
    end = min(claim_at) if min(claim_at) > start else len(r.words)  # "you do the sail, i did the hull": reversed
    theirs = tuple(dict.fromkeys(q for i, p in r.pieces if not start <= i < end for q in _both(r, p)))
    wanted = [p for i, p in r.pieces if start <= i < end and p not in theirs]
    if not theirs:
        return None
    asked = r.words[start:end]
    slot, part, _ = _find_part(asked, r.figure, r.order)
    if slot is None and r.has_words(["other", "the other one"]):  # "a wing with red, you do the other"
        own = _find_part([w for i, w in enumerate(r.words) if not start <= i < end], r.figure, r.order)[0]
        twins = [s for s in r.order if own is not None and s != own
                 and r.figure.parts[s].split()[-1] == r.figure.parts[own].split()[-1]]
        slot, part = (twins[0], r.figure.parts[twins[0]]) if twins else (None, "")
    return Request("claim", pieces=theirs, piece=wanted[0] if wanted else None, slot=slot, part=part)


@rule("fix", 93)
def _fix_part(r: Line) -> Request | None:
    # "the roof is crooked, fix it", "o telhado está torto", "the sail should point the other way": that part set right
    if r.slot is None or r.pieces or not (r.has("fix_part") or r.has("turn_round")) \
            or r.has_words(["dont fix", "dont change", "do not fix", "do not change", "no need to"]):
        return None
    return Request("fix", slot=r.slot, part=r.part_words, what="round" if r.has("turn_round") else "")


@rule("strategy", 53)
def _you_do_part(r: Line) -> Request | None:
    # "those two are leaves. you do the trunk?", "tu fazes o telhado": that part is the agent's to build next
    at = _positions(r.words, r.intents.get("you_do", []))
    if not at or r.has("negation") or r.has("mine_part") or r.has("claim"):
        return None
    slot, part, _ = _find_part(r.words[min(at):], r.figure, r.order)
    return Request("strategy", slot=slot, part=part, what="part") if slot is not None else None


def _both(r: Line, piece: str) -> list[str]:
    """``piece``, or every piece of its kind when the line names the kind in the plural ("the two small
    triangles", "os triângulos grandes")."""
    kind = shapes.kind(piece)
    plural = any(_phrase_at(r.words, _norm(name) + "s") >= 0 for name in r.phrases.vocabulary.kinds.get(kind, []))
    return [p for p in r.prefer if shapes.kind(p) == kind] if plural else [piece]


@rule("keep_piece", 55)
def _keep_theirs_to_place(r: Line) -> Request | None:
    # "I'll place the purple square myself", "eu ponho o roxo", "leave the square for me, i know where it goes":
    # that piece is the partner's to place, left alone
    knows = r.has_words(["i know where"])
    if len(r.pieces) == 1 and r.has_words(["leave it to me"]) and not r.question:  # "o amarelo deixa comigo"
        return Request("keep_piece", piece=r.piece, what="theirs")
    if len(r.pieces) == 1 and r.has("self_place") and not (r.question or (r.has("negation") and not knows)
                                                          or r.has("handover_next") or r.has("handover_rest")):
        return Request("keep_piece", piece=r.piece, what="theirs")
    return None


@rule("keep_piece", 60)
def _keep_this(r: Line) -> Request | None:
    # "keep the parallelogram there, it's fine", "mantenha o paralelogramo nessa posição": that piece stays
    if r.pieces and "keep" in r.words and not (r.has("move") or r.has("rotate") or r.question):
        return Request("keep_piece", piece=r.piece)
    return None


@reads("keep_mine")
def _keep_mine(m: Meant) -> Request:
    if m.parsed.piece and _find_pieces(m.words, m.phrases, list(m.figure.order)):
        return _keep_piece_meant(m)  # "leave purple alone", "don't touch my square": that piece (named, not "it")
    return _whose(m, "keep")


@reads("may_move_mine")
def _may_move_mine(m: Meant) -> Request:
    return _whose(m, "release")


def _whose(m: Meant, default: Literal["keep", "release"]) -> Request:
    """Keep or consent: the same words, opposite wishes; a consent or a negation decides."""
    consent, negated = m.has("consent"), m.has("negation")
    if consent or negated:
        return Request("release" if consent else "keep")
    return Request(default)


@reads("keep_piece")
def _keep_piece_meant(m: Meant) -> Request:
    piece = m.parsed.piece or (m.last_piece if m.has("that") else None)
    return Request("keep_piece", piece=piece) if piece else Request("keep")


@rule("keep", 70)
def _keep_but(r: Line) -> Request | None:
    # "you can place yours but dont touch mine": the clause after "but" says what is asked of theirs
    if "but" not in r.words:
        return None
    after = r.words[r.words.index("but") + 1:]
    if _has_any(after, r.intents.get("dont", [])) and _has_any(after, r.intents.get("touch", [])) \
            and _has_any(after, [*r.intents.get("mine", []), *r.intents.get("ownership", [])]) and not r.pieces:
        return Request("keep")
    return None


@rule("release", 64)
def _never_mind(r: Line) -> Request | None:
    # "nevermind what i said before, do it your way", "esquece o que eu disse": every wish of the partner's dropped
    return Request("release", what="all") if r.has("never_mind") else None


@rule("release", 290)
def _release_consent(r: Line) -> Request | None:
    # "if my square is in the way just shift it, i dont mind": consent to move theirs wins over its "dont"
    if r.has("consent") and (r.has("touch") or r.has("move")) and r.has("ownership") and not r.stays \
            and not r.relation and not r.direction:
        return Request("release")
    return None


@rule("keep_piece", 300)
def _keep_piece_stays(r: Line) -> Request | None:
    # "yellow should stay where it is", "dont touch purple"
    if r.pieces and (r.stays or (r.has("dont") and r.has("touch") and not r.has("consent"))) and not r.relation:
        return Request("keep_piece", piece=r.piece)
    return None


@rule("keep", 310)
def _keep_stays(r: Line) -> Request | None:
    # "whatever i put down stays where i put it"
    if not r.pieces and r.stays and r.has("ownership") and not r.has("consent") and not r.question:
        return Request("keep")
    return None


@rule("release", 390)
def _release(r: Line) -> Request | None:
    return Request("release") if r.has("release") else None


@rule("keep", 400)
def _keep_dont_touch(r: Line) -> Request | None:
    # "don't change anything", "não mexas em nada": the partner's pieces stay ("don't move it": that one)
    if r.pieces or not (r.has("dont") and r.has("touch")) or r.has("consent") or r.direction or r.relation:
        return None
    that = r.last_piece if r.last_piece and r.has("that") and not r.has("mine") and not r.has_words(
        ["anything", "everything", "what i", "i put", "ive put", "i placed", "ive placed"]) else None
    return Request("keep_piece", piece=that) if that else Request("keep")


@rule("keep", 410)
def _keep(r: Line) -> Request | None:
    # "don't touch my square": that piece; "don't touch my stuff": all of theirs
    if r.has("keep"):
        return Request("keep_piece", piece=r.piece) if r.piece else Request("keep")
    return None


@rule("pieces_question", 105)
def _may_i_move(r: Line) -> Request | None:
    # "can i move your triangle? the blue one is weird there", "posso mexer no teu quadrado?": asked, not asked for
    if not r.has("move") or not r.pieces or r.direction or r.relation or r.slot or r.has_words(["pieces", "ones"]):
        return None
    if r.has("partner_may"):
        return Request("pieces_question", piece=r.piece, what="may", question=True, pieces=(r.pieces[0][1],))
    # "nooo why did u move my red triangle": whether it did
    if r.has_words(["did you move", "did u move", "you moved my", "u moved my"]):
        return Request("pieces_question", piece=r.piece, what="past", question=True, pieces=(r.pieces[0][1],))
    return None


@rule("pieces_question", 180)
def _pieces_question(r: Line) -> Request | None:
    # "are you going to move my pieces?", "can I move yours?", "did you move my square?": whose pieces move
    if not r.asked:
        return None
    whose = r.has("mine") or r.has("yours") or r.has_words(["my", "your"])
    if whose and (r.has("touch") or r.has("move")) and not r.relation and not r.direction and not r.slot \
            and "next" not in r.words and not r.has("where"):  # "whats your next move", "where should my square go"
        who = "may" if r.has_words(r.intents.get("partner_may", [])) else \
            "past" if r.has_words(r.intents.get("asked_past", [])) else "will"
        return Request("pieces_question", piece=r.piece, what=who, question=True)
    return None


# --- who plays: vague ("your turn"), wait


@rule("vague", 80)
def _resume(r: Line) -> Request | None:
    # "your turn", "you can play again": the agent plays (after a pass the partner asked for)
    if r.has("resume") and not (r.has("dont") or r.has("wait") or r.has("next")) and len(r.words) <= 6:
        return Request("vague")
    return None


@reads("vague_request")
def _vague_meant(m: Meant) -> Request:
    return Request("vague", direction=_region(m.has), what=_kind_named(m.words, m.parsed, m.has))


@rule("wait", 90)
def _handover(r: Line) -> Request | None:
    # "let me do the next one", "leave the rest to me": the partner plays, the agent passes
    if r.has("handover_rest") or r.has("handover_next"):
        return Request("wait", what="rest" if r.has("handover_rest") else "next")
    return None


def _interjected(r: Line) -> bool:
    """"wait, what are we making?": a long line with a "wait" asks what follows it; "next" then comes last."""
    return r.has("wait") and len(r.words) > 3


@rule("wait", 550)
def _wait(r: Line) -> Request | None:
    if (r.has("dont") and not r.has_words(["dont play", "do not play"])) \
            or (r.has_words(["can wait", "could wait", "will wait", "wait for"]) and not r.has_words(["wait for me"])):
        return None  # "dont stop": go on, no pass; "the fins can wait": a strategy
    return Request("wait") if r.has("wait") else None


# --- what to build first: strategy, prefer


@rule("strategy", 100)
def _strategy_theirs(r: Line) -> Request | None:
    # "I'll do the tail", "vc faz as paredes e eu faço o telhado": that part is the partner's to build
    mine_at = _positions(r.words, r.intents.get("mine_part", []))
    if mine_at and not r.question:
        theirs, their_words, _ = _find_part(r.words[max(mine_at) + 1:max(mine_at) + 4], r.figure, r.order)
        if theirs is not None:
            return Request("strategy", slot=theirs, part=their_words, what="theirs")
    return None


@reads("strategy")
def _strategy_meant(m: Meant) -> Request:
    # "start with the blue one", "put the big triangle on top": that piece next
    region = _region(m.has)
    if m.parsed.piece and (not (_size_words(m.words) or m.has("small_first")) or region):
        return Request("prefer", piece=m.parsed.piece)
    # "the walls first and the top later", "the body before the tail": what comes first
    later = sorted(_positions(m.words, m.phrases.vocabulary.intents.get("then", [])))
    first_words = m.words[:later[0]] if later and later[0] > 0 else m.words
    slot, part, _ = _find_part(first_words, m.figure, list(m.figure.order))
    if slot is not None:
        return Request("strategy", slot=slot, part=part, what="part")
    if region:
        return Request("strategy", direction=region, what="where")
    # "small bits last", "the big ones first, then the small": the big ones first
    small = _has_any(first_words, m.phrases.vocabulary.intents.get("small_first", [])) != m.has("last")
    return Request("strategy", what="small" if small else "big")


@rule("strategy", 630)
def _strategy_part_now(r: Line) -> Request | None:
    # "now the roof", "agora o telhado", "do the roof": that part next
    if r.slot and not r.piece and r.has("part_now"):
        return Request("strategy", slot=r.slot, part=r.part_words, what="part")
    return None


@rule("prefer", 110)
def _prefer_not_that(r: Line) -> Request | None:
    # "not the square, the parallelogram", "no, the other big triangle - the red one": the piece named last
    if r.pieces and r.words[:1] in (["not"], ["no"], ["nope"], ["nah"], ["dont"]) \
            and (len(r.pieces) >= 2 or "other" in r.words) \
            and not (r.has("touch") or r.has("rotate") or r.has("keep") or r.has("move")):
        return Request("prefer", piece=r.pieces[-1][1])
    return None


@rule("prefer", 370)
def _prefer_put(r: Line) -> Request | None:
    # "put the parallelogram next", "put the big triangle at the top", "put the brown one in": that
    # piece is played next ("don't move the blue one" is no such request).
    if r.pieces and not r.slot and r.has("move") and not r.has("rotate") and not r.has("negation") \
            and not r.has("consent") and not r.has("mine"):
        return Request("prefer", piece=r.piece)
    return None


@rule("prefer", 381)
def _prefer_next(r: Line) -> Request | None:
    if r.piece and not r.slot and not r.has("move") and (r.has("next") or r.has("assign")):
        return Request("prefer", piece=r.piece)
    return None


@rule("prefer", 640)
def _prefer_now(r: Line) -> Request | None:
    if r.pieces and not r.slot and r.has("piece_now") and not r.has("negation") and not r.question:
        return Request("prefer", piece=r.piece)  # "now the green one"
    return None


@rule("prefer", 650)
def _prefer_please(r: Line) -> Request | None:
    # "the blue triangle please": a piece named, nothing else asked but please, is the next piece
    if len(r.pieces) == 1 and not r.slot and len(r.words) <= 5 and r.has_words(["please", "pls", "por favor"]) \
            and not r.has("negation") and not r.question and not r.has("praise_word"):
        return Request("prefer", piece=r.piece)
    return None


@rule("prefer", 670)
def _prefer_place(r: Line) -> Request | None:
    if len(r.pieces) == 1 and r.has("place_verb") and not r.has("negation") and not r.question:
        return Request("prefer", piece=r.piece)  # "you can put the red triangle in, please": that piece next
    return None


# --- the figure: switch, switch_offer, switch_same, unknown_figure, switch_unknown


@rule("switch", 120)
def _another_figure(r: Line) -> Request | None:
    other = r.found.figure
    if other is None or other.name == r.figure.name or (r.pieces and not r.described) or r.slot is not None:
        return None
    exact = r.found.exact
    wanted = _wanted_thing(r.words, r.phrases)
    what = wanted or other.name
    # The figure is switched to at once only when the partner named it; a thing it stands for ("a
    # castle" for the house, "a penguin" for the bird) is offered as the nearest, not promised.
    if (r.plain_switch and exact and not r.question and _slip(r)) or (exact and r.has("what_figure")):
        return Request("switch_slip", figure=other, what=what)  # also "what are we building again? a dog?"
    if r.plain_switch and exact and not r.question and _names_figure(what, other):
        return Request("switch", figure=other, exact=exact, what=what)
    if r.plain_switch and exact and not r.question:
        return Request("switch_offer", figure=other, exact=False, what=what)
    # A related figure is offered only for a thing the partner asked to make: a word that merely
    # resembles one ("what is your API key?") is no wish for another figure.
    if (exact or wanted) and (r.plain_switch or r.soft_switch or r.question
                              or len([w for w in r.words if len(w) > 2]) <= 4):
        said = exact and _names_figure(" ".join(r.words), other)  # "a mermaid": the nearest, a person
        return Request("switch_offer", figure=other, exact=said, what=what, question=r.question)
    return None


def _slip(r: Line) -> bool:
    """"Hello! Let's build the house together." while the game asks for a cat: the pair's goal said
    with the wrong figure, no wish for another one (a change says "instead", "change", ...)."""
    return (r.has("greeting") or r.has("together")) and not r.has("change_figure")


@rule("unknown_figure", 130)
def _stands_in(r: Line) -> Request | None:
    # "let's build a castle" while building the house: the house only stands in for a castle, so the
    # partner hears it is not known, and that the figure being built is the nearest.
    other = r.found.figure
    if other is not None and other.name == r.figure.name and r.found.word and not r.pieces and r.slot is None \
            and not _names_figure(r.found.word, r.figure) \
            and (r.plain_switch or r.soft_switch or _wanted_thing(r.words, r.phrases)):
        return Request("unknown_figure", what=r.found.word, figure=r.figure, question=r.question)
    return None


@rule("switch_same", 140)
def _switch_same(r: Line) -> Request | None:
    # "we're making a fish right?", "is this a fish?": yes
    # (a figure only related to the one being built, "a lighthouse" for the house, is another figure)
    other = r.found.figure
    if other is not None and other.name == r.figure.name and r.found.exact and not r.pieces and r.slot is None \
            and (r.plain_switch or r.soft_switch or (r.question and len(r.words) <= 6 and not r.has("progress")
                                                     and "done" not in r.words)):
        return Request("switch_same", figure=r.figure, question=r.question)
    return None


@reads("unknown_figure")
def _unknown_figure_meant(m: Meant) -> Request:
    what = _thing(m.words)
    nearest = find_figure(what, m.library)[0] if what else None
    return Request("unknown_figure", what=what, figure=nearest)


@rule("switch_unknown", 430)
def _switch_unknown(r: Line) -> Request | None:
    if switch_word_only(r.words, r.phrases) and (not r.pieces or r.described) and r.slot is None \
            and not r.direction:
        what = _wanted_thing(r.words, r.phrases)
        if what:
            return Request("switch_unknown", what=what)
    return None


# --- questions: why, for_you, plan, resize, next, where, progress, help, other


@rule("why", 150)
def _why_asked(r: Line) -> Request | None:
    return Request("why", piece=r.piece, question=True) if r.asked and r.has("why") else None


@rule("why", 500)
def _why(r: Line) -> Request | None:
    return Request("why", piece=r.piece) if r.has("why") else None


@rule("for_you", 160)
def _for_you_asked(r: Line) -> Request | None:
    return Request("for_you", piece=r.piece, slot=r.slot, question=True) if r.asked and r.has("for_you") else None


@rule("for_you", 480)
def _for_you_part(r: Line) -> Request | None:
    if r.has("for_you") and (r.piece or r.slot):  # "help me with the roof"
        return Request("for_you", piece=r.piece, slot=r.slot)
    return None


@rule("for_you", 570)
def _for_you(r: Line) -> Request | None:
    return Request("for_you", piece=r.piece, slot=r.slot) if r.has("for_you") else None


@rule("plan", 170)
def _plan_how(r: Line) -> Request | None:
    # "how are you going to make the roof?": the plan
    return Request("plan", question=True, what="steps") if r.asked and r.has("plan_how") else None


@rule("plan", 220)
def _plan_first_asked(r: Line) -> Request | None:
    # "qual é o plano? como vais montar isto" asks the plan, not how it is
    return Request("plan", question=True, what="steps") if r.asked and r.has("plan_first") else None


@rule("plan", 260)
def _plan_asked(r: Line) -> Request | None:
    return Request("plan", question=True, what=_steps(r)) if r.asked and r.has("plan") else None


@rule("plan", 490)
def _plan_first(r: Line) -> Request | None:
    # "so whats the plan here, how r u going to build it"
    return Request("plan", what="steps") if r.has("plan_first") else None


@rule("plan", 540)
def _plan(r: Line) -> Request | None:
    return Request("plan", what=_steps(r)) if r.has("plan") else None


def _steps(r: Line) -> str:
    """"explain your plan", "how will it go": the plan's pieces asked for, not only the figure ("steps")."""
    return "steps" if r.has_words(["plan", "how", "explain"]) else ""


@rule("resize", 190)
def _resize_asked(r: Line) -> Request | None:
    # "can the roof be wider than the walls?"
    if r.asked and r.has("resize") and not r.has("where") and not r.has("next"):
        return Request("resize", question=True)
    return None


@rule("resize", 420)
def _resize(r: Line) -> Request | None:
    return Request("resize") if r.has("resize") else None


@rule("next", 200)
def _next_piece_asked(r: Line) -> Request | None:
    # "are you going to place the blue one next?", "which piece do you need now, the parallelogram?"
    if r.asked and r.piece and not r.slot and r.has("next") and not r.has("where"):
        return Request("next", question=True)
    return None


@rule("next", 240)
def _next_asked(r: Line) -> Request | None:
    return Request("next", question=True) if r.asked and r.has("next") else None


@rule("next", 520)
def _next(r: Line) -> Request | None:
    return Request("next") if not _interjected(r) and r.has("next") else None


@rule("next", 560)
def _next_after_wait(r: Line) -> Request | None:
    return Request("next") if _interjected(r) and r.has("next") else None


@rule("where", 210)
def _where_asked(r: Line) -> Request | None:
    if r.asked and (r.piece or r.slot):
        return Request("where", piece=r.piece, slot=r.slot, part=r.part_words, question=True)
    return None


@rule("where", 320)
def _where(r: Line) -> Request | None:
    if r.has("where") and (r.piece or r.slot):
        # "the blue triangle goes where" asks; "leave blue where it is" does not.
        asks_where = not r.has_words(_STAYS)
        return Request("where", piece=r.piece, slot=r.slot, part=r.part_words, question=asks_where)
    return None


@rule("check", 245)
def _check(r: Line) -> Request | None:
    # "is this right?", "está bem assim?", "fiz bem?": the partner's own pieces, checked against the figure
    return Request("check", question=True) if r.asked and r.has("check") else None


@rule("progress", 250)
def _progress_asked(r: Line) -> Request | None:
    return Request("progress", question=True) if r.asked and r.has("progress") else None


@rule("progress", 530)
def _progress(r: Line) -> Request | None:
    return Request("progress") if r.has("progress") else None


@rule("help", 270)
def _help_asked(r: Line) -> Request | None:
    return Request("help", question=True) if r.asked and r.has("help") else None


@rule("help", 510)
def _help(r: Line) -> Request | None:
    return Request("help") if r.has("help") else None


@rule("other", 280)
def _other_question(r: Line) -> Request | None:
    """A question no rule above reads: no request is read into it."""
    return Request("other", question=True) if r.asked else None


# --- a piece moved: rotate, place_near, move, assign, unknown_piece, undo


@rule("assign", 75)
def _idea(r: Line) -> Request | None:
    # "is the square ok as the head?", "i put the parallelogram as the tail, does it look right?", "the two
    # small ones i put are the windows btw", "acho que o telhado devia ser o triangulo creme, o que achas?":
    # the partner's view of which piece is which part, asked about or offered; not a request to play it
    if not r.pieces or not r.slot or r.has("rotate") or r.has("dont") or r.has("swap"):
        return None  # a piece named: "I put the head, is it ok?" names none ("it" is no piece here)
    if not (r.has("idea") or (r.question and not r.asking)):  # "can you put red as the back?" asks it played
        return None
    named = tuple(dict.fromkeys(p for _, p in r.pieces))[:2]
    return Request("assign", piece=r.piece, slot=r.slot, part=r.part_words, what="idea", pieces=named,
                   question=r.question)


@rule("swap", 325)
def _swap(r: Line) -> Request | None:
    # "swap the blue and the green", "could u switch the yellow and green ones", "troca o azul com o verde":
    # two pieces' places in the figure
    if (r.has("swap") or r.has_words(["switch", "trade"])) and len(r.pieces) >= 2:  # (position, piece) pairs
        named = tuple(dict.fromkeys(p for _, p in r.pieces))[:2]
        return Request("swap", pieces=named, piece=named[0]) if len(named) == 2 else None
    return None


@rule("rotate", 330)
def _rotate(r: Line) -> Request | None:
    if r.piece and r.has("rotate"):
        sign = -1.0 if r.has("counterclockwise") else 1.0
        m = _NUMBER.search(r.text)
        degrees = float(m.group(1)) if m else 45.0
        return Request("rotate", piece=r.piece, degrees=sign * min(degrees, 360.0))
    return None


@rule("place_near", 340)
def _place_near(r: Line) -> Request | None:
    piece, relation = r.piece, r.relation
    if not (piece and relation):
        return None
    anchor, owner = _anchor(r.words, r.pieces, piece, r.relation_match[2], r.phrases)
    words = "on top of" if r.relation_match[1] == "on top" else r.relation_match[1]  # said before a piece's name
    if relation == "touching":  # "beside the red one, left side": the side named after it
        at = max(r.relation_match[2], default=0)
        side = next((r.sides[w] for w in r.words[at + 1:] if r.sides.get(w, "touching") != "touching"), "")
        if side:
            relation, words = side, r.phrases.words.relations[side][0]
    # "stick the red triangle on top" with no piece to put it on: the top of the figure.
    if anchor or owner or not (r.direction or r.region):
        return Request("place_near", piece=piece, relation=relation, relation_words=words,
                       anchor=anchor, anchor_owner=owner)
    return None


@rule("move", 350)
def _move(r: Line) -> Request | None:
    if r.direction and (r.piece or r.slot) and (r.has("move") or len(r.words) <= 6) and not r.has("orient") \
            and not r.has("dont"):
        step = _amount(r.words, r.text, r.phrases)
        dx, dy = offset(r.direction, step)
        return Request("move", piece=r.piece, slot=r.slot, part=r.part_words, dx=dx, dy=dy, direction=r.direction)
    return None


@rule("assign", 360)
def _assign(r: Line) -> Request | None:
    # "put yellow in the tail", "poe o amarelo na cauda": a piece placed as a part ("move it to the tail" moves it)
    placing = r.has("place_verb") and not r.has("shift_verb") and not r.has("negation") and not r.has("undo")
    if r.piece and r.slot and (not r.has("move") or placing):
        # what="place": the partner asks it played ("put", "use"), not only which part it will be
        return Request("assign", piece=r.piece, slot=r.slot, part=r.part_words,
                       what="place" if placing or "use" in r.words else "")
    return None


@rule("assign", 380)
def _assign_part_named(r: Line) -> Request | None:
    # "use the red one for the roof" with a part the figure lacks: the words after "for the"
    if not r.piece or r.slot or r.has("move"):
        return None
    named = _PART_AFTER.search(r.text)
    if named and not r.has("next"):
        return Request("assign", piece=r.piece, slot=None, part=named.group(1),
                       what="place" if "use" in r.words or r.has("place_verb") else "")
    return None


@rule("unknown_piece", 440)
def _unknown_piece(r: Line) -> Request | None:
    if (r.has("move") or r.has("rotate")) and r.piece is None and r.slot is None and (r.direction or r.relation):
        return Request("unknown_piece", direction=r.direction)
    return None


@rule("wait", 62)
def _hold(r: Line) -> Request | None:
    # "oh wait hold on dont put anything yet": a stop, though it says "don't put" (no piece, no "my")
    return Request("wait") if r.has("hold") and not r.piece and "my" not in r.words else None


@rule("undo", 65)
def _undo_asked(r: Line) -> Request | None:
    # "can you undo your last move, i dont like it": the word "undo" asks it, whatever the rest says
    # (not "don't undo it")
    if "undo" not in r.words or r.has_words(["dont undo", "do not undo", "not undo", "never undo"]):
        return None
    return Request("undo", piece=r.piece)


@rule("undo", 205)
def _undo_back(r: Line) -> Request | None:
    # "put it back where it was": back where it was, not a question where it goes
    asked = r.has("undo") and not r.question and not r.has_words(["dont", "not", "never", "nothing", "anything"])
    return Request("undo", piece=r.piece) if asked else None


@rule("undo", 460)
def _undo(r: Line) -> Request | None:
    return Request("undo", piece=r.piece) if r.has("undo") else None


# --- answers to the agent: yes, no, disagree


@rule("yes", 450)
def _yes_or_no(r: Line) -> Request | None:
    """A short answer to the agent's open question (an offer of another figure)."""
    if r.offer and len(r.words) <= 6:
        if r.has("no"):
            return Request("no")
        if r.has("yes"):
            return Request("yes")
    return None


_SET_ASIDE = re.compile(r"\b(?:forget(?: about)?|instead of|rather than)\s+(?:(?:the|a|an|that|this|our)\s+)?\w+", re.I)
"""A figure set aside in a line that asks for another ("forget the robot")."""
_WANTED = frozenset({"meant", "said", "asked", "wanted"})
_NOT_WANTED = frozenset({"not", "put", "its", "thats", "placed"})
"""Words just before a side that say it is what the agent did, not what is asked ("you put it right", "not on top")."""


def side_wanted(words: Sequence[str], named: Mapping[str, str]) -> str:
    """The side a correction asks for (``named``: each one-word side's relation): the first side after
    "i meant / said / asked / wanted", else the first side not said to be what the agent did; "" when
    none is named."""
    cue = max((i for i, w in enumerate(words) if w in _WANTED), default=-1)
    sides = [(i, named[w]) for i, w in enumerate(words) if w in named]
    after = [side for i, side in sides if i > cue >= 0]
    if after:
        return after[0]
    return next((side for i, side in sides if not _NOT_WANTED & set(words[max(0, i - 3):i])), "")


@rule("disagree", 95)
def _corrected(r: Line) -> Request | None:
    # "I said beside, not on top", "eu disse ao lado, nao em cima", "thats above it, i meant under",
    # "nao, a esquerda! puseste-o a direita": what the agent did is not what was asked
    if r.question:
        return None
    side = side_wanted(r.words, r.sides)
    if not side and r.pieces and r.has("meant_piece"):
        return None  # "i meant the cream one not red": another piece (below)
    if (r.has("said_before") and (r.has_words(["not", "dont", "no", "instead"]) or side)) \
            or (r.has("corrected") and side):
        return Request("disagree", piece=r.piece, what="corrected", relation=side)
    return None


@rule("disagree", 96)
def _meant_piece(r: Line) -> Request | None:
    # "sorry i meant the cream one not red", "queria dizer o creme": the partner's last request, about
    # another piece (the first named after the cue)
    if r.question or not r.has("meant_piece"):
        return None
    at = (_phrase_at(r.words, _norm(p)) for p in r.intents["meant_piece"])
    cue = min((i for i in at if i >= 0), default=0)
    named = [p for i, p in sorted(r.pieces) if i > cue]
    return Request("disagree", piece=named[0], what="meant") if named else None


@rule("disagree", 470)
def _disagree(r: Line) -> Request | None:
    refused = not r.pieces and (r.words[:1] == ["no"] or (r.has("no") and len(r.words) <= 3)) \
        and not r.has("praise")
    if (r.has("disagree") and not r.has("consent")) or refused:  # "feel free to fix what I did wrong" consents
        return Request("disagree", piece=r.piece)
    return None


# --- the shape: spatial; a piece named, nothing asked: unclear


@reads("spatial")
def _spatial_meant(m: Meant) -> Request:
    if m.has("resize") and not m.has("space"):
        return Request("resize")
    kind = "space" if m.has("space") else "symmetry" if m.has("symmetry") else "part"
    named = tuple(dict.fromkeys(p for _, p in _find_pieces(m.words, m.phrases, list(m.figure.order))))
    if m.has("small_first") and ("triangles" in m.words or "both" in m.words or "two" in m.words):
        named = tuple(dict.fromkeys([*named, *(p for p in m.figure.order if shapes.kind(p) == "small triangle")]))
    return Request("spatial", what=kind, pieces=named, piece=named[0] if named else None)


@rule("spatial", 660)
def _space(r: Line) -> Request | None:
    if r.has("space") and not r.has("praise") and not r.has("fill"):  # "too bunched up", "a gap between blue and cream"
        return Request("spatial", what="space")
    return None


@rule("unclear", 680)
def _unclear(r: Line) -> Request | None:
    if r.piece or r.slot:
        return Request("unclear", piece=r.piece, slot=r.slot, part=r.part_words, question=r.asked)
    return None


RULES: tuple[Declared, ...] = tuple(sorted(_DECLARED, key=lambda d: d.priority))
"""Every rule, in the order a line is read."""
