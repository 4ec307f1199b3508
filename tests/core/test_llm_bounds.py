"""Bounded answers (agent.core.llm.bounds): free text told its length and, for grammar servers, held
to it; max_tokens sized to the schema; an answer cut off at max_tokens salvaged only when every
field that decides is complete."""

from __future__ import annotations

import json

import pytest

from agent.core.llm.bounds import bound_schema, is_free_text, reply_tokens, salvage
from agent.games.tangram.llm_player.schema import move_schema

SCHEMA = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "description": "Why."},
        "piece": {"type": "string", "enum": ["Red", "Blue"]},
        "x": {"type": "number"},
        "chat": {"type": "string"},
        "steps": {"type": "array", "maxItems": 2, "items": {
            "type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"],
            "additionalProperties": False}},
    },
    "required": ["reasoning", "piece", "x", "chat", "steps"],
    "additionalProperties": False,
}
CHARS = {"*": 200, "chat": 120}


def say(n: int) -> str:
    return f"At most {n} characters."


def test_free_text_is_a_string_without_enum_or_const() -> None:
    assert is_free_text({"type": "string"}) and is_free_text({"type": ["string", "null"]})
    assert not is_free_text({"type": "string", "enum": ["a"]}) and not is_free_text({"type": "string", "const": "a"})
    assert not is_free_text({"type": "number"}) and not is_free_text("string")


def test_every_free_text_field_is_told_its_bound_at_any_depth() -> None:
    out = bound_schema(SCHEMA, CHARS, grammar=False, say=say)
    props = out["properties"]
    assert props["reasoning"]["description"] == "Why. At most 200 characters."
    assert props["chat"]["description"] == "At most 120 characters."
    assert props["steps"]["items"]["properties"]["note"]["description"] == "At most 200 characters."
    assert "description" not in props["piece"] and "description" not in props["x"]
    assert "maxLength" not in json.dumps(out)  # OpenAI's strict mode refuses the keyword
    assert SCHEMA["properties"]["chat"] == {"type": "string"}  # the caller's schema is not changed


def test_a_grammar_server_gets_max_length_and_a_scale_tightens_it() -> None:
    out = bound_schema(SCHEMA, CHARS, grammar=True, say=say, scale=0.5)
    assert out["properties"]["chat"]["maxLength"] == 60
    assert out["properties"]["reasoning"]["maxLength"] == 100
    tiny = bound_schema(SCHEMA, {"*": 20}, grammar=True, say=say, scale=0.1)
    assert tiny["properties"]["chat"]["maxLength"] == 16  # never below 16


def test_a_tighter_existing_max_length_is_kept() -> None:
    schema = {"type": "object", "properties": {"chat": {"type": "string", "maxLength": 40}}}
    assert bound_schema(schema, CHARS, grammar=True, say=say)["properties"]["chat"]["maxLength"] == 40


def test_reply_tokens_grow_with_the_bounds_and_cover_a_bounded_answer() -> None:
    small, large = reply_tokens(SCHEMA, {"*": 50}), reply_tokens(SCHEMA, {"*": 400})
    assert small < large
    answer = {"reasoning": "r" * 200, "piece": "Blue", "x": 123.25, "chat": "c" * 120,
              "steps": [{"note": "n" * 200}, {"note": "n" * 200}]}
    # an answer at its bounds, at four characters a token, fits the budget
    assert len(json.dumps(answer)) / 4 <= reply_tokens(SCHEMA, CHARS)


def _spread(value: object, run: str) -> str:
    """``value`` as JSON with ``run`` at every place llama.cpp's schema grammar allows whitespace."""
    if isinstance(value, dict):
        members = [f"{json.dumps(k)}{run}:{run}{_spread(v, run)}{run}" for k, v in value.items()]
        return "{" + run + f",{run}".join(members) + "}"
    if isinstance(value, list):
        return "[" + run + f",{run}".join(_spread(v, run) + run for v in value) + "]"
    return json.dumps(value)


def test_under_a_grammar_the_budget_holds_the_whitespace_it_allows() -> None:
    # Gemma 3 270M on llama-server wrote "{\n\t\t\t\t..." and was cut off before its decision
    answer = {"reasoning": "r" * 200, "piece": "Blue", "x": 123.25, "chat": "c" * 120,
              "steps": [{"note": "n" * 200}, {"note": "n" * 200}]}
    run = "\n\n" + "\t" * 20  # the most the grammar lets through at one place
    spread = _spread(answer, run)
    assert json.loads(spread) == answer
    whitespace = sum(ch in "\n\t" for ch in spread)
    tokens = len(json.dumps(answer)) / 4 + whitespace  # a token a whitespace character at worst
    assert tokens <= reply_tokens(SCHEMA, CHARS, grammar=True)
    assert tokens > reply_tokens(SCHEMA, CHARS)  # without the grammar's room it would be cut


def test_reply_tokens_of_the_tangram_move_stay_far_under_the_default_max_tokens() -> None:
    assert 60 < reply_tokens(move_schema(["A", "B"]), {"*": 200, "chat": 120}) < 600


def test_a_cut_in_free_text_keeps_what_was_written() -> None:
    text = '{"piece": "Red", "x": 3, "reasoning": "because the roof'
    optional_steps = {**SCHEMA, "required": ["reasoning", "piece", "x", "chat"]}
    assert salvage(text, optional_steps) == {"piece": "Red", "x": 3, "reasoning": "because the roof", "chat": ""}
    assert salvage(text, SCHEMA) is None  # "steps" decides too, and never came


@pytest.mark.parametrize("text", [
    '{"reasoning": "roof", "piece": "Re',        # cut inside a deciding value
    '{"reasoning": "roof", "piece": "Red", "x": 1',  # the number may be cut: dropped back, x missing
    '{"reasoning": "roof", "pie',                 # cut inside a key
    'no json at all',
])
def test_a_cut_in_a_decision_is_never_played(text: str) -> None:
    assert salvage(text, {**SCHEMA, "required": ["reasoning", "piece", "x"]}) is None


def test_deciding_fields_complete_and_free_text_cut() -> None:
    schema = {"type": "object", "properties": {"piece": {"type": "string", "enum": ["Red"]},
                                               "reasoning": {"type": "string"}, "chat": {"type": "string"}},
              "required": ["piece", "reasoning", "chat"]}
    assert salvage('{"piece": "Red", "reasoning": "the \\"roof\\" go', schema) == {
        "piece": "Red", "reasoning": 'the "roof" go', "chat": ""}
    assert salvage('{"piece": "Red", "reasoning": "x", "chat": "hi"}', schema) == {
        "piece": "Red", "reasoning": "x", "chat": "hi"}  # not cut after all


def test_a_cut_deeper_than_the_top_level_drops_back_to_the_last_whole_member() -> None:
    schema = {"type": "object", "properties": {"piece": {"type": "string", "enum": ["Red"]},
                                               "chat": {"type": "string"}}, "required": ["piece", "chat"]}
    assert salvage('{"piece": "Red", "chat": {"text": "I will', schema) == {"piece": "Red", "chat": ""}
