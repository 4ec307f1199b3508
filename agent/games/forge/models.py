"""The wire format between Forge and the agent, as pydantic models (see docs/forge.md, FORGE_FACTS).

Requests are read leniently where Forge versions differ (unknown fields ignored, ids as numbers or
strings, hands as names or objects, "Unknown" for a hidden hand) and strictly where a wrong shape
means we cannot answer (an unknown ``requestType``, options that are not lists, ``min > max``).
Every list and string is bounded, so a hostile or broken body costs a bounded amount of work.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator

MAX_OPTIONS = 400
"""Options in one request; a real Forge decision offers dozens at most."""
MAX_CARDS = 600
"""Cards in one zone or in card_definitions."""
MAX_TEXT = 4000
"""Characters of one text field (oracle text, descriptions)."""

RequestType = Literal["action", "possible_actions", "target", "declare_attackers", "declare_blockers", "reflect"]
REQUEST_TYPES: tuple[str, ...] = RequestType.__args__  # type: ignore[attr-defined]


def _text(value: Any) -> Any:
    """Numbers become text (Forge sends some names and costs as numbers); long text is cut."""
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, str) and len(value) > MAX_TEXT:
        return value[:MAX_TEXT]
    return value


def _ident(value: Any) -> Any:
    """Ids arrive as numbers or strings; kept as text so both compare equal."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, str)):
        return str(value)[:64]
    return value


Text = Annotated[str, BeforeValidator(_text)]
Ident = Annotated[str | None, BeforeValidator(_ident)]


class WireModel(BaseModel):
    # Forge versions add fields; ignoring them keeps old agents working with new clients.
    model_config = ConfigDict(extra="ignore", frozen=True)


class CardRef(WireModel):
    """A card in a zone. Forge sends either a bare name or an object."""

    name: Text = ""
    id: Ident = None
    zone: Text = ""
    tapped: bool = False
    power: int | None = None
    toughness: int | None = None
    sick: bool = False
    """Summoning sick (cannot attack or tap this turn), when the client says so."""
    attacking: bool = False
    blocking: bool = False

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, value: Any) -> Any:
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return {"name": str(value)}
        if isinstance(value, dict):
            out = dict(value)
            for alias, key in (("card_name", "name"), ("card_id", "id"), ("isTapped", "tapped"),
                               ("summoningSick", "sick"), ("sickness", "sick")):
                if alias in out and key not in out:
                    out[key] = out[alias]
            for key in ("power", "toughness"):
                if key in out and not isinstance(out[key], int):
                    try:
                        out[key] = int(str(out[key]).strip())
                    except ValueError:
                        out[key] = None
            return out
        return value


def _zone(value: Any) -> Any:
    """A zone is a list of cards; a hidden zone ("Unknown", a count, null) is empty."""
    if value is None or isinstance(value, (str, int)):
        return []
    if isinstance(value, list) and len(value) > MAX_CARDS:
        raise ValueError(f"zone has {len(value)} cards; at most {MAX_CARDS} are accepted")
    return value


Zone = Annotated[list[CardRef], BeforeValidator(_zone)]


class PlayerState(WireModel):
    id: Ident = None
    name: Text = ""
    life: int = 20
    libraryCount: int = 0
    hand: Zone = Field(default_factory=list)
    handCount: int | None = None
    graveyard: Zone = Field(default_factory=list)
    battlefield: Zone = Field(default_factory=list)
    exile: Zone = Field(default_factory=list)
    hand_hidden: bool = False

    @model_validator(mode="before")
    @classmethod
    def _hidden_hand(cls, value: Any) -> Any:
        if isinstance(value, dict) and not isinstance(value.get("hand"), list):
            value = {**value, "hand_hidden": True}
        return value


class CardDefinition(WireModel):
    name: Text = ""
    mana_cost: Text = ""
    type: Text = ""
    oracle_text: Text = ""
    power: Text | None = None
    toughness: Text | None = None


