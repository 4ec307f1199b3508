"""What the LLM must answer: the output schema for plays and chat replies.

The model either names a position for the piece's centre (board units, as the state reports
positions), or a relation to a piece already on the board (or two relations to two pieces, "right
of Blue and above Red"), which the geometry engine turns into an exact flush pose; or it turns a
piece on the board where it stands ("rotate"); or it passes, with a reason (also to say the figure
looks done). Either way it writes one chat line. An answer is read and checked in one place,
:func:`agent.games.tangram.llm_player.salvage.salvage_answer`.
"""

from __future__ import annotations

import copy
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent.games.tangram.geometry.pieces import PieceName
from agent.games.tangram.geometry.relations import RELATIONS

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
