"""Random instances of a JSON Schema: a sloppy model that still keeps to the output schema.

The fake OpenAI server answers with these in its random-schema mode. A strict structured-output
server only guarantees that a reply matches the schema, not that it makes sense: every enum value,
every null a nullable field allows, any number. Decision code has to survive all of them, and a
benchmark run against this mode shows how much of that nonsense the agent still turns into a move.

Covers the subset of JSON Schema the projects' strict output schemas use: ``object`` with
``properties``, ``array`` with ``items`` (and ``minItems``/``maxItems``), ``enum``, ``const``,
``anyOf``/``oneOf``, ``type`` as a string or a list, ``$ref`` into ``$defs``, ``string``, ``number``,
``integer`` (with ``minimum``/``maximum`` when given) and ``boolean``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

WORDS = ("I", "will", "place", "the", "piece", "here", "next", "to", "it", "because", "it", "fits", "roof",
         "wall", "left", "right", "above", "below", "corner", "maybe", "this", "looks", "good")
MAX_DEPTH = 12
"""Deeper schemas (or $ref cycles) end in null or an empty value."""


@dataclass(frozen=True)
class RandomSchemaOptions:
    """How the random instances are drawn."""

    null_rate: float = 0.5
    """Chance that a field which may be null is null (an ``anyOf`` with a ``null`` branch)."""
    number_range: tuple[float, float] = (-50.0, 150.0)
    """Numbers without ``minimum``/``maximum`` are drawn from here (half of them whole numbers)."""
    enum_weights: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Per property name, weights of enum values (others weigh 1): ``{"action": {"pass": 0.1}}``."""
    max_items: int = 4


def random_instance(schema: Mapping[str, Any], rng: random.Random,
                    options: RandomSchemaOptions | None = None) -> Any:
    """One random value that ``schema`` accepts."""
    return _Drawer(schema, rng, options or RandomSchemaOptions()).draw(schema, None, 0)


class _Drawer:
    def __init__(self, root: Mapping[str, Any], rng: random.Random, options: RandomSchemaOptions) -> None:
        self.root = root
        self.rng = rng
        self.options = options

    def draw(self, node: Mapping[str, Any], name: str | None, depth: int) -> Any:
        if depth > MAX_DEPTH:
            return None
        if "$ref" in node:
            return self.draw(self._resolve(str(node["$ref"])), name, depth + 1)
        if "const" in node:
            return node["const"]
        branches = node.get("anyOf") or node.get("oneOf")
        if branches:
            nulls = [b for b in branches if b.get("type") == "null"]
            others = [b for b in branches if b.get("type") != "null"]
            if nulls and (not others or self.rng.random() < self.options.null_rate):
                return None
            return self.draw(self.rng.choice(others), name, depth + 1)
        if "enum" in node:
            return self._enum(list(node["enum"]), name)
        kind = node.get("type")
        if isinstance(kind, list):
            if "null" in kind and self.rng.random() < self.options.null_rate:
                return None
            kind = self.rng.choice([k for k in kind if k != "null"] or ["null"])
        if kind == "object" or "properties" in node:
            props = node.get("properties") or {}
            return {key: self.draw(sub, key, depth + 1) for key, sub in props.items()}
        if kind == "array":
            low = int(node.get("minItems", 0))
            high = max(low, min(int(node.get("maxItems", self.options.max_items)), low + self.options.max_items))
            items = node.get("items") or {}
            return [self.draw(items, name, depth + 1) for _ in range(self.rng.randint(low, high))]
        if kind == "string":
            return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(1, 8)))
        if kind in ("number", "integer"):
            return self._number(node, integer=kind == "integer")
        if kind == "boolean":
            return self.rng.random() < 0.5
        return None

    def _enum(self, values: list[Any], name: str | None) -> Any:
        weights = self.options.enum_weights.get(name or "", {})
        return self.rng.choices(values, [float(weights.get(str(v), 1.0)) for v in values])[0]

    def _number(self, node: Mapping[str, Any], *, integer: bool) -> float | int:
        low = float(node.get("minimum", self.options.number_range[0]))
        high = float(node.get("maximum", self.options.number_range[1]))
        if high < low:
            low, high = high, low
        value = self.rng.uniform(low, high)
        if integer or self.rng.random() < 0.5:
            return int(min(high, max(low, round(value))))
        return value

    def _resolve(self, ref: str) -> Mapping[str, Any]:
        if not ref.startswith("#/"):
            return {}
        node: Any = self.root
        for part in ref[2:].split("/"):
            if not isinstance(node, Mapping) or part not in node:
                return {}
            node = node[part]
        return node if isinstance(node, Mapping) else {}


def request_schema(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The JSON Schema a chat-completions request asks the reply to follow: its
    ``response_format.json_schema.schema``, or None when it names none."""
    fmt = body.get("response_format")
    if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema")
        if isinstance(spec, Mapping) and isinstance(spec.get("schema"), Mapping):
            return spec["schema"]
    return None