class StackItem(WireModel):
    card_name: Text = ""
    card_id: Ident = None
    description: Text = ""
    controller: Text = ""


class GameState(WireModel):
    turn: int = 0
    phase: Text = ""
    activePlayerId: Ident = None
    priorityPlayerId: Ident = None
    stack: list[StackItem] = Field(default_factory=list, max_length=MAX_OPTIONS)
    stack_size: int | None = None
    players: list[PlayerState] = Field(default_factory=list, max_length=8)
    card_definitions: dict[str, CardDefinition] = Field(default_factory=dict)
    combat: Any = None

    @field_validator("card_definitions", mode="before")
    @classmethod
    def _bounded_definitions(cls, value: Any) -> Any:
        if value is None:
            return {}
        if isinstance(value, list):  # some builds send a list of definitions
            value = {str(d.get("name", i)): d for i, d in enumerate(value) if isinstance(d, dict)}
        if isinstance(value, dict) and len(value) > MAX_CARDS:
            raise ValueError(f"card_definitions has {len(value)} entries; at most {MAX_CARDS} are accepted")
        return value


class Context(WireModel):
    requestType: Text = ""
    phase: Text = ""
    turn: int | None = None
    playerName: Text = ""
    spellName: Text = ""
    spellDescription: Text = ""


# ---- options, one model per request type -----------------------------------------------------------


class ActionOption(WireModel):
    """One entry of ``actions`` (seed dialect) or ``possible_actions`` (Forge spec dialect)."""

    index: int | None = None
    type: Text = ""
    card_id: Ident = None
    card_name: Text = ""
    ability_description: Text = ""
    mana_cost: Text = ""
    requires_targets: bool = False
    target_min: int | None = None
    target_max: int | None = None
    target_zone: Text = ""

    @model_validator(mode="before")
    @classmethod
    def _spec_names(cls, value: Any) -> Any:
        # The spec dialect names the card ``card`` (a name, or an object with name and id).
        if isinstance(value, dict) and "card" in value and not value.get("card_name"):
            card = value["card"]
            out = dict(value)
            if isinstance(card, dict):
                out["card_name"] = card.get("name", "")
                out.setdefault("card_id", card.get("id"))
            else:
                out["card_name"] = card
            return out
        return value

    @property
    def is_pass(self) -> bool:
        return self.type.lower() in ("pass_priority", "pass")


class TargetOption(WireModel):
    index: int | None = None
    type: Text = ""
    name: Text = ""
    id: Ident = None
    life: int | None = None


class AttackerOption(WireModel):
    index: int | None = None
    id: Ident = None
    name: Text = ""
    power: int | None = None
    toughness: int | None = None


class DefenderOption(WireModel):
    index: int | None = None
    id: Ident = None
    name: Text = ""
    type: Text = "Player"


class IncomingAttacker(WireModel):
    index: int | None = None
    id: Ident = None
    name: Text = ""
    attacking: Text = ""
    power: int | None = None
    toughness: int | None = None


class BlockerOption(WireModel):
    index: int | None = None
    id: Ident = None
    name: Text = ""
    power: int | None = None
    toughness: int | None = None


def _numbered(options: list[Any]) -> list[Any]:
    """Give options without an ``index`` their list position; indices must then be unique."""
    out = [o if o.index is not None else o.model_copy(update={"index": i}) for i, o in enumerate(options)]
    seen: set[int] = set()
    for o in out:
        if o.index in seen:
            raise ValueError(f"two options share index {o.index}")
        seen.add(o.index)
    return out


