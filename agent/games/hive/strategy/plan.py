"""The coach's plan: what an LLM may tell the strategy, validated before it is used."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent.games.hive.rules import BEES, COLS, ROWS

Role = Literal["forage", "explore", "raid", "defend"]
ROLES: tuple[Role, ...] = ("forage", "explore", "raid", "defend")
MAX_REASONING_CHARS = 2000
"""Longer reasoning is clipped, not refused: it is a note for the transcript, and refusing it would
throw away a plan that is otherwise fine (llama.cpp's grammars ignore maxLength)."""


class BeeOrder(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    bee: int = Field(ge=0, lt=BEES)
    role: Role
    target: list[int] | None = Field(default=None, description="[row, col] to head for, or null")

    @field_validator("target")
    @classmethod
    def _on_the_map(cls, value: list[int] | None) -> list[int] | None:
        if value is None:
            return None
        if len(value) != 2 or not (0 <= value[0] < ROWS and 0 <= value[1] < COLS):
            raise ValueError(f"target must be [row, col] inside {ROWS} x {COLS}, got {value}")
        return value


class Plan(BaseModel):
    """Roles per bee and how aggressive to be; bees the plan leaves out keep their default role."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # First, in the schema as here: models write fields in schema order, so the coach thinks before
    # it decides. Kept in the transcript's coach_plan record, not fed back into the next prompt.
    reasoning: str = Field(default="", description="Brief reasoning about the match, written before the plan")
    bees: list[BeeOrder] = Field(max_length=BEES)
    aggression: float = Field(ge=0.0, le=1.0)
    note: str = Field(default="", max_length=300)

    @field_validator("reasoning", mode="before")
    @classmethod
    def _clip_reasoning(cls, value: object) -> object:
        return value[:MAX_REASONING_CHARS] if isinstance(value, str) else value

    @field_validator("bees")
    @classmethod
    def _one_order_per_bee(cls, value: list[BeeOrder]) -> list[BeeOrder]:
        seen = [o.bee for o in value]
        if len(seen) != len(set(seen)):
            raise ValueError("each bee may have one order only")
        return value

    def order_for(self, bee: int) -> BeeOrder | None:
        for order in self.bees:
            if order.bee == bee:
                return order
        return None


def plan_json_schema() -> dict[str, Any]:
    """The schema sent to the LLM: OpenAI strict rules (all properties required, no extras)."""
    order = {
        "type": "object",
        "additionalProperties": False,
        "required": ["bee", "role", "target"],
        "properties": {
            "bee": {"type": "integer", "minimum": 0, "maximum": BEES - 1},
            "role": {"type": "string", "enum": list(ROLES)},
            "target": {"anyOf": [{"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
                                 {"type": "null"}]},
        },
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["reasoning", "bees", "aggression", "note"],
        "properties": {
            "reasoning": {"type": "string"},
            "bees": {"type": "array", "items": order, "maxItems": BEES},
            "aggression": {"type": "number", "minimum": 0, "maximum": 1},
            "note": {"type": "string"},
        },
    }
