"""Every decision schema sent to an LLM puts ``reasoning`` first and keeps to the rules of all three
structured-output engines we support (OpenAI strict mode, vLLM's xgrammar, llama.cpp's converter).

Models write a structured answer in schema order: a reasoning field after the decision is written
after the decision is taken. The chat reply and the bee's direct move are not decisions that need it
(a chat line is its own reasoning; the direct move has a 2 s budget).
"""

from __future__ import annotations

from typing import Any

import pytest

from agent.games.boardgame.players.llm import reply_schema
from agent.games.boardgame.rules.registry import get_rules
from agent.games.forge.fake.catalogue import catalogue
from agent.games.forge.models import parse_request
from agent.games.forge.prompt_context import schema_for
from agent.games.hive.strategy.plan import plan_json_schema
from agent.games.tangram.llm_player.schema import MOVE_SCHEMA, move_schema

ALLOWED_KEYS = {"type", "properties", "required", "additionalProperties", "items", "enum", "anyOf", "description",
                "minimum", "maximum", "minItems", "maxItems", "$defs", "$ref", "const"}
"""Keywords all three engines accept. Ranges are kept as hints only: llama.cpp drops some of them,
so every number is validated again in code."""


def strict_problems(node: Any, where: str = "$") -> list[str]:
    """Where the schema ``node`` breaks OpenAI's strict rules (and what xgrammar / llama.cpp would not take)."""
    if not isinstance(node, dict):
        return [f"{where}: not a schema object"]
    problems = [f"{where}: keyword {k!r}" for k in node if k not in ALLOWED_KEYS]
    if node.get("type") == "object":
        if node.get("additionalProperties") is not False:
            problems.append(f"{where}: additionalProperties must be false")
        if list(node.get("required", [])) != list(node.get("properties", {})):
            problems.append(f"{where}: every property must be required, in order")
    if "enum" in node and not node["enum"]:
        problems.append(f"{where}: empty enum")
    for name, sub in node.get("properties", {}).items():
        problems += strict_problems(sub, f"{where}.{name}")
    for i, sub in enumerate(node.get("anyOf", [])):
        problems += strict_problems(sub, f"{where}.anyOf[{i}]")
    for name, sub in node.get("$defs", {}).items():
        problems += strict_problems(sub, f"{where}.$defs.{name}")
    if isinstance(node.get("items"), dict):
        problems += strict_problems(node["items"], f"{where}.items")
    return problems


SCHEMAS = {
    "tangram move": MOVE_SCHEMA,
    "tangram move with candidates": move_schema(["A", "B", "C"]),
    "hive coach plan": plan_json_schema(),
    "boardgame tictactoe": reply_schema(get_rules("tictactoe")),
    "boardgame connect_four": reply_schema(get_rules("connect_four")),
    **{f"forge {dialect} {name}": schema_for(parse_request(body))
       for dialect in ("action", "possible_actions") for name, body in catalogue(dialect)},
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_reasoning_is_the_first_property(name: str) -> None:
    schema = SCHEMAS[name]
    assert next(iter(schema["properties"])) == "reasoning"
    assert schema["required"][0] == "reasoning"
    assert schema["properties"]["reasoning"]["type"] == "string"


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_schema_keeps_to_the_strict_rules(name: str) -> None:
    assert strict_problems(SCHEMAS[name]) == []


def test_the_checker_catches_what_strict_mode_refuses() -> None:
    loose = {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}, "required": []}
    found = strict_problems(loose)
    assert any("additionalProperties" in p for p in found)
    assert any("required" in p for p in found)
    assert any("'default'" in p for p in found)


def _first_request_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as the client sends it first (json_schema mode, default bounds)."""
    from agent.core.config import LLMConfig
    from agent.core.llm.client import LLMClient

    client = LLMClient(LLMConfig(base_url="http://127.0.0.1:9/v1", api_key_required=False), None)
    wire, _, grammar = client._bounded(schema, "json_schema", 1.0, None)
    assert grammar is None, "no grammar of ours before the server shows it is llama-server"
    assert wire is not None
    return wire


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_first_request_with_its_bounds_keeps_to_the_strict_rules(name: str) -> None:
    """Bounds go into descriptions for OpenAI (its strict mode refuses maxLength); only the llama.cpp
    form, sent to an endpoint that refused json_schema, carries maxLength."""
    wire = _first_request_schema(SCHEMAS[name])
    assert strict_problems(wire) == []
    assert "maxLength" not in str(wire)
    assert "characters" in wire["properties"]["reasoning"]["description"]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_decision_schema_becomes_our_grammar_for_llama_server(name: str) -> None:
    """Every list has a longest length: under a grammar a small model repeats an entry until max_tokens."""
    from agent.core.llm.bounds import bound_schema
    from agent.core.llm.gbnf import schema_grammar

    grammar = schema_grammar(bound_schema(SCHEMAS[name], {"*": 200}, grammar=True, say=str))
    assert grammar is not None
    assert ",}" not in grammar and "*" not in grammar.replace("char*", ""), "a list or a text without an end"
