"""The LLM player: the rules and the board (ASCII) in templates, a structured reply, checked here.

Each attempt is one stateless exchange: the system prompt (rules, marks, reply format) and the
turn prompt (board, legal moves, and why earlier attempts this turn were refused). For a game with
a rules plugin the reply names its move among the legal ones: :func:`reply_schema` is built per
position, ``{reasoning, move}`` with ``move`` an enum of the legal moves' labels (the same labels
the prompt lists), so a schema-following model cannot propose an illegal move. A game without a
plugin keeps the free form (``type`` and ``data_json``) and the engine's refusals fed back. A reply
that is not usable raises :class:`InvalidChoice` with a reason the client feeds back into the next
attempt; whether the action is legal stays the client's check (the same for every player).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.core import jsonsafe
from agent.core.llm import Compact, LLMClient, LLMResult
from agent.core.llm.records import record_llm_result, record_llm_unfinished
from agent.core.prompts import PromptSet
from agent.core.transcript import Transcript
from agent.games.boardgame.players.base import InvalidChoice, Player, PlayerUnavailable, TextPlayer, TextTurn, Turn
from agent.games.boardgame.rules.base import GameRules, WireAction

TEMPLATES = ("system", "turn", "system_text", "turn_text")
MAX_LEGAL_LISTED = 64
MAX_STATE_CHARS = 8_000
"""The raw state shown in text mode is cut here (and says so), to bound the prompt."""


class LLMReply(BaseModel):
    """A free-form reply (a model that ignored the move list): checked by the client like any action."""

    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field("", max_length=4000)
    type: str = Field(max_length=64)
    data: dict[str, Any]


MAX_LABEL_CHARS = 200


def rules_template(game: str) -> str:
    return f"rules_{game}"


def move_labels(rules: GameRules[Any], position: Any) -> dict[str, int]:
    """The legal moves by their labels (the rules' own words, e.g. "row 1 column 3"), in the
    rules' order, at most :data:`MAX_LEGAL_LISTED`; what the prompt lists and the schema allows."""
    labels: dict[str, int] = {}
    for move in list(rules.legal_moves(position))[:MAX_LEGAL_LISTED]:
        labels.setdefault(rules.describe_move(move)[:MAX_LABEL_CHARS], move)
    return labels


def reply_schema(rules: GameRules[Any], position: Any = None) -> dict[str, Any]:
    """The reply's JSON Schema for ``position`` (default: the initial one), valid for OpenAI strict
    mode, xgrammar and llama.cpp: ``reasoning`` first, then ``move``, one of the legal moves' labels."""
    labels = list(move_labels(rules, rules.initial() if position is None else position))
    return {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string", "description": "one or two short sentences, before the move"},
            "move": {"type": "string", "enum": labels, "description": "one of the legal moves, exactly as listed"},
        },
        "required": ["reasoning", "move"],
        "additionalProperties": False,
    }


def tactics(rules: GameRules[Any], position: Any, seat: int) -> tuple[list[int], list[int]]:
    """(moves that win at once, moves after which the opponent can win at once): one ply each way.

    LLMs misread boards; these two lists are what a player must never miss, computed exactly.
    """
    wins, losing = [], []
    for move in rules.legal_moves(position):
        after = rules.play(position, move)
        outcome = rules.outcome(after)
        if outcome is not None:
            if outcome.winner == seat:
                wins.append(move)
            continue
        for reply in rules.legal_moves(after):
            result = rules.outcome(rules.play(after, reply))
            if result is not None and result.winner == 1 - seat:
                losing.append(move)
                break
    return wins, losing


def prompt_context(turn: Turn, rules_text: str, compact: bool = False) -> dict[str, Any]:
    """Every variable the templates may use (the sample context at start-up has the same keys).

    ``compact``: the form for a model whose context window the full prompt does not fit (the rules
    text left out: the legal moves and the tactics stay; the last refusal only)."""
    rules = turn.rules
    labels = list(move_labels(rules, turn.position))
    wins, losing = tactics(rules, turn.position, turn.seat)
    return {
        "game_title": rules.title,
        "rules": rules_text,
        "mark": rules.marks[turn.seat],
        "opponent_mark": rules.marks[1 - turn.seat],
        "turn": turn.turn,
        "board": rules.render(turn.position),
        "legal_moves": labels,
        "example_move": labels[0] if labels else "",
        "feedback": list(turn.feedback[-1:] if compact else turn.feedback),
        "winning_moves": [rules.describe_move(m) for m in wins],
        "losing_moves": [rules.describe_move(m) for m in losing],
        "compact": compact,
    }


TEXT_REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "type": {"type": "string"},
        "data_json": {"type": "string", "description": "the action's data object, as JSON text"},
    },
    "required": ["reasoning", "type", "data_json"],
    "additionalProperties": False,
}
"""Text mode knows no action schema, and strict mode allows no free-form object: data comes as JSON text."""


def text_prompt_context(turn: TextTurn, rules_text: str, compact: bool = False) -> dict[str, Any]:
    """``compact``: the state written without indentation and the last refusal only (the rules stay:
    a game without a plugin has nothing else to go by)."""
    state = json.dumps(dict(turn.state_data), indent=None if compact else 1, sort_keys=True, default=str,
                       separators=(",", ":") if compact else None)
    if len(state) > MAX_STATE_CHARS:
        state = state[:MAX_STATE_CHARS] + "\n... (cut: the state is longer)"
    return {
        "game": turn.game,
        "rules": rules_text,
        "agent_id": turn.agent_id,
        "mark": turn.mark,
        "turn": turn.turn,
        "state_json": state,
        "legal_actions": [json.dumps(dict(a)) for a in turn.legal_actions[:MAX_LEGAL_LISTED]],
        "feedback": list(turn.feedback[-1:] if compact else turn.feedback),
        "compact": compact,
    }


