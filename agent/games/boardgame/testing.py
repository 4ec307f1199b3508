"""Fake-LLM responders for the LLM player (tests, ``eval --fake-llm``): legal, or chaotic.

They read the legal moves the way a model would: from the reply schema's ``move`` enum when the
request asks for structured output, else from the turn prompt's "Legal moves:" list, so they keep
working when the templates change wording but keep that list.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from typing import Any

from agent.core.testing.fake_openai import FakeReply

_LIST = re.compile(r"^Legal moves:\n((?:- [^\n]+\n?)+)", re.MULTILINE)


def _last_user_text(request: dict[str, Any]) -> str:
    messages = request.get("messages") or []
    text = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    return text if isinstance(text, str) else ""


def legal_moves_in(request: dict[str, Any]) -> list[str]:
    """The legal moves' labels the request offers: the schema's enum, else the prompt's list."""
    rf = request.get("response_format")
    if isinstance(rf, dict):
        schema = (rf.get("json_schema") or {}).get("schema") or {}
        enum = ((schema.get("properties") or {}).get("move") or {}).get("enum")
        if isinstance(enum, list) and enum:
            return [str(label) for label in enum]
    found = _LIST.search(_last_user_text(request))
    if found is None:
        return []
    return [line[2:].strip() for line in found.group(1).splitlines() if line.startswith("- ")]


def _action_type(request: dict[str, Any]) -> str:
    system = next((m.get("content", "") for m in request.get("messages") or [] if m.get("role") == "system"), "")
    found = re.search(r'action type, always "([a-z_]+)"', system if isinstance(system, str) else "")
    return found.group(1) if found else "place"


def legal_responder(rng: random.Random) -> Callable[[dict[str, Any]], FakeReply]:
    """A model that always answers with a random legal move."""
    def respond(request: dict[str, Any]) -> FakeReply:
        moves = legal_moves_in(request) or ["?"]
        return FakeReply.ok_json({"reasoning": "a legal move", "move": rng.choice(moves)})
    return respond


CHAOS_KINDS = ("legal", "stall", "long_reasoning", "not_listed", "free_form_off_board", "wrong_shape", "prose",
               "cut_off", "http_500", "http_400", "garbage", "dropped", "truncated")
"""What the chaotic responder does. Half of its replies are a random legal move (a model that
follows the schema but plays at random), the other half spread over the rest: a stall, a valid move
with a 20,000-character reasoning, moves that are not listed, the free form with an off-board
cell, wrong shapes, prose, JSON cut off at the token limit, HTTP 500 and 400, garbage bodies,
dropped and truncated connections."""


def chaotic_responder(rng: random.Random, *, stall_seconds: float = 3.0) -> Callable[[dict[str, Any]], FakeReply]:
    """A model (and provider) that misbehaves in every way we know, and answers legally half the time."""
    def respond(request: dict[str, Any]) -> FakeReply:
        kind = _action_type(request)
        moves = legal_moves_in(request) or ["?"]
        move = rng.choice(moves)
        if rng.random() < 0.5:
            return FakeReply.ok_json({"reasoning": "a legal move at random", "move": move})
        choices: dict[str, Callable[[], FakeReply]] = {
            "stall": lambda: FakeReply.stall(stall_seconds, json.dumps({"reasoning": "slow", "move": move})),
            "long_reasoning": lambda: FakeReply.ok_json({"reasoning": "x" * 20_000, "move": move}),
            "not_listed": lambda: FakeReply.ok_json({"reasoning": "off the list", "move": "row 9 column 99"}),
            "free_form_off_board": lambda: FakeReply.ok_json({"reasoning": "off the board", "type": kind,
                                                              "data": {"row": 99, "column": 99}}),
            "wrong_shape": lambda: FakeReply.ok_json([move]),
            "prose": lambda: FakeReply.ok(f"I think the best move is {move}."),
            "cut_off": lambda: FakeReply.ok('{"reasoning": "cut off", "move": "', finish_reason="length"),
            "http_500": lambda: FakeReply.http_error(500, "the model is overloaded"),
            "http_400": lambda: FakeReply.http_error(400, "bad request"),
            "garbage": lambda: FakeReply.garbage(),
            "dropped": lambda: FakeReply.dropped(),
            "truncated": lambda: FakeReply.truncated(),
        }
        return choices[rng.choice(sorted(choices))]()
    return respond
