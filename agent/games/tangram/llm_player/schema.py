"""What the LLM must answer: the output schema for plays and its validation.

The model either names a position for the piece's centre (board units, as the state reports
positions), or a relation to a piece already on the board (or two relations to two pieces, "right
of Blue and above Red"), which the geometry engine turns into an exact flush pose; or it turns a
piece on the board where it stands ("rotate"); or it passes, with a reason (also to say the figure
looks done). Either way it writes one chat line.
"""

from __future__ import annotations

import copy
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.geometry.relations import RELATIONS

PieceName = Literal["Red", "Cream", "Blue", "Green", "Yellow", "Purple", "Brown"]
assert set(PieceName.__args__) == set(PIECE_NAMES)  # type: ignore[attr-defined]

RelationName = Literal[tuple(RELATIONS)]  # type: ignore[valid-type]


class Move(BaseModel):
    """One play decided by the LLM."""

    model_config = ConfigDict(extra="ignore")

    # First: with structured outputs a model writes fields in schema order, so the reasoning is
    # written before the move it should lead to, not after the move is already chosen.
    reasoning: str = Field(description="Brief private reasoning, written first; not shown to the partner.")
    candidate: str | None = Field(None, description=(
        "The letter of a checked candidate to play exactly as offered, or null for your own move below."))
    action: Literal["place", "rotate", "pass"] = Field(
        description="'place' to move a piece, 'rotate' to turn a piece on the board where it stands, 'pass' to skip.")
    piece: PieceName | None = Field(description="The piece to move (null when passing).")
    rotation: float | None = Field(description="Degrees, clockwise positive; multiples of 45 fit best.")
    x: float | None = Field(description="Target x of the piece's centre, board units 0-100 (null if using a relation).")
    y: float | None = Field(
        description="Target y of the piece's centre, board units 0-100, y up (null if using a relation).")
    relation: RelationName | None = Field(  # type: ignore[valid-type]
        description="Place relative to a piece on the board instead of x/y.")
    anchor: PieceName | None = Field(description="The piece on the board the relation refers to.")
    relation2: RelationName | None = Field(  # type: ignore[valid-type]
        description="Optional second relation, to a second anchor, both at once.")
    anchor2: PieceName | None = Field(description="The second piece on the board (with relation2), or null.")
    chat: str = Field(description="One short sentence for the partner: what you do and why.")

    @field_validator("rotation", "x", "y")
    @classmethod
    def _finite(cls, v: float | None) -> float | None:
        if v is not None and not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v

    def problem(self) -> str | None:
        """Why this move cannot be played as given, or None when it can."""
        if self.candidate is not None or self.action == "pass":
            return None
        if self.piece is None:
            return "no piece named"
        if self.action == "rotate":
            return None if self.rotation is not None else "rotate without a rotation"
        if (self.relation2 is None) != (self.anchor2 is None):
            return "relation2 and anchor2 must come together"
        if self.relation is not None:
            return None if self.anchor is not None else f"relation {self.relation} without an anchor"
        if self.x is None or self.y is None:
            return "neither coordinates nor a relation"
        if not (-50 <= self.x <= 150 and -50 <= self.y <= 150):
            return f"coordinates ({self.x:g}, {self.y:g}) far outside the 0-100 board"
        return None


class ChatReply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reply: str = Field(description="Your chat answer to the partner: one or two short sentences.")


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the form OpenAI's strict structured output accepts:
    every property required, no additional properties, no defaults."""
    schema = copy.deepcopy(model.model_json_schema())

    def fix(node: Any) -> None:
        if isinstance(node, dict):
            node.pop("default", None)
            node.pop("title", None)
            if node.get("type") == "object" and "properties" in node:
                node["required"] = list(node["properties"])
                node["additionalProperties"] = False
            for value in node.values():
                fix(value)
        elif isinstance(node, list):
            for item in node:
                fix(item)

    fix(schema)
    return schema


def move_schema(letters: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """The play schema for one request: ``candidate`` is an enum of the letters offered this time
    (or null), and is left out altogether when nothing was offered."""
    schema = strict_schema(Move)
    if not letters:
        del schema["properties"]["candidate"]
    else:
        described = schema["properties"]["candidate"].get("description")
        schema["properties"]["candidate"] = {"anyOf": [{"type": "string", "enum": list(letters)}, {"type": "null"}],
                                             "description": described}
    schema["required"] = list(schema["properties"])
    return schema


MOVE_SCHEMA = move_schema()
CHAT_SCHEMA = strict_schema(ChatReply)


_EMPTY: dict[str, Any] = {"reasoning": "", "piece": None, "rotation": None, "x": None, "y": None, "relation": None,
                          "anchor": None, "relation2": None, "anchor2": None, "chat": ""}


def parse_move(data: Any, offered: list[str] | tuple[str, ...] = ()) -> tuple[Move | None, str | None]:
    """Validate the LLM's JSON; returns the move or a short reason it was refused.

    A candidate letter among ``offered`` wins over everything else in the answer: the move is the
    candidate, whatever the other fields say (they may even be invalid)."""
    if not isinstance(data, dict):
        return None, "reply is not a JSON object"
    letter = data.get("candidate")
    if isinstance(letter, str) and letter.strip():
        letter = letter.strip().upper()
        if letter not in offered:
            return None, (f"candidate {letter!r} was not offered" + (f" (offered: {', '.join(offered)})"
                                                                      if offered else " (none were)"))
        texts = {k: data[k] for k in ("reasoning", "chat") if isinstance(data.get(k), str)}
        return Move.model_validate({**_EMPTY, "action": "place", **texts, "candidate": letter}), None
    data = {k: v for k, v in data.items() if k != "candidate"}
    # Models often leave out the fields that do not apply; treat absent as null.
    filled = {**_EMPTY, **data}
    if isinstance(filled.get("action"), str):
        filled["action"] = filled["action"].strip().lower()
    try:
        move = Move.model_validate(filled)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        return None, f"invalid {field}: {err['msg']}"
    problem = move.problem()
    return (None, problem) if problem else (move, None)
