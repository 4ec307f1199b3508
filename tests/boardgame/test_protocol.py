"""Protocol models: what we send is exactly the schema's fields; what we receive may be the site's variants."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from agent.games.boardgame.protocol import (
    MAX_FRAME_BYTES,
    Action,
    ActionResponse,
    AgentInfo,
    CreateMatch,
    ErrorMessage,
    GetMatches,
    GetState,
    GetStateResponse,
    Payload,
    PerformAction,
    PerformActionResponse,
    ProtocolError,
    PushEvent,
    check_agent_id,
    dump,
    parse_client_frame,
    parse_server_frame,
)

T0 = datetime(2025, 5, 5, 10, 0, tzinfo=UTC)


def _state(**kw: object) -> GetStateResponse:
    base: dict[str, object] = {
        "game": "tictactoe", "match_id": "m1", "status": "started", "phase": "main", "turn": 1, "stage": "move",
        "started_at": T0, "active_agent_id": "A", "agents": [AgentInfo(id="A", name="A")],
        "state": Payload(data={"board": ["...", "...", "..."]}),
    }
    base.update(kw)
    return GetStateResponse(**base)  # type: ignore[arg-type]


def test_requests_dump_exactly_the_schema_fields() -> None:
    assert json.loads(dump(CreateMatch(game="tictactoe", agent_id="A"))) == {
        "version": "1.0.0", "type": "create_match", "game": "tictactoe", "agent_id": "A",
        "settings": {"version": "1.0.0", "data": {}}}
    assert json.loads(dump(GetMatches(agent_id="A"))) == {"version": "1.0.0", "type": "get_matches", "agent_id": "A"}
    assert json.loads(dump(GetState(game="g", match_id="m", agent_id="A"))) == {
        "version": "1.0.0", "type": "get_state", "game": "g", "match_id": "m", "agent_id": "A",
        "state": {"version": "1.0.0"}}
    frame = json.loads(dump(PerformAction(game="g", match_id="m", agent_id="A",
                                          action=Action(type="place", data={"row": 1, "column": 2}))))
    assert frame["action"] == {"version": "1.0.0", "type": "place", "data": {"row": 1, "column": 2}}


def test_state_response_leaves_out_what_the_schema_forbids_or_lacks() -> None:
    frame = json.loads(dump(_state()))
    assert "agent_id" not in frame and "ended_at" not in frame and "winners" not in frame
    assert frame["started_at"] == "2025-05-05T10:00:00Z"
    ended = json.loads(dump(_state(status="ended", ended_at=T0, winners=["A"])))
    assert ended["ended_at"] == "2025-05-05T10:00:00Z" and ended["winners"] == ["A"]


def test_site_state_response_with_agent_id_types_and_null_end_is_accepted() -> None:
    site = {
        "version": "1.0.0", "type": "get_state_response", "game": "game_code", "match_id": "abc123",
        "agent_id": "agent_2", "status": "started", "phase": "main", "turn": 1, "stage": "draw",
        "started_at": "2025-05-05T10:00:00Z", "ended_at": None, "active_agent_id": "agent_2",
        "agents": [{"id": "agent_1", "name": "Agent One", "type": "human"},
                   {"id": "agent_2", "name": "Agent Two", "type": "ai"}],
        "state": {"version": "1.0.0", "data": {"example_property": "example_value"}},
    }
    message = parse_server_frame(json.dumps(site))
    assert isinstance(message, GetStateResponse)
    assert message.agent_id == "agent_2" and message.ended_at is None
    assert [a.id for a in message.agents] == ["agent_1", "agent_2"]


def test_site_push_message_becomes_an_event() -> None:
    site = {"version": "1.0.0", "type": "push_message", "game": "g", "match_id": "abc123", "agent_id": "agent_2",
            "message_response": {"version": "1.0.0", "message": "Agent 1 drew a card",
                                 "data": {"example_property": "example_value"}}}
    message = parse_server_frame(json.dumps(site))
    assert isinstance(message, PushEvent)
    assert message.event.data == {"example_property": "example_value", "message": "Agent 1 drew a card"}


def test_schema_push_event_without_type_is_accepted() -> None:
    frame = {"version": "1.0.0", "game": "g", "match_id": "m", "agent_id": "A", "event": {"version": "1.0.0",
                                                                                          "data": {"kind": "x"}}}
    message = parse_server_frame(json.dumps(frame))
    assert isinstance(message, PushEvent) and message.event.data == {"kind": "x"}


def test_error_and_action_response_round_trip() -> None:
    error = parse_server_frame('{"version":"1.0.0","type":"error","game":"g","match_id":"m","agent_id":"A",'
                               '"error":{"version":"1.0.0","message":"Unauthorized action","data":{}}}')
    assert isinstance(error, ErrorMessage) and error.error.message == "Unauthorized action"
    reply = PerformActionResponse(game="g", match_id="m", agent_id="A",
                                  action_response=ActionResponse(status="error", message="no", data={}))
    assert parse_server_frame(dump(reply)) == reply


@pytest.mark.parametrize("frame, words", [
    ("not json", "not valid JSON"),
    ("[1, 2]", "JSON object"),
    ('{"version": "1.0.0", "type": "fly"}', "unknown request message type 'fly'"),
    ('{"type": "get_matches", "agent_id": "A"}', "version must be"),
    ('{"version": "2.0.0", "type": "get_matches", "agent_id": "A"}', "not supported"),
    ('{"version": "1.0.0", "type": "get_state", "agent_id": "A"}', "get_state: game: Field required"),
    ('{"version": "1.0.0", "type": "perform_action", "game": "g", "match_id": "m", "agent_id": "A", '
     '"action": {"version": "1.0.0", "data": {}}}', "action.type: Field required"),
])
def test_bad_request_frames_say_what_is_wrong(frame: str, words: str) -> None:
    with pytest.raises(ProtocolError, match=words):
        parse_client_frame(frame)


def test_oversized_frames_are_refused_before_parsing() -> None:
    with pytest.raises(ProtocolError, match="larger than the limit"):
        parse_client_frame(" " * (MAX_FRAME_BYTES + 1))


def test_requests_parse_back_and_ignore_unknown_fields() -> None:
    message = parse_client_frame('{"version":"1.0.0","type":"get_matches","agent_id":"A","extra":1}')
    assert message == GetMatches(agent_id="A")


def test_agent_ids_must_be_printable_and_short() -> None:
    assert check_agent_id("agent-1") == "agent-1"
    for bad in ("", "a\nb", "x" * 200):
        with pytest.raises(ValueError):
            check_agent_id(bad)
