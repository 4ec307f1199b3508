"""The Boardgame Protocol 1.0.0 messages, both directions, as pydantic models.

Frames we send are built from these models and serialised with :func:`dump`, which leaves out
unset optional fields: the models hold exactly the fields the published JSON Schemas allow, so a
dumped frame is schema-exact (tests/boardgame/test_schemas.py checks that against a local copy of
the schemas). Frames we receive are parsed by :func:`parse_server_frame` (agent side) and
:func:`parse_client_frame` (engine side), which accept the variants the protocol's site shows
besides the schemas: ``push_message`` with ``message_response`` instead of ``event``, an
``agent_id`` and agent ``type`` in ``get_state_response``, ``ended_at: null``.

The schemas say nothing about errors; we send the site's ``error`` shape. They also have no way to
join a match: our engine seats an agent that asks ``get_state`` of a waiting match with a free
seat (see docs/boardgame.md).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agent.core import jsonsafe
from agent.core.jsonsafe import JSONDepthError

PROTOCOL_VERSION = "1.0.0"
MAX_FRAME_BYTES = 256 * 1024
"""Largest frame either side accepts; board games' states are a few hundred bytes."""
MAX_DEPTH = 32
"""Nesting levels a frame may have; the deepest real one (a board in a state) needs 6."""
MAX_ID_CHARS = 128
MAX_TEXT_CHARS = 2_000
MAX_AGENTS = 16
MAX_MATCHES_LISTED = 200

_SEMVER = re.compile(r"^\d+\.\d+\.\d+$")

Version = Annotated[str, Field(pattern=r"^\d+\.\d+\.\d+$", max_length=32)]
Ident = Annotated[str, Field(max_length=MAX_ID_CHARS)]
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]
MatchStatus = Literal["waiting", "started", "ended", "abandoned"]


class ProtocolError(ValueError):
    """A frame that is not a protocol message we understand; the text says what is wrong."""


class _Model(BaseModel):
    # Unknown fields are ignored on receipt (the site adds some); we never set any on send.
    model_config = ConfigDict(extra="ignore", frozen=True)


class Versioned(_Model):
    version: Version = PROTOCOL_VERSION


class Payload(Versioned):
    """The ``{version, data}`` object of settings, states and events."""

    data: dict[str, Any] = Field(default_factory=dict)


class StateRequest(Versioned):
    """``get_state.state``: only the version the agent understands."""


class Action(Versioned):
    type: Ident
    data: dict[str, Any] = Field(default_factory=dict)


class ActionResponse(Versioned):
    status: Literal["success", "error"]
    message: Text = ""
    data: dict[str, Any] = Field(default_factory=dict)


class ErrorBody(Versioned):
    message: Text
    data: dict[str, Any] = Field(default_factory=dict)


class AgentInfo(_Model):
    id: Ident
    name: Text


class MatchSummary(_Model):
    match_id: Ident
    agents: list[AgentInfo] = Field(min_length=1, max_length=MAX_AGENTS)
    # get_matches_response's schema has no "abandoned": the engine lists such matches as "ended".
    status: Literal["waiting", "started", "ended"]


# ---- requests (agent -> engine) ------------------------------------------------------------------


class CreateMatch(Versioned):
    type: Literal["create_match"] = "create_match"
    game: Ident
    agent_id: Ident
    settings: Payload = Field(default_factory=Payload)


class GetMatches(Versioned):
    type: Literal["get_matches"] = "get_matches"
    agent_id: Ident


class GetState(Versioned):
    type: Literal["get_state"] = "get_state"
    game: Ident
    match_id: Ident
    agent_id: Ident
    state: StateRequest = Field(default_factory=StateRequest)


class PerformAction(Versioned):
    type: Literal["perform_action"] = "perform_action"
    game: Ident
    match_id: Ident
    agent_id: Ident
    action: Action


ClientMessage = CreateMatch | GetMatches | GetState | PerformAction


# ---- responses and pushes (engine -> agent) ------------------------------------------------------


class CreateMatchResponse(Versioned):
    type: Literal["create_match_response"] = "create_match_response"
    game: Ident
    match_id: Ident
    agent_id: Ident


class GetMatchesResponse(Versioned):
    type: Literal["get_matches_response"] = "get_matches_response"
    agent_id: Ident
    matches: list[MatchSummary] = Field(default_factory=list, max_length=MAX_MATCHES_LISTED)


class GetStateResponse(Versioned):
    type: Literal["get_state_response"] = "get_state_response"
    game: Ident
    match_id: Ident
    # The schema forbids agent_id here; the site sends one. Received, kept; never sent by us.
    agent_id: Ident | None = None
    status: str
    phase: Ident
    turn: int = Field(ge=0)
    stage: Ident
    started_at: datetime
    ended_at: datetime | None = None
    active_agent_id: Ident
    agents: list[AgentInfo] = Field(min_length=1, max_length=MAX_AGENTS)
    winners: list[Ident] | None = None
    state: Payload


