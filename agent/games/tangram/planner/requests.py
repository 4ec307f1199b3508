"""Understanding what the human writes in the chat, without an LLM.

A message is read as one request: switch figure ("make a cat instead"), give a piece a part ("use
Red for the roof"), move or turn a piece ("move Blue left a bit", "rotate the square"), pass a
turn ("wait"), or a question (what are we building, what's next, where does Blue go, how far are
we). Words come from ``phrases.yaml``; the parsing is keyword spotting on normalised words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from agent.games.tangram.planner import shapes
from agent.games.tangram.planner.library import Figure, FigureLibrary, find_figure, normalize_text
from agent.games.tangram.planner.phrases import Phrases

Intent = Literal["switch", "switch_same", "switch_unknown", "assign", "prefer", "move", "rotate", "wait", "where",
                 "next", "plan", "progress", "help", "greeting", "thanks", "unknown_piece", "keep", "release", "why",
                 "resize", "other"]

# Words of part names too common to identify a part on their own ("left" wall, "upper" hull).
_GENERIC = {"left", "right", "upper", "lower", "top", "bottom", "front", "back", "of", "the", "side", "middle",
            "centre", "center", "corner", "edge", "root", "part"}
_NUMBER = re.compile(r"(?<![a-z])(\d+(?:\.\d+)?)")
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


def _phrase_at(words: Sequence[str], phrase: str) -> int:
    p = phrase.split()
    for i in range(len(words) - len(p) + 1):
        if list(words[i:i + len(p)]) == p:
            return i
    return -1


def _has_any(words: Sequence[str], phrases: Iterable[str]) -> bool:
    return any(_phrase_at(words, normalize_text(ph)) >= 0 for ph in phrases)


def _find_pieces(words: Sequence[str], phrases: Phrases, prefer: Sequence[str]) -> list[tuple[int, str]]:
    """(position, piece) for every piece named by colour, shape or kind words."""
    found: list[tuple[int, str]] = []
    vocab = phrases.vocabulary
    for piece, names in vocab.pieces.items():
        for name in names:
            i = _phrase_at(words, normalize_text(name))
            if i >= 0:
                found.append((i, piece))
                break
    for kind, names in vocab.kinds.items():
        for name in names:
            i = _phrase_at(words, normalize_text(name))
            if i >= 0:
                of_kind = [p for p in prefer if shapes.kind(p) == kind]
                if of_kind:
                    found.append((i, of_kind[0]))
                break
    return sorted(found)


def _find_part(words: Sequence[str], figure: Figure, order: Sequence[str]) -> tuple[str | None, str, set[int]]:
    """The slot whose part the message names, the words used, and their positions."""
    best: tuple[int, str, str, set[int]] | None = None
    for slot in order:
        part = normalize_text(figure.parts[slot])
        i = _phrase_at(words, part)
        n = len(part.split())
        if i >= 0 and (best is None or n > best[0]):
            best = (n, slot, part, set(range(i, i + n)))
    if best:
        return best[1], best[2], best[3]
    for slot in order:  # one distinctive word: "wall" finds the first wall still to build
        for w in normalize_text(figure.parts[slot]).split():
            if w in _GENERIC:
                continue
            for i, x in enumerate(words):
                if x == w or x.rstrip("s") == w:
                    return slot, w, {i}
    return None, "", set()


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
    for trigger in phrases.vocabulary.intents["switch"]:
        t = normalize_text(trigger).split()
        i = _phrase_at(words, " ".join(t))
        if i >= 0 and t[-1] in ("a", "an", "to"):
            rest = [w for w in words[i + len(t):] if w not in ("instead", "please", "now", "then")]
            if rest:
                return ("an " if rest[0][0] in "aeiou" else "a ") + " ".join(rest[:3])
    return ""


def parse_request(message: str, figure: Figure, library: FigureLibrary, phrases: Phrases,
                  order: Sequence[str] | None = None, prefer: Sequence[str] | None = None,
                  last_piece: str | None = None) -> Request:
    """Read one chat message.

    ``order`` is the build order of slots (to pick the first of several walls), ``prefer`` the
    pieces not yet in place first (to pick which large triangle "the big triangle" means), and
    ``last_piece`` what "it" refers to.
    """
    text = normalize_text(message)
    words = text.split()
    intents = phrases.vocabulary.intents
    order = list(order or figure.order)
    prefer = list(prefer or order)

    def has(intent: str) -> bool:
        return _has_any(words, intents.get(intent, []))

    other_fig, exact = find_figure(message, library)
    switch_word = has("switch")
    if other_fig is not None and other_fig.name != figure.name and switch_word:
        return Request("switch", figure=other_fig, exact=exact, what=_wanted_thing(words, phrases) or other_fig.name)

    pieces = _find_pieces(words, phrases, prefer)
    slot, part_words, part_pos = _find_part(words, figure, order)
    piece = pieces[0][1] if pieces else None
    if piece is None and "it" in words and last_piece and (has("move") or has("rotate")):
        piece = last_piece
    direction = _direction(words, phrases, part_pos)

    if has("where") and (piece or slot):
        return Request("where", piece=piece, slot=slot, part=part_words)
    if piece and has("rotate"):
        sign = -1.0 if has("counterclockwise") else 1.0
        m = _NUMBER.search(text)
        degrees = float(m.group(1)) if m else 45.0
        return Request("rotate", piece=piece, degrees=sign * min(degrees, 360.0))
    if direction and (piece or slot) and (has("move") or len(words) <= 6):
        step = _amount(words, text, phrases)
        dx, dy = {"left": (-step, 0.0), "right": (step, 0.0), "up": (0.0, step), "down": (0.0, -step)}[direction]
        return Request("move", piece=piece, slot=slot, part=part_words, dx=dx, dy=dy, direction=direction)
    if piece and slot and not has("move"):
        return Request("assign", piece=piece, slot=slot, part=part_words)
    if piece and not slot and not has("move"):
        named = _PART_AFTER.search(text)
        if named and not has("next"):
            return Request("assign", piece=piece, slot=None, part=named.group(1))
        if has("next") or has("assign"):
            return Request("prefer", piece=piece)
    if has("release"):
        return Request("release")
    if has("keep"):
        return Request("keep")
    if has("resize"):
        return Request("resize")
    if (other_fig is not None and other_fig.name != figure.name and exact and not pieces
            and len([w for w in words if len(w) > 2]) <= 4):
        return Request("switch", figure=other_fig, exact=exact, what=other_fig.name)
    if other_fig is not None and other_fig.name == figure.name and switch_word:
        return Request("switch_same", figure=figure)
    if switch_word and not pieces and slot is None and not has("resize") and not direction:
        what = _wanted_thing(words, phrases)
        if what:
            return Request("switch_unknown", what=what)
    if (has("move") or has("rotate")) and piece is None and slot is None and direction:
        return Request("unknown_piece")
    for intent in ("why", "wait", "help", "next", "progress", "plan"):
        if has(intent):
            return Request(intent)
    if has("thanks"):
        return Request("thanks")
    if has("greeting"):
        return Request("greeting")
    return Request("other")
