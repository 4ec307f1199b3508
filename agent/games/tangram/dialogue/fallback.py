"""A second reading for lines the keyword rules could not read: a line's meaning by name, from a
reader outside the rules (a sentence encoder's nearest examples or the local model's choice, in
``benchmarks/tangram/bench_replies.py --reader``), made into the request the conversation answers.

The reader is a plain callable (``line -> meaning name or None``); the names it may give are the
meanings' model's (``words/intents.yaml``), the by-meaning tables' (``question_next``, ...) and the
declared meanings' (``words/meanings.yaml``). docs/dialogue.md says why the shipped partner reads
with the rules alone."""

from __future__ import annotations

from collections.abc import Callable

from agent.games.tangram.dialogue.meanings import load_meanings
from agent.games.tangram.dialogue.phrases import Phrases
from agent.games.tangram.dialogue.requests import Request
from agent.games.tangram.dialogue.rules import by_meaning
from agent.games.tangram.planner.library import Figure, FigureLibrary

MeaningReader = Callable[[str], "str | None"]
"""A line's meaning by name, or None when the reader has none."""

_QUESTIONS = {"question_next": "next", "question_plan": "plan", "question_progress": "progress",
              "question_where": "where"}
"""The by-meaning tables' questions, as the requests the conversation answers."""
_PLAIN = frozenset({"wait", "disagree", "undo", "why", "help", "identity", "bye", "greeting", "how_are_you"})
"""Meanings whose request needs nothing from the line."""


def request_for(meaning: str, text: str, parsed: Request, figure: Figure, library: FigureLibrary,
                phrases: Phrases, last_piece: str | None) -> Request | None:
    """The request a line read as ``meaning`` makes (what it names filled in from the keywords'
    ``parsed``), or None when that meaning needs what the line does not say (a question about a
    piece that names none)."""
    if meaning in load_meanings().names:
        return Request("declared", what=meaning)
    if meaning in _QUESTIONS:
        intent = _QUESTIONS[meaning]
        if intent == "where" and parsed.piece is None and parsed.slot is None:
            return None
        return Request(intent, piece=parsed.piece, slot=parsed.slot, question=True)  # type: ignore[arg-type]
    if meaning in _PLAIN:
        return Request(meaning)  # type: ignore[arg-type]
    request = by_meaning(meaning, text, parsed, figure, library, phrases, last_piece)
    return None if request is parsed else request