def parse_text_reply(data: dict[str, Any] | None, text: str) -> WireAction:
    if data is None:
        raise InvalidChoice(f"the reply was not a JSON object: {text[:200]!r}")
    kind, raw = data.get("type"), data.get("data_json")
    if not isinstance(kind, str) or not kind or len(kind) > 64:
        raise InvalidChoice("the reply's type must be the action type, a short non-empty string")
    if isinstance(raw, dict):
        return WireAction(kind, raw)  # a model that ignored "as JSON text" but gave an object
    try:
        action_data = jsonsafe.loads(raw) if isinstance(raw, str) else None
    except ValueError:  # JSONDepthError too: a reply nested thousands deep is just not an action
        action_data = None
    if not isinstance(action_data, dict):
        raise InvalidChoice('the reply\'s data_json must be a JSON object written as text, like {"column": 3}')
    return WireAction(kind, action_data)


def parse_reply(data: dict[str, Any] | None, text: str, rules: GameRules[Any] | None = None,
                labels: Mapping[str, int] | None = None) -> WireAction:
    """The action a reply names: its ``move`` among ``labels`` (the legal moves), or, from a model
    that answered in the free form instead, its ``type`` and ``data`` (checked by the client)."""
    if data is None:
        raise InvalidChoice(f"the reply was not a JSON object: {text[:200]!r}")
    move = data.get("move")
    if rules is not None and labels is not None and (move is not None or "data" not in data):
        if not isinstance(move, str):
            raise InvalidChoice("the reply's move must be one of the legal moves, written exactly as listed")
        chosen = labels.get(move.strip())
        if chosen is None:
            listed = ", ".join(list(labels)[:12])
            raise InvalidChoice(f"{move[:80]!r} is not one of the legal moves ({listed})")
        return rules.move_to_action(chosen)
    try:
        reply = LLMReply.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(reply)"
        raise InvalidChoice(f"the reply's {where}: {first['msg']}") from None
    return WireAction(reply.type, reply.data)


class LLMPlayer(Player, TextPlayer):
    """Asks the LLM for each action. The client belongs to whoever made it (shared between matches)."""

    label = "llm"

    def __init__(self, client: LLMClient, prompts: PromptSet, transcript: Transcript | None = None,
                 max_calls: int = 200, decision_seconds: float | None = None) -> None:
        self._client = client
        self._prompts = prompts
        self._transcript = transcript
        """Where each call leaves its ``llm`` record (the turn id comes from the caller's record_scope)."""
        self.max_calls = max_calls
        """Calls this player makes in its match (bounds cost); past it the offline player acts."""
        self.decision_seconds = decision_seconds
        """The client's limit for one action: a call the endpoint's pace says would end later is not sent."""
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    async def choose(self, turn: Turn) -> WireAction:
        rules_text = self._prompts.render(rules_template(turn.rules.name), {})

        def messages(compact: bool) -> list[dict[str, Any]]:
            context = prompt_context(turn, rules_text, compact)
            return self._prompts.messages("system", "turn", context)

        labels = move_labels(turn.rules, turn.position)
        if not labels:
            raise PlayerUnavailable("the position has no legal move to choose")
        result = await self._call("move", len(turn.feedback) + 1, messages(False),
                                  reply_schema(turn.rules, turn.position), lambda: messages(True))
        return parse_reply(result.data, result.text, turn.rules, labels)

    async def choose_text(self, turn: TextTurn) -> WireAction:
        rules_text = self._prompts.render(rules_template(turn.game), {})

        def messages(compact: bool) -> list[dict[str, Any]]:
            context = text_prompt_context(turn, rules_text, compact)
            return self._prompts.messages("system_text", "turn_text", context)

        result = await self._call("move_text", len(turn.feedback) + 1, messages(False), TEXT_REPLY_SCHEMA,
                                  lambda: messages(True))
        return parse_text_reply(result.data, result.text)

    async def _call(self, purpose: str, attempt: int, messages: list[dict[str, Any]],
                    schema: dict[str, Any], compact: Compact | None = None) -> LLMResult:
        """One call, recorded however it ends: a call the turn's time limit cuts short (the client
        cancels the player) leaves an ``llm`` record with outcome ``cancelled`` before it goes on."""
        if self.calls >= self.max_calls:
            raise PlayerUnavailable(f"this match already used its {self.max_calls} LLM calls")
        self.calls += 1
        started = time.monotonic()
        try:
            deadline = None if self.decision_seconds is None else \
                asyncio.get_running_loop().time() + self.decision_seconds
            result = await self._client.complete_json(messages, schema, schema_name="board_game_action",
                                                      deadline=deadline, compact=compact)
        except asyncio.CancelledError:
            record_llm_unfinished(self._transcript, purpose, messages, started, "cancelled", self._client.model,
                                  attempt=attempt)
            raise
        self.prompt_tokens += result.prompt_tokens
        self.completion_tokens += result.completion_tokens
        record_llm_result(self._transcript, purpose, messages, started, result, attempt=attempt)
        if not result.ok:
            if result.text:
                # The model answered, unusably (prose, cut off, far too long): another attempt with
                # the reason fed back may do, as for an illegal move.
                raise InvalidChoice(f"your reply could not be read: {result.error}")
            raise PlayerUnavailable(f"the LLM call failed: {result.error}")
        return result