class PerformActionResponse(Versioned):
    type: Literal["perform_action_response"] = "perform_action_response"
    game: Ident
    match_id: Ident
    agent_id: Ident
    action_response: ActionResponse


class PushEvent(Versioned):
    """An asynchronous event; the schema's ``push_event``, or the site's ``push_message``."""

    type: Literal["push_event", "push_message"] = "push_event"
    game: Ident
    match_id: Ident
    agent_id: Ident = ""
    event: Payload

    @model_validator(mode="before")
    @classmethod
    def _site_variant(cls, raw: Any) -> Any:
        # The site's push_message carries message_response {version, message, data}.
        if isinstance(raw, dict) and "event" not in raw and isinstance(raw.get("message_response"), dict):
            body = raw["message_response"]
            data = dict(body.get("data") or {})
            if isinstance(body.get("message"), str):
                data.setdefault("message", body["message"])
            raw = {**raw, "event": {"version": body.get("version", PROTOCOL_VERSION), "data": data}}
        return raw


class ErrorMessage(Versioned):
    """The site's ``error`` frame (no schema was published for it)."""

    type: Literal["error"] = "error"
    game: Ident = ""
    match_id: Ident = ""
    agent_id: Ident = ""
    error: ErrorBody


ServerMessage = (CreateMatchResponse | GetMatchesResponse | GetStateResponse | PerformActionResponse
                 | PushEvent | ErrorMessage)

_CLIENT_TYPES: dict[str, type[BaseModel]] = {
    "create_match": CreateMatch,
    "get_matches": GetMatches,
    "get_state": GetState,
    "perform_action": PerformAction,
}
_SERVER_TYPES: dict[str, type[BaseModel]] = {
    "create_match_response": CreateMatchResponse,
    "get_matches_response": GetMatchesResponse,
    "get_state_response": GetStateResponse,
    "perform_action_response": PerformActionResponse,
    "push_event": PushEvent,
    "push_message": PushEvent,
    "error": ErrorMessage,
}


def dump(message: BaseModel) -> str:
    """The JSON frame for ``message``: unset optional fields left out, times in RFC 3339 UTC."""
    return json.dumps(message.model_dump(mode="json", exclude_none=True), separators=(",", ":"))


def _load(frame: str | bytes) -> dict[str, Any]:
    if len(frame) > MAX_FRAME_BYTES:
        raise ProtocolError(f"frame of {len(frame)} bytes is larger than the limit of {MAX_FRAME_BYTES}")
    try:
        raw = jsonsafe.loads(frame, max_depth=MAX_DEPTH)
    except JSONDepthError:
        raise ProtocolError(f"frame is nested more than {MAX_DEPTH} levels deep") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"frame is not valid JSON: {str(exc)[:200]}") from None
    if not isinstance(raw, dict):
        raise ProtocolError(f"frame must be a JSON object, not {type(raw).__name__}")
    return raw


def _describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error["loc"]) or "(frame)"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def _parse(frame: str | bytes, types: dict[str, type[BaseModel]], side: str) -> Any:
    raw = _load(frame)
    kind = raw.get("type")
    if kind is None and "event" in raw:
        kind = "push_event"  # the schema's push_event lists no "type"
    if not isinstance(kind, str) or kind not in types:
        known = ", ".join(sorted(types))
        raise ProtocolError(f"unknown {side} message type {kind!r}; expected one of: {known}")
    version = raw.get("version")
    if not isinstance(version, str) or not _SEMVER.match(version):
        raise ProtocolError(f"{kind}: version must be a semantic version string like {PROTOCOL_VERSION!r}")
    if version.split(".")[0] != PROTOCOL_VERSION.split(".")[0]:
        raise ProtocolError(f"{kind}: protocol version {version} is not supported (this side speaks "
                            f"{PROTOCOL_VERSION})")
    try:
        return types[kind].model_validate(raw)
    except ValidationError as exc:
        raise ProtocolError(f"{kind}: {_describe(exc)}") from None


def parse_client_frame(frame: str | bytes) -> ClientMessage:
    """A request frame as the engine receives it; :class:`ProtocolError` says what is wrong."""
    message: ClientMessage = _parse(frame, _CLIENT_TYPES, "request")
    return message


def parse_server_frame(frame: str | bytes) -> ServerMessage:
    """A frame from the engine as the agent receives it; :class:`ProtocolError` says what is wrong."""
    message: ServerMessage = _parse(frame, _SERVER_TYPES, "engine")
    return message


class _IdCheck(_Model):
    id: Ident

    @field_validator("id")
    @classmethod
    def _printable(cls, value: str) -> str:
        if not value or not value.isprintable():
            raise ValueError("must be a non-empty printable string")
        return value


def check_agent_id(value: str) -> str:
    """``value`` as an agent id, or ValueError saying why it cannot be one."""
    try:
        return _IdCheck(id=value).id
    except ValidationError as exc:
        raise ValueError(f"agent id {value[:40]!r}: {_describe(exc)}") from None
