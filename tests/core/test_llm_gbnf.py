"""Our own grammar for llama-server (agent.core.llm.gbnf): a schema as GBNF with one space at most
between tokens, sent instead of the schema once the server shows it is llama-server, given up if it
refuses one."""

from __future__ import annotations

import re

import pytest

from agent.core.config import LLMConfig
from agent.core.llm import LLMClient
from agent.core.llm.gbnf import json_literal, literal, schema_grammar
from agent.core.testing.fake_openai import FakeOpenAI
from agent.games.hive.strategy.plan import plan_json_schema
from agent.games.tangram.llm_player.schema import move_schema

FORGE = {"type": "object", "properties": {"reasoning": {"type": "string", "maxLength": 200},
                                          "index": {"type": "integer", "enum": [0, 1, 2, 3]}},
         "required": ["reasoning", "index"], "additionalProperties": False}
GAME_SCHEMAS = {"tangram": move_schema(["A", "B"]), "forge": FORGE, "hive": plan_json_schema()}


def rules(grammar: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in grammar.strip().splitlines())


def referenced(body: str) -> set[str]:
    """Rule names a body refers to (outside its literals and character classes)."""
    bare = re.sub(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]', " ", body)
    return set(re.findall(r"[a-z][a-z0-9-]*", bare))


@pytest.mark.parametrize("game", sorted(GAME_SCHEMAS))
def test_every_game_schema_becomes_a_closed_grammar(game: str) -> None:
    grammar = schema_grammar(GAME_SCHEMAS[game])
    assert grammar is not None
    table = rules(grammar)
    assert "root" in table and table["ws"] == '" "?', "one space at most, never a run"
    for name, body in table.items():
        assert referenced(body) <= set(table), f"{name} refers to an undefined rule"
    assert "\\n" not in table["ws"] and "\\t" not in table["ws"]


def test_fields_in_schema_order_bounds_and_values() -> None:
    table = rules(schema_grammar(FORGE) or "")
    root = table[table["root"]]
    assert root.index('"\\"reasoning\\""') < root.index('"\\"index\\""'), "reasoning is written first"
    assert 'char{0,200}' in " ".join(table.values()), "maxLength is held by the grammar"
    assert '("0" | "1" | "2" | "3")' in root


def test_integer_ranges_arrays_and_nullable_values() -> None:
    schema = {"type": "object", "properties": {
        "bee": {"type": "integer", "minimum": 0, "maximum": 2},
        "far": {"type": "integer", "minimum": 0, "maximum": 1000},
        "pair": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
        "few": {"type": "array", "items": {"type": "boolean"}, "maxItems": 3},
        "maybe": {"type": ["string", "null"]},
        "kind": {"const": "x"}}}
    table = rules(schema_grammar(schema) or "")
    text = " ".join(table.values())
    assert '("0" | "1" | "2")' in text and " integer " in f" {text} "
    assert '"[" ws integer (ws "," ws integer){1,1} ws "]"' in text
    assert '"[" ws (boolean (ws "," ws boolean){0,2})? ws "]"' in text
    assert "(string | null)" in text and '"\\"x\\""' in text


@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "^a+$"},
    {"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}},
    {"type": "object", "properties": {"a": {}}},
    {"type": "array"},
    {"type": "object", "properties": {"a": {"type": "string", "format": "date"}}},
])
def test_what_it_does_not_cover_is_left_to_the_server(schema: dict[str, object]) -> None:
    assert schema_grammar(schema) is None


def test_local_refs_become_rules() -> None:
    schema = {"$defs": {"P": {"type": "string", "enum": ["Red", "Blue"]}},
              "type": "object", "properties": {"a": {"$ref": "#/$defs/P"}, "b": {"$ref": "#/$defs/P"}}}
    table = rules(schema_grammar(schema) or "")
    assert table["def-1"] == '("\\"Red\\"" | "\\"Blue\\"")'
    assert table[table["root"]].count("def-1") == 2


def test_literals_escape_what_gbnf_would_read() -> None:
    assert literal('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'
    assert json_literal("row 1") == '"\\"row 1\\""' and json_literal(3) == '"3"' and json_literal(None) == '"null"'


@pytest.mark.real_llm  # needs the [local] extra: CI runs it on the Python that installs it
def test_the_grammar_parses_in_llama_cpp() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    for schema in GAME_SCHEMAS.values():
        llama_cpp.LlamaGrammar.from_string(schema_grammar(schema), verbose=False)


def _config(fake: FakeOpenAI, **kw: object) -> LLMConfig:
    return LLMConfig(base_url=fake.base_url, model="m", request_timeout=5, api_key_required=False, prime=False,
                     **kw)  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_llama_server_gets_our_grammar_instead_of_the_schema() -> None:
    with FakeOpenAI(default_content='{"reasoning": "r", "index": 2}', llama_props=True, context_window=8192) as fake:
        async with LLMClient(_config(fake, structured_output="json_object_schema"), None) as client:
            result = await client.complete_json([{"role": "user", "content": "pick"}], FORGE, schema_name="forge")
    assert result.ok and result.data == {"reasoning": "r", "index": 2}
    body = fake.chat_requests[-1].json
    assert "response_format" not in body and body["grammar"].startswith("root ::= ")
    assert "char{0,200}" in body["grammar"]
    assert body["max_tokens"] < 150, "no room budgeted for whitespace runs the grammar does not allow"
    assert result.endpoint is not None and result.endpoint["grammar"] == "own"
    assert client.refused_requests == 0


@pytest.mark.asyncio
async def test_other_servers_never_get_a_grammar() -> None:
    with FakeOpenAI(default_content='{"reasoning": "r", "index": 2}', tells_window=True, context_window=8192) as fake:
        async with LLMClient(_config(fake), None) as client:
            result = await client.complete_json([{"role": "user", "content": "pick"}], FORGE, schema_name="forge")
    assert result.ok and result.endpoint is not None and result.endpoint["grammar"] == "server's"
    assert all("grammar" not in r.json for r in fake.chat_requests)
    assert fake.chat_requests[-1].json["response_format"]["type"] == "json_schema"


@pytest.mark.asyncio
async def test_a_refused_grammar_is_given_up_for_the_servers_schema_form() -> None:
    with FakeOpenAI(default_content='{"reasoning": "r", "index": 1}', llama_props=True,
                    refuses_grammar=True) as fake:
        async with LLMClient(_config(fake, structured_output="json_object_schema"), None) as client:
            first = await client.complete_json([{"role": "user", "content": "pick"}], FORGE)
            second = await client.complete_json([{"role": "user", "content": "pick"}], FORGE)
    assert first.ok and second.ok and client.refused_requests == 1
    sent = [r.json for r in fake.chat_requests]
    assert ["grammar" in b for b in sent] == [True, False, False]
    assert sent[-1]["response_format"]["type"] == "json_object" and "schema" in sent[-1]["response_format"]
