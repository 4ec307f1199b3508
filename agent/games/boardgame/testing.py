"""Fake-LLM responders for the LLM player (tests, ``eval --fake-llm``): legal, or chaotic.

They read the legal moves from the turn prompt's list (``- description: {json}`` lines), the way
a model would, so they keep working when the templates change wording but keep that list.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from typing import Any

from agent.core.testing.fake_openai import FakeReply

_MOVE_LINE = re.compile(r"^- [^:\n]+: (\{.*\})\s*$", re.MULTILINE)


def legal_moves_in(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The legal moves' data listed in the request's last user message."""
    messages = request.get("messages") or []
    text = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    moves = []
    for match in _MOVE_LINE.finditer(text if isinstance(text, str) else ""):
        try:
            moves.append(json.loads(match.group(1)))
        except ValueError:
            continue
    return moves


def _action_type(request: dict[str, Any]) -> str:
    system = next((m.get("content", "") for m in request.get("messages") or [] if m.get("role") == "system"), "")
    found = re.search(r'action type, always "([a-z_]+)"', system if isinstance(system, str) else "")
    return found.group(1) if found else "place"


def legal_responder(rng: random.Random) -> Callable[[dict[str, Any]], FakeReply]:
    """A model that always answers with a random legal move."""
    def respond(request: dict[str, Any]) -> FakeReply:
        moves = legal_moves_in(request) or [{}]
        return FakeReply.ok_json({"reasoning": "a legal move", "type": _action_type(request),
                                  "data": rng.choice(moves)})
    return respond


def chaotic_responder(rng: random.Random, *, stall_seconds: float = 3.0) -> Callable[[dict[str, Any]], FakeReply]:
    """A model (and provider) that misbehaves in every way we know, and sometimes answers well."""
    def respond(request: dict[str, Any]) -> FakeReply:
        kind = _action_type(request)
        moves = legal_moves_in(request) or [{}]
        move = rng.choice(moves)
        key = next(iter(move), "column")
        choices: list[Callable[[], FakeReply]] = [
            lambda: FakeReply.ok_json({"reasoning": "fine", "type": kind, "data": move}),
            lambda: FakeReply.ok_json({"reasoning": "fine", "type": kind, "data": move}),
            lambda: FakeReply.ok_json({"reasoning": "off the board", "type": kind, "data": dict.fromkeys(move, 99)}),
            lambda: FakeReply.ok_json({"reasoning": "taken", "type": kind,
                                       "data": dict.fromkeys(move, 1)}),
            lambda: FakeReply.ok_json({"reasoning": "words", "type": kind, "data": {key: "the middle one"}}),
            lambda: FakeReply.ok_json({"reasoning": "wrong type", "type": "resign", "data": move}),
            lambda: FakeReply.ok_json({"reasoning": "no data", "type": kind}),
            lambda: FakeReply.ok_json([move]),
            lambda: FakeReply.ok_json({"reasoning": "bool", "type": kind, "data": dict.fromkeys(move, True)}),
            lambda: FakeReply.ok("I think the best move is the centre."),
            lambda: FakeReply.ok('{"reasoning": "cut off", "type": "'),
            lambda: FakeReply.ok_json({"reasoning": "x" * 20_000, "type": kind, "data": move}),
            lambda: FakeReply.http_error(500, "the model is overloaded"),
            lambda: FakeReply.http_error(400, "bad request"),
            lambda: FakeReply.garbage(),
            lambda: FakeReply.dropped(),
            lambda: FakeReply.truncated(),
            lambda: FakeReply.stall(stall_seconds, json.dumps({"reasoning": "slow", "type": kind, "data": move})),
        ]
        return rng.choice(choices)()
    return respond
