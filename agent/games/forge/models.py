"""The wire format between Forge and the agent, as pydantic models (see docs/forge.md, FORGE_FACTS).

Requests are read leniently where Forge versions differ (unknown fields ignored, ids as numbers or
strings, hands as names or objects, "Unknown" for a hidden hand) and strictly where a wrong shape
means we cannot answer (an unknown ``requestType``, options that are not lists, ``min > max``).
Every list and string is bounded, so a hostile or broken body costs a bounded amount of work.
"""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator

M = TypeVar("M", bound=BaseModel)

MAX_OPTIONS = 400
"""Options in one request; a real Forge decision offers dozens at most."""
MAX_CARDS = 600
"""Cards in one zone or in card_definitions."""
MAX_TEXT = 4000
"""Characters of one text field (oracle text, descriptions)."""

RequestType = Literal["action", "possible_actions", "target", "declare_attackers", "declare_blockers", "reflect"]
REQUEST_TYPES: tuple[str, ...] = RequestType.__args__  # type: ignore[attr-defined]


def _text(value: Any) -> str:
    """Numbers become text (Forge sends some names and costs as numbers); long text is cut.

    A label that is not text at all (a list, an object) reads as empty: labels only describe an
    option, and an odd one must not cost the answer.
    """
    if value is None or isinstance(value, (bool, list, dict)):
        return ""
    if isinstance(value, (int, float)):
        value = str(value)
    text = str(value)
    return text[:MAX_TEXT] if len(text) > MAX_TEXT else text


def _ident(value: Any) -> Any:
    """Ids arrive as numbers or strings; kept as text so both compare equal."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, str)):
        return str(value)[:64]
    return value


Text = Annotated[str, BeforeValidator(_text)]
Ident = Annotated[str | None, BeforeValidator(_ident)]
JAVA_INT_MAX = 2**31 - 1
OptionIndex = Annotated[int, Field(ge=0, le=JAVA_INT_MAX, strict=True)]
"""An option's index: every index we answer is one the request offered, and Forge reads answers
into Java ints and uses them as list positions, so an option it could not be answered with (2**70,
-4, true, 2.0) makes the request a 400 rather than an answer Forge cannot read."""


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

    index: OptionIndex | None = None
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
    index: OptionIndex | None = None
    type: Text = ""
    name: Text = ""
    id: Ident = None
    life: int | None = None


class AttackerOption(WireModel):
    index: OptionIndex | None = None
    id: Ident = None
    name: Text = ""
    power: int | None = None
    toughness: int | None = None


class DefenderOption(WireModel):
    index: OptionIndex | None = None
    id: Ident = None
    name: Text = ""
    type: Text = "Player"


class IncomingAttacker(WireModel):
    index: OptionIndex | None = None
    id: Ident = None
    name: Text = ""
    attacking: Text = ""
    power: int | None = None
    toughness: int | None = None


class BlockerOption(WireModel):
    index: OptionIndex | None = None
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


class ForgeRequest(BaseModel):
    """A parsed decision request: the envelope plus the typed options of its request type."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    game_id: str
    request_type: RequestType
    state: GameState
    context: Context
    options: OptionsState | None
    """None only for ``reflect``."""
    warnings: tuple[str, ...] = ()
    """Parts of ``gameState`` or ``context`` that could not be read and were left out."""


class RequestError(ValueError):
    """A body the agent cannot answer; the message says why, for a 400."""


MAX_REPAIRS = 50
"""Unreadable fields dropped from one gameState before giving up on it (bounds the work)."""


def _has_child(parent: Any, step: int | str) -> bool:
    if isinstance(parent, dict):
        return step in parent
    return isinstance(parent, list) and isinstance(step, int) and 0 <= step < len(parent)


def _drop(data: Any, loc: tuple[int | str, ...]) -> bool:
    """Remove the value at ``loc`` from nested dicts and lists; False when there is none."""
    if not loc:
        return False
    parent = data
    for step in loc[:-1]:
        if not _has_child(parent, step):
            return False
        parent = parent[step]
    last = loc[-1]
    if isinstance(parent, dict) and last in parent:
        del parent[last]
        return True
    if isinstance(parent, list) and isinstance(last, int) and 0 <= last < len(parent):
        del parent[last]
        return True
    return False


def _lenient(model: type[M], raw: Any, what: str) -> tuple[M, list[str]]:
    """``raw`` as ``model``, leaving out what cannot be read (a wrong type, a bad entry).

    The state only informs the decision; the options decide what is valid. An odd field in it
    must not cost the answer, since Forge's fallbacks for a 400 are its own AI or a hang.
    """
    if raw is None:
        return model(), []
    if not isinstance(raw, dict):
        return model(), [f"{what} is not an object; ignored"]
    data = copy.deepcopy(raw)
    notes: list[str] = []
    for _ in range(MAX_REPAIRS):
        try:
            return model.model_validate(data), notes
        except ValidationError as exc:
            dropped = False
            # Deepest first, so dropping a list entry does not shift the places of later errors.
            for err in sorted(exc.errors(), key=lambda e: [str(p) for p in e["loc"]], reverse=True):
                loc = tuple(p for p in err["loc"] if isinstance(p, (int, str)))
                if _drop(data, loc):
                    dropped = True
                    notes.append(f"{what}.{'.'.join(str(p) for p in loc)}: {err['msg']}; left out")
            if not dropped:
                break
    return model(), [*notes[:5], f"{what} could not be read; ignored"]


def parse_request(body: Any) -> ForgeRequest:
    """Read a decoded JSON body. Raises :class:`RequestError` with one clear line."""
    if not isinstance(body, dict):
        raise RequestError(f"body must be a JSON object, not {type(body).__name__}")
    context_raw = body.get("context")
    kind = body.get("requestType")
    if kind is None and isinstance(context_raw, dict):
        kind = context_raw.get("requestType")
    if not isinstance(kind, str) or not kind:
        raise RequestError("missing 'requestType'")
    if kind not in REQUEST_TYPES:
        raise RequestError(f"unknown requestType {kind[:60]!r}; expected one of {', '.join(REQUEST_TYPES)}")
    options: OptionsState | None = None
    if kind != "reflect":
        raw = body.get("actionState")
        if raw is None:
            raise RequestError(f"{kind} request has no 'actionState'")
        if not isinstance(raw, dict):
            raise RequestError(f"{kind} request: 'actionState' must be an object, not {type(raw).__name__}")
        try:
            options = _STATE_MODELS[kind].model_validate(raw)  # type: ignore[assignment]
        except ValidationError as exc:
            raise RequestError(f"{kind} request: {describe_validation(exc, 'actionState')}") from None
        if kind == "possible_actions" and isinstance(options, ActionState) and not options.options:
            # That client reads only an index of its own list: with nothing offered no answer is valid.
            raise RequestError("possible_actions request offers no actions; there is nothing to choose")
    state, notes = _lenient(GameState, body.get("gameState"), "gameState")
    context, more = _lenient(Context, context_raw, "context")
    game_id = body.get("gameId")
    ident = str(game_id)[:64] if isinstance(game_id, (str, int)) and not isinstance(game_id, bool) else ""
    return ForgeRequest(game_id=ident or "default", request_type=kind,  # type: ignore[arg-type]
                        state=state, context=context, options=options, warnings=tuple(notes + more))


def describe_validation(exc: ValidationError, prefix: str = "") -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in (prefix, *first.get("loc", ())) if p != "") or "body"
    more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
    return f"field {where!r}: {first.get('msg', 'invalid')}{more}"
