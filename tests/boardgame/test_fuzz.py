"""Arbitrary input never escapes as anything but the documented errors."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent.games.boardgame.players.base import InvalidChoice
from agent.games.boardgame.players.llm import move_labels, parse_reply, parse_text_reply
from agent.games.boardgame.protocol import ProtocolError, parse_client_frame, parse_server_frame
from agent.games.boardgame.rules.base import RuleError
from agent.games.boardgame.rules.registry import GAMES, get_rules

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)
KEYS = st.sampled_from(["version", "type", "game", "match_id", "agent_id", "state", "action", "settings", "event",
                        "error", "agents", "status", "turn", "started_at", "message_response", "matches"])
TYPES = st.sampled_from(["get_state", "perform_action", "create_match", "get_matches", "get_state_response",
                         "perform_action_response", "create_match_response", "get_matches_response",
                         "push_event", "push_message", "error"])
FRAMES = st.builds(lambda kind, rest: {"version": "1.0.0", "type": kind, **rest}, TYPES,
                   st.dictionaries(KEYS, JSON, max_size=8)) | st.dictionaries(KEYS, JSON, max_size=8)


@settings(max_examples=200, deadline=None)
@given(FRAMES)
def test_any_frame_parses_or_is_a_protocol_error(frame: dict[str, Any]) -> None:
    text = json.dumps(frame)
    for parse in (parse_client_frame, parse_server_frame):
        try:
            parse(text)
        except ProtocolError:
            pass


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(GAMES), st.text(max_size=10), st.dictionaries(st.text(max_size=8), JSON, max_size=4),
       st.integers(0, 1))
def test_any_action_is_a_legal_move_or_a_rule_error(game: str, kind: str, data: dict[str, Any], seat: int) -> None:
    rules = get_rules(game)
    position = rules.initial()
    reason = ""
    try:
        move = rules.check_action(position, seat, kind, data)
    except RuleError as exc:
        reason = str(exc)
    else:
        assert move in rules.legal_moves(position)
        return
    assert reason, "a refusal says why"


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(GAMES), st.dictionaries(st.text(max_size=8), JSON, max_size=4))
def test_any_state_is_a_position_or_a_rule_error(game: str, data: dict[str, Any]) -> None:
    try:
        get_rules(game).from_data(data)
    except RuleError:
        pass


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.none(), st.dictionaries(st.sampled_from(["type", "data", "data_json", "reasoning", "move"]), JSON,
                                             max_size=4)))
def test_any_llm_reply_is_an_action_or_an_invalid_choice(data: dict[str, Any] | None) -> None:
    rules = get_rules("tictactoe")
    labels = move_labels(rules, rules.initial())
    for parse in (parse_reply, parse_text_reply, lambda d, t: parse_reply(d, t, rules, labels)):
        reason = "parsed"
        try:
            parse(data, "text")
        except InvalidChoice as exc:
            reason = str(exc)
        assert reason, "a refusal says why"