class ActionState(WireModel):
    """Main decisions; ``options`` holds whichever list the dialect sent."""

    options: list[ActionOption] = Field(default_factory=list, max_length=MAX_OPTIONS)
    count: int | None = None

    @model_validator(mode="before")
    @classmethod
    def _dialects(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        listed = value.get("possible_actions", value.get("actions"))
        if listed is None:
            raise ValueError("actionState has neither 'actions' nor 'possible_actions'")
        if not isinstance(listed, list):
            raise ValueError("actionState actions must be a list")
        return {"options": listed, "count": value.get("count")}

    @field_validator("options")
    @classmethod
    def _index(cls, value: list[ActionOption]) -> list[ActionOption]:
        return _numbered(value)


class TargetState(WireModel):
    title: Text = ""
    min: int = Field(1, ge=0)
    max: int = Field(1, ge=0)
    targets: list[TargetOption] = Field(max_length=MAX_OPTIONS)

    @field_validator("targets")
    @classmethod
    def _index(cls, value: list[TargetOption]) -> list[TargetOption]:
        return _numbered(value)

    @model_validator(mode="after")
    def _counts(self) -> TargetState:
        if self.min > self.max:
            raise ValueError(f"target min {self.min} is greater than max {self.max}")
        if self.min > len(self.targets):
            raise ValueError(f"target request needs at least {self.min} targets but offers {len(self.targets)}")
        return self


class AttackState(WireModel):
    attackers: list[AttackerOption] = Field(max_length=MAX_OPTIONS)
    defenders: list[DefenderOption] = Field(default_factory=list, max_length=MAX_OPTIONS)

    @field_validator("attackers", "defenders")
    @classmethod
    def _index(cls, value: list[Any]) -> list[Any]:
        return _numbered(value)


class BlockState(WireModel):
    attackers: list[IncomingAttacker] = Field(max_length=MAX_OPTIONS)
    blockers: list[BlockerOption] = Field(default_factory=list, max_length=MAX_OPTIONS)

    @field_validator("attackers", "blockers")
    @classmethod
    def _index(cls, value: list[Any]) -> list[Any]:
        return _numbered(value)


OptionsState = ActionState | TargetState | AttackState | BlockState

_STATE_MODELS: dict[str, type[WireModel]] = {
    "action": ActionState,
    "possible_actions": ActionState,
    "target": TargetState,
    "declare_attackers": AttackState,
    "declare_blockers": BlockState,
}


class Envelope(WireModel):
    """The fields every request shares; ``actionState`` is read by :func:`parse_request`."""

    gameId: Ident = None
    requestType: Text
    gameState: GameState = Field(default_factory=GameState)
    actionState: dict[str, Any] | None = None
    context: Context = Field(default_factory=Context)


class ForgeRequest(BaseModel):
    """A parsed decision request: the envelope plus the typed options of its request type."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    game_id: str
    request_type: RequestType
    state: GameState
    context: Context
    options: OptionsState | None
    """None only for ``reflect``."""


class RequestError(ValueError):
    """A body the agent cannot answer; the message says why, for a 400."""


def parse_request(body: Any) -> ForgeRequest:
    """Read a decoded JSON body. Raises :class:`RequestError` with one clear line."""
    if not isinstance(body, dict):
        raise RequestError(f"body must be a JSON object, not {type(body).__name__}")
    kind = body.get("requestType")
    if kind is None and isinstance(body.get("context"), dict):
        kind = body["context"].get("requestType")
    if not isinstance(kind, str) or not kind:
        raise RequestError("missing 'requestType'")
    if kind not in REQUEST_TYPES:
        raise RequestError(f"unknown requestType {kind[:60]!r}; expected one of {', '.join(REQUEST_TYPES)}")
    try:
        envelope = Envelope.model_validate({**body, "requestType": kind})
        options: OptionsState | None = None
        if kind != "reflect":
            raw = envelope.actionState
            if raw is None:
                raise RequestError(f"{kind} request has no 'actionState'")
            options = _STATE_MODELS[kind].model_validate(raw)  # type: ignore[assignment]
    except ValidationError as exc:
        raise RequestError(f"{kind} request: {describe_validation(exc)}") from None
    return ForgeRequest(game_id=envelope.gameId or "default", request_type=kind,  # type: ignore[arg-type]
                        state=envelope.gameState, context=envelope.context, options=options)


def describe_validation(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "body"
    more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
    return f"field {where!r}: {first.get('msg', 'invalid')}{more}"
