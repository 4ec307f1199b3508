"""Understanding what the human writes in the chat, without an LLM.

A message is read as one request: switch figure ("make a cat instead"), give a piece a part ("use
Red for the roof"), move or turn a piece ("move Blue left a bit", "rotate the square"), pass a
turn ("wait"), or a question (what are we building, what's next, where does Blue go, how far are
we). Words come from ``phrases.yaml``; the parsing is keyword spotting on normalised words.
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
from agent.games.tangram.planner.library import Figure, FigureLibrary, normalize_text
from agent.games.tangram.planner.matching import STOPWORDS, find_figure, match_text

Intent = Literal["switch", "switch_offer", "switch_same", "switch_unknown", "assign", "prefer", "move", "rotate",
                 "place_near", "wait", "where", "next", "plan", "progress", "help", "greeting", "thanks",
                 "unknown_piece", "keep", "release", "why", "resize", "yes", "no", "disagree", "undo", "how_are_you",
                 "bye", "identity", "for_you", "ack", "smalltalk", "praise", "unclear", "other",
                 "keep_piece", "strategy", "unknown_figure", "spatial", "vague", "other_language", "pieces_question"]

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


def parse_request(message: str, figure: Figure, library: FigureLibrary, phrases: Phrases,
                  order: Sequence[str] | None = None, prefer: Sequence[str] | None = None,
                  last_piece: str | None = None, offer: bool = False) -> Request:
    """Read one chat message.

    ``order`` is the build order of slots (to pick the first of several walls), ``prefer`` the
    pieces not yet in place first (to pick which large triangle "the big triangle" means),
    ``last_piece`` what "it" refers to, and ``offer`` whether the agent has just asked a yes/no
    question (another figure) that a short "yes" or "no" answers.

    A question ("what is Purple for?") is answered, never taken for a request; a request may be
    phrased as one ("can you move Blue left?"). A figure is switched only when asked plainly
    ("let's make a boat"); a remark ("it should be a boat instead") or a related figure is offered.
    """
    text = correct_typos(normalize_text(message), phrases)
    words = text.split()
    intents = phrases.vocabulary.intents
    order = list(order or figure.order)
    prefer = list(prefer or order)

    def has(intent: str) -> bool:
        return _has_any(words, intents.get(intent, []))

    def starts(intent: str) -> bool:
        return any(_phrase_at(words, _norm(p)) == 0 for p in intents.get(intent, []))

    # "the blue one faces the wrong way, can you rotate it?": a request after a remark
    asking = starts("request_start") or (_has_any(words, ["can you", "could you", "would you", "please"])
                                         and (has("move") or has("rotate")))
    # "what i put down stays where it is" opens with a relative "what", no question
    question = not asking and (message.rstrip().endswith("?")
                               or (starts("question_start") and words[:2] != ["what", "i"]))
    if question and has("identity") and len(words) <= 6:
        return Request("identity", question=True)
    found = match_text(message, library)
    other_fig, exact = found.figure, found.exact
    plain_switch = has("switch") and not has("soft_switch_only")
    soft_switch = has("soft_switch") or has("soft_switch_only")
    pieces = _find_pieces(words, phrases, prefer)
    slot, part_words, part_pos = _find_part(words, figure, order)
    piece = pieces[0][1] if pieces else None
    # "thanks for not moving my square": thanks, for whatever it thanks for
    if starts("thanks") and "for" in words[1:4]:
        return Request("thanks")
    # "not bad at all", "no complaints", "couldn't have done it better": praise, whatever its negation
    if has("praise_idiom") and not question:
        return Request("praise")
    acting = asking or has("move") or has("rotate") or has("dont") or has("next") or has("where")
    # "that's a clever spot for the cream one, well done": praise that names a piece asks nothing of it
    if has("praise") and not acting and not question:
        return Request("praise")
    # "thank you, that was very kind of you to help me with the roof": thanks
    if starts("thanks") and not acting and not question:
        return Request("thanks")
    # "keep the parallelogram there, it's fine", "mantenha o paralelogramo nessa posição": that piece stays
    if pieces and "keep" in words and not (has("move") or has("rotate") or question):
        return Request("keep_piece", piece=piece)
    # "you can place yours but dont touch mine": the clause after "but" says what is asked of theirs
    if "but" in words:
        after = words[words.index("but") + 1:]
        if _has_any(after, intents.get("dont", [])) and _has_any(after, intents.get("touch", [])) \
                and _has_any(after, [*intents.get("mine", []), *intents.get("ownership", [])]) and not pieces:
            return Request("keep")
    # "your turn", "you can play again": the agent plays (after a pass the partner asked for)
    if has("resume") and not (has("dont") or has("wait") or has("next")) and len(words) <= 6:
        return Request("vague")
    # "let me do the next one", "leave the rest to me": the partner plays, the agent passes
    if has("handover_rest") or has("handover_next"):
        return Request("wait", what="rest" if has("handover_rest") else "next")
    # "I'll do the tail", "vc faz as paredes e eu faço o telhado": that part is the partner's to build
    mine_at = _positions(words, intents.get("mine_part", []))
    if mine_at and not question:
        theirs, their_words, _ = _find_part(words[max(mine_at) + 1:max(mine_at) + 4], figure, order)
        if theirs is not None:
            return Request("strategy", slot=theirs, part=their_words, what="theirs")
    # "not the square, the parallelogram", "no, the other big triangle - the red one": the piece named last
    if pieces and words[:1] in (["not"], ["no"], ["nope"], ["nah"], ["dont"]) \
            and (len(pieces) >= 2 or "other" in words) \
            and not (has("touch") or has("rotate") or has("keep") or has("move")):
        return Request("prefer", piece=pieces[-1][1])
    # "bora fazer uma girafa azul": a colour after the thing asked for describes it, and names no piece
    asked_for = _wanted_thing(words, phrases).split()[1:]
    described = plain_switch and bool(pieces) and (
        (other_fig is not None and _names_figure(" ".join(asked_for), other_fig))  # "make a blue cat"
        or (len(asked_for) >= 2 and not _find_pieces(asked_for[:1], phrases, prefer)))
    if other_fig is not None and other_fig.name != figure.name and (not pieces or described) and slot is None:
        wanted = _wanted_thing(words, phrases)
        what = wanted or other_fig.name
        # The figure is switched to at once only when the partner named it; a thing it stands for ("a
        # castle" for the house, "a penguin" for the bird) is offered as the nearest, not promised.
        if plain_switch and exact and not question and _names_figure(what, other_fig):
            return Request("switch", figure=other_fig, exact=exact, what=what)
        if plain_switch and exact and not question:
            return Request("switch_offer", figure=other_fig, exact=False, what=what)
        # A related figure is offered only for a thing the partner asked to make: a word that merely
        # resembles one ("what is your API key?") is no wish for another figure.
        if (exact or wanted) and (plain_switch or soft_switch or question
                                  or len([w for w in words if len(w) > 2]) <= 4):
            said = exact and _names_figure(" ".join(words), other_fig)  # "a mermaid": the nearest, a person
            return Request("switch_offer", figure=other_fig, exact=said, what=what, question=question)
    # "let's build a castle" while building the house: the house only stands in for a castle, so the
    # partner hears it is not known, and that the figure being built is the nearest.
    if other_fig is not None and other_fig.name == figure.name and found.word and not pieces and slot is None \
            and not _names_figure(found.word, figure) \
            and (plain_switch or soft_switch or _wanted_thing(words, phrases)):
        return Request("unknown_figure", what=found.word, figure=figure, question=question)
    # "we're making a fish right?", "is this a fish?": yes
    # (a figure only related to the one being built, "a lighthouse" for the house, is another figure)
    if other_fig is not None and other_fig.name == figure.name and exact and not pieces and slot is None \
            and (plain_switch or soft_switch or (question and len(words) <= 6 and not has("progress")
                                                 and "done" not in words)):
        return Request("switch_same", figure=figure, question=question)
    if piece is None and "it" in words and last_piece and (has("move") or has("rotate")) and not has("keep") \
            and not has("mine") and not has("switch"):  # "turn it into a penguin" asks for a figure
        piece = last_piece
    direction = _direction(words, phrases, part_pos | _positions(words, intents.get("put_down", [])))
    if direction == "down" and has("place_verb") and not has("shift_verb") and not _has_any(
            words, [*phrases.vocabulary.amounts.get("small", []), *phrases.vocabulary.amounts.get("large", [])]):
        direction = ""  # "put the big triangles down first": on the board, not lower
    relation, relation_words, rel_pos = _relation(words, phrases)

    if question and not asking:
        if has("why"):
            return Request("why", question=True)
        if has("for_you"):
            return Request("for_you", piece=piece, slot=slot, question=True)
        if has("plan_how"):  # "how are you going to make the roof?": the plan
            return Request("plan", question=True)
        # "are you going to move my pieces?", "can I move yours?", "did you move my square?": whose pieces move
        whose = has("mine") or has("yours") or _has_any(words, ["my", "your"])
        if whose and (has("touch") or has("move")) and not relation and not direction and not slot \
                and "next" not in words and not has("where"):  # "whats your next move", "where should my square go"
            who = "may" if _has_any(words, intents.get("partner_may", [])) else \
                "past" if _has_any(words, intents.get("asked_past", [])) else "will"
            return Request("pieces_question", piece=piece, what=who, question=True)
        if has("resize") and not has("where") and not has("next"):  # "can the roof be wider than the walls?"
            return Request("resize", question=True)
        # "are you going to place the blue one next?", "which piece do you need now, the parallelogram?"
        if piece and not slot and has("next") and not has("where"):
            return Request("next", question=True)
        if piece or slot:
            return Request("where", piece=piece, slot=slot, part=part_words, question=True)
        if has("plan_first"):  # "qual é o plano? como vais montar isto" asks the plan, not how it is
            return Request("plan", question=True)
        if has("how_are_you") and not _planning(words):
            return Request("how_are_you", question=True)
        for asked in ("next", "progress", "plan", "help"):
            if has(asked):
                return Request(asked, question=True)
        return Request("other", question=True)

    stays = (_has_any(words, _STAYS) or has("leave_piece")) and not has("move") and not has("space") \
        and not has("last")
    # "if my square is in the way just shift it, i dont mind": consent to move theirs wins over its "dont"
    if has("consent") and (has("touch") or has("move")) and has("ownership") and not stays and not relation \
            and not direction:
        return Request("release")
    if pieces and (stays or (has("dont") and has("touch") and not has("consent"))) and not relation:
        return Request("keep_piece", piece=piece)  # "yellow should stay where it is", "dont touch purple"
    if not pieces and stays and has("ownership") and not has("consent") and not question:
        return Request("keep")  # "whatever i put down stays where i put it"
    if has("where") and (piece or slot):
        # "the blue triangle goes where" asks; "leave blue where it is" does not.
        asks_where = not _has_any(words, _STAYS)
        return Request("where", piece=piece, slot=slot, part=part_words, question=asks_where)
    if piece and has("rotate"):
        sign = -1.0 if has("counterclockwise") else 1.0
        m = _NUMBER.search(text)
        degrees = float(m.group(1)) if m else 45.0
        return Request("rotate", piece=piece, degrees=sign * min(degrees, 360.0))
    anchor, owner = _anchor(words, pieces, piece, rel_pos, phrases) if piece and relation else (None, "")
    # "stick the red triangle on top" with no piece to put it on: the top of the figure.
    if piece and relation and (anchor or owner or not (direction or _region(has))):
        return Request("place_near", piece=piece, relation=relation, relation_words=relation_words,
                       anchor=anchor, anchor_owner=owner)
    if direction and (piece or slot) and (has("move") or len(words) <= 6) and not has("orient") and not has("dont"):
        step = _amount(words, text, phrases)
        dx, dy = {"left": (-step, 0.0), "right": (step, 0.0), "up": (0.0, step), "down": (0.0, -step)}[direction]
        return Request("move", piece=piece, slot=slot, part=part_words, dx=dx, dy=dy, direction=direction)
    # "put yellow in the tail", "poe o amarelo na cauda": a piece placed as a part ("move it to the tail" moves it)
    placing = has("place_verb") and not has("shift_verb") and not has("negation") and not has("undo")
    if piece and slot and (not has("move") or placing):
        # what="place": the partner asks it played ("put", "use"), not only which part it will be
        return Request("assign", piece=piece, slot=slot, part=part_words,
                       what="place" if placing or "use" in words else "")
    # "put the parallelogram next", "put the big triangle at the top", "put the brown one in": that
    # piece is played next ("don't move the blue one" is no such request).
    if pieces and not slot and has("move") and not has("rotate") and not has("negation") and not has("consent") \
            and not has("mine"):
        return Request("prefer", piece=piece)
    if piece and not slot and not has("move"):
        named = _PART_AFTER.search(text)
        if named and not has("next"):
            return Request("assign", piece=piece, slot=None, part=named.group(1),
                           what="place" if "use" in words or has("place_verb") else "")
        if has("next") or has("assign"):
            return Request("prefer", piece=piece)
    if has("release"):
        return Request("release")
    # "don't change anything", "não mexas em nada": the partner's pieces stay ("don't move it": that one)
    if not pieces and has("dont") and has("touch") and not has("consent") and not direction and not relation:
        that = last_piece if last_piece and has("that") and not has("mine") and not _has_any(
            words, ["anything", "everything", "what i", "i put", "ive put", "i placed", "ive placed"]) else None
        return Request("keep_piece", piece=that) if that else Request("keep")
    if has("keep"):  # "don't touch my square": that piece; "don't touch my stuff": all of theirs
        return Request("keep_piece", piece=piece) if piece else Request("keep")
    if has("resize"):
        return Request("resize")
    if switch_word_only(words, phrases) and (not pieces or described) and slot is None and not direction:
        what = _wanted_thing(words, phrases)
        if what:
            return Request("switch_unknown", what=what)
    if (has("move") or has("rotate")) and piece is None and slot is None and (direction or relation):
        return Request("unknown_piece", direction=direction)
    if offer and len(words) <= 6:
        if has("no"):
            return Request("no")
        if has("yes"):
            return Request("yes")
    if has("undo"):
        return Request("undo", piece=piece)
    refused = not pieces and (words[:1] == ["no"] or (has("no") and len(words) <= 3)) and not has("praise")
    if (has("disagree") and not has("consent")) or refused:  # "feel free to fix what I did wrong" consents
        return Request("disagree", piece=piece)
    if has("for_you") and (piece or slot):  # "help me with the roof"
        return Request("for_you", piece=piece, slot=slot)
    if has("plan_first"):  # "so whats the plan here, how r u going to build it"
        return Request("plan")
    # "wait, what are we making?": the question after the interjection is what is asked.
    for intent in ("why", "help", "next", "progress", "plan", "wait") if not has("wait") or len(words) <= 3 \
            else ("why", "help", "progress", "plan", "wait", "next"):
        if intent == "wait" and ((has("dont") and not _has_any(words, ["dont play", "do not play"]))
                                 or _has_any(words, ["can wait", "could wait", "will wait", "wait for"])):
            continue  # "dont stop": go on, no pass; "the fins can wait": a strategy
        if has(intent):
            return Request(intent)
    if has("for_you"):
        return Request("for_you", piece=piece, slot=slot)
    for intent in ("thanks", "how_are_you", "bye", "greeting"):
        if has(intent):
            return Request(intent)  # type: ignore[arg-type]
    if has("praise") or (has("praise_word") and len(words) <= 4 and not (pieces or slot)):
        return Request("praise")
    if slot and not piece and has("part_now"):  # "now the roof", "agora o telhado", "do the roof": that part next
        return Request("strategy", slot=slot, part=part_words, what="part")
    if pieces and not slot and has("piece_now") and not has("negation") and not question:
        return Request("prefer", piece=piece)  # "now the green one"
    # "the blue triangle please": a piece named, nothing else asked but please, is the next piece
    if len(pieces) == 1 and not slot and len(words) <= 5 and _has_any(words, ["please", "pls", "por favor"]) \
            and not has("negation") and not question and not has("praise_word"):
        return Request("prefer", piece=piece)
    if has("space") and not has("praise") and not has("fill"):  # "too bunched up", "a gap between blue and cream"
        return Request("spatial", what="space")
    if len(pieces) == 1 and has("place_verb") and not has("negation") and not question:
        return Request("prefer", piece=piece)  # "you can put the red triangle in, please": that piece next
    if piece or slot:
        return Request("unclear", piece=piece, slot=slot, part=part_words)
    if has("smalltalk"):
        return Request("smalltalk")
    if has("yes") and len(words) <= 4:
        return Request("ack")
    return Request("other")


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
            close = process.extractOne(w, known, scorer=fuzz.ratio, score_cutoff=TYPO_SCORE)
            out.append(close[0] if close else w)
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


STRONG = frozenset({"switch", "switch_offer", "switch_same", "switch_unknown", "move", "rotate", "place_near",
                    "assign", "prefer", "spatial",
                    "yes", "no",
                    "why", "undo", "wait", "for_you", "identity", "bye", "how_are_you", "greeting", "help",
                    "disagree"})
"""What the keyword reading takes apart with confidence: a reading by meaning does not overrule it."""
_ARTICLE = {"a", "an"}
_STAYS = ("where it is", "where they are", "where it was", "where its", "where she is", "where he is", "as it is",
          "as they are", "stays there", "stay there", "stays put", "stay put", "locked in", "where i put it",
          "where i put them", "where i left it", "where i left them", "where i placed it", "where i placed them",
          "keep it there", "keep them there", "keep it like that", "keep it as is")
"""Words that keep a piece where it is ("purple stays as it is", "red is locked in")."""


def by_meaning(meaning: str, text: str, parsed: Request, figure: Figure, library: FigureLibrary,
               phrases: Phrases, last_piece: str | None = None) -> Request:
    """The request a line read by its meaning (:mod:`.intents`) makes, with what it names filled in
    from the keyword reading (``parsed``) and the line's own words."""
    words = correct_typos(normalize_text(text), phrases).split()
    intents = phrases.vocabulary.intents

    def has(key: str) -> bool:
        return _has_any(words, intents.get(key, []))

    if meaning in ("praise", "thanks", "ack"):
        return Request(meaning)  # type: ignore[arg-type]
    if meaning == "keep_mine" and parsed.piece and _find_pieces(words, phrases, list(figure.order)):
        meaning = "keep_piece"  # "leave purple alone", "don't touch my square": that piece (named, not "it")
    if meaning in ("keep_mine", "may_move_mine"):  # the same words, opposite wishes: consent or negation decides
        consent, negated = has("consent"), has("negation")
        if consent or negated:
            return Request("release" if consent else "keep")
        return Request("keep" if meaning == "keep_mine" else "release")
    if meaning == "keep_piece":
        piece = parsed.piece or (last_piece if has("that") else None)
        return Request("keep_piece", piece=piece) if piece else Request("keep")
    if meaning == "strategy":
        # "start with the blue one", "put the big triangle on top": that piece next
        if parsed.piece and (not (_size_words(words) or has("small_first")) or _region(has)):
            return Request("prefer", piece=parsed.piece)
        # "the walls first and the top later", "the body before the tail": what comes first
        later = sorted(_positions(words, intents.get("then", [])))
        first_words = words[:later[0]] if later and later[0] > 0 else words
        slot, part, _ = _find_part(first_words, figure, list(figure.order))
        if slot is not None:
            return Request("strategy", slot=slot, part=part, what="part")
        region = _region(has)
        if region:
            return Request("strategy", direction=region, what="where")
        # "small bits last", "the big ones first, then the small": the big ones first
        small = _has_any(first_words, intents.get("small_first", [])) != has("last")
        return Request("strategy", what="small" if small else "big")
    if meaning == "unknown_figure":
        what = _thing(words)
        nearest = find_figure(what, library)[0] if what else None
        return Request("unknown_figure", what=what, figure=nearest)
    if meaning == "spatial":
        if has("resize") and not has("space"):
            return Request("resize")
        kind = "space" if has("space") else "symmetry" if has("symmetry") else "part"
        named = tuple(dict.fromkeys(p for _, p in _find_pieces(words, phrases, list(figure.order))))
        if has("small_first") and ("triangles" in words or "both" in words or "two" in words):
            named = tuple(dict.fromkeys([*named, *(p for p in figure.order if shapes.kind(p) == "small triangle")]))
        return Request("spatial", what=kind, pieces=named, piece=named[0] if named else None)
    if meaning == "vague_request":
        return Request("vague", direction=_region(has), what=_kind_named(words, parsed, has))
    return parsed


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
