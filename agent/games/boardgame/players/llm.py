"""The LLM player: the rules and the board (ASCII) in templates, a structured reply, checked here.

Each attempt is one stateless exchange: the system prompt (rules, marks, reply format) and the
turn prompt (board, legal moves, and why earlier attempts this turn were refused). The reply is
asked for as JSON matching :func:`reply_schema`; a reply that is not usable raises
:class:`InvalidChoice` with a reason the client feeds back into the next attempt. Whether the
action is legal is the client's check (the same for every player), not this module's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.core.llm import LLMClient
from agent.core.prompts import PromptSet
from agent.games.boardgame.players.base import InvalidChoice, Player, PlayerUnavailable, Turn
from agent.games.boardgame.rules.base import GameRules, WireAction

TEMPLATES = ("system", "turn")
MAX_LEGAL_LISTED = 64


class LLMReply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field("", max_length=4000)
    type: str = Field(max_length=64)
    data: dict[str, Any]


def rules_template(game: str) -> str:
    return f"rules_{game}"


def reply_schema(rules: GameRules[Any]) -> dict[str, Any]:
    """The reply's JSON Schema, strict-mode compatible (all properties required, no extras)."""
    return {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "type": {"type": "string", "enum": [rules.action_type]},
            "data": rules.action_schema,
        },
        "required": ["reasoning", "type", "data"],
        "additionalProperties": False,
    }


def prompt_context(turn: Turn, rules_text: str) -> dict[str, Any]:
    """Every variable the templates may use (the sample context at start-up has the same keys)."""
    rules = turn.rules
    legal = list(rules.legal_moves(turn.position))[:MAX_LEGAL_LISTED]
    return {
        "game_title": rules.title,
        "rules": rules_text,
        "mark": rules.marks[turn.seat],
        "opponent_mark": rules.marks[1 - turn.seat],
        "action_type": rules.action_type,
        "example_data": json.dumps(dict(rules.move_to_action(legal[0]).data)) if legal else "{}",
        "turn": turn.turn,
        "board": rules.render(turn.position),
        "legal_moves": [{"description": rules.describe_move(m),
                         "data": json.dumps(dict(rules.move_to_action(m).data))} for m in legal],
        "feedback": list(turn.feedback),
    }


def parse_reply(data: dict[str, Any] | None, text: str) -> WireAction:
    if data is None:
        raise InvalidChoice(f"the reply was not a JSON object: {text[:200]!r}")
    try:
        reply = LLMReply.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(reply)"
        raise InvalidChoice(f"the reply's {where}: {first['msg']}") from None
    return WireAction(reply.type, reply.data)


Recorder = Callable[..., None]


class LLMPlayer(Player):
    """Asks the LLM for each action. The client belongs to whoever made it (shared between matches)."""

    label = "llm"

    def __init__(self, client: LLMClient, prompts: PromptSet, record: Recorder | None = None) -> None:
        self._client = client
        self._prompts = prompts
        self._record: Recorder = record or (lambda kind, **data: None)
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    async def choose(self, turn: Turn) -> WireAction:
        rules_text = self._prompts.render(rules_template(turn.rules.name), {})
        context = prompt_context(turn, rules_text)
        messages = [
            {"role": "system", "content": self._prompts.render("system", context)},
            {"role": "user", "content": self._prompts.render("turn", context)},
        ]
        self.calls += 1
        self._record("llm_request", turn=turn.turn, attempt=len(turn.feedback) + 1, messages=messages)
        result = await self._client.complete_json(messages, reply_schema(turn.rules), schema_name="board_game_action")
        self.prompt_tokens += result.prompt_tokens
        self.completion_tokens += result.completion_tokens
        self._record("llm_reply", turn=turn.turn, ok=result.ok, text=result.text[:4000], error=result.error,
                     latency_s=round(result.latency_s, 3), prompt_tokens=result.prompt_tokens,
                     completion_tokens=result.completion_tokens)
        if not result.ok:
            raise PlayerUnavailable(f"the LLM call failed: {result.error}")
        return parse_reply(result.data, result.text)
